"""The minimal gated unit: a single forget gate.

``n = tanh(W_in x + b_in + f * (W_hn h + b_hn))`` and ``h' = (1 - f) * n + f * h``, with f a sigmoid of the
input's and the carry's projections (Flax's ``MGUCell``). Here are its spec, its fused step with the
hand-written derivative, and its step as the log-scaled probe differentiates it.
"""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp

from rnnlab.i18n import N_
from rnnlab.model import probe_step as probe
from rnnlab.model.cell_spec import CellSpec
from rnnlab.model.fused import Carry, FusedCell, Saved
from rnnlab.model.gates import GateSpec


# ---- the fused step and its derivative -------------------------------------------------------------------------
def fused_forward(carry: Carry, xp: jax.Array, hp: jax.Array) -> tuple[Carry, Saved]:
    (h,) = carry
    xf, xn = jnp.split(xp, 2, axis=-1)
    hf, hn = jnp.split(hp, 2, axis=-1)
    f = jax.nn.sigmoid(xf + hf)
    n = jnp.tanh(xn + f * hn)
    return ((1.0 - f) * n + f * h,), (f, n, hn)


def fused_backward(saved: Saved, carry: Carry, d_new: Carry) -> tuple[Carry, jax.Array, jax.Array]:
    f, n, hn = saved
    (h,) = carry
    (d_h,) = d_new
    d_n = d_h * (1.0 - f) * (1.0 - n * n)
    d_f = (d_h * (h - n) + d_n * hn) * f * (1.0 - f)
    return (d_h * f,), jnp.concatenate([d_f, d_n * f], axis=-1), d_n


FUSED = FusedCell(("if", "in"), ("hf", "hn"), fused_forward, fused_backward)
GATES = GateSpec({"f": N_("forget gate f")}, "f",
                 N_("h_t = (1 - f) * n + f * h_(t-1): where f stays near 1 the carry, and the gradient through it, "
                    "carries on"), saved={"f": 0})


# ---- the step as the log-scaled probe differentiates it ----------------------------------------------------------
def probe_forward(carry: Carry, xp: jax.Array, hp: jax.Array):
    (h,) = carry
    xf, xn = jnp.split(xp, 2, axis=-1)
    hf, hn = jnp.split(hp, 2, axis=-1)
    pf = xf + hf
    f = probe.sigmoid(pf)
    pn = xn + f * hn
    n = probe.tanh(pn)
    sf, sn = probe.sigmoid_slope(pf), probe.tanh_slope(pn)
    forms = (probe.Form(f, lambda: jax.nn.log_sigmoid(pf)),
             probe.Form((1.0 - f) * sn, lambda: jax.nn.log_sigmoid(-pf) + probe.log_tanh_slope(pn)),
             probe.Form((h - n) * sf, lambda: probe.log_abs(h - n) + probe.log_sigmoid_slope(pf),
                        lambda: jnp.sign(h - n)),
             probe.Form(hn * sf, lambda: probe.log_abs(hn) + probe.log_sigmoid_slope(pf), lambda: jnp.sign(hn)))
    return ((1.0 - f) * n + f * h,), probe.Derivatives(forms, (sf, sn), (f,))


def probe_backward(saved, carry: Carry, d_new: Carry):
    f, keep_sn, h_n_sf, hn_sf = saved
    (d_h,) = d_new
    d_pn = probe.times(d_h, keep_sn)
    d_pf = probe.plus(probe.times(d_h, h_n_sf), probe.times(d_pn, hn_sf))
    direct, shift = probe.times(d_h, f)
    return ((direct,), shift), probe.join([d_pf, d_pn]), probe.join([d_pf, probe.times(d_pn, f)])


SPECS = [
    CellSpec("mgu", "MGU", nn.MGUCell, ("h",), saved_per_step=5, matmuls=2,
             description=N_("Minimal gated unit: a single forget gate."), gates=GATES, fused=FUSED, place=4,
             probe=probe.probe_of_fused(FUSED, probe_forward, probe_backward)),
]
