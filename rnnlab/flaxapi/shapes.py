"""Shape explorer: what ``nn.RNN`` infers (batch, time and carry shapes) from an input shape, run live."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import flax.linen as nn
import jax
import jax.numpy as jnp

from rnnlab.flaxapi.trees import kernel_shape, output, recording_cell, resolve_cell, shapes
from rnnlab.i18n import N_, t, tn
from rnnlab.text import error_text

MAX_ELEMENTS = 1_000_000  # largest input (and output) the shape explorer will build


@dataclass(frozen=True)
class ShapeReport:
    """What nn.RNN inferred for one input shape, read off a real run (or the error the run met)."""

    input_shape: tuple[int, ...]
    time_major: bool
    cell: str
    code: str
    num_feature_axes: int | None = None
    time_axis: int | None = None
    time_steps: int | None = None
    batch_dims: tuple[int, ...] | None = None
    carry_input_shape: tuple[int, ...] | None = None  # what nn.RNN passed to cell.initialize_carry
    step_input_shape: tuple[int, ...] | None = None  # what the cell saw at each step
    carry_shapes: Any = None  # same structure as the carry, shapes as tuples
    output_shape: tuple[int, ...] | None = None
    error: str | None = None
    notes: tuple[str, ...] = ()


TIME_AXIS_EXPLAINED = N_(
    "`time_axis = 0 if time_major else inputs.ndim - (cell.num_feature_axes + 1)`: a plain cell has one feature "
    "axis, a ConvLSTM `len(kernel_size) + 1` (its spatial axes count as features). Every axis that is neither time "
    "nor a feature axis is batch: with `time_major=False` (the default) the axes before time, with "
    "`time_major=True` the axes between time (axis 0) and the features, so `(5, 2, 7, 3)` time-major is 5 steps "
    "of batch `(2, 7)`. `initialize_carry` gets the input shape without the time axis. The table above is read "
    "off a real run, not computed from this formula."
)
"""The rule the page states next to the table (a test runs nn.RNN on the example it gives); shown through ``_()``."""

def shape_size_error(input_shape: tuple[int, ...], features: int) -> str | None:
    """Why :func:`explore_shapes` refuses to build this input (or its output), or None."""
    if not input_shape:
        return t("Input shape: give at least one axis, e.g. (batch, time, features) = 2, 5, 3.")
    if any(d < 1 for d in input_shape) or math.prod(input_shape) > MAX_ELEMENTS:
        return t("Input shape: every axis needs at least 1 element and at most {max:,} in all.", max=MAX_ELEMENTS)
    out = math.prod(input_shape[:-1]) * features
    if out > MAX_ELEMENTS:
        # TRANSLATORS: {n} numbers in the output; {features} the features chosen; {max} the largest allowed
        return tn("The output would have {n:,} number (every axis but the last, times {features} features); "
                  "the explorer builds at most {max:,}. Use a smaller shape or fewer features.",
                  "The output would have {n:,} numbers (every axis but the last, times {features} features); "
                  "the explorer builds at most {max:,}. Use a smaller shape or fewer features.", out,
                  features=features, max=MAX_ELEMENTS)
    return None


def _time_axis(run: Callable[[jax.Array], jax.Array], x: jax.Array, candidates: list[int]) -> int:
    """Among axes whose removal gives the step shape, the one along which the output is causal.

    Perturbing index 0 along the time axis changes index 1 of the output, and perturbing index 1 leaves index 0
    alone; a batch axis fails the first test, a spatial (convolved) axis the second.
    """
    y = run(x)
    for axis in candidates:
        if x.shape[axis] < 2:
            continue
        others = tuple(d for d in range(x.ndim) if d != axis)
        bump = [jnp.expand_dims(jnp.arange(x.shape[axis]) == i, others).astype(x.dtype) for i in (0, 1)]
        forward, backward = run(x + bump[0]), run(x + bump[1])
        if (not jnp.array_equal(jnp.take(forward, 1, axis=axis), jnp.take(y, 1, axis=axis))
                and jnp.array_equal(jnp.take(backward, 0, axis=axis), jnp.take(y, 0, axis=axis))):
            return axis
    return candidates[0]


def explore_shapes(
    input_shape: tuple[int, ...], time_major: bool, cell: str, features: int, kernel_size: int | tuple[int, ...] = 3
) -> ShapeReport:
    """Run ``nn.RNN(cell, time_major=...)`` on zeros of ``input_shape`` and report what it inferred.

    The shape passed to ``initialize_carry``, the carry and the per-step input are recorded by a wrapper cell;
    the time axis is the axis whose removal gives that shape (ties broken by a causality probe). Bad shapes
    give a report with ``error`` set, never an exception.
    """
    spec = resolve_cell(cell)
    shape = tuple(int(d) for d in input_shape)
    kernel = kernel_shape(kernel_size, 2)
    name = spec.cls.__name__
    cell_code = f"nn.{name}(features={features}" + (
        f", kernel_size={kernel!r})" if spec.spatial else ")")
    code = (f"x = jnp.zeros({shape!r})\n"
            f"rnn = nn.RNN({cell_code}, time_major={bool(time_major)}, return_carry=True)\n"
            "variables = rnn.init(jax.random.key(0), x)\n"
            "carry, y = rnn.apply(variables, x)\n")
    base: dict[str, Any] = {"input_shape": shape, "time_major": bool(time_major), "cell": spec.name, "code": code}
    inner = spec.build(features, kernel_size=kernel)
    nfa = inner.num_feature_axes
    base["num_feature_axes"] = nfa
    size_error = shape_size_error(shape, features)
    if size_error:
        return ShapeReport(**base, error=size_error)
    seen: dict[str, Any] = {}
    rnn = nn.RNN(recording_cell(seen)(inner), time_major=bool(time_major), return_carry=True)
    x = jnp.zeros(shape)
    try:
        params = rnn.init(jax.random.key(0), x)
        carry, y = output(rnn, params, x)
    except Exception as e:  # noqa: BLE001 - the error is the report
        failed: tuple[str, ...] = ()
        if "init_input_shape" in seen:
            failed += (t("nn.RNN passed {shape} to initialize_carry before the cell failed",
                         shape=seen["init_input_shape"]),)
        if len(shape) < nfa + 1:
            # TRANSLATORS: {n} axes of the input; {axes} the cell's num_feature_axes; {need} = {axes} + 1
            failed += (tn("the input has {n} axis; with num_feature_axes = {axes} the cell needs at least {need}: "
                          "(time, *features)",
                          "the input has {n} axes; with num_feature_axes = {axes} the cell needs at least {need}: "
                          "(time, *features)", len(shape), axes=nfa, need=nfa + 1),)
        return ShapeReport(**base, carry_input_shape=seen.get("init_input_shape"), error=error_text(e), notes=failed)
    step = seen["init_input_shape"]
    candidates = [a for a in range(len(shape)) if shape[:a] + shape[a + 1:] == step]
    notes: list[str] = []
    if len(candidates) == 1:
        axis = candidates[0]
    else:
        axis = _time_axis(lambda v: output(rnn, params, v)[1], jax.random.normal(jax.random.key(2), shape), candidates)
        # TRANSLATORS: {axes} a list of axes; {step} the shape each leaves; {axis} the one a probe picked
        notes.append(t("axes {axes} all leave {step}; a causality probe picked axis {axis}", axes=candidates,
                       step=step, axis=axis))
    batch_dims = step[: len(step) - nfa]
    if spec.spatial:
        # TRANSLATORS: {n} = num_feature_axes; {batch} the batch dims, a shape
        notes.append(tn("num_feature_axes = {n}: the last {n} axis of each step is features (spatial dims + "
                        "channels), the rest {batch} are batch",
                        "num_feature_axes = {n}: the last {n} axes of each step are features (spatial dims + "
                        "channels), the rest {batch} are batch", nfa, batch=batch_dims))
    else:
        # TRANSLATORS: {n} = num_feature_axes; {batch} the batch dims, a shape
        notes.append(tn("num_feature_axes = {n}: the last {n} axis of each step is features, the rest {batch} "
                        "are batch",
                        "num_feature_axes = {n}: the last {n} axes of each step are features, the rest {batch} "
                        "are batch", nfa, batch=batch_dims))
    return ShapeReport(**base, time_axis=axis, time_steps=shape[axis], batch_dims=batch_dims,
                       carry_input_shape=step, step_input_shape=seen.get("step_input"),
                       carry_shapes=shapes(carry), output_shape=tuple(y.shape), notes=tuple(notes))
