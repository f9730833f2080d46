"""True sizes in words: why an exact 0 is 0 (one sentence per cause of
:data:`~rnnlab.figures.log10_scale.ZERO_CAUSES`), where a gradient passes float32's floor, how fast it decays, and the
floors a chart does not draw. The probes compute the sizes and the causes (:mod:`rnnlab.probing.logscale`); the
sentences are made here, in the reader's language.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from rnnlab.figures.log10_scale import FLOORS_SHOWN, Log10Axis, log10_column, size_text
from rnnlab.i18n import _, join_sentences, localize_number, t, tn
from rnnlab.probing.probes import describe_halving, fit_log10
from rnnlab.true_sizes import F32_LOG10_FLOOR


def describe_zero(cause: str, zero_at: int, leaf: str = "h", at_t: int | None = None,
                  log10: float = -np.inf) -> str:
    """A sentence for an exact zero: ``cause`` from :data:`~rnnlab.figures.log10_scale.ZERO_CAUSES` (and the step that
    cut it), in the reader's language (one whole sentence per cause); with a finite ``log10`` (the true size), a zero
    of float32 alone."""
    # TRANSLATORS: {leaf} is the carry leaf's letter (h or c)
    where = f"||dL/d{leaf}_{at_t}||" if at_t is not None else t("the gradient of {leaf}", leaf=leaf)
    if np.isfinite(log10) and cause in ("saturated", "gate"):
        return _float32_zero(cause, zero_at, where, log10)
    if cause == "unread":
        # TRANSLATORS: {where} is a gradient's norm such as ||dL/dc_20||
        return t("{where} is exactly 0: nothing the loss reads depends on it (as the LSTM's cell state after the "
                 "last step).", where=where)
    if cause == "saturated":
        # TRANSLATORS: {where} is a gradient's norm such as ||dL/dh_0||; {step} the time step that cut it
        return t("{where} is exactly 0: at step {step}, units so saturated that their derivative is 0 in float32 even "
                 "computed without cancellation (pre-activation beyond about ±44 for tanh, ±87 for a sigmoid) cut "
                 "every path back.",
                 where=where, step=zero_at)
    if cause == "gate":
        # TRANSLATORS: {where} is a gradient's norm such as ||dL/dh_0||; {step} the time step that cut it
        return t("{where} is exactly 0: at step {step}, a gate that is exactly 0 in float32 closes the path back.",
                 where=where, step=zero_at)
    if cause == "cancelled":
        # TRANSLATORS: {where} is a gradient's norm such as ||dL/dh_0||; {step} the time step that cut it
        return t("{where} is exactly 0: at step {step}, the step's weights map the gradient to exactly 0.",
                 where=where, step=zero_at)
    return t("{where} is not 0.", where=where)


def _float32_zero(cause: str, zero_at: int, where: str, log10: float) -> str:
    """:func:`describe_zero` where only float32 gives 0: the true size, and why float32 loses it."""
    exponent = math.floor(log10)
    mantissa = round(10 ** (log10 - exponent), 3)
    mantissa, exponent = (mantissa / 10, exponent + 1) if mantissa >= 10 else (mantissa, exponent)
    size = localize_number(f"{mantissa:.3f}e{exponent:+03d}")  # as the tables write a size, the reader's way
    if cause == "saturated":
        # TRANSLATORS: {where} is a gradient's norm such as ||dL/dh_0||; {size} its true size (4.700e-86); {step}
        # the time step that cut it in float32
        return t("In float32 {where} is 0, though its true size is {size}: at step {step}, units so saturated that "
                 "their derivative is 0 in float32 even computed without cancellation (pre-activation beyond about "
                 "±44 for tanh, ±87 for a sigmoid) cut every path back.", where=where, size=size, step=zero_at)
    # TRANSLATORS: {where} is a gradient's norm such as ||dL/dh_0||; {size} its true size (4.700e-86); {step} the
    # time step that cut it in float32
    return t("In float32 {where} is 0, though its true size is {size}: at step {step}, a gate that is exactly 0 in "
             "float32 closes the path back.", where=where, size=size, step=zero_at)


def zero_sentence(cause: str, zero_at: int, leaf: str, at_t: int) -> str:
    """Why ||dL/d{leaf}_{at_t}|| is exactly 0: by its cause, else that it is."""
    if cause:
        return describe_zero(cause, int(zero_at), leaf, int(at_t))
    # TRANSLATORS: {where} is a gradient's norm such as ||dL/dh_3||
    return t("{where} is exactly 0.", where=f"||dL/d{leaf}_{at_t}||")


def _floor_not_drawn(name: str, decades: int) -> str:
    """That floor ``name`` is not drawn and how many decades above it the smallest value stays (a whole clause)."""
    value = 10.0 ** FLOORS_SHOWN[name][0]
    if name == "float32":
        # TRANSLATORS: {value} is float32's smallest normal number (1.2e-38); {n} counts orders of magnitude
        return tn("float32's smallest normal number ({value:.2g}) is not drawn: the smallest value is {n} decade "
                  "above it", "float32's smallest normal number ({value:.2g}) is not drawn: the smallest value is "
                  "{n} decades above it", decades, value=value)
    # TRANSLATORS: {value} is float64's smallest normal number (2.2e-308); {n} counts orders of magnitude
    return tn("float64's smallest normal number ({value:.2g}) is not drawn: the smallest value is {n} decade above "
              "it", "float64's smallest normal number ({value:.2g}) is not drawn: the smallest value is {n} decades "
              "above it", decades, value=value)


def floors_note(axis: Log10Axis) -> str:
    """Which floors ``axis`` does not draw, and how far above them its values stay ('' when it draws both)."""
    parts = [_floor_not_drawn(name, int(round(axis.low - floor))) for name, (floor, _what, _effect)
             in FLOORS_SHOWN.items() if name not in axis.floors and math.isfinite(axis.low)]
    if len(parts) == 2:
        # TRANSLATORS: two clauses, each saying that a floor is not drawn, joined in one sentence
        return t("{first}; {second}.", first=parts[0], second=parts[1])
    # TRANSLATORS: one clause saying that a floor is not drawn, as a sentence
    return t("{clause}.", clause=parts[0]) if parts else ""


def describe_below_float32(log10: pd.Series, quantity: str) -> str:
    """How many of ``log10``'s sizes are below float32's floor, and the smallest ('' when none)."""
    below = log10[np.isfinite(log10) & (log10 < F32_LOG10_FLOOR)]
    if not len(below):
        return ""
    # TRANSLATORS: {quantity} is a norm such as ||dL/dh_t||; {value} float32's smallest normal number (1.2e-38);
    # {low} the smallest size (4.700e-54)
    return tn("{n} value of {quantity} is below float32's smallest normal number ({value:.2g}), where a float32 "
              "gradient is 0: the chart shows their true size, down to {low}.",
              "{n} values of {quantity} are below float32's smallest normal number ({value:.2g}), where a float32 "
              "gradient is 0: the chart shows their true size, down to {low}.",
              len(below), quantity=quantity, value=10.0 ** F32_LOG10_FLOOR, low=size_text(float(below.min())))


def decay_back(grads: pd.DataFrame) -> pd.DataFrame:
    """Per line of :func:`grad_through_time_figure` (training step, leaf): the fitted factor per step back from the
    last step (``rate``, a least-squares line through the finite log10 sizes against T - t), ``halving`` (steps)
    and ``below_float32``, the last t whose size is below float32's floor (-1 when none is)."""
    last = int(grads["t"].max()) if len(grads) else 0
    log10 = log10_column(grads, "grad_norm")
    rows = []
    for (step, leaf), group in grads.groupby(["step", "leaf"], sort=False):
        y = log10[group.index]
        fit = fit_log10(last - group["t"].to_numpy(float), y.to_numpy())
        below = group["t"][np.isfinite(y) & (y < F32_LOG10_FLOOR)]
        rows.append({"step": step, "leaf": leaf, "rate": fit["rate"], "halving": fit["halving"],
                     "below_float32": int(below.max()) if len(below) else -1})
    return pd.DataFrame(rows, columns=["step", "leaf", "rate", "halving", "below_float32"])


def after_training(step: int) -> str:
    """When the model was probed, at the start of a sentence: "After 300 training steps", or "Before training"."""
    if step == 0:
        return _("Before training")
    # TRANSLATORS: the start of a sentence about the model after {n} training steps ("After 300 training steps, h: ...")
    return tn("After {n} training step", "After {n} training steps", step)


def _decay_sentence(step: int, leaf: str, rate: float, halving: float, below: int, last: int) -> str:
    """One line of :func:`describe_decay_back`: when, the factor per step back and how fast the gradient halves
    (or that it does not decay), and where it falls below float32's floor."""
    values = dict(when=after_training(step), leaf=leaf, rate=rate, decay=describe_halving(halving))
    if below < 0:
        # TRANSLATORS: {when} is "After 300 training steps" or "Before training"; {leaf} is h or c; {rate} the fitted
        # factor per step (0.87); {decay} how fast the gradient halves ("the gradient halves every 2.9 steps") or
        # that it does not decay
        return t("{when}, {leaf}: ×{rate:.3g} per step back ({decay}).", **values)
    # TRANSLATORS: going back from the last step, the gradient falls below float32's floor at step {t}, {n} steps
    # before the last, so float32 gives 0 from there back to h_0
    floor = tn("below float32's smallest normal number at t = {t}, {n} step before the last, so a float32 backward "
               "pass gives 0 there and at every earlier step",
               "below float32's smallest normal number at t = {t}, {n} steps before the last, so a float32 backward "
               "pass gives 0 there and at every earlier step", last - below, t=below)
    # TRANSLATORS: as "{when}, {leaf}: ×{rate:.3g} per step back ({decay})."; {floor} says from which step back the
    # gradient is below float32's smallest normal number
    return t("{when}, {leaf}: ×{rate:.3g} per step back ({decay}); {floor}.", floor=floor, **values)


def describe_decay_back(grads: pd.DataFrame) -> list[str]:
    """:func:`decay_back` in words, one sentence per line of the chart."""
    last = int(grads["t"].max()) if len(grads) else 0
    return [_decay_sentence(int(row.step), str(row.leaf), row.rate, row.halving, int(row.below_float32), last)
            for row in decay_back(grads).itertuples() if math.isfinite(row.rate)]


def describe_exact_zeros(grads: pd.DataFrame) -> list[str]:
    """One sentence per line of the chart with exact zeros cut by a step (:func:`describe_zero`: its cause and the
    step that cut it); zeros of a carry read by nothing (``unread``) are left to the page."""
    cut = grads[~grads["zero_cause"].isin(["", "unread"])] if "zero_cause" in grads else grads.iloc[:0]
    groups = cut.groupby(["step", "leaf", "zero_cause", "zero_at"], sort=False)
    out = []
    for (step, leaf, cause, at), group in groups:
        # TRANSLATORS: {when} is "After 300 training steps" or "Before training"; {sentence} says why a gradient is
        # exactly 0
        first = t("{when}: {sentence}", when=after_training(int(step)),
                  sentence=describe_zero(cause, int(at), leaf, int(group["t"].max()),
                                         float(group.loc[group["t"].idxmax(), "log10"]) if "log10" in group
                                         else -math.inf))
        # TRANSLATORS: after a sentence saying that a gradient is exactly 0 at some step: so is it at the {n}
        # steps before that one
        more = tn("So are the {n} step before it.", "So are the {n} steps before it.", len(group) - 1) \
            if len(group) > 1 else ""
        out.append(join_sentences(first, more))
    return out
