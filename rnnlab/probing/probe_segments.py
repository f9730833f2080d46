"""Long gradient probes computed in time segments, so that they report progress and can be stopped.

One backward pass through a long sequence is one compiled call that nothing interrupts (20 s at T = 13,000).
Here the sequence is cut into segments of ``length`` steps: a forward pass keeps the carry at every segment
boundary and the predictions, then the backward pass goes segment by segment from the end, recomputing each
segment's forward (checkpointing) and handing the carry's gradient to the segment before. The results equal
the one-pass probes in :mod:`rnnlab.probing.probes` to float32 rounding (tested), and ``progress(fraction)`` is
called between segments: a caller stops the probe by raising there.

Every segment has the same static length (the last one is padded and told how many steps are real), so the
compiled functions do not depend on T.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from rnnlab.config import Config
from rnnlab.norms import scaled_norm
from rnnlab.training import estimate
from rnnlab.training.program import Program

SEGMENTED_ABOVE_S = 2.0
"""Probes estimated to take longer than this (seconds) are computed in segments."""
SEGMENT_S = 0.5  # the time one segment's forward and backward should take
MIN_SEGMENT = 16
FORWARD_SHARE = 0.25  # of a segmented probe's time: the forward pass (the backward recomputes it, then more)
FractionDone = Callable[[float], object]  # called with the share of the work done so far


def segment_length(config: Config, steps: int) -> int | None:
    """The segment length for probing ``config`` (``steps`` time steps), or None to probe in one pass.

    A power of two, so that nearby lengths T share compiled segments.
    """
    step_s = estimate.estimate(config, 1).step_s
    if step_s <= SEGMENTED_ABOVE_S:
        return None
    length = 2 ** int(math.floor(math.log2(max(1.0, steps * SEGMENT_S / step_s))))
    length = max(MIN_SEGMENT, length)
    return length if length < steps else None


def time_pieces(x, length: int):
    """x cut along time into pieces of ``length`` (the last zero-padded) and each piece's real steps."""
    steps = x.shape[1]
    count = -(-steps // length)
    pad = count * length - steps
    padded = jnp.pad(x, [(0, 0), (0, pad)] + [(0, 0)] * (x.ndim - 2))
    return [(padded[:, i * length:(i + 1) * length], min(length, steps - i * length)) for i in range(count)]


def _make_start(program: Program):
    def fn(params, x, carry_key, scale):
        return program.model.apply(params, x, carry_key, scale, start_only=True)

    return fn


def _make_forward(program: Program):
    def fn(params, carry, x, real, carry_key, scale):
        return program.model.apply(params, x, carry_key, scale, carry=carry, steps=real)

    return fn


def _make_loss_grad(program: Program):
    return jax.grad(program.task.loss)


def _make_carry_backward(program: Program):
    n_leaves = len(program.spec.leaves)

    def fn(params, carry, x, real, carry_key, scale, g_carry, g_preds):
        eps = jnp.zeros(x.shape[:-1] + (n_leaves * program.static.features,), x.dtype)

        def piece(carry, eps):
            return program.probe_model.apply(params, x, carry_key, scale, eps=eps, carry=carry, steps=real)

        _, vjp = jax.vjp(piece, carry, eps)
        g_in, g_eps = vjp((g_carry, g_preds))
        axes = tuple(a for a in range(g_eps.ndim - 1) if a != 1) + (g_eps.ndim - 1,)
        norms = jnp.stack([scaled_norm(leaf, axis=axes) for leaf in jnp.split(g_eps, n_leaves, axis=-1)])
        return g_in, norms

    return fn


def _make_connectivity_backward(program: Program):
    def fn(params, carry, x, real, carry_key, scale, g_carry, g_last):
        def piece(carry, x):
            final, preds = program.model.apply(params, x, carry_key, scale, carry=carry, steps=real)
            return final, preds[:, real - 1]

        _, vjp = jax.vjp(piece, carry, x)
        g_in, gx = jax.vmap(vjp)((g_carry, g_last))  # one cotangent per output unit
        axes = (0,) + tuple(range(3, gx.ndim))
        return g_in, jnp.mean(scaled_norm(gx, axis=axes), axis=0)

    return fn


def _forward(program: Program, params, x, carry_key, scale, length: int, progress: FractionDone | None, share: float):
    """The carry entering every piece, the pieces, and the predictions over the whole sequence."""
    pieces = time_pieces(x, length)
    forward = program.jitted(f"segment_forward_{length}", _make_forward)
    carry = program.jitted(f"segment_start_{length}", _make_start)(params, pieces[0][0], carry_key, scale)
    carries, preds = [], []
    for i, (piece, real) in enumerate(pieces):
        carries.append(carry)
        carry, piece_preds = forward(params, carry, piece, np.int32(real), carry_key, scale)
        preds.append(piece_preds[:, :real])
        if progress is not None:
            progress(share * (i + 1) / len(pieces))
    return carries, pieces, jnp.concatenate(preds, axis=1)


def carry_grad_norms(program: Program, params, batch, scale, length: int,
                     progress: FractionDone | None = None) -> np.ndarray:
    """(leaves, steps + 1): ||dL/dh_t|| as :func:`rnnlab.probing.probes.carry_grad_norms`, in segments of ``length``."""
    x, y, carry_key = batch
    carries, pieces, preds = _forward(program, params, x, carry_key, scale, length, progress, FORWARD_SHARE)
    g_preds = program.jitted("loss_grad", _make_loss_grad)(preds, y)
    backward = program.jitted(f"segment_carry_backward_{length}", _make_carry_backward)
    g_carry = jax.tree_util.tree_map(jnp.zeros_like, carries[0])
    norms: list[np.ndarray] = [np.empty(0)] * len(pieces)
    for i in reversed(range(len(pieces))):
        piece, real = pieces[i]
        g = g_preds[:, i * length:i * length + real]
        g = jnp.pad(g, [(0, 0), (0, length - real)] + [(0, 0)] * (g.ndim - 2))
        g_carry, piece_norms = backward(params, carries[i], piece, np.int32(real), carry_key, scale, g_carry, g)
        norms[i] = np.asarray(piece_norms)[:, :real]
        if progress is not None:
            progress(FORWARD_SHARE + (1 - FORWARD_SHARE) * (len(pieces) - i) / len(pieces))
    start = np.asarray([scaled_norm(leaf) for leaf in program.spec.carry_as_tuple(g_carry)])[:, None]
    return np.concatenate([start] + norms, axis=1)


def _last_output_basis(forward, params, carry, piece, real, carry_key, scale):
    """One cotangent per output unit of the last step's prediction, and zero carry cotangents to go with them."""
    _, preds = jax.eval_shape(forward, params, carry, piece, real, carry_key, scale)
    batch, units = preds.shape[0], preds.shape[-1]
    basis = jnp.broadcast_to(jnp.eye(units)[:, None, :], (units, batch, units))
    return basis, jax.tree_util.tree_map(lambda c: jnp.zeros((units,) + c.shape, c.dtype), carry)


def connectivity(program: Program, params, batch, scale, length: int,
                 progress: FractionDone | None = None) -> np.ndarray:
    """(steps,): ||d y_T / d x_t|| as :func:`rnnlab.probing.probes.connectivity`, in segments of ``length``."""
    x, _, carry_key = batch
    carries, pieces, _ = _forward(program, params, x, carry_key, scale, length, progress, FORWARD_SHARE)
    backward = program.jitted(f"segment_connectivity_backward_{length}", _make_connectivity_backward)
    last_piece, last_real = pieces[-1]
    g_last, g_carry = _last_output_basis(program.jitted(f"segment_forward_{length}", _make_forward), params,
                                         carries[-1], last_piece, np.int32(last_real), carry_key, scale)
    values: list[np.ndarray] = [np.empty(0)] * len(pieces)
    for i in reversed(range(len(pieces))):
        piece, real = pieces[i]
        g_carry, piece_values = backward(params, carries[i], piece, np.int32(real), carry_key, scale, g_carry, g_last)
        values[i] = np.asarray(piece_values)[:real]
        g_last = jnp.zeros_like(g_last)
        if progress is not None:
            progress(FORWARD_SHARE + (1 - FORWARD_SHARE) * (len(pieces) - i) / len(pieces))
    return np.concatenate(values)
