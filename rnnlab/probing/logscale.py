"""Gradient probes at their true size, however small: the cotangent's scale is carried as a logarithm.

A float32 backward pass loses a gradient once it falls below float32's smallest normal number (about 1.2e-38):
it comes out 0, the same 0 as a gradient cut by a saturated unit. Here the backward pass is a reverse scan that
applies the vector-Jacobian product of one cell step (the cell's :class:`~rnnlab.model.probe_step.ProbeCell`, in
its family's file) to a cotangent kept as a vector of norm 1 per example and its size as log10, renormalised at
every step; the loss's contribution at each step is added in the log domain (both rescaled to the larger). So
||dL/dh_t|| (and ||dy_T/dx_t||) is known as log10 to float32's relative precision at every step, 1e-500 as well
as 1e-5. Its log10 is -inf only where the gradient is exactly 0 by the cell's arithmetic, and then
:func:`zero_causes` says why and where:

- ``unread``: nothing the loss reads depends on this carry (the LSTM's cell state c after the last step);
- ``saturated``: at step ``zero_at`` every path back passes through units whose derivative is exactly 0;
- ``gate``: at step ``zero_at`` a gate is exactly 0 and closes the path back;
- ``cancelled``: at step ``zero_at`` the step's weights map the gradient to 0.

The backward pass multiplies by each step's factors (gates, activations' derivatives) as the forward pass gives
them; only where some example's factor is tiny (:func:`needs_exact_logs`) does a second forward pass keep them
scaled with their exact logs (saturated units and shut gates at their true size), the same numbers elsewhere.
Sizes are kept per example (an example whose gradient decays slowly overtakes one that starts larger) and the
scale's logarithm in two float32 numbers (a compensated sum), so the result is combined on the host in float64.
Long sequences are probed in segments of :func:`rnnlab.probing.probe_segments.segment_length` steps, each
segment's forward pass recomputed from the carry at its start, calling ``progress(fraction)`` between them.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from rnnlab.model import probe_step
from rnnlab.norms import scaled_norm
from rnnlab.probing import probe_segments
from rnnlab.training.program import Program
from rnnlab.true_sizes import F32_LOG10_FLOOR, F32_TINY, F64_LOG10_FLOOR, F64_TINY

FractionDone = probe_segments.FractionDone
FLOORS = {"float32": (F32_TINY, F32_LOG10_FLOOR), "float64": (F64_TINY, F64_LOG10_FLOOR)}  # reference lines


@dataclass(frozen=True)
class LogGrads:
    """||dL/dh_t|| for t = 0..steps per carry leaf, as log10 (``-inf`` for an exact 0), and each zero's cause."""

    leaves: tuple[str, ...]
    log10: np.ndarray  # (leaves, steps + 1), float64
    zero_cause: np.ndarray  # (leaves, steps + 1), str: a cause named above, "" where not 0
    zero_at: np.ndarray  # (leaves, steps + 1), int: the step whose arithmetic cut it, -1 where none

    def values(self) -> np.ndarray:
        """The norms as float64 numbers (0 where below float64's range)."""
        return to_float(self.log10)

    def h0_log10(self) -> float:
        """log10 ||dL/dh_0|| over every leaf together."""
        return float(log10_hypot(self.log10[:, 0], axis=0))


def to_float(log10: np.ndarray | float) -> np.ndarray:
    """``10 ** log10`` in float64: 0 for -inf and for sizes below float64's range."""
    with np.errstate(under="ignore", over="ignore"):
        return np.power(10.0, np.asarray(log10, np.float64))


def log10_hypot(log10: np.ndarray, axis: int) -> np.ndarray:
    """log10 of ``sqrt(sum 10^(2 x))`` over ``axis`` (the norm of parts from their log10 norms), in float64."""
    x = np.asarray(log10, np.float64)
    m = np.max(x, axis=axis, keepdims=True)
    safe = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore", under="ignore"):
        total = np.log10(np.sum(np.power(10.0, 2 * (x - safe)), axis=axis, keepdims=True))
    return np.squeeze(np.where(np.isfinite(m), safe + 0.5 * total, m), axis=axis)


def log10_mean(log10: np.ndarray, axis: int) -> np.ndarray:
    """log10 of the mean of ``10^x`` over ``axis``, in float64."""
    x = np.asarray(log10, np.float64)
    m = np.max(x, axis=axis, keepdims=True)
    safe = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore", under="ignore"):
        mean = np.log10(np.mean(np.power(10.0, x - safe), axis=axis, keepdims=True))
    return np.squeeze(np.where(np.isfinite(m), safe + mean, m), axis=axis)


def needs_flags(log10: np.ndarray) -> bool:
    """Whether some exact 0 of ``log10`` (leaves, steps + 1) is cut by a step (not inherited from the steps after
    it), so that :func:`zero_causes` needs the steps' flags."""
    zero = np.isneginf(log10)
    return bool((zero[:, :-1].any(axis=0) & ~zero[:, 1:].all(axis=0)).any())


def zero_causes(log10: np.ndarray, flags: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Why each exact 0 of ``log10`` (leaves, steps + 1) is 0, from ``flags`` (steps + 1, 2): at step t, whether
    some unit's derivative and some gate are exactly 0 (None when :func:`needs_flags` is False). Returns
    (cause, zero_at), as :class:`LogGrads` holds them.

    A leaf at step t is 0 either because everything after it is 0 (it inherits that cause, or ``unread`` when
    nothing after it reaches the loss), or because step t + 1's Jacobian maps a non-zero gradient to 0.
    """
    n_leaves, n = log10.shape
    at = np.full((n_leaves, n), -1, dtype=int)
    zero = np.isneginf(log10)
    if not zero.any():
        return np.full((n_leaves, n), ""), at
    cause = np.full((n_leaves, n), "", dtype=object)
    for step in np.flatnonzero(zero.any(axis=0))[::-1]:
        if step == n - 1 or zero[:, step + 1].all():
            inherited = [(c, a) for c, a in zip(cause[:, step + 1], at[:, step + 1]) if c and c != "unread"] \
                if step < n - 1 else []
            why, where = inherited[0] if inherited else ("unread", -1)
        else:
            assert flags is not None, "a step cut the gradient: zero_causes needs the steps' flags"
            dead, closed = flags[step + 1]
            why, where = ("gate" if closed else "saturated" if dead else "cancelled"), step + 1
        for leaf in np.flatnonzero(zero[:, step]):
            cause[leaf, step], at[leaf, step] = why, where
    return cause.astype(str), at


# ---- the scan -------------------------------------------------------------------------------------------------


def _per_example(a: jax.Array, b: jax.Array) -> jax.Array:
    """(B,) ``a`` shaped to broadcast against a leaf ``b`` (B, ...)."""
    return a.reshape(a.shape + (1,) * (b.ndim - 1))


def _example_max(leaves) -> jax.Array:
    """(B,): each example's largest magnitude over every leaf."""
    return jnp.max(jnp.stack([jnp.max(jnp.abs(leaf), axis=tuple(range(1, leaf.ndim))) for leaf in leaves]), axis=0)


def _example_norms(leaf: jax.Array, lead: int = 1) -> jax.Array:
    """Each example's norm of ``leaf`` (over the axes after the first ``lead``), scaled (no underflow in squares)."""
    return scaled_norm(leaf, axis=tuple(range(lead, leaf.ndim)))


def _rescale(w, hi, lo, shift=None):
    """``w * e^shift * 10^(hi + lo)`` as (w divided by its largest magnitude per example, hi, lo): lo carries hi's
    rounding error (a compensated sum); hi is -inf where w is 0. ``shift`` (B,), natural log, 0 when None (added on
    its own, so that a shift of 0 changes nothing)."""
    n = _example_max(w)
    live = n > 0
    safe = jnp.where(live, n, 1.0)
    new_hi, new_lo = _compensated(hi, lo, jnp.log10(safe))
    if shift is not None:
        new_hi, new_lo = _compensated(new_hi, new_lo, shift * LOG10_E)
    inverse = 1.0 / safe
    v = tuple(leaf * _per_example(inverse, leaf) for leaf in w)
    return v, jnp.where(live, new_hi, -jnp.inf), jnp.where(live, new_lo, 0.0)


LOG10_E = np.float32(np.log10(np.e))  # a natural log times this is its log10


def _compensated(hi, lo, d):
    """``hi + d`` with its rounding error carried in ``lo``."""
    new_hi = hi + d
    return new_hi, lo + ((hi - new_hi) + d)


def _add(state, u, lu, leaf: int):
    """``state + u * 10^lu`` on carry leaf ``leaf`` (u of largest magnitude 1 per example, or 0; lu its log10 or
    -inf), both rescaled to the larger: (w, log10 of its scale, 0), w's largest magnitude at most 2."""
    v, hi, lo = state
    has_v, has_u = jnp.isfinite(hi), jnp.isfinite(lu)
    m = jnp.where(has_v & (~has_u | (hi >= lu)), hi, lu)
    safe = jnp.where(jnp.isfinite(m), m, 0.0)
    fv = jnp.where(has_v, jnp.power(10.0, (jnp.where(has_v, hi, 0.0) - safe) + lo), 0.0)
    fu = jnp.where(has_u, jnp.power(10.0, jnp.where(has_u, lu, 0.0) - safe), 0.0)
    w = tuple(a * _per_example(fv, a) + (u * _per_example(fu, u) if i == leaf else 0.0) for i, a in enumerate(v))
    return w, m, jnp.zeros_like(lo)


def _leaf_logs(v, lead: int = 1) -> jax.Array:
    """(leaves, *lead axes): log10 of each leaf's norm per example (-inf where 0)."""
    return jnp.stack([jnp.log10(_example_norms(leaf, lead)) for leaf in v])


def zero_state(carry):
    """The cotangent 0 for a carry (leaves with a batch axis first)."""
    batch = carry[0].shape[0]
    return (tuple(jnp.zeros_like(c) for c in carry), jnp.full((batch,), -jnp.inf), jnp.zeros((batch,)))


class _Model:
    """The pieces of a program's model the probe runs: initial carry, projected inputs, carries, readout."""

    def __init__(self, program: Program, params):
        self.program, self.params = program, params
        self.cell = program.spec.probe
        self.w = self.cell.prepare(program.spec.params_in(params))
        self.out_leaf = program.spec.output_leaf
        self.readout_p = params["params"]["readout"]

    def start(self, x, carry_key, scale):
        carry = self.program.model.apply(self.params, x, carry_key, scale, start_only=True)
        return tuple(self.program.spec.carry_as_tuple(carry))

    def scan(self, carry, x, keep: str = "plain"):
        """Time-major: (every carry after each step, what ``keep`` names of each step): "plain" (its factors as they
        are, and per example which are not exactly 0: :func:`~rnnlab.model.probe_step.not_all_zero`),
        "scaled" (its factors kept scaled: :func:`~rnnlab.model.probe_step.scaled`) or "flags"
        (:func:`~rnnlab.model.probe_step.flags`). Each step's inputs are projected in the loop (cheaper than
        slicing a projection made before it)."""
        def kept(d: probe_step.Derivatives):
            if keep == "scaled":
                return probe_step.scaled(d.forms, 1)
            if keep == "flags":
                return probe_step.flags(d)
            return tuple(f.value for f in d.forms), probe_step.not_all_zero(d.forms, 1)

        def body(c, x_t):
            new, d = self.cell.forward(c, self.cell.project(self.w, x_t), self.cell.hidden(self.w, c[-1]))
            return new, (new, kept(d))

        return jax.lax.scan(body, tuple(carry), jnp.swapaxes(x, 0, 1))[1]

    def readout(self, hs):
        """Predictions (B, T, out) from outputs (B, T, ..., H), as the model's Dense readout."""
        out = hs @ self.readout_p["kernel"] + self.readout_p["bias"]
        if self.program.spec.spatial:
            out = out[..., 0]
            return out.reshape(out.shape[:2] + (-1,))
        return out

    def before(self, carry, carries):
        return tuple(jnp.concatenate([c[None], leaf[:-1]]) for c, leaf in zip(carry, carries))

    def step_vjp(self, c_before, saved_t, cotangent):
        """The cotangents of the carry before a step and of its projected inputs, from the new carry's, each with
        its shift (B,) (natural log: the cotangent is ``value * e^shift``; None for 0 where every factor is plain),
        and whether float32 loses the whole gradient at this step (B,): every product of it with the step's
        derivatives is 0 as a float32 number."""
        (direct, s_d), (g_xp, s_x), (g_hp, s_h) = self.cell.backward(saved_t, c_before, cotangent)
        (g_h,) = jax.vjp(lambda h: self.cell.hidden(self.w, h), c_before[-1])[1](g_hp)
        (*leaves, h), shift = probe_step.common(*((leaf, s_d) for leaf in direct), (g_h, s_h))
        as_float32 = [v if s is None else v * _per_example(jnp.exp(s), v)
                      for v, s in [*((leaf, s_d) for leaf in direct), (g_hp, s_h)]]
        cut = _example_max(as_float32) == 0
        return tuple(leaves[:-1]) + (leaves[-1] + h,), shift, (g_xp, s_x), cut


def _packed(hi, lo, alive, logs) -> jax.Array:
    """(*lead, 3 + leaves, B): hi, lo, whether float32 still holds the gradient (1 or 0) and each leaf's log10 norm
    per example, in one array (one copy to the host)."""
    return jnp.concatenate([hi[..., None, :], lo[..., None, :], alive[..., None, :].astype(hi.dtype), logs], axis=-2)


def _packed_state(state) -> jax.Array:
    (w, hi, lo), alive = state
    return _packed(hi, lo, alive, _leaf_logs(w))


_PACK_STATE = jax.jit(_packed_state)


def carry_state(carry):
    """The reverse scan's state before the last step: the cotangent 0 (:func:`zero_state`) and, per example,
    whether float32 holds it (no: there is nothing yet)."""
    return zero_state(carry), jnp.zeros(carry[0].shape[:1], bool)


def _factors_either_way(model: _Model, carry, x, plain, run):
    """``run(factors)`` on every step's factors as they are (``plain``: their values and which are not exactly 0,
    from :meth:`_Model.scan`) or, where some example's factor is tiny at some step, kept scaled
    (:func:`~rnnlab.model.probe_step.scaled`, the forward pass run again from ``carry`` on ``x``): the two give
    the same numbers to float32 rounding where no factor is tiny, and only the branch taken runs."""
    values, nonzero = plain
    tiny = probe_step.tiny_anywhere(values, nonzero, 2)  # after the loop, over every step at once
    return jax.lax.cond(tiny, lambda: run(model.scan(carry, x, "scaled")[1]),
                        lambda: run(tuple((v, None) for v in values)))


def _carry_reverse(model: _Model, carry, x, forward, g_preds, state):
    """The reverse scan of ||dL/dh_t|| over a forward pass from ``carry`` on ``x`` (:meth:`_Model.scan`): new state
    and per-step records, packed (steps, 3 + leaves, B)."""
    carries, plain = forward
    hs = jnp.swapaxes(carries[model.out_leaf], 0, 1)
    _, readout_vjp = jax.vjp(model.readout, hs)
    g_hs = jnp.swapaxes(readout_vjp(g_preds)[0], 0, 1)  # (T, B, ...)
    peak = jnp.max(jnp.abs(g_hs), axis=tuple(range(2, g_hs.ndim)))  # (T, B)
    units = g_hs / peak.reshape(peak.shape + (1,) * (g_hs.ndim - 2)).clip(min=jnp.finfo(jnp.float32).tiny)
    logs_out = jnp.log10(peak)
    before = model.before(carry, carries)

    def body(state, inputs):
        c_before, saved_t, u, lu = inputs
        state, alive = state
        w, hi, lo = _add(state, u, lu, model.out_leaf)
        alive = alive | jnp.isfinite(lu)
        g_c, shift, _, cut = model.step_vjp(c_before, saved_t, w)
        return (_rescale(g_c, hi, lo, shift), alive & ~cut), (hi, lo, alive, w)

    def run(saved):
        return jax.lax.scan(body, state, (before, saved, units, logs_out), reverse=True)

    state, (hi, lo, alive, cotangents) = _factors_either_way(model, carry, x, plain, run)
    return state, _packed(hi, lo, alive, jnp.swapaxes(_leaf_logs(cotangents, lead=2), 0, 1))


def _make_whole(program: Program):
    def fn(params, x, y, carry_key, scale):
        model = _Model(program, params)
        carry = model.start(x, carry_key, scale)
        forward = model.scan(carry, x)
        g_preds = jax.grad(program.task.loss)(model.readout(jnp.swapaxes(forward[0][model.out_leaf], 0, 1)), y)
        state, records = _carry_reverse(model, carry, x, forward, g_preds, carry_state(carry))
        return jnp.concatenate([_packed_state(state)[None], records])

    return fn


def _piece(model: _Model, carry, x, real):
    """(carry after ``real`` steps, :meth:`_Model.scan`'s (carries after every step, plain factors))."""
    forward = model.scan(carry, x)
    return tuple(leaf[real - 1] for leaf in forward[0]), forward


def _make_start(program: Program):
    return lambda params, x, carry_key, scale: _Model(program, params).start(x, carry_key, scale)


def _make_forward(program: Program):
    def fn(params, carry, x, real):
        model = _Model(program, params)
        final, (carries, _) = _piece(model, carry, x, real)
        return final, model.readout(jnp.swapaxes(carries[model.out_leaf], 0, 1))

    return fn


def _make_flags(program: Program):
    def fn(params, carry, x, real):
        return _Model(program, params).scan(carry, x, "flags")[1]

    return fn


def _make_loss_grad(program: Program):
    return jax.grad(program.task.loss)


def _make_carry_backward(program: Program):
    def fn(params, carry, x, real, g_preds, state):
        model = _Model(program, params)
        _, forward = _piece(model, carry, x, real)
        return _carry_reverse(model, carry, x, forward, g_preds, state)

    return fn


def _forward_pieces(program: Program, params, x, carry_key, scale, length: int, progress: FractionDone | None):
    pieces = probe_segments.time_pieces(x, length)
    forward = program.jitted(f"log_forward_{length}", _make_forward)
    carry = program.jitted("log_start", _make_start)(params, pieces[0][0], carry_key, scale)
    carries, preds = [], []
    for i, (piece, real) in enumerate(pieces):
        carries.append(carry)
        carry, piece_preds = forward(params, carry, piece, np.int32(real))
        preds.append(piece_preds[:, :real])
        if progress is not None:
            progress(probe_segments.FORWARD_SHARE * (i + 1) / len(pieces))
    return carries, pieces, jnp.concatenate(preds, axis=1)


def _step_flags(program: Program, params, starts, pieces, length: int) -> np.ndarray:
    """(steps + 1, 2): every step's flags (row 0, before the first step, all False)."""
    fn = program.jitted(f"log_flags_{length}", _make_flags)
    parts = [np.asarray(fn(params, c, piece, np.int32(real)))[:real] for c, (piece, real) in zip(starts, pieces)]
    return np.concatenate([np.zeros((1, 2), bool)] + parts)


def _assemble(packed: np.ndarray, leaves: tuple[str, ...], flags) -> LogGrads:
    """Host side, from ``packed`` (steps + 1, 3 + leaves, B) (:func:`_packed`): float64 log10 per leaf and step,
    combined over the batch, and why float32 gives 0 where it does (``flags()`` gives the steps' flags, computed
    only when a step cut the gradient)."""
    packed = np.asarray(packed, np.float64)
    hi, lo, alive, logs = packed[:, 0], packed[:, 1], packed[:, 2], packed[:, 3:]
    with np.errstate(invalid="ignore"):
        per_example = np.where(np.isfinite(hi)[:, None], (hi + lo)[:, None] + logs, -np.inf)  # (steps + 1, leaves, B)
    log10 = log10_hypot(per_example, axis=2).T  # (leaves, steps + 1)
    lost = (alive == 0).all(axis=1)  # float32's products lost the whole batch's gradient at these steps
    float32 = np.where(lost[None, :], -np.inf, log10)
    cause, at = zero_causes(float32, flags() if needs_flags(float32) else None)
    return LogGrads(leaves, log10, cause, at)


def carry_grad_log10(program: Program, params, batch, scale, segment: int | None = None,
                     progress: FractionDone | None = None) -> LogGrads:
    """||dL/dh_t|| for t = 0..steps and every carry leaf at its true size (:class:`LogGrads`).

    ``batch`` is ``(x, y, carry_key)``; with ``segment`` (a length) it is computed in segments of that many steps,
    calling ``progress(fraction)`` between them (raise there to stop).
    """
    x, y, carry_key = batch
    leaves = program.spec.leaves
    if segment is None:
        packed = program.jitted("log_carry_grads", _make_whole)(params, x, y, carry_key, scale)

        def whole_flags():
            start = program.jitted("log_start", _make_start)(params, x, carry_key, scale)
            return _step_flags(program, params, [start], [(x, x.shape[1])], x.shape[1])

        return _assemble(np.asarray(packed), leaves, whole_flags)
    carries, pieces, preds = _forward_pieces(program, params, x, carry_key, scale, segment, progress)
    g_preds = program.jitted("log_loss_grad", _make_loss_grad)(preds, y)
    backward = program.jitted(f"log_carry_backward_{segment}", _make_carry_backward)
    state = carry_state(carries[0])
    parts: list = [None] * len(pieces)
    for i in reversed(range(len(pieces))):
        piece, real = pieces[i]
        g = g_preds[:, i * segment:i * segment + real]
        g = jnp.pad(g, [(0, 0), (0, segment - real)] + [(0, 0)] * (g.ndim - 2))
        state, records = backward(params, carries[i], piece, np.int32(real), g, state)
        parts[i] = np.asarray(records)[:real]
        if progress is not None:
            share = probe_segments.FORWARD_SHARE
            progress(share + (1 - share) * (len(pieces) - i) / len(pieces))
    first = np.asarray(_PACK_STATE(state))[None]
    return _assemble(np.concatenate([first, *parts]), leaves,
                     lambda: _step_flags(program, params, carries, pieces, segment))


def _make_needs_exact_logs(program: Program):
    def fn(params, x, carry_key, scale):
        model = _Model(program, params)
        values, nonzero = model.scan(model.start(x, carry_key, scale), x)[1]
        return probe_step.tiny_anywhere(values, nonzero, 2)

    return fn


def needs_exact_logs(program: Program, params, batch, scale) -> bool:
    """Whether some example's factor is tiny at some step of ``batch`` (``(x, y, carry_key)``), so that the probes
    keep it scaled with its exact log (the slower branch) rather than multiply by the factors as they are."""
    x, _, carry_key = batch
    return bool(program.jitted("log_needs_exact_logs", _make_needs_exact_logs)(params, x, carry_key, scale))


# ---- connectivity -----------------------------------------------------------------------------------------------


def _last_output_state(model: _Model, carry_last):
    """One cotangent state per output unit of the last step's prediction (units, ...)."""
    h_last = carry_last[model.out_leaf]
    _, vjp = jax.vjp(lambda h: model.readout(h[:, None])[:, 0], h_last)
    units = model.readout(h_last[:, None]).shape[-1]
    basis = jnp.broadcast_to(jnp.eye(units)[:, None, :], (units, h_last.shape[0], units))
    (g_h,) = jax.vmap(vjp)(basis)
    leaves = tuple(g_h if i == model.out_leaf else jnp.zeros((units,) + c.shape, c.dtype)
                   for i, c in enumerate(carry_last))
    return jax.vmap(lambda w: _rescale(w, jnp.zeros(w[0].shape[:1]), jnp.zeros(w[0].shape[:1])))(leaves)


def _connectivity_reverse(model: _Model, carry, x, forward, start, state, real):
    """Reverse scan of ||dy_T/dx_t|| per output unit and example; ``start`` is injected at step ``real`` (or
    never when ``real`` is -1)."""
    carries, plain = forward
    before = model.before(carry, carries)

    def one(saved, start, state):
        def body(state, inputs):
            t, c_before, saved_t, x_t = inputs
            state = jax.tree_util.tree_map(lambda s, z: jnp.where(t == real - 1, s, z), start, state)
            g_c, shift, (g_xp, s_x), _ = model.step_vjp(c_before, saved_t, state[0])
            (g_x,) = jax.vjp(lambda a: model.cell.project(model.w, a), x_t)[1](g_xp)
            g_x_log = jnp.log10(_example_norms(g_x))
            if s_x is not None:
                g_x_log = jnp.where(s_x == 0, g_x_log, g_x_log + s_x * LOG10_E)
            return _rescale(g_c, state[1], state[2], shift), (state[1], state[2], g_x_log)

        steps = jnp.arange(x.shape[1])
        return jax.lax.scan(body, state, (steps, before, saved, jnp.swapaxes(x, 0, 1)), reverse=True)

    return _factors_either_way(model, carry, x, plain,
                               lambda saved: jax.vmap(lambda a, b: one(saved, a, b))(start, state))


def _make_connectivity_backward(program: Program):
    def fn(params, carry, x, real, inject, state):
        model = _Model(program, params)
        final, forward = _piece(model, carry, x, real)
        start = _last_output_state(model, final)
        return _connectivity_reverse(model, carry, x, forward, start, state, jnp.where(inject, real, -1))

    return fn


def connectivity_log10(program: Program, params, batch, scale, segment: int | None = None,
                       progress: FractionDone | None = None) -> np.ndarray:
    """(steps,): log10 of the batch mean of ||d y_T / d x_t||_F (as :func:`rnnlab.probing.probes.connectivity`),
    at its true size. ``segment`` and ``progress`` as for :func:`carry_grad_log10`."""
    x, _, carry_key = batch
    length = segment or x.shape[1]
    if segment is None:
        pieces = [(x, x.shape[1])]
        carries = [program.jitted("log_start", _make_start)(params, x, carry_key, scale)]
    else:
        carries, pieces, _ = _forward_pieces(program, params, x, carry_key, scale, segment, progress)
    backward = program.jitted(f"log_connectivity_backward_{length}", _make_connectivity_backward)
    state = None
    parts: list = [None] * len(pieces)
    for i in reversed(range(len(pieces))):
        piece, real = pieces[i]
        if state is None:
            units = jax.eval_shape(_make_forward(program), params, carries[i], piece, np.int32(real))[1].shape[-1]
            state = jax.tree_util.tree_map(lambda a, units=units: jnp.broadcast_to(a, (units,) + a.shape),
                                           zero_state(carries[i]))
        state, records = backward(params, carries[i], piece, np.int32(real), i == len(pieces) - 1, state)
        parts[i] = jax.tree_util.tree_map(lambda a, real=real: np.asarray(a)[:, :real], jax.device_get(records))
        if progress is not None and segment is not None:
            share = probe_segments.FORWARD_SHARE
            progress(share + (1 - share) * (len(pieces) - i) / len(pieces))
    hi, lo, gx = (np.concatenate(a, axis=1).astype(np.float64) for a in zip(*parts))  # (units, steps, B)
    per_unit = np.where(np.isfinite(hi) & np.isfinite(gx), hi + lo + gx, -np.inf)
    return log10_mean(log10_hypot(per_unit, axis=0), axis=1)
