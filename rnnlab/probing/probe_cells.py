"""The cells' steps as the log-scaled probe differentiates them: Flax's formulas on Flax's parameter trees, with
activations whose derivatives keep their size near saturation.

``jnp.tanh``'s derivative is ``1 - tanh(x)^2`` and the sigmoid's ``s(x)(1 - s(x))``: in float32 both cancel to 0
once the activation rounds to +-1 (|x| above about 9 for tanh, 17 for the sigmoid) while the true derivative is
still 1e-8. Here tanh' is ``4 e^(-2|x|) / (1 + e^(-2|x|))^2`` and the sigmoid's ``s(x) s(-x)``: exact to float32
rounding until the derivative itself falls below float32's smallest normal number (|x| above about 44 for tanh,
87 for the sigmoid). The forward values are Flax's (``tests/test_log_probe_cells.py`` checks every cell).

A :class:`ProbeCell` splits a step into ``project(p, x)`` (the input side, linear, for every step at once),
``hidden(p, h)`` and an elementwise ``forward`` that keeps what its hand-written ``backward`` needs (the gates and
the activations' derivatives, so the backward pass only multiplies); ``flags`` says whether any unit's derivative
is exactly 0 and whether any gate is exactly 0 at that step (what a zero gradient is then attributed to).
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


def _flags(slopes, gates) -> jax.Array:
    """(2,) bool: some unit's derivative is exactly 0; some gate is exactly 0."""
    dead = jnp.any(jnp.stack([jnp.any(s == 0) for s in slopes]))
    closed = jnp.any(jnp.stack([jnp.any(g == 0) for g in gates])) if gates else jnp.zeros((), bool)
    return jnp.stack([dead, closed])


def _dense(w: jax.Array, b: jax.Array | None, x: jax.Array) -> jax.Array:
    y = x @ w
    return y if b is None else y + b


def _lstm_core(c: jax.Array, pi, pf, pg, po):
    i, f, g, o = sigmoid(pi), sigmoid(pf), tanh(pg), sigmoid(po)
    new_c = f * c + i * g
    tanh_c = tanh(new_c)
    si, sf, sg, so, sc = (sigmoid_slope(pi), sigmoid_slope(pf), tanh_slope(pg), sigmoid_slope(po), tanh_slope(new_c))
    saved = (f, o * sc, g * si, c * sf, i * sg, tanh_c * so)  # the products the backward pass multiplies by
    return (new_c, o * tanh_c), _flags((si, sf, sg, so, sc), [i, f, o]), saved


def _lstm(carry: Carry, xp: jax.Array, hp: jax.Array):
    pi, pf, pg, po = jnp.split(xp + hp, 4, axis=-1)
    return _lstm_core(carry[0], pi, pf, pg, po)


def _conv_lstm(carry: Carry, xp: jax.Array, hp: jax.Array):
    pi, pg, pf, po = jnp.split(xp + hp, 4, axis=-1)
    return _lstm_core(carry[0], pi, pf + 1.0, pg, po)


def _lstm_backward(order: str):
    def backward(saved, carry: Carry, d_new: Carry):
        f, o_sc, g_si, c_sf, i_sg, tanh_c_so = saved
        d_c = d_new[0] + d_new[1] * o_sc
        parts = {"i": d_c * g_si, "f": d_c * c_sf, "g": d_c * i_sg, "o": d_new[1] * tanh_c_so}
        d_pre = jnp.concatenate([parts[k] for k in order], axis=-1)
        return (d_c * f, jnp.zeros_like(carry[1])), d_pre, d_pre

    return backward


def _gru(carry: Carry, xp: jax.Array, hp: jax.Array):
    (h,) = carry
    xr, xz, xn = jnp.split(xp, 3, axis=-1)
    hr, hz, hn = jnp.split(hp, 3, axis=-1)
    pr, pz = xr + hr, xz + hz
    r, z = sigmoid(pr), sigmoid(pz)
    pn = xn + r * hn
    n = tanh(pn)
    sr, sz, sn = sigmoid_slope(pr), sigmoid_slope(pz), tanh_slope(pn)
    saved = (r, z, (1.0 - z) * sn, hn * sr, (h - n) * sz)
    return ((1.0 - z) * n + z * h,), _flags((sr, sz, sn), [r, z]), saved


def _gru_backward(saved, carry: Carry, d_new: Carry):
    r, z, keep_sn, hn_sr, h_n_sz = saved
    (d_h,) = d_new
    d_pn = d_h * keep_sn
    d_pr = d_pn * hn_sr
    d_pz = d_h * h_n_sz
    return (d_h * z,), jnp.concatenate([d_pr, d_pz, d_pn], axis=-1), jnp.concatenate([d_pr, d_pz, d_pn * r], axis=-1)


def _mgu(carry: Carry, xp: jax.Array, hp: jax.Array):
    (h,) = carry
    xf, xn = jnp.split(xp, 2, axis=-1)
    hf, hn = jnp.split(hp, 2, axis=-1)
    pf = xf + hf
    f = sigmoid(pf)
    pn = xn + f * hn
    n = tanh(pn)
    sf, sn = sigmoid_slope(pf), tanh_slope(pn)
    saved = (f, (1.0 - f) * sn, (h - n) * sf, hn * sf)
    return ((1.0 - f) * n + f * h,), _flags((sf, sn), [f]), saved


def _mgu_backward(saved, carry: Carry, d_new: Carry):
    f, keep_sn, h_n_sf, hn_sf = saved
    (d_h,) = d_new
    d_pn = d_h * keep_sn
    d_pf = d_h * h_n_sf + d_pn * hn_sf
    return (d_h * f,), jnp.concatenate([d_pf, d_pn], axis=-1), jnp.concatenate([d_pf, d_pn * f], axis=-1)


def _simple(carry: Carry, xp: jax.Array, hp: jax.Array):
    pre = xp + hp
    slope = tanh_slope(pre)
    return (tanh(pre),), _flags([slope], []), (slope,)


def _simple_backward(saved, carry: Carry, d_new: Carry):
    d_pre = d_new[0] * saved[0]
    return (jnp.zeros_like(carry[0]),), d_pre, d_pre


def _conv(p: dict, x: jax.Array) -> jax.Array:
    """Flax's ``Conv`` (SAME padding, as the ConvLSTM uses it) with parameters ``p``, over any leading axes."""
    kernel = p["kernel"]
    conv = nn.Conv(features=kernel.shape[-1], kernel_size=kernel.shape[:-2], use_bias="bias" in p)
    lead = x.shape[:-3]
    out = cast(jax.Array, conv.apply({"params": p}, x.reshape((-1,) + x.shape[-3:])))
    return out.reshape(lead + out.shape[1:])


Saved = tuple[jax.Array, ...]


@dataclass(frozen=True)
class ProbeCell:
    """One cell as the probe runs it: ``prepare`` the Flax parameters once; ``project`` inputs and ``hidden``
    (the carry's h) are the step's two linear maps; ``forward(carry, xp, hp) -> (new carry, flags, saved)`` the
    rest (elementwise), and ``backward(saved, carry, d_new) -> (direct, d_xp, d_hp)`` its hand-written derivative:
    the previous carry's gradient other than through ``hp``, and the gradients of ``xp`` and ``hp``. The derivative
    of ``forward`` with these activations equals ``backward`` (``tests/test_log_probe.py``)."""

    prepare: Callable[[dict], Any]  # the Flax cell's parameters -> what project and hidden take
    project: Callable[[Any, jax.Array], jax.Array]
    hidden: Callable[[Any, jax.Array], jax.Array]
    forward: Callable[[Carry, jax.Array, jax.Array], tuple[Carry, jax.Array, Saved]]
    backward: Callable[[Saved, Carry, Carry], tuple[Carry, jax.Array, jax.Array]]

    def step(self, w, carry: Carry, xp: jax.Array) -> tuple[Carry, jax.Array]:
        """(new carry, flags) from ``carry`` (h its last leaf) and projected inputs ``xp``."""
        new, flags, _ = self.forward(carry, xp, self.hidden(w, carry[-1]))
        return new, flags


def _fused(name: str, forward, backward) -> ProbeCell:
    fused = FUSED_CELLS[name]
    return ProbeCell(fused.weights, lambda w, x: _dense(w.w_in, w.b_in, x), lambda w, h: _dense(w.w_h, w.b_h, h),
                     forward, backward)


PROBE_CELLS: dict[str, ProbeCell] = {
    "lstm": _fused("lstm", _lstm, _lstm_backward("ifgo")),
    "optimized_lstm": _fused("optimized_lstm", _lstm, _lstm_backward("ifgo")),
    "gru": _fused("gru", _gru, _gru_backward),
    "mgu": _fused("mgu", _mgu, _mgu_backward),
    "simple": _fused("simple", _simple, _simple_backward),
    "conv_lstm": ProbeCell(lambda p: p, lambda p, x: _conv(p["ih"], x), lambda p, h: _conv(p["hh"], h), _conv_lstm,
                           _lstm_backward("igfo")),
}
assert set(PROBE_CELLS) == set(CELLS), "every registered cell needs its probe form"


def cell_params(params: dict, cell: str) -> dict:
    """The Flax cell's own parameters inside a model's parameter tree."""
    return params["params"][f"{CELLS[cell].cls.__name__}_0"]
