"""Plotly figure builders: pure functions of the DataFrames rnnlab computes (they never compute)."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from rnnlab.i18n import language_layout
from rnnlab.norms import ZERO_CAUSES, ZERO_NORM
from rnnlab.probing.probes import (
    F32_LOG10_FLOOR,
    F64_LOG10_FLOOR,
    describe_halving,
    describe_zero,
    fit_log10,
    format_log10,
)

LEAF_NAMES = {"c": "cell state c", "h": "hidden state h"}
LEAF_DASH = {"c": "dot", "h": "solid"}


# Okabe and Ito's colours: told apart with the common colour-vision deficiencies and on a washed-out projector.
COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")
# Plain numbers on every axis: powers of ten (1e-23 as 10^-23, never "10y" or SI prefixes such as 1u, 100n).
NUMBER_AXIS = dict(exponentformat="power", separatethousands=True)


# One time axis for every per-step chart, so that a step marked in one is the same step in all of them.
STEP_AXIS = "time step t (step t reads input t)"
CARRY_AXIS = "time step t (0 = initial carry; step t reads input t)"

TITLE_LINE = 44  # characters: a longer title is wrapped in two lines, as Plotly does not wrap on a phone


def wrap_title(title: str, width: int = TITLE_LINE) -> str:
    """``title`` in two lines (joined by <br>) at the space nearest its middle when longer than ``width``."""
    if len(title) <= width or " " not in title:
        return title
    spaces = [i for i, ch in enumerate(title) if ch == " "]
    cut = min(spaces, key=lambda i: abs(i - len(title) / 2))
    return f"{title[:cut]}<br>{title[cut + 1:]}"


def style_figure(fig: go.Figure, title: str, x: str, y: str, log_y: bool = False) -> go.Figure:
    """rnnlab's look for a chart: its title (wrapped), axis titles, the legend under the plot, plain numbers."""
    # the legend goes under the axis: above the plot it covered the title when its entries were long
    wrapped = wrap_title(title)
    fig.update_layout(title=wrapped, xaxis_title=x, yaxis_title=y,
                      margin=dict(l=10, r=10, t=50 if wrapped == title else 72, b=10),
                      legend=dict(orientation="h", yanchor="top", y=-0.22, xanchor="left", x=0.0),
                      height=380, colorway=COLORS, **language_layout())
    fig.update_xaxes(**NUMBER_AXIS)
    fig.update_yaxes(**NUMBER_AXIS)
    if log_y:
        fig.update_yaxes(type="log", minorloglabels="none")  # no bare "2, 5" digits between the decades
        span = log_span(fig)
        ticks = narrow_log_ticks(*span) if span else None
        if span and ticks:  # the range spans every value with a margin, so that none sits on the plot's edge
            lo, hi = span
            fig.update_yaxes(tickvals=ticks, ticktext=[f"{t:g}" for t in ticks],
                             range=[math.log10(lo / NARROW_MARGIN), math.log10(hi * NARROW_MARGIN)])
    return fig


MARK_COLOR = "red"


def mark_step(fig: go.Figure, x: float, label: str) -> go.Figure:
    """A vertical line at ``x`` across the whole plot (every panel of a figure with several), labelled at its top:
    the time step marked in every per-step chart."""
    fig.add_shape(type="line", x0=x, x1=x, xref="x", y0=0, y1=1, yref="paper", layer="above",
                  line=dict(color=MARK_COLOR, width=1.5))
    fig.add_annotation(x=x, xref="x", y=1, yref="paper", text=label, showarrow=False, yanchor="top",
                       xanchor="left", xshift=3, bgcolor="rgba(255,255,255,0.8)",
                       font=dict(color=MARK_COLOR, size=11))  # inside the plot: above it, it met the title
    return fig


MAX_CLICKABLE = 2000  # points of a line that get an invisible marker to click (more would slow the browser)


def clickable(fig: go.Figure) -> go.Figure:
    """``fig`` with invisible markers on its line traces (up to :data:`MAX_CLICKABLE` points a trace), so that a
    click selects a point (Plotly selects only markers); dragging still zooms the time axis."""
    for trace in fig.data:
        if trace.type == "scatter" and trace.mode == "lines" and (trace.x is None or len(trace.x) <= MAX_CLICKABLE):
            trace.update(mode="lines+markers", marker=dict(size=6, opacity=0),
                         unselected=dict(marker=dict(opacity=0)), selected=dict(marker=dict(opacity=0)))
    fig.update_layout(dragmode="zoom")
    return fig


def marked_figure(fig: go.Figure, t: int, first: int, last: int, offset: float = 0.0) -> go.Figure:
    """A per-step ``fig`` (x = step + ``offset``, steps ``first``..``last``) with step ``t`` marked when it is
    among them, and clickable."""
    if first <= t <= last:
        mark_step(fig, t + offset, f"t = {t}")
    return clickable(fig)


NARROW_MARGIN = 1.3  # a narrow log axis reaches this factor beyond its smallest and largest value


def log_span(fig: go.Figure) -> tuple[float, float] | None:
    """The smallest and largest positive finite y value of ``fig``'s traces (None if there is none)."""
    values = [float(v) for trace in fig.data if getattr(trace, "y", None) is not None for v in trace.y
              if isinstance(v, (int, float)) and math.isfinite(v) and v > 0]
    return (min(values), max(values)) if values else None


def narrow_log_ticks(lo: float, hi: float) -> list[float] | None:
    """For a log axis whose values (``lo`` to ``hi``, positive) span less than two decades: ticks at 1, 2 and 5
    times the powers of ten in the range, so that more than one is labelled, written as plain numbers (0.2, 0.5,
    1). None otherwise."""
    if math.log10(hi / lo) >= 2:
        return None
    first, last = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    ticks = [m * 10.0**e for e in range(first, last + 1) for m in (1, 2, 5)
             if lo / NARROW_MARGIN <= m * 10.0**e <= hi * NARROW_MARGIN]
    if len(ticks) < 2:  # a very narrow range: label its two ends
        ticks = sorted({float(f"{lo:.2g}"), float(f"{hi:.2g}")})
    return ticks if len(ticks) >= 2 else None


ZERO_LABEL = ZERO_NORM
ZERO_HOVER = (f"exactly 0 in float32: on its way back, {ZERO_CAUSES}; drawn at the bottom of the "
              "log axis")


def log_floor(*columns: pd.Series | np.ndarray) -> float:
    """Where exact zeros sit on a log axis: a decade below the smallest positive value shown (1e-45 if none;
    NaN and infinities are not shown, so they do not count)."""
    values = np.concatenate([np.ravel(np.asarray(c, float)) for c in columns]) if columns else np.zeros(0)
    positive = values[np.isfinite(values) & (values > 0)]
    return 10 ** (math.floor(math.log10(positive.min())) - 1) if positive.size else 1e-45


def add_zeros(fig: go.Figure, x, y: pd.Series, floor: float, color: str | None = None,
              showlegend: bool = True) -> None:
    """Mark the exact zeros of ``y`` at ``floor`` with a labelled marker instead of dropping them (log axes)."""
    zero = (y == 0).to_numpy()
    if not zero.any():
        return
    xs = pd.Series(list(x))[zero]
    fig.add_trace(go.Scatter(x=xs, y=[floor] * int(zero.sum()), mode="markers", name=ZERO_LABEL,
                             legendgroup="zero", showlegend=showlegend, hovertext=ZERO_HOVER, hoverinfo="text+x",
                             marker=dict(symbol="triangle-down-open", size=10, color=color or "black")))


def loss_figure(steps: pd.DataFrame, evals: pd.DataFrame, baseline: float, baseline_text: str) -> go.Figure:
    """Training loss per step and evaluation loss (log scale), with the memoryless baseline as a line."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=steps["step"], y=steps["loss"], mode="lines", name="training loss"))
    fig.add_trace(go.Scatter(x=evals["step"], y=evals["eval_loss"], mode="markers+lines", name="evaluation loss",
                             line=dict(dash="dot")))
    last = max(1, int(steps["step"].max()) if len(steps) else 1)
    fig.add_trace(go.Scatter(x=[0, last], y=[baseline, baseline], mode="lines",
                             name=f"memoryless baseline {baseline:.4g}", line=dict(color="gray", dash="dash"),
                             hovertext=baseline_text, hoverinfo="text"))
    return style_figure(fig, "Loss", "training step", "loss (log scale)", log_y=True)


def metric_figure(steps: pd.DataFrame, evals: pd.DataFrame, metric_name: str) -> go.Figure:
    """The task's readable metric (accuracy or MSE) per step, and at each evaluation."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=steps["step"], y=steps["metric"], mode="lines", name=f"training {metric_name}"))
    fig.add_trace(go.Scatter(x=evals["step"], y=evals["eval_metric"], mode="markers+lines",
                             name=f"evaluation {metric_name}", line=dict(dash="dot")))
    return style_figure(fig, f"Metric: {metric_name}", "training step", metric_name)


def heatmap_bound(values: pd.Series) -> float:
    """The colour scale of a carry heatmap runs from -bound to bound: 1 (a tanh unit's range) unless a value is
    larger. A fixed scale keeps a tiny movement pale instead of stretching it over the whole colour range."""
    largest = float(values.abs().max()) if len(values) else 0.0
    return max(1.0, math.ceil(largest)) if math.isfinite(largest) else 1.0


def carry_heatmap(units: pd.DataFrame, leaf: str) -> go.Figure:
    """The initial carry's units (rows) against training step (columns)."""
    table = units.pivot(index="unit", columns="step", values="value")
    bound = heatmap_bound(units["value"])
    fig = go.Figure(go.Heatmap(z=table.to_numpy(), x=[str(s) for s in table.columns], y=list(table.index),
                               colorscale="RdBu", zmin=-bound, zmax=bound, colorbar=dict(title="value")))
    fig.update_xaxes(type="category")
    return style_figure(fig, f"Initial carry, {LEAF_NAMES.get(leaf, leaf)}: units against training step",
                   "training step", "unit")


def carry_distance_figure(distance: pd.DataFrame) -> go.Figure:
    """Distance of the initial carry from where it started, per carry leaf."""
    fig = go.Figure()
    for leaf, group in distance.groupby("leaf", sort=False):
        fig.add_trace(go.Scatter(x=group["step"], y=group["distance"], mode="lines+markers",
                                 name=LEAF_NAMES.get(leaf, leaf), line=dict(dash=LEAF_DASH.get(leaf, "solid"))))
    return style_figure(fig, "How far the initial carry moved", "training step", "||carry - carry at step 0||")


def carry_pca_figure(pca: pd.DataFrame) -> go.Figure:
    """The initial carry's path in 2-D (its snapshots' first two principal components), per leaf."""
    fig = go.Figure()
    for leaf, group in pca.groupby("leaf", sort=False):
        fig.add_trace(go.Scatter(
            x=group["pc1"], y=group["pc2"], mode="lines+markers+text", name=LEAF_NAMES.get(leaf, leaf),
            text=[str(s) if i in (0, len(group) - 1) else "" for i, s in enumerate(group["step"])],
            textposition="top center", hovertext=[f"step {s}" for s in group["step"]],
            line=dict(dash=LEAF_DASH.get(leaf, "solid"))))
    explained = pca["explained"].iloc[0] if len(pca) else 1.0
    return style_figure(fig, f"Path of the initial carry (PCA, {explained:.0%} of its variance)", "PC 1", "PC 2")


def per_step_loss_figure(table: pd.DataFrame, step_baselines=None,
                         title: str = "Loss at each time step of the sequence") -> go.Figure:
    """Loss at every time step of the sequence, one line per run (e.g. learned carry vs zero carry), with the
    memoryless baseline of each step where the task scores it (``step_baselines``, NaN elsewhere)."""
    fig = go.Figure()
    for run, group in table.groupby("run", sort=False):
        fig.add_trace(go.Scatter(x=group["t"], y=group["loss"], mode="lines", name=str(run)))
    if step_baselines is not None and len(table):
        base = pd.Series(step_baselines, dtype=float, index=range(1, len(step_baselines) + 1))
        scored = base.notna()
        one = int(scored.sum()) == 1
        fig.add_trace(go.Scatter(
            x=base.index[scored] if one else base.index, y=base[scored] if one else base.where(base > 0),
            mode="markers" if one else "lines", name="memoryless baseline" + (" (scored step)" if one else ""),
            line=dict(color="gray", dash="dash"), marker=dict(color="gray", symbol="line-ew-open", size=16)))
    return style_figure(fig, title, STEP_AXIS, "loss (log scale)", log_y=True)


# ---- true sizes on a log10 axis (the gradient probes) ---------------------------------------------------------
# A gradient probed at its true size may be 1e-600, and Plotly's log axis ends near float64's 1e-308: these
# charts plot log10 on a linear axis and write its ticks as powers of ten.

MAX_TICKS = 8  # labelled ticks on a log10 axis at most (readable on a phone)
MAX_QUOTED = 6  # a decay chart of one cell with at most this many lengths writes each size beside its point
FLOOR_NEAR = 10.0  # decades: a floor is drawn when the lowest value comes this close to it (see log10_axis)
FLOORS_SHOWN = {  # the floors' lines: their log10, what they are, what they mean
    "float32": (F32_LOG10_FLOOR, "float32's smallest normal number", "below it float32 gives 0"),
    "float64": (F64_LOG10_FLOOR, "float64's smallest normal number", "below it float64 gives 0"),
}
FLOOR_COLOR = "#555555"
FLOOR_DASH = {"float32": "dash", "float64": "dot"}
ZERO_NAMES = {"unread": "exactly 0: read by nothing", "saturated": "exactly 0: saturated units",
              "gate": "exactly 0: a closed gate", "cancelled": "exactly 0: cancelled by the weights",
              "": "exactly 0"}


@dataclass(frozen=True)
class Log10Axis:
    """A log10 axis: its range (``bottom``, ``top``), the height exact zeros are marked at, the floors drawn."""

    bottom: float
    top: float
    zero_y: float
    floors: tuple[str, ...]
    low: float  # the lowest finite value shown (nan when there is none)


def log10_column(table: pd.DataFrame, value: str) -> pd.Series:
    """``table``'s log10 column (the true sizes), or the log10 of its ``value`` column where it has none."""
    if "log10" in table:
        return table["log10"].astype(float)
    with np.errstate(divide="ignore"):
        return pd.Series(np.log10(table[value].to_numpy(float)), index=table.index)


def power_text(exponent: float) -> str:
    """A tick label for ``10 ** exponent``: '1', '10', '10<sup>−100</sup>' (as Plotly writes powers)."""
    e = int(round(exponent))
    return "1" if e == 0 else "10" if e == 1 else f"10<sup>{e}</sup>".replace("-", "\u2212")


def log10_ticks(bottom: float, top: float, max_ticks: int = MAX_TICKS) -> tuple[list[float], list[str]]:
    """Tick values and labels for a log10 axis from ``bottom`` to ``top``: powers of ten every 1, 2, 5, 10, 20, 25,
    50, ... decades, at most ``max_ticks``; within two decades (of numbers float64 holds) 1, 2 and 5 times them as
    plain numbers (0.2, 0.5, 1), as :func:`narrow_log_ticks`."""
    if top - bottom < 2 and bottom > F64_LOG10_FLOOR + 2:
        narrow = [v for v in narrow_log_ticks(10.0 ** bottom, 10.0 ** top) or []
                  if bottom <= math.log10(v) <= top]
        if len(narrow) >= 2:
            return [math.log10(v) for v in narrow], [f"{v:g}" for v in narrow]
    for step in (m * 10**k for k in itertools.count() for m in ((1, 2, 5) if k == 0 else (1, 2, 2.5, 5))):
        first, last = math.ceil(bottom / step), math.floor(top / step)
        if last - first + 1 <= max_ticks:
            break
    values = [float(k * step) for k in range(first, last + 1)]  # step: 1, 2, 5, 10, 20, 25, 50, 100, ...
    if not values:  # no power of ten inside a very narrow range: its two ends
        values = [bottom, top]
        return values, [format_log10(v, 1) for v in values]
    return values, [power_text(v) for v in values]


def log10_axis(*columns: pd.Series | np.ndarray) -> Log10Axis:
    """One log10 axis for every value of ``columns`` (charts compared share it), exact zeros (-inf) marked below.

    float32's floor is drawn when the lowest value comes within the larger of :data:`FLOOR_NEAR` decades and the
    values' own span of it, or goes below it: the app computes in float32, so this line says which values a
    float32 gradient loses, and drawing it at most about doubles the axis. float64's floor is drawn only when the
    lowest value comes within :data:`FLOOR_NEAR` decades of it: drawn from further off it would squash every value
    into the top of a 300-decade axis. A floor not drawn is said in words (:func:`floors_note`).
    """
    values = np.concatenate([np.ravel(np.asarray(c, float)) for c in columns]) if columns else np.zeros(0)
    finite = values[np.isfinite(values)]
    low, high = (float(finite.min()), float(finite.max())) if finite.size else (-1.0, 0.0)
    near = {"float32": max(FLOOR_NEAR, high - low), "float64": FLOOR_NEAR}
    floors = tuple(name for name, (floor, _, _) in FLOORS_SHOWN.items() if low - floor <= near[name])
    lines = [FLOORS_SHOWN[name][0] for name in floors]
    bottom, top = min([low, *lines]), max([high, *lines])
    pad = max(0.08 * (top - bottom), 0.25)  # room for a quoted size above the highest value, below the lowest
    zero_y = bottom - 1.5 * pad
    return Log10Axis(zero_y - pad if np.isneginf(values).any() else bottom - pad, top + pad, zero_y, floors,
                     float(finite.min()) if finite.size else math.nan)


def _label_place(points: list[tuple[np.ndarray, np.ndarray]], floor: float, axis: Log10Axis,
                 log_x: bool) -> tuple[bool, bool]:
    """Where a floor's tag goes: (at the left end, above the line): at the end whose values stay furthest from the
    line, on the side of the line they are not (the other side when that one has no room on the axis)."""
    xs = np.concatenate([p[0] for p in points]) if points else np.zeros(0)
    ys = np.concatenate([p[1] for p in points]) if points else np.zeros(0)
    ok = np.isfinite(ys) & np.isfinite(xs) & ((xs > 0) | (not log_x))
    xs, ys = (np.log10(xs[ok]) if log_x else xs[ok]), ys[ok]
    frac = (xs - xs.min()) / max(float(np.ptp(xs)), 1e-12) if xs.size else xs
    ends = {True: frac <= 0.45, False: frac >= 0.55}
    room = {side: float(np.min(np.abs(ys[w] - floor))) if w.any() else math.inf for side, w in ends.items()}
    left = room[True] >= room[False]
    window = ys[ends[left]]
    above = bool(window.size == 0 or np.mean(window < floor) >= 0.5)
    margin = 0.1 * (axis.top - axis.bottom)  # about a line of text
    if above and axis.top - floor < margin or not above and floor - axis.bottom < margin:
        above = not above
    return left, above


def apply_log10_axis(fig: go.Figure, axis: Log10Axis, points: list[tuple[np.ndarray, np.ndarray]],
                     log_x: bool = False) -> go.Figure:
    """``fig``'s y axis as ``axis`` (ticks as powers of ten) with its floors as dashed lines, each tagged at the end
    where ``points`` (the (x, log10) values drawn) leave room and said in full in the legend."""
    ticks, texts = log10_ticks(axis.bottom, axis.top)
    fig.update_yaxes(range=[axis.bottom, axis.top], tickvals=ticks, ticktext=texts, zeroline=False)
    fig.update_layout(legend_y=-0.26)  # clear of the time axis' title on a phone
    for name in axis.floors:
        floor, what, effect = FLOORS_SHOWN[name]
        left, above = _label_place(points, floor, axis, log_x)
        line = dict(color=FLOOR_COLOR, dash=FLOOR_DASH[name], width=1.2)
        fig.add_shape(type="line", xref="paper", x0=0, x1=1, y0=floor, y1=floor, layer="below", line=line)
        fig.add_annotation(xref="paper", x=0.01 if left else 0.99, xanchor="left" if left else "right", y=floor,
                           yanchor="bottom" if above else "top", showarrow=False, text=f"{name}'s floor",
                           name=name, font=dict(size=10, color=FLOOR_COLOR))
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines+markers", marker=dict(size=0), line=line,
                                 hoverinfo="skip",
                                 name=f"{what} ({format_log10(floor, 1)}):<br>{effect}", legendgroup=name))
    return fig


def add_exact_zeros(fig: go.Figure, x, causes: np.ndarray, texts: np.ndarray, axis: Log10Axis, shown: set[str],
                    color: str | None = None) -> None:
    """Mark exact zeros (at ``x``) at the bottom of ``axis``, one legend entry per cause (:data:`ZERO_NAMES`; those
    in ``shown`` already have one), each point's hover its sentence (``texts``)."""
    x, causes, texts = np.asarray(x), np.asarray(causes, str), np.asarray(texts, str)
    for cause in dict.fromkeys(causes):
        pick = causes == cause
        fig.add_trace(go.Scatter(x=list(x[pick]), y=[axis.zero_y] * int(pick.sum()), mode="markers",
                                 name=ZERO_NAMES.get(cause, "exactly 0"), legendgroup=f"zero {cause}",
                                 showlegend=cause not in shown, hovertext=list(texts[pick]), hoverinfo="text",
                                 marker=dict(symbol="triangle-down-open", size=10, color=color or "black")))
        shown.add(cause)


def step_range(last: float) -> list[float]:
    """The time axis of the per-step gradient charts, 0 to ``last`` and a margin (a marker at an end shows whole):
    the same in every chart compared."""
    pad = max(0.5, 0.01 * last)
    return [-pad, last + pad]


def _zero_parts(group: pd.DataFrame, log10: pd.Series) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where ``log10`` is an exact 0 (-inf), and each row's zero cause and step (as the probe tables hold them)."""
    causes = group["zero_cause"].to_numpy(str) if "zero_cause" in group else np.full(len(group), "")
    return np.isneginf(log10.to_numpy()), causes, group.get("zero_at", pd.Series(-1, group.index)).to_numpy(int)


def _zero_sentence(cause: str, zero_at: int, leaf: str, t: int) -> str:
    return describe_zero(cause, int(zero_at), leaf, int(t)) if cause else f"||dL/d{leaf}_{t}|| is exactly 0."


def _size_trace(x, log10: pd.Series, name: str, x_name: str, quantity: str, **line) -> go.Scatter:
    """A line of log10 sizes (gaps at exact zeros), its hover giving each true size (:func:`format_log10`)."""
    y = log10.where(np.isfinite(log10))
    return go.Scatter(x=list(x), y=y, mode="lines", name=name, line=line or None,
                      customdata=[format_log10(v) for v in log10],
                      hovertemplate=f"{x_name} = %{{x}}<br>{quantity} = %{{customdata}}<extra>{name}</extra>")


def grad_through_time_figure(grads: pd.DataFrame, axis: Log10Axis | None = None) -> go.Figure:
    """||dL/dh_t|| against t at its true size (a log10 axis, :func:`log10_axis`; ``axis`` to share one), one line
    per training step and carry leaf; exact zeros marked at the bottom and named by cause, the floors dashed."""
    log10 = log10_column(grads, "grad_norm")
    axis = axis or log10_axis(log10)
    fig, shown, points = go.Figure(), set[str](), []
    for (step, leaf), group in grads.groupby(["step", "leaf"], sort=False):
        y = log10[group.index]
        fig.add_trace(_size_trace(group["t"], y, f"after {step} training steps, {leaf}", "t", f"||dL/d{leaf}_t||",
                                  dash=LEAF_DASH.get(leaf, "solid")))
        points.append((group["t"].to_numpy(float), y.to_numpy()))
        zero, causes, at = _zero_parts(group, y)
        texts = [_zero_sentence(c, a, leaf, t) for c, a, t in zip(causes, at, group["t"])]
        add_exact_zeros(fig, group["t"].to_numpy()[zero], causes[zero], np.asarray(texts)[zero], axis, shown)
    last = float(grads["t"].max()) if len(grads) else 1.0
    fig = style_figure(fig, "Gradient of the loss with respect to the carry at each time step", CARRY_AXIS,
                       "||dL/dh_t|| (log scale)")
    fig.update_xaxes(range=step_range(last))
    return apply_log10_axis(fig, axis, points)


def _fit_line(group: pd.DataFrame, log10: pd.Series, rate: float, log_x: bool) -> tuple[np.ndarray, np.ndarray]:
    """The fitted line log10 = a + T log10(rate) over ``group``'s T (least squares: a through the mean)."""
    finite, T = np.isfinite(log10.to_numpy()), group["T"].to_numpy(float)
    if not (math.isfinite(rate) and rate > 0) or finite.sum() < 2:
        return np.zeros(0), np.zeros(0)
    slope = math.log10(rate)
    a, lo, hi = float(np.mean(log10.to_numpy()[finite] - slope * T[finite])), T[finite].min(), T[finite].max()
    xs = np.geomspace(lo, hi, 40) if log_x and lo > 0 else np.array([lo, hi])
    return xs, a + slope * xs


def decay_figure(sweep: pd.DataFrame, fits: pd.DataFrame, labels: dict[str, str] | None = None,
                 axis: Log10Axis | None = None) -> go.Figure:
    """||dL/dh_0|| against sequence length T at its true size (a log10 axis), one line per cell (named by ``labels``,
    with its halving length) and its fitted line log10 = a + T log10(rate), dotted. Exact zeros are marked at the
    bottom of the axis and named by cause, the floors dashed."""
    log10 = log10_column(sweep, "h0_grad_norm")
    rates = dict(zip(fits["cell"], fits["rate_per_step"])) if len(fits) else {}
    halving = dict(zip(fits["cell"], fits["halving_steps"])) if len(fits) else {}
    log_x = bool(len(sweep)) and sweep["T"].max() / max(1, sweep["T"].min()) >= 20
    axis = axis or log10_axis(log10)  # a fitted line stays within its values' range and the axis' margin
    fig, shown, points = go.Figure(), set[str](), []
    for n, (cell, group) in enumerate(sweep.groupby("cell", sort=False)):
        h, name = halving.get(cell, math.nan), (labels or {}).get(cell, cell)
        label = f"{name} (halves every {h:.3g} steps)" if math.isfinite(h) else f"{name} (no decay fitted)"
        color = SWEEP_COLORS[n % len(SWEEP_COLORS)]
        y = log10[group.index]
        trace = _size_trace(group["T"], y, label, "T", "||dL/dh_0||", color=color)
        trace.update(mode="lines+markers", legendgroup=cell)
        if sweep["cell"].nunique() == 1 and len(group) <= MAX_QUOTED:  # few points: each quoted on the chart
            ends = ("top right", "bottom left") if y.iloc[-1] <= y.iloc[0] else ("bottom right", "top left")
            trace.update(mode="lines+markers+text", text=[format_log10(v, 1) for v in y], textfont=dict(size=11),
                         cliponaxis=False, textposition=[ends[0]] * (len(y) - 1) + [ends[1]])
        fig.add_trace(trace)
        points.append((group["T"].to_numpy(float), y.to_numpy()))
        xs, ys = _fit_line(group, y, rates.get(cell, math.nan), log_x)
        if len(xs):
            rate = rates[cell]
            fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", name=f"{name}: fitted line", legendgroup=cell,
                                     showlegend=False, line=dict(color=color, dash="dot", width=1),
                                     hovertemplate=f"fitted: ×{rate:.3g} per step<extra>{name}</extra>"))
        zero, causes, at = _zero_parts(group, y)
        texts = [f"T = {T}: {_zero_sentence(c, a, 'h', 0)}" for c, a, T in zip(causes, at, group["T"])]
        add_exact_zeros(fig, group["T"].to_numpy()[zero], causes[zero], np.asarray(texts)[zero], axis, shown, color)
    fig = style_figure(fig, "Gradient reaching the initial carry against sequence length", "sequence length T",
                       "||dL/dh_0|| (log scale)")
    if log_x:
        fig.update_xaxes(type="log")
    return apply_log10_axis(fig, axis, points, log_x)


def connectivity_figure(conn: pd.DataFrame, axis: Log10Axis | None = None) -> go.Figure:
    """||d y_T / d x_t|| against the step t that reads x_t at its true size (a log10 axis); exact zeros marked at
    the bottom, the floors dashed."""
    log10 = log10_column(conn, "connectivity")
    axis = axis or log10_axis(log10)
    fig = go.Figure(_size_trace(conn["t"], log10, "connectivity", "t", "||dy_T/dx_t||"))
    zero = np.isneginf(log10.to_numpy())
    texts = np.asarray([f"||dy_T/dx_{t}|| is exactly 0 by the cell's arithmetic." for t in conn["t"]])
    add_exact_zeros(fig, conn["t"].to_numpy()[zero], np.full(int(zero.sum()), ""), texts[zero], axis, set())
    fig = style_figure(fig, "Connectivity: how much the last output depends on each input step", STEP_AXIS,
                       "||dy_T / dx_t|| (log scale)")
    fig.update_xaxes(range=step_range(float(conn["t"].max()) if len(conn) else 1.0))
    return apply_log10_axis(fig, axis, [(conn["t"].to_numpy(float), log10.to_numpy())])


# ---- the same sizes in words (the page's captions) --------------------------------------------------------------


def floors_note(axis: Log10Axis) -> str:
    """Which floors ``axis`` does not draw, and how far above them its values stay ('' when it draws both)."""
    parts = [f"{what} ({format_log10(floor, 1)}) is not drawn: the smallest value is {axis.low - floor:.0f} "
             "decades above it" for name, (floor, what, _) in FLOORS_SHOWN.items()
             if name not in axis.floors and math.isfinite(axis.low)]
    return "; ".join(parts) + "." if parts else ""


def describe_below_float32(log10: pd.Series, quantity: str) -> str:
    """How many of ``log10``'s sizes are below float32's floor, and the smallest ('' when none)."""
    below = log10[np.isfinite(log10) & (log10 < F32_LOG10_FLOOR)]
    if not len(below):
        return ""
    values = "1 value of {} is" if len(below) == 1 else f"{len(below)} values of {{}} are"
    return (f"{values.format(quantity)} below float32's smallest normal number "
            f"({format_log10(F32_LOG10_FLOOR, 1)}), where a float32 gradient is 0: the chart shows their true "
            f"size, down to {format_log10(float(below.min()))}.")


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


def describe_decay_back(grads: pd.DataFrame) -> list[str]:
    """:func:`decay_back` in words, one sentence per line of the chart."""
    last = int(grads["t"].max()) if len(grads) else 0
    out = []
    for row in decay_back(grads).itertuples():
        crossing = (f"; below float32's smallest normal number from t = {row.below_float32}, "
                    f"{last - row.below_float32} steps before the last") if row.below_float32 >= 0 else ""
        out += [f"After {row.step} training steps, {row.leaf}: ×{row.rate:.3g} per step back "
                f"({describe_halving(row.halving)}){crossing}."] if math.isfinite(row.rate) else []
    return out


def describe_exact_zeros(grads: pd.DataFrame) -> list[str]:
    """One sentence per line of the chart with exact zeros cut by a step (:func:`describe_zero`: its cause and the
    step that cut it); zeros of a carry read by nothing (``unread``) are left to the page."""
    cut = grads[~grads["zero_cause"].isin(["", "unread"])] if "zero_cause" in grads else grads.iloc[:0]
    groups = cut.groupby(["step", "leaf", "zero_cause", "zero_at"], sort=False)
    return [f"After {step} training steps: {describe_zero(cause, int(at), leaf, int(group['t'].max()))}"
            + (f" So are the {len(group) - 1} steps before it." if len(group) > 1 else "")
            for (step, leaf, cause, at), group in groups]


# ---- sweeps (the Compare page) --------------------------------------------------------------------------
SWEEP_COLORS = COLORS


def _rgba(hex_color: str, alpha: float) -> str:
    r, g, b = (int(hex_color[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def sweep_curves_figure(spread: pd.DataFrame, baseline: float | None = None) -> go.Figure:
    """Training loss against step per label: the mean over seeds as a line, min-max over seeds as a band."""
    from rnnlab.i18n import _, t, tn

    fig = go.Figure()
    for n, (label, group) in enumerate(spread.groupby("label", sort=False)):
        color = SWEEP_COLORS[n % len(SWEEP_COLORS)]
        seeds = int(group["seeds"].max())
        if seeds > 1:
            fig.add_trace(go.Scatter(x=group["step"], y=group["max"], mode="lines", line=dict(width=0),
                                     showlegend=False, hoverinfo="skip", legendgroup=label))
            fig.add_trace(go.Scatter(x=group["step"], y=group["min"], mode="lines", line=dict(width=0),
                                     fill="tonexty", fillcolor=_rgba(color, 0.2),
                                     name=t("{label}: min-max", label=label),
                                     showlegend=False, hoverinfo="skip", legendgroup=label))
        # TRANSLATORS: a legend entry: a configuration's training loss averaged over its {n} seeds.
        name = (tn("{label} (mean of {n} seed)", "{label} (mean of {n} seeds)", seeds, label=label) if seeds > 1
                else label)
        fig.add_trace(go.Scatter(x=group["step"], y=group["mean"], mode="lines", name=name,
                                 line=dict(color=color), legendgroup=label))
    if baseline is not None and len(spread):
        fig.add_trace(go.Scatter(x=[0, int(spread["step"].max())], y=[baseline, baseline], mode="lines",
                                 name=t("memoryless baseline {baseline:.4g}", baseline=baseline),
                                 line=dict(color="gray", dash="dash")))
    return style_figure(fig, _("Training loss: mean and spread over seeds"), _("training step"), _("loss (log scale)"),
                        log_y=True)


def sweep_bar_figure(summary: pd.DataFrame, column: str, title: str, y_title: str,
                     baseline: float | None = None) -> go.Figure:
    """``column`` per label: a bar at the mean over seeds with a min-max whisker, each seed as a dot."""
    from rnnlab.i18n import _, t

    stats = summary.groupby("label", sort=False)[column].agg(["mean", "min", "max"]).reset_index()
    fig = go.Figure(go.Bar(
        x=stats["label"], y=stats["mean"], name=_("mean over seeds"),
        marker_color=[SWEEP_COLORS[n % len(SWEEP_COLORS)] for n in range(len(stats))],
        error_y=dict(type="data", symmetric=False, array=stats["max"] - stats["mean"],
                     arrayminus=stats["mean"] - stats["min"])))
    fig.add_trace(go.Scatter(x=summary["label"], y=summary[column].where(summary[column] > 0), mode="markers",
                             name=_("each seed"), marker=dict(color="black", size=6),
                             hovertext=[t("seed {seed}", seed=s) for s in summary["seed"]]))
    add_zeros(fig, summary["label"], summary[column], log_floor(summary[column]))
    if baseline is not None:
        fig.add_hline(y=baseline, line=dict(color="gray", dash="dash"))
        fig.add_trace(go.Scatter(x=[stats["label"].iloc[0], stats["label"].iloc[-1]] if len(stats) else [],
                                 y=[baseline] * min(2, len(stats)), mode="lines",
                                 name=t("memoryless baseline {baseline:.4g}", baseline=baseline),
                                 line=dict(color="gray", dash="dash")))
    fig = style_figure(fig, title, _("configuration"), y_title, log_y=True)
    # Half-width charts: a legend above the plot would cover the title, so it goes under the axis.
    return fig.update_layout(legend=dict(orientation="h", yanchor="top", y=-0.3, xanchor="left", x=0.0),
                             margin=dict(l=10, r=10, t=50, b=90), height=420)
