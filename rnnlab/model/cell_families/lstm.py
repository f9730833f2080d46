"""The LSTM family: Flax's LSTM, its optimized form and the ConvLSTM, one cell state c with an additive path.

``c' = f * c + i * g`` and ``h' = o * tanh(c')``, with i, f, o sigmoids and g a tanh of the input's and the
carry's projections. Here are its specs, its fused step with the hand-written derivative (the LSTM and the
optimized LSTM: the same maths and parameters), and its step as the log-scaled probe differentiates it (the
ConvLSTM's with convolutions for the matmuls, its gates in Flax's order i, g, f, o and its forget gate's +1).
"""

from __future__ import annotations

from typing import cast

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
    c, _ = carry
    pre_i, pre_f, pre_g, pre_o = jnp.split(xp + hp, 4, axis=-1)
    i, f, g, o = jax.nn.sigmoid(pre_i), jax.nn.sigmoid(pre_f), jnp.tanh(pre_g), jax.nn.sigmoid(pre_o)
    new_c = f * c + i * g
    tanh_c = jnp.tanh(new_c)
    return (new_c, o * tanh_c), (i, f, g, o, tanh_c)


def fused_backward(saved: Saved, carry: Carry, d_new: Carry) -> tuple[Carry, jax.Array, None]:
    i, f, g, o, tanh_c = saved
    c, h = carry
    d_c, d_h = d_new
    d_c = d_c + d_h * o * (1.0 - tanh_c * tanh_c)
    d_pre = jnp.concatenate([d_c * g * i * (1.0 - i), d_c * c * f * (1.0 - f), d_c * i * (1.0 - g * g),
                             d_h * tanh_c * o * (1.0 - o)], axis=-1)
    return (d_c * f, jnp.zeros_like(h)), d_pre, None


FUSED = FusedCell(("ii", "if", "ig", "io"), ("hi", "hf", "hg", "ho"), fused_forward, fused_backward)
GATES = GateSpec({"i": N_("input gate i"), "f": N_("forget gate f"), "o": N_("output gate o")}, "f",
                 N_("c_t = f * c_(t-1) + i * g: where f stays near 1 the cell state, and the gradient through it, "
                    "carries on"), saved={"i": 0, "f": 1, "o": 3})


# ---- the step as the log-scaled probe differentiates it ----------------------------------------------------------
def _core(c: jax.Array, pi, pf, pg, po):
    i, f, g, o = probe.sigmoid(pi), probe.sigmoid(pf), probe.tanh(pg), probe.sigmoid(po)
    new_c = f * c + i * g
    tanh_c = probe.tanh(new_c)
    si, sf, so = probe.sigmoid_slope(pi), probe.sigmoid_slope(pf), probe.sigmoid_slope(po)
    sg, sc = probe.tanh_slope(pg), probe.tanh_slope(new_c)
    forms = (probe.Form(f, lambda: jax.nn.log_sigmoid(pf)),  # the products the backward pass multiplies by
             probe.Form(o * sc, lambda: jax.nn.log_sigmoid(po) + probe.log_tanh_slope(new_c)),
             probe.Form(g * si, lambda: probe.log_abs(g) + probe.log_sigmoid_slope(pi), lambda: jnp.sign(g)),
             probe.Form(c * sf, lambda: probe.log_abs(c) + probe.log_sigmoid_slope(pf), lambda: jnp.sign(c)),
             probe.Form(i * sg, lambda: jax.nn.log_sigmoid(pi) + probe.log_tanh_slope(pg)),
             probe.Form(tanh_c * so, lambda: probe.log_abs(tanh_c) + probe.log_sigmoid_slope(po),
                        lambda: jnp.sign(tanh_c)))
    return (new_c, o * tanh_c), probe.Derivatives(forms, (si, sf, sg, so, sc), (i, f, o))


def probe_forward(carry: Carry, xp: jax.Array, hp: jax.Array):
    pi, pf, pg, po = jnp.split(xp + hp, 4, axis=-1)
    return _core(carry[0], pi, pf, pg, po)


def conv_probe_forward(carry: Carry, xp: jax.Array, hp: jax.Array):
    pi, pg, pf, po = jnp.split(xp + hp, 4, axis=-1)
    return _core(carry[0], pi, pf + 1.0, pg, po)


def probe_backward(order: str):
    """The log-scaled step's derivative, its pre-activations' gradient in ``order`` (the cell's gate order)."""
    def backward(saved, carry: Carry, d_new: Carry):
        f, o_sc, g_si, c_sf, i_sg, tanh_c_so = saved
        d_c = probe.plus(probe.times(d_new[0]), probe.times(d_new[1], o_sc))
        parts = {"i": probe.times(d_c, g_si), "f": probe.times(d_c, c_sf), "g": probe.times(d_c, i_sg),
                 "o": probe.times(d_new[1], tanh_c_so)}
        d_pre = probe.join([parts[k] for k in order])
        d_c_before, shift = probe.times(d_c, f)
        return ((d_c_before, jnp.zeros_like(carry[1])), shift), d_pre, d_pre

    return backward


def conv(p: dict, x: jax.Array) -> jax.Array:
    """Flax's ``Conv`` (SAME padding, as the ConvLSTM uses it) with parameters ``p``, over any leading axes."""
    kernel = p["kernel"]
    layer = nn.Conv(features=kernel.shape[-1], kernel_size=kernel.shape[:-2], use_bias="bias" in p)
    lead = x.shape[:-3]
    out = cast(jax.Array, layer.apply({"params": p}, x.reshape((-1,) + x.shape[-3:])))
    return out.reshape(lead + out.shape[1:])


PROBE = probe.probe_of_fused(FUSED, probe_forward, probe_backward("ifgo"))
CONV_PROBE = probe.ProbeCell(lambda p: p, lambda p, x: conv(p["ih"], x), lambda p, h: conv(p["hh"], h),
                             conv_probe_forward, probe_backward("igfo"))

SPECS = [
    CellSpec("lstm", "LSTM", nn.LSTMCell, ("c", "h"), saved_per_step=9,
             description=N_("Long short-term memory: a cell state c with an additive path, and h."),
             gates=GATES, fused=FUSED, place=2, probe=PROBE),
    CellSpec("optimized_lstm", N_("Optimized LSTM"), nn.OptimizedLSTMCell, ("c", "h"), saved_per_step=9,
             description=N_("The same LSTM maths with the gate matmuls fused."), gates=GATES, fused=FUSED, place=3,
             probe=PROBE),
    CellSpec("conv_lstm", "ConvLSTM", nn.ConvLSTMCell, ("c", "h"), spatial=True, saved_per_step=9,
             description=N_("An LSTM whose matmuls are convolutions: needs a spatial task."),
             quick_settings=(("task", "moving_dot"), ("features", 16), ("batch", 16), ("seq_len", 20)), place=6,
             probe=CONV_PROBE),
]
