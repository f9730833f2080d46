"""The cells' steps as the log-scaled probe differentiates them: Flax's formulas on Flax's parameter trees, with
activations whose derivatives keep their size near saturation.

``jnp.tanh``'s derivative is ``1 - tanh(x)^2`` and the sigmoid's ``s(x)(1 - s(x))``: in float32 both cancel to 0
once the activation rounds to +-1 (|x| above about 9 for tanh, 17 for the sigmoid) while the true derivative is
still 1e-8. Here tanh' is ``4 e^(-2|x|) / (1 + e^(-2|x|))^2`` and the sigmoid's ``s(x) s(-x)``: exact to float32
rounding until the derivative itself falls below float32's smallest normal number (|x| above about 44 for tanh,
87 for the sigmoid). The forward values are Flax's (``tests/test_log_probe.py`` checks every cell).

A :class:`ProbeCell` splits a step into ``project(p, x)`` (the input side, linear, for every step at once),
``hidden(p, h)`` and an elementwise ``forward``, which also gives the :class:`Derivatives` its hand-written
``backward`` multiplies by (the gates and the activations' derivatives, so the backward pass only multiplies);
``forward`` runs on one step or on every step at once, so a probe scans only the carry and computes the
derivatives for all steps together. :func:`flags` says whether any unit's derivative is exactly 0 and whether any
gate is exactly 0 at a step (what a zero gradient is then attributed to). Where some example's factor is tiny,
every factor is kept scaled per example with its exact log (:func:`scaled`); elsewhere the factors are used as
they are (:func:`plain`), which gives the same numbers to float32 rounding.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple, cast

import flax.linen as nn
import jax
import jax.numpy as jnp

from rnnlab.model import fused as forms
from rnnlab.model.cells import CELLS
from rnnlab.model.fused import FusedCell

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


def _log_abs(x: jax.Array) -> jax.Array:
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


def _times(a: jax.Array | Factor, *factors: Factor) -> Factor:
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


def _plus(a: Factor, b: Factor) -> Factor:
    (x, y), shift = common(a, b)
    return x + y, shift


def _join(parts: list[Factor]) -> Factor:
    values, shift = common(*parts)
    return jnp.concatenate(values, axis=-1), shift


def flags(d: Derivatives, keep: int = 0) -> jax.Array:
    """(*the first ``keep`` axes, 2) bool: some unit's derivative is exactly 0; some gate is exactly 0."""
    def any_zero(arrays: tuple[jax.Array, ...]) -> jax.Array:
        found = [jnp.any(a == 0, axis=tuple(range(keep, a.ndim))) for a in arrays]
        return functools.reduce(jnp.logical_or, found) if found else jnp.zeros(d.slopes[0].shape[:keep], bool)

    return jnp.stack([any_zero(d.slopes), any_zero(d.gates)], axis=-1)


def _dense(w: jax.Array, b: jax.Array | None, x: jax.Array) -> jax.Array:
    y = x @ w
    return y if b is None else y + b


def _lstm_core(c: jax.Array, pi, pf, pg, po):
    i, f, g, o = sigmoid(pi), sigmoid(pf), tanh(pg), sigmoid(po)
    new_c = f * c + i * g
    tanh_c = tanh(new_c)
    si, sf, sg, so, sc = (sigmoid_slope(pi), sigmoid_slope(pf), tanh_slope(pg), sigmoid_slope(po), tanh_slope(new_c))
    forms = (Form(f, lambda: jax.nn.log_sigmoid(pf)),  # the products the backward pass multiplies by
             Form(o * sc, lambda: jax.nn.log_sigmoid(po) + log_tanh_slope(new_c)),
             Form(g * si, lambda: _log_abs(g) + log_sigmoid_slope(pi), lambda: jnp.sign(g)),
             Form(c * sf, lambda: _log_abs(c) + log_sigmoid_slope(pf), lambda: jnp.sign(c)),
             Form(i * sg, lambda: jax.nn.log_sigmoid(pi) + log_tanh_slope(pg)),
             Form(tanh_c * so, lambda: _log_abs(tanh_c) + log_sigmoid_slope(po), lambda: jnp.sign(tanh_c)))
    return (new_c, o * tanh_c), Derivatives(forms, (si, sf, sg, so, sc), (i, f, o))


def _lstm(carry: Carry, xp: jax.Array, hp: jax.Array):
    pi, pf, pg, po = jnp.split(xp + hp, 4, axis=-1)
    return _lstm_core(carry[0], pi, pf, pg, po)


def _conv_lstm(carry: Carry, xp: jax.Array, hp: jax.Array):
    pi, pg, pf, po = jnp.split(xp + hp, 4, axis=-1)
    return _lstm_core(carry[0], pi, pf + 1.0, pg, po)


def _lstm_backward(order: str):
    def backward(saved, carry: Carry, d_new: Carry):
        f, o_sc, g_si, c_sf, i_sg, tanh_c_so = saved
        d_c = _plus(_times(d_new[0]), _times(d_new[1], o_sc))
        parts = {"i": _times(d_c, g_si), "f": _times(d_c, c_sf), "g": _times(d_c, i_sg),
                 "o": _times(d_new[1], tanh_c_so)}
        d_pre = _join([parts[k] for k in order])
        d_c_before, shift = _times(d_c, f)
        return ((d_c_before, jnp.zeros_like(carry[1])), shift), d_pre, d_pre

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
    forms = (Form(r, lambda: jax.nn.log_sigmoid(pr)), Form(z, lambda: jax.nn.log_sigmoid(pz)),
             Form((1.0 - z) * sn, lambda: jax.nn.log_sigmoid(-pz) + log_tanh_slope(pn)),
             Form(hn * sr, lambda: _log_abs(hn) + log_sigmoid_slope(pr), lambda: jnp.sign(hn)),
             Form((h - n) * sz, lambda: _log_abs(h - n) + log_sigmoid_slope(pz), lambda: jnp.sign(h - n)))
    return ((1.0 - z) * n + z * h,), Derivatives(forms, (sr, sz, sn), (r, z))


def _gru_backward(saved, carry: Carry, d_new: Carry):
    r, z, keep_sn, hn_sr, h_n_sz = saved
    (d_h,) = d_new
    d_pn = _times(d_h, keep_sn)
    d_pr = _times(d_pn, hn_sr)
    d_pz = _times(d_h, h_n_sz)
    direct, shift = _times(d_h, z)
    return ((direct,), shift), _join([d_pr, d_pz, d_pn]), _join([d_pr, d_pz, _times(d_pn, r)])


def _mgu(carry: Carry, xp: jax.Array, hp: jax.Array):
    (h,) = carry
    xf, xn = jnp.split(xp, 2, axis=-1)
    hf, hn = jnp.split(hp, 2, axis=-1)
    pf = xf + hf
    f = sigmoid(pf)
    pn = xn + f * hn
    n = tanh(pn)
    sf, sn = sigmoid_slope(pf), tanh_slope(pn)
    forms = (Form(f, lambda: jax.nn.log_sigmoid(pf)),
             Form((1.0 - f) * sn, lambda: jax.nn.log_sigmoid(-pf) + log_tanh_slope(pn)),
             Form((h - n) * sf, lambda: _log_abs(h - n) + log_sigmoid_slope(pf), lambda: jnp.sign(h - n)),
             Form(hn * sf, lambda: _log_abs(hn) + log_sigmoid_slope(pf), lambda: jnp.sign(hn)))
    return ((1.0 - f) * n + f * h,), Derivatives(forms, (sf, sn), (f,))


def _mgu_backward(saved, carry: Carry, d_new: Carry):
    f, keep_sn, h_n_sf, hn_sf = saved
    (d_h,) = d_new
    d_pn = _times(d_h, keep_sn)
    d_pf = _plus(_times(d_h, h_n_sf), _times(d_pn, hn_sf))
    direct, shift = _times(d_h, f)
    return ((direct,), shift), _join([d_pf, d_pn]), _join([d_pf, _times(d_pn, f)])


def _simple(carry: Carry, xp: jax.Array, hp: jax.Array):
    pre = xp + hp
    slope = tanh_slope(pre)
    return (tanh(pre),), Derivatives((Form(slope, lambda: log_tanh_slope(pre)),), (slope,), ())


def _simple_backward(saved, carry: Carry, d_new: Carry):
    d_pre = _times(d_new[0], saved[0])
    return ((jnp.zeros_like(carry[0]),), d_pre[1]), d_pre, d_pre


def _conv(p: dict, x: jax.Array) -> jax.Array:
    """Flax's ``Conv`` (SAME padding, as the ConvLSTM uses it) with parameters ``p``, over any leading axes."""
    kernel = p["kernel"]
    conv = nn.Conv(features=kernel.shape[-1], kernel_size=kernel.shape[:-2], use_bias="bias" in p)
    lead = x.shape[:-3]
    out = cast(jax.Array, conv.apply({"params": p}, x.reshape((-1,) + x.shape[-3:])))
    return out.reshape(lead + out.shape[1:])


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


def _fused(cell: FusedCell, forward, backward) -> ProbeCell:
    return ProbeCell(cell.weights, lambda w, x: _dense(w.w_in, w.b_in, x), lambda w, h: _dense(w.w_h, w.b_h, h),
                     forward, backward)


# The log-scaled step of each fused form's maths (a cell's spec names its fused form), and of the cells without one
# by their Flax class.
BY_FUSED_FORM: dict[FusedCell, ProbeCell] = {
    forms.LSTM: _fused(forms.LSTM, _lstm, _lstm_backward("ifgo")),
    forms.GRU: _fused(forms.GRU, _gru, _gru_backward),
    forms.MGU: _fused(forms.MGU, _mgu, _mgu_backward),
    forms.SIMPLE: _fused(forms.SIMPLE, _simple, _simple_backward),
}
BY_FLAX_CLASS: dict[Callable[..., nn.RNNCellBase], ProbeCell] = {
    nn.ConvLSTMCell: ProbeCell(lambda p: p, lambda p, x: _conv(p["ih"], x), lambda p, h: _conv(p["hh"], h),
                               _conv_lstm, _lstm_backward("igfo")),
}


def probe_cell(name: str) -> ProbeCell:
    """The probe form of the registered cell ``name``: found by its spec's fused form, else by its Flax class."""
    spec = CELLS[name]
    form = BY_FUSED_FORM.get(spec.fused) if spec.fused is not None else BY_FLAX_CLASS.get(spec.cls)
    if form is None:
        raise LookupError(f"the {name} cell has no log-scaled probe form: add its step to rnnlab.probing.probe_cells "
                          f"(BY_FUSED_FORM for its fused form, or BY_FLAX_CLASS for {spec.cls.__name__})")
    return form


class _ProbeCells(Mapping[str, ProbeCell]):
    """Every registered cell's probe form by the cell's name, read from the registry when asked."""

    def __getitem__(self, name: str) -> ProbeCell:
        return probe_cell(name)

    def __contains__(self, name: object) -> bool:
        return name in CELLS

    def __iter__(self) -> Iterator[str]:
        return iter(CELLS)

    def __len__(self) -> int:
        return len(CELLS)


PROBE_CELLS: Mapping[str, ProbeCell] = _ProbeCells()


def check_every_cell() -> None:
    """Raise :class:`LookupError` naming what is missing where a registered cell has no probe form."""
    for name in CELLS:
        probe_cell(name)


check_every_cell()


def cell_params(params: dict, cell: str) -> dict:
    """The Flax cell's own parameters inside a model's parameter tree."""
    return params["params"][f"{CELLS[cell].cls.__name__}_0"]
