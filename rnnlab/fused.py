"""Fused execution of Flax's recurrent cells: the same functions of the same parameter trees, fewer ops per step.

Flax's cells apply one ``Dense`` per gate and per input (eight small matmuls per LSTM step). Here each cell's
kernels are concatenated once, outside the time loop, so a step makes one matmul of the inputs and one of the
carry, and the loop runs over a time-major array. Gradients flow back through the concatenation to Flax's own
kernels, so the parameter tree (and every view, download and upload that reads it) is unchanged.

Tried and measured, not kept (``python -m rnnlab.bench --only steps`` reports the numbers): a hand-written backward
pass (a backward scan for the carry gradient only, the weight gradients as one matmul over all steps after it),
and one matmul of ``[x, h]`` per step instead of two.

``tests/test_fused.py`` checks every fused cell against Flax's: outputs, final carries and gradients, for every
cell, carry mode and task.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import jax
import jax.numpy as jnp

Carry = tuple[jax.Array, ...]


@dataclass(frozen=True)
class FusedWeights:
    """A cell's kernels concatenated gate by gate: inputs (I, gH), carry (H, gH), and their biases."""

    w_in: jax.Array
    b_in: jax.Array | None
    w_h: jax.Array
    b_h: jax.Array | None


def _concat(p: dict, names: tuple[str, ...], part: str) -> jax.Array | None:
    """The ``part`` ("kernel" or "bias") of Dense layers ``names`` side by side; a missing bias counts as zeros."""
    if part == "bias":
        if all("bias" not in p[name] for name in names):
            return None
        return jnp.concatenate([p[name]["bias"] if "bias" in p[name] else jnp.zeros(p[name]["kernel"].shape[-1:])
                                for name in names], axis=-1)
    return jnp.concatenate([p[name][part] for name in names], axis=-1)


@dataclass(frozen=True)
class FusedCell:
    """One cell's fused step: ``step(carry, x_proj, h_proj) -> new carry`` (leaves in the spec's order).

    ``x_proj = x_t @ w_in (+ b_in)`` and ``h_proj = h @ w_h (+ b_h)`` are the two matmuls of the step.
    """

    inputs: tuple[str, ...]  # Flax's Dense names for the input kernels, in the fused order
    hidden: tuple[str, ...]  # and for the carry kernels
    step: Callable[[Carry, jax.Array, jax.Array], Carry]

    def weights(self, p: dict) -> FusedWeights:
        """The fused weights from a Flax cell's parameters ``p`` (differentiable: concatenations only)."""
        return FusedWeights(_concat(p, self.inputs, "kernel"), _concat(p, self.inputs, "bias"),
                            _concat(p, self.hidden, "kernel"), _concat(p, self.hidden, "bias"))


def _lstm_step(carry: Carry, xp: jax.Array, hp: jax.Array) -> Carry:
    c, _ = carry
    i, f, g, o = jnp.split(xp + hp, 4, axis=-1)
    new_c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
    return new_c, jax.nn.sigmoid(o) * jnp.tanh(new_c)


def _gru_step(carry: Carry, xp: jax.Array, hp: jax.Array) -> Carry:
    (h,) = carry
    xr, xz, xn = jnp.split(xp, 3, axis=-1)
    hr, hz, hn = jnp.split(hp, 3, axis=-1)
    r = jax.nn.sigmoid(xr + hr)
    z = jax.nn.sigmoid(xz + hz)
    n = jnp.tanh(xn + r * hn)
    return ((1.0 - z) * n + z * h,)


def _mgu_step(carry: Carry, xp: jax.Array, hp: jax.Array) -> Carry:
    (h,) = carry
    xf, xn = jnp.split(xp, 2, axis=-1)
    hf, hn = jnp.split(hp, 2, axis=-1)
    f = jax.nn.sigmoid(xf + hf)
    n = jnp.tanh(xn + f * hn)
    return ((1.0 - f) * n + f * h,)


def _simple_step(carry: Carry, xp: jax.Array, hp: jax.Array) -> Carry:
    return (jnp.tanh(xp + hp),)


_LSTM = FusedCell(("ii", "if", "ig", "io"), ("hi", "hf", "hg", "ho"), _lstm_step)

FUSED_CELLS: dict[str, FusedCell] = {
    "lstm": _LSTM,
    "optimized_lstm": _LSTM,
    "gru": FusedCell(("ir", "iz", "in"), ("hr", "hz", "hn"), _gru_step),
    "mgu": FusedCell(("if", "in"), ("hf", "hn"), _mgu_step),
    "simple": FusedCell(("i",), ("h",), _simple_step),
}


def _project(w: jax.Array, b: jax.Array | None, x: jax.Array) -> jax.Array:
    y = x @ w
    return y if b is None else y + b


def fused_scan(name: str, params: dict, carry0: Carry, xs: jax.Array, eps: jax.Array | None = None,
               steps: jax.Array | None = None, unroll: int = 1) -> tuple[Carry, jax.Array]:
    """Run cell ``name`` (a key of :data:`FUSED_CELLS`) over ``xs`` from ``carry0``, as ``nn.RNN`` does.

    Args:
      params: the Flax cell's parameters (``{'ii': {'kernel': ...}, ...}``).
      carry0: the carry leaves in the cell spec's order, each (batch, features).
      xs: inputs, (batch, steps, in_features).
      eps: optional perturbation added to every carry leaf after each step, (batch, steps, leaves * features);
        the perturbed hidden state is then also the step's output (what the gradient probe differentiates).
      steps: the final carry returned is the one after this many steps (the rest is padding); all by default.

    Returns:
      (final carry, outputs (batch, steps, features)).
    """
    cell = FUSED_CELLS[name]
    w = cell.weights(params)
    h_index = len(carry0) - 1  # h is the last leaf of every fused cell's carry

    def advance(carry: Carry, x_t: jax.Array, e_t: jax.Array | None) -> Carry:
        new = cell.step(carry, _project(w.w_in, w.b_in, x_t), _project(w.w_h, w.b_h, carry[h_index]))
        if e_t is None:
            return new
        return tuple(leaf + e for leaf, e in zip(new, jnp.split(e_t, len(new), axis=-1)))

    def body(carry, inputs):
        new = advance(carry, *inputs)
        return new, new[h_index]

    def body_keeping_last(state, inputs):  # also keeps the carry after step ``steps``
        carry, final, t = state
        new = advance(carry, *inputs)
        final = tuple(jnp.where(t == steps - 1, n, f) for n, f in zip(new, final))
        return (new, final, t + 1), new[h_index]

    carry0 = tuple(carry0)
    scanned = (jnp.swapaxes(xs, 0, 1), None if eps is None else jnp.swapaxes(eps, 0, 1))
    if steps is None:
        final, hs = jax.lax.scan(body, carry0, scanned, unroll=unroll)
    else:
        steps = jnp.asarray(steps, jnp.int32)
        (_, final, _), hs = jax.lax.scan(body_keeping_last, (carry0, carry0, jnp.zeros((), jnp.int32)), scanned,
                                         unroll=unroll)
    return final, jnp.swapaxes(hs, 0, 1)
