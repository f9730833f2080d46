"""Fused execution of Flax's recurrent cells: the same functions of the same parameter trees, fewer ops per step.

This module runs a fused cell over time; each cell family's file (:mod:`rnnlab.model.cell_families`) holds its
:class:`FusedCell`: the step and its hand-written derivative, beside the family's log-scaled probe step.

Flax's cells apply one ``Dense`` per gate and per input (eight small matmuls per LSTM step). Here each cell's
kernels are concatenated once, outside the time loop, so a step makes one matmul of the inputs and one of the
carry, and the loop runs over a time-major array. Gradients flow back through the concatenation to Flax's own
kernels, so the parameter tree (and every view, download and upload that reads it) is unchanged.

Each cell also has a hand-written backward pass: the forward scan keeps the step's gate activations, a backward
scan computes only the carry's gradient (one matmul by the transposed recurrent kernel per step), and the kernels'
gradients are then one matmul each over all steps, where XLA's matmul runs near its peak. ``python -m rnnlab.bench
--only steps`` measures it against automatic differentiation of the same scan.

``tests/test_fused.py`` checks every fused cell against Flax's: outputs, final carries and gradients, for every
cell, carry mode and task, and the hand-written backward pass against automatic differentiation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp

Carry = tuple[jax.Array, ...]


class FusedWeights(NamedTuple):
    """A cell's kernels concatenated gate by gate: inputs (I, gH), carry (H, gH), and their biases."""

    w_in: jax.Array
    b_in: jax.Array | None
    w_h: jax.Array
    b_h: jax.Array | None


def _kernels(p: dict, names: tuple[str, ...]) -> jax.Array:
    """The kernels of Dense layers ``names`` side by side."""
    return jnp.concatenate([p[name]["kernel"] for name in names], axis=-1)


def _biases(p: dict, names: tuple[str, ...]) -> jax.Array | None:
    """The biases of Dense layers ``names`` side by side (a missing bias counts as zeros); None when none has one."""
    if all("bias" not in p[name] for name in names):
        return None
    return jnp.concatenate([p[name]["bias"] if "bias" in p[name] else jnp.zeros(p[name]["kernel"].shape[-1:])
                            for name in names], axis=-1)


Saved = tuple[jax.Array, ...]


@dataclass(frozen=True)
class FusedCell:
    """One cell's fused step, ``forward(carry, x_proj, h_proj) -> (new carry, saved)`` (leaves in the spec's
    order), and its hand-written derivative.

    ``x_proj = x_t @ w_in (+ b_in)`` and ``h_proj = h @ w_h (+ b_h)`` are the two matmuls of the step; ``saved``
    is what ``backward`` needs. ``backward(saved, carry, d_new)`` returns the gradient reaching the previous carry
    other than through ``h_proj``, the gradient of ``h_proj``, and the last block of ``x_proj``'s gradient where
    it differs from ``h_proj``'s (None where the two are equal). Without it, the step is differentiated
    automatically.
    """

    inputs: tuple[str, ...]  # Flax's Dense names for the input kernels, in the fused order
    hidden: tuple[str, ...]  # and for the carry kernels
    forward: Callable[[Carry, jax.Array, jax.Array], tuple[Carry, Saved]]
    backward: Callable[[Saved, Carry, Carry], tuple[Carry, jax.Array, jax.Array | None]] | None = None

    def weights(self, p: dict) -> FusedWeights:
        """The fused weights from a Flax cell's parameters ``p`` (differentiable: concatenations only)."""
        return FusedWeights(_kernels(p, self.inputs), _biases(p, self.inputs),
                            _kernels(p, self.hidden), _biases(p, self.hidden))

    def step(self, w: FusedWeights, carry: Carry, x: jax.Array) -> tuple[Carry, Saved]:
        """One step from ``carry`` (h its last leaf) on input ``x``: the new carry and the saved activations
        (a gated cell's gates among them: :class:`rnnlab.model.gates.GateSpec`)."""
        return self.forward(carry, project(w.w_in, w.b_in, x), project(w.w_h, w.b_h, carry[-1]))


def project(w: jax.Array, b: jax.Array | None, x: jax.Array) -> jax.Array:
    """``x @ w (+ b)``: one of a step's two matmuls (the inputs' or the carry's), over any leading axes."""
    y = x @ w
    return y if b is None else y + b


def _sum_rows(d: jax.Array) -> jax.Array:
    return d.reshape(-1, d.shape[-1]).sum(axis=0)


def _rows_product(a: jax.Array, d: jax.Array) -> jax.Array:
    """``sum_t a_t^T d_t`` over time-major (T, B, m) and (T, B, n) as one matmul: (m, n)."""
    return a.reshape(-1, a.shape[-1]).T @ d.reshape(-1, d.shape[-1])


def _advance(cell: FusedCell, w: FusedWeights, carry: Carry, x_t: jax.Array,
             e_t: jax.Array | None) -> tuple[Carry, Saved]:
    """One step from ``carry`` on input ``x_t`` (h is the carry's last leaf), plus ``e_t`` on every leaf."""
    new, saved = cell.step(w, carry, x_t)
    if e_t is not None:
        new = tuple(leaf + e for leaf, e in zip(new, jnp.split(e_t, len(new), axis=-1)))
    return new, saved


def _plain_scan(cell: FusedCell, unroll: int, keep_last: bool, w: FusedWeights, carry0: Carry, xs: jax.Array,
                eps: jax.Array | None, steps: jax.Array) -> tuple[Carry, jax.Array]:
    """Time-major scan of ``cell``: (carry after ``steps`` (the last step unless ``keep_last``), h at every
    step, (T, B, H)). ``eps`` (T, B, leaves * H) or None is added to the carry after every step."""
    h_index = len(carry0) - 1  # h is the last leaf of every fused cell's carry

    def body(carry, inputs):
        new, _ = _advance(cell, w, carry, *inputs)
        return new, new[h_index]

    def body_keeping_last(state, inputs):  # also keeps the carry after step ``steps``
        carry, final, t = state
        new, _ = _advance(cell, w, carry, *inputs)
        final = tuple(jnp.where(t == steps - 1, n, f) for n, f in zip(new, final))
        return (new, final, t + 1), new[h_index]

    carry0 = tuple(carry0)
    if not keep_last:
        return jax.lax.scan(body, carry0, (xs, eps), unroll=unroll)
    (_, final, _), hs = jax.lax.scan(body_keeping_last, (carry0, carry0, jnp.zeros((), jnp.int32)), (xs, eps),
                                     unroll=unroll)
    return final, hs


@partial(jax.custom_vjp, nondiff_argnums=(0, 1, 2))
def _hand_scan(cell: FusedCell, unroll: int, keep_last: bool, w: FusedWeights, carry0: Carry, xs: jax.Array,
               eps: jax.Array | None, steps: jax.Array) -> tuple[Carry, jax.Array]:
    """:func:`_plain_scan`, differentiated by the cell's hand-written backward pass."""
    return _plain_scan(cell, unroll, keep_last, w, carry0, xs, eps, steps)


Residuals = tuple


def _hand_forward(cell: FusedCell, unroll: int, keep_last: bool, w: FusedWeights, carry0: Carry, xs: jax.Array,
                  eps: jax.Array | None, steps: jax.Array) -> tuple[tuple[Carry, jax.Array], Residuals]:
    """The scan keeping what the backward pass needs: every step's carry and gate activations."""
    h_index = len(carry0) - 1

    def body(carry, inputs):
        new, saved = _advance(cell, w, carry, *inputs)
        return new, (new, saved)

    _, (carries, saved) = jax.lax.scan(body, tuple(carry0), (xs, eps), unroll=unroll)
    final = tuple(leaf[steps - 1] for leaf in carries)
    return (final, carries[h_index]), (w, tuple(carry0), xs, eps is not None, steps, carries, saved)


def _hand_backward(cell: FusedCell, unroll: int, keep_last: bool, residuals: Residuals,
                   cotangents: tuple[Carry, jax.Array]) -> tuple:
    """A backward scan for the carry's gradient only, then each kernel's gradient as one matmul over all steps."""
    w, carry0, xs, has_eps, steps, carries, saved = residuals
    d_final, d_hs = cotangents
    backward = cell.backward
    if backward is None:
        raise ValueError("this fused cell has no hand-written backward pass")
    h_index = len(carry0) - 1
    before = tuple(jnp.concatenate([c0[None], leaf[:-1]], axis=0) for c0, leaf in zip(carry0, carries))
    w_h_t = w.w_h.T
    last = steps - 1

    def body(d_carry, inputs):
        t, d_h, saved_t, carry_t = inputs
        d_new = tuple(d + jnp.where(t == last, f, 0.0) + (d_h if i == h_index else 0.0)
                      for i, (d, f) in enumerate(zip(d_carry, d_final)))
        direct, d_hp, d_x_last = backward(saved_t, carry_t, d_new)
        d_prev = tuple(d + d_hp @ w_h_t if i == h_index else d for i, d in enumerate(direct))
        return d_prev, (d_hp, d_x_last, jnp.concatenate(d_new, axis=-1) if has_eps else None)

    T = xs.shape[0]
    d_carry0, (d_hp, d_x_last, d_eps) = jax.lax.scan(
        body, tuple(jnp.zeros_like(c) for c in carry0), (jnp.arange(T), d_hs, saved, before), reverse=True,
        unroll=unroll)
    d_w_in, d_xs = _rows_product(xs, d_hp), d_hp @ w.w_in.T
    d_b_in = None if w.b_in is None else _sum_rows(d_hp)
    if d_x_last is not None:  # the input side's last block differs from h_proj's: swap it in
        width = d_x_last.shape[-1]
        d_w_in = d_w_in.at[:, -width:].set(_rows_product(xs, d_x_last))
        d_xs = d_xs + (d_x_last - d_hp[..., -width:]) @ w.w_in[:, -width:].T
        d_b_in = None if d_b_in is None else d_b_in.at[-width:].set(_sum_rows(d_x_last))
    d_w = FusedWeights(d_w_in, d_b_in, _rows_product(before[h_index], d_hp),
                       None if w.b_h is None else _sum_rows(d_hp))
    return d_w, d_carry0, d_xs, d_eps, None


_hand_scan.defvjp(_hand_forward, _hand_backward)


def fused_scan(cell: FusedCell, params: dict, carry0: Carry, xs: jax.Array, eps: jax.Array | None = None,
               steps: jax.Array | None = None, unroll: int = 1, hand_backward: bool = True) -> tuple[Carry, jax.Array]:
    """Run ``cell`` (a cell spec's fused form, :attr:`rnnlab.model.cells.CellSpec.fused`) over ``xs`` from
    ``carry0``, as ``nn.RNN`` does.

    Args:
      params: the Flax cell's parameters (``{'ii': {'kernel': ...}, ...}``).
      carry0: the carry leaves in the cell spec's order, each (batch, features).
      xs: inputs, (batch, steps, in_features).
      eps: optional perturbation added to every carry leaf after each step, (batch, steps, leaves * features);
        the perturbed hidden state is then also the step's output (what the gradient probe differentiates).
      steps: the final carry returned is the one after this many steps (the rest is padding); all by default.
      hand_backward: differentiate with the cell's hand-written backward pass where it has one (a backward scan
        for the carry's gradient only, then the weight gradients as one matmul over all steps); otherwise
        automatically.

    Returns:
      (final carry, outputs (batch, steps, features)).
    """
    scan = _hand_scan if hand_backward and cell.backward is not None else _plain_scan
    last = jnp.asarray(xs.shape[1] if steps is None else steps, jnp.int32)
    final, hs = scan(cell, unroll, steps is not None, cell.weights(params), tuple(carry0), jnp.swapaxes(xs, 0, 1),
                     None if eps is None else jnp.swapaxes(eps, 0, 1), last)
    return final, jnp.swapaxes(hs, 0, 1)
