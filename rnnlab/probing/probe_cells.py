"""The cells' steps as the log-scaled probe differentiates them: Flax's formulas on Flax's parameter trees, with
activations whose derivatives keep their size near saturation.

``jnp.tanh``'s derivative is ``1 - tanh(x)^2`` and the sigmoid's ``s(x)(1 - s(x))``: in float32 both cancel to 0
once the activation rounds to +-1 (|x| above about 9 for tanh, 17 for the sigmoid) while the true derivative is
still 1e-8. Here tanh' is ``4 e^(-2|x|) / (1 + e^(-2|x|))^2`` and the sigmoid's ``s(x) s(-x)``: exact to float32
rounding until the derivative itself falls below float32's smallest normal number (|x| above about 44 for tanh,
87 for the sigmoid). The forward values are Flax's (``tests/test_log_probe_cells.py`` checks every cell).

A :class:`ProbeCell` splits a step into ``project(p, x)`` (the input side, linear, for every step at once) and
``step(p, carry, xp) -> (new carry, flags)``; ``flags`` says whether any unit's derivative is exactly 0 and
whether any gate is exactly 0 at that step (what a zero gradient is then attributed to).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import flax.linen as nn
import jax
import jax.numpy as jnp

from rnnlab.model.cells import CELLS
from rnnlab.model.fused import FUSED_CELLS

Carry = tuple[jax.Array, ...]


def tanh_slope(x: jax.Array) -> jax.Array:
    """``1 - tanh(x)^2`` computed as ``4 e^(-2|x|) / (1 + e^(-2|x|))^2`` (no cancellation)."""
    e = jnp.exp(-2.0 * jnp.abs(x))
    return 4.0 * e / jnp.square(1.0 + e)


def sigmoid_slope(x: jax.Array) -> jax.Array:
    """``s(x) (1 - s(x))`` computed as ``s(x) s(-x)`` (no cancellation)."""
    return jax.nn.sigmoid(x) * jax.nn.sigmoid(-x)


@jax.custom_jvp
def tanh(x: jax.Array) -> jax.Array:
    """``jnp.tanh`` whose derivative is :func:`tanh_slope`."""
    return jnp.tanh(x)


@tanh.defjvp
def _tanh_jvp(primals, tangents):
    (x,), (dx,) = primals, tangents
    return jnp.tanh(x), tanh_slope(x) * dx


@jax.custom_jvp
def sigmoid(x: jax.Array) -> jax.Array:
    """``jax.nn.sigmoid`` whose derivative is :func:`sigmoid_slope`."""
    return jax.nn.sigmoid(x)


@sigmoid.defjvp
def _sigmoid_jvp(primals, tangents):
    (x,), (dx,) = primals, tangents
    return jax.nn.sigmoid(x), sigmoid_slope(x) * dx


def _flags(tanh_pre: list[jax.Array], sigmoid_pre: list[jax.Array], gates: list[jax.Array]) -> jax.Array:
    """(2,) bool: some unit's derivative is exactly 0; some gate is exactly 0."""
    dead = [jnp.any(tanh_slope(x) == 0) for x in tanh_pre] + [jnp.any(sigmoid_slope(x) == 0) for x in sigmoid_pre]
    closed = [jnp.any(g == 0) for g in gates] or [jnp.zeros((), bool)]
    return jnp.stack([jnp.any(jnp.stack(dead)), jnp.any(jnp.stack(closed))])


def _dense(w: jax.Array, b: jax.Array | None, x: jax.Array) -> jax.Array:
    y = x @ w
    return y if b is None else y + b


def _lstm(w, carry: Carry, xp: jax.Array):
    c, h = carry
    pre = xp + _dense(w.w_h, w.b_h, h)
    pi, pf, pg, po = jnp.split(pre, 4, axis=-1)
    i, f, g, o = sigmoid(pi), sigmoid(pf), tanh(pg), sigmoid(po)
    new_c = f * c + i * g
    return (new_c, o * tanh(new_c)), _flags([pg, new_c], [pi, pf, po], [i, f, o])


def _gru(w, carry: Carry, xp: jax.Array):
    (h,) = carry
    xr, xz, xn = jnp.split(xp, 3, axis=-1)
    hr, hz, hn = jnp.split(_dense(w.w_h, w.b_h, h), 3, axis=-1)
    pr, pz = xr + hr, xz + hz
    r, z = sigmoid(pr), sigmoid(pz)
    pn = xn + r * hn
    n = tanh(pn)
    return ((1.0 - z) * n + z * h,), _flags([pn], [pr, pz], [r, z])


def _mgu(w, carry: Carry, xp: jax.Array):
    (h,) = carry
    xf, xn = jnp.split(xp, 2, axis=-1)
    hf, hn = jnp.split(_dense(w.w_h, w.b_h, h), 2, axis=-1)
    pf = xf + hf
    f = sigmoid(pf)
    pn = xn + f * hn
    n = tanh(pn)
    return ((1.0 - f) * n + f * h,), _flags([pn], [pf], [f])


def _simple(w, carry: Carry, xp: jax.Array):
    pre = xp + _dense(w.w_h, w.b_h, carry[0])
    return (tanh(pre),), _flags([pre], [], [])


def _conv(p: dict, x: jax.Array) -> jax.Array:
    """Flax's ``Conv`` (SAME padding, as the ConvLSTM uses it) with parameters ``p``, over any leading axes."""
    kernel = p["kernel"]
    conv = nn.Conv(features=kernel.shape[-1], kernel_size=kernel.shape[:-2], use_bias="bias" in p)
    lead = x.shape[:-3]
    out = cast(jax.Array, conv.apply({"params": p}, x.reshape((-1,) + x.shape[-3:])))
    return out.reshape(lead + out.shape[1:])


def _conv_lstm(p: dict, carry: Carry, xp: jax.Array):
    c, h = carry
    pi, pg, pf, po = jnp.split(xp + _conv(p["hh"], h), 4, axis=-1)
    pf = pf + 1.0
    i, g, f, o = sigmoid(pi), tanh(pg), sigmoid(pf), sigmoid(po)
    new_c = f * c + i * g
    return (new_c, o * tanh(new_c)), _flags([pg, new_c], [pi, pf, po], [i, f, o])


@dataclass(frozen=True)
class ProbeCell:
    """One cell as the probe runs it: ``prepare`` the Flax parameters once, ``project`` inputs, ``step``."""

    prepare: Callable[[dict], Any]  # the Flax cell's parameters -> what project and step take
    project: Callable[[Any, jax.Array], jax.Array]
    step: Callable[[Any, Carry, jax.Array], tuple[Carry, jax.Array]]


def _fused(name: str, step) -> ProbeCell:
    fused = FUSED_CELLS[name]
    return ProbeCell(fused.weights, lambda w, x: _dense(w.w_in, w.b_in, x), step)


PROBE_CELLS: dict[str, ProbeCell] = {
    "lstm": _fused("lstm", _lstm),
    "optimized_lstm": _fused("optimized_lstm", _lstm),
    "gru": _fused("gru", _gru),
    "mgu": _fused("mgu", _mgu),
    "simple": _fused("simple", _simple),
    "conv_lstm": ProbeCell(lambda p: p, lambda p, x: _conv(p["ih"], x), _conv_lstm),
}
assert set(PROBE_CELLS) == set(CELLS), "every registered cell needs its probe form"


def cell_params(params: dict, cell: str) -> dict:
    """The Flax cell's own parameters inside a model's parameter tree."""
    return params["params"][f"{CELLS[cell].cls.__name__}_0"]
