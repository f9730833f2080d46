"""The GRU: reset and update gates, one state vector.

``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))`` and ``h' = (1 - z) * n + z * h``, with r and z sigmoids of
the input's and the carry's projections (Flax's ``GRUCell``). Here are its spec, its fused step with the
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
    xr, xz, xn = jnp.split(xp, 3, axis=-1)
    hr, hz, hn = jnp.split(hp, 3, axis=-1)
    r = jax.nn.sigmoid(xr + hr)
    z = jax.nn.sigmoid(xz + hz)
    n = jnp.tanh(xn + r * hn)
    return ((1.0 - z) * n + z * h,), (r, z, n, hn)


def fused_backward(saved: Saved, carry: Carry, d_new: Carry) -> tuple[Carry, jax.Array, jax.Array]:
    r, z, n, hn = saved
    (h,) = carry
    (d_h,) = d_new
    d_n = d_h * (1.0 - z) * (1.0 - n * n)
    d_r = d_n * hn * r * (1.0 - r)
    d_z = d_h * (h - n) * z * (1.0 - z)
    return (d_h * z,), jnp.concatenate([d_r, d_z, d_n * r], axis=-1), d_n


FUSED = FusedCell(("ir", "iz", "in"), ("hr", "hz", "hn"), fused_forward, fused_backward)
GATES = GateSpec({"r": N_("reset gate r"), "z": N_("update gate z")}, "z",
                 N_("h_t = (1 - z) * n + z * h_(t-1): where z stays near 1 the carry, and the gradient through it, "
                    "carries on"), saved={"r": 0, "z": 1})


# ---- the step as the log-scaled probe differentiates it ----------------------------------------------------------
def probe_forward(carry: Carry, xp: jax.Array, hp: jax.Array):
    (h,) = carry
    xr, xz, xn = jnp.split(xp, 3, axis=-1)
    hr, hz, hn = jnp.split(hp, 3, axis=-1)
    pr, pz = xr + hr, xz + hz
    r, z = probe.sigmoid(pr), probe.sigmoid(pz)
    pn = xn + r * hn
    n = probe.tanh(pn)
    sr, sz, sn = probe.sigmoid_slope(pr), probe.sigmoid_slope(pz), probe.tanh_slope(pn)
    forms = (probe.Form(r, lambda: jax.nn.log_sigmoid(pr)), probe.Form(z, lambda: jax.nn.log_sigmoid(pz)),
             probe.Form((1.0 - z) * sn, lambda: jax.nn.log_sigmoid(-pz) + probe.log_tanh_slope(pn)),
             probe.Form(hn * sr, lambda: probe.log_abs(hn) + probe.log_sigmoid_slope(pr), lambda: jnp.sign(hn)),
             probe.Form((h - n) * sz, lambda: probe.log_abs(h - n) + probe.log_sigmoid_slope(pz),
                        lambda: jnp.sign(h - n)))
    return ((1.0 - z) * n + z * h,), probe.Derivatives(forms, (sr, sz, sn), (r, z))


def probe_backward(saved, carry: Carry, d_new: Carry):
    r, z, keep_sn, hn_sr, h_n_sz = saved
    (d_h,) = d_new
    d_pn = probe.times(d_h, keep_sn)
    d_pr = probe.times(d_pn, hn_sr)
    d_pz = probe.times(d_h, h_n_sz)
    direct, shift = probe.times(d_h, z)
    return ((direct,), shift), probe.join([d_pr, d_pz, d_pn]), probe.join([d_pr, d_pz, probe.times(d_pn, r)])


SPECS = [
    CellSpec("gru", "GRU", nn.GRUCell, ("h",), saved_per_step=6, matmuls=3,
             description=N_("Gated recurrent unit: reset and update gates, one state vector."), gates=GATES,
             fused=FUSED, place=1, probe=probe.probe_of_fused(FUSED, probe_forward, probe_backward)),
]
