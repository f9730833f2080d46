"""A cell's step as the log-scaled probe differentiates it: activations whose derivatives keep their size near
saturation, the factors of a step's backward pass kept with their exact logs, and :class:`ProbeCell`, the form each
cell family gives its step (:mod:`rnnlab.model.cell_families`: one file per family holds it beside the fused step).

``jnp.tanh``'s derivative is ``1 - tanh(x)^2`` and the sigmoid's ``s(x)(1 - s(x))``: in float32 both cancel to 0
once the activation rounds to +-1 (|x| above about 9 for tanh, 17 for the sigmoid) while the true derivative is
still 1e-8. Here tanh' is ``4 e^(-2|x|) / (1 + e^(-2|x|))^2`` and the sigmoid's ``s(x) s(-x)``: exact to float32
rounding until the derivative itself falls below float32's smallest normal number (|x| above about 44 for tanh,
87 for the sigmoid). The forward values are Flax's (``tests/test_log_probe.py`` checks every cell).

A :class:`ProbeCell` splits a step into ``project(p, x)`` (the input side, linear, for every step at once),
``hidden(p, h)`` and an elementwise ``forward``, which also gives the :class:`Derivatives` its hand-written
``backward`` multiplies by (the gates and the activations' derivatives, so the backward pass only multiplies);
``forward`` runs on one step or on every step at once, so a probe (:mod:`rnnlab.probing.logscale`) scans only the
carry and computes the derivatives for all steps together. :func:`flags` says whether any unit's derivative is
exactly 0 and whether any gate is exactly 0 at a step (what a zero gradient is then attributed to). Where some
example's factor is tiny, every factor is kept scaled per example with its exact log (:func:`scaled`); elsewhere the
factors are used as they are (:func:`plain`), which gives the same numbers to float32 rounding. A family's backward
pass combines its factors with :func:`times`, :func:`plus` and :func:`join`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from rnnlab.model.fused import FusedCell, project

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


def log_tanh_slope(x: jax.Array) -> jax.Array:
    """``log(1 - tanh(x)^2)`` as ``log 4 - 2|x| - 2 log1p(e^(-2|x|))``: exact however saturated."""
    a = jnp.abs(x)
    return jnp.log(4.0) - 2.0 * a - 2.0 * jnp.log1p(jnp.exp(-2.0 * a))


def log_sigmoid_slope(x: jax.Array) -> jax.Array:
    """``log(s(x) s(-x))`` as ``-|x| - 2 log1p(e^(-|x|))``."""
    a = jnp.abs(x)
    return -a - 2.0 * jnp.log1p(jnp.exp(-a))


def log_abs(x: jax.Array) -> jax.Array:
    return jnp.log(jnp.abs(x))


LOG_TINY = -40.0
"""Where a factor of the backward pass has its largest value in an example below ``e^LOG_TINY`` (its product with
another could fall below float32's range), the probe keeps every factor scaled (:func:`scaled`); otherwise it uses
them as they are (:func:`plain`)."""

Factor = tuple[jax.Array, jax.Array | None]
"""(value, shift): ``value * e^shift``, the shift per example in natural log; None for a shift of 0 everywhere."""


class Form(NamedTuple):
    """A factor of a step's backward pass as its forward pass gives it: the float32 ``value``, and how to compute its
    exact log magnitude and its sign (called only where some example's factor is tiny: :func:`scaled`)."""

    value: jax.Array
    log_abs: Callable[[], jax.Array]
    sign: Callable[[], jax.Array] | None = None


class Derivatives(NamedTuple):
    """What a step's forward pass gives its backward pass: the products it multiplies by (:class:`Form`), and each
    activation's derivative and each gate (a unit whose derivative is exactly 0 or a gate exactly 0 cuts a path)."""

    forms: tuple[Form, ...]
    slopes: tuple[jax.Array, ...]
    gates: tuple[jax.Array, ...]


def _per_example(a: jax.Array, b: jax.Array) -> jax.Array:
    """``a`` (one value per example, the leading axes of ``b``) shaped to broadcast against ``b``."""
    return a.reshape(a.shape + (1,) * (b.ndim - a.ndim))


def _example_peak(value: jax.Array, lead: int) -> jax.Array:
    return jnp.max(jnp.abs(value), axis=tuple(range(lead, value.ndim)))


def not_all_zero(forms: tuple[Form, ...], lead: int) -> tuple[jax.Array | None, ...]:
    """Per factor with a ``sign``, per example: whether its exact value is not 0 everywhere (its exact log is -inf
    only where its sign is 0); None for a factor without a sign (never exactly 0). Examples as for
    :func:`needs_scaling`."""
    return tuple(None if f.sign is None else jnp.any(f.sign() != 0, axis=tuple(range(lead, f.value.ndim)))
                 for f in forms)


def tiny_anywhere(values: tuple[jax.Array, ...], nonzero: tuple[jax.Array | None, ...], lead: int) -> jax.Array:
    """Whether some example's factor (``values``, with :func:`not_all_zero`'s ``nonzero``) has its largest value
    below ``e^LOG_TINY`` though it is not exactly 0."""
    tiny = [(_example_peak(v, lead) < math.exp(LOG_TINY)) & (True if n is None else n)
            for v, n in zip(values, nonzero)]
    return jnp.any(jnp.stack([jnp.any(t) for t in tiny]))


def needs_scaling(forms: tuple[Form, ...], lead: int) -> jax.Array:
    """Whether some example's factor is tiny (:data:`LOG_TINY`) anywhere, so that :func:`plain` could lose a
    gradient that :func:`scaled` keeps; an example is a value over the axes after the first ``lead`` (the
    batch's, or time's and the batch's). Found without the exact logs."""
    return tiny_anywhere(tuple(f.value for f in forms), not_all_zero(forms, lead), lead)


def scaled(forms: tuple[Form, ...], lead: int) -> tuple[Factor, ...]:
    """The factors kept scaled, as the backward pass multiplies by them where some factor is tiny: in every example,
    ``sign * e^(log_abs - top)`` and ``top`` (the example's largest log) as its shift (``value`` itself, shift 0,
    where the factor is exactly 0). Every factor, not only the tiny ones: a factor whose largest value is ordinary
    can still hold the tiny elements that carry the gradient past a shut gate. Examples as for
    :func:`needs_scaling`."""
    out = []
    for value, log_abs, sign in forms:
        logs = log_abs()
        top = jnp.max(logs, axis=tuple(range(lead, value.ndim)))
        live = jnp.isfinite(top)
        shift = jnp.where(live, top, 0.0)
        exact = jnp.exp(logs - _per_example(shift, logs)) * (1.0 if sign is None else sign())
        out.append((jnp.where(_per_example(live, value), exact, value), shift))
    return tuple(out)


def plain(forms: tuple[Form, ...]) -> tuple[Factor, ...]:
    """The factors as they are (no example's factor tiny: :func:`scaled` would give the same, every shift 0)."""
    return tuple((f.value, None) for f in forms)


def times(a: jax.Array | Factor, *factors: Factor) -> Factor:
    """The product of a cotangent (an array, or a factor) and factors, their shifts added."""
    value, shift = a if isinstance(a, tuple) else (a, None)
    for f, s in factors:
        value = value * f
        shift = s if shift is None else shift if s is None else shift + s
    return value, shift


def common(*terms: Factor) -> tuple[tuple[jax.Array, ...], jax.Array | None]:
    """The terms' values on one shift per example (the largest among the terms not 0 there) and that shift; a
    term already on it is left as it is. Terms whose shifts are all None (0) are left as they are."""
    if all(s is None for _, s in terms):
        return tuple(v for v, _ in terms), None
    shifts = [jnp.zeros(v.shape[:1], v.dtype) if s is None else s for v, s in terms]
    live = [jnp.where(jnp.any(v != 0, axis=tuple(range(1, v.ndim))), s, -jnp.inf) for (v, _), s in zip(terms, shifts)]
    top = functools.reduce(jnp.maximum, live)
    top = jnp.where(jnp.isfinite(top), top, 0.0)
    return tuple(jnp.where(_per_example(s == top, v), v, v * _per_example(jnp.exp(s - top), v))
                 for (v, _), s in zip(terms, shifts)), top


def plus(a: Factor, b: Factor) -> Factor:
    (x, y), shift = common(a, b)
    return x + y, shift


def join(parts: list[Factor]) -> Factor:
    values, shift = common(*parts)
    return jnp.concatenate(values, axis=-1), shift


def flags(d: Derivatives, keep: int = 0) -> jax.Array:
    """(*the first ``keep`` axes, 2) bool: some unit's derivative is exactly 0; some gate is exactly 0."""
    def any_zero(arrays: tuple[jax.Array, ...]) -> jax.Array:
        found = [jnp.any(a == 0, axis=tuple(range(keep, a.ndim))) for a in arrays]
        return functools.reduce(jnp.logical_or, found) if found else jnp.zeros(d.slopes[0].shape[:keep], bool)

    return jnp.stack([any_zero(d.slopes), any_zero(d.gates)], axis=-1)


Saved = tuple[Factor, ...]


@dataclass(frozen=True)
class ProbeCell:
    """One cell as the probe runs it: ``prepare`` the Flax parameters once; ``project`` inputs and ``hidden``
    (the carry's h) are the step's two linear maps; ``forward(carry, xp, hp) -> (new carry, derivatives)`` the
    rest (elementwise, over any leading axes: one step's batch, or every step's at once), and
    ``backward(saved, carry, d_new) -> ((direct, shift), d_xp, d_hp)`` its hand-written derivative, ``saved`` the
    derivatives' factors (:func:`scaled` or :func:`plain`): the previous carry's gradient other than through ``hp``,
    and the gradients of ``xp`` and ``hp``, each with its shift (:data:`Factor`: a saturated unit or a shut gate
    scales the gradient by e^shift). The derivative of ``forward`` with these activations equals ``backward``
    (``tests/test_log_probe.py``)."""

    prepare: Callable[[dict], Any]  # the Flax cell's parameters -> what project and hidden take
    project: Callable[[Any, jax.Array], jax.Array]
    hidden: Callable[[Any, jax.Array], jax.Array]
    forward: Callable[[Carry, jax.Array, jax.Array], tuple[Carry, Derivatives]]
    backward: Callable[[Saved, Carry, Carry], tuple[tuple[Carry, jax.Array | None], Factor, Factor]]

    def step(self, w, carry: Carry, xp: jax.Array) -> tuple[Carry, jax.Array]:
        """(new carry, flags (2,): :func:`flags`) from ``carry`` (h its last leaf) and projected inputs ``xp``."""
        new, derivatives = self.forward(carry, xp, self.hidden(w, carry[-1]))
        return new, flags(derivatives)


def probe_of_fused(cell: FusedCell, forward, backward) -> ProbeCell:
    """The probe form of a cell run fused: its fused weights and their two projections, with ``forward`` and
    ``backward`` (the family's log-scaled step)."""
    return ProbeCell(cell.weights, lambda w, x: project(w.w_in, w.b_in, x), lambda w, h: project(w.w_h, w.b_h, h),
                     forward, backward)
