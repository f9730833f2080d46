"""The simple RNN: ``h' = tanh(W h + U x + b)``, no gates (Flax's ``SimpleCell``).

Here are its spec, its fused step with the hand-written derivative, and its step as the log-scaled probe
differentiates it: the textbook case of a gradient that shrinks by the same factor at every step back.
"""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp

from rnnlab.i18n import N_
from rnnlab.model import probe_step as probe
from rnnlab.model.cell_spec import CellSpec
from rnnlab.model.fused import Carry, FusedCell, Saved


# ---- the fused step and its derivative -------------------------------------------------------------------------
def fused_forward(carry: Carry, xp: jax.Array, hp: jax.Array) -> tuple[Carry, Saved]:
    h = jnp.tanh(xp + hp)
    return (h,), (h,)


def fused_backward(saved: Saved, carry: Carry, d_new: Carry) -> tuple[Carry, jax.Array, None]:
    (h,) = saved
    d_pre = d_new[0] * (1.0 - h * h)
    return (jnp.zeros_like(carry[0]),), d_pre, None


FUSED = FusedCell(("i",), ("h",), fused_forward, fused_backward)


# ---- the step as the log-scaled probe differentiates it ----------------------------------------------------------
def probe_forward(carry: Carry, xp: jax.Array, hp: jax.Array):
    pre = xp + hp
    slope = probe.tanh_slope(pre)
    return (probe.tanh(pre),), probe.Derivatives((probe.Form(slope, lambda: probe.log_tanh_slope(pre)),), (slope,), ())


def probe_backward(saved, carry: Carry, d_new: Carry):
    d_pre = probe.times(d_new[0], saved[0])
    return ((jnp.zeros_like(carry[0]),), d_pre[1]), d_pre, d_pre


SPECS = [
    CellSpec("simple", N_("Simple RNN"), nn.SimpleCell, ("h",), saved_per_step=2, matmuls=1,
             description=N_("h_t = tanh(W h_{t-1} + U x_t + b): no gates, the textbook vanishing gradient."),
             fused=FUSED, place=5, probe=probe.probe_of_fused(FUSED, probe_forward, probe_backward)),
]
