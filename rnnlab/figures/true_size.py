"""Gradients drawn at their true size: values given as log10 (:mod:`rnnlab.probing.logscale`), however small. Every
chart of a true size is drawn here: the gradient through time, the decay against T, connectivity, and the bars of
a sweep's sizes.

A log axis in Plotly takes the values themselves, so a gradient of 1e-400 (0 in float64) cannot be drawn on one.
These figures draw log10 on a linear axis labelled in powers of ten instead; an exact 0 (log10 = -inf) sits on a
row of its own below everything, its hover saying why it is 0; float32's and float64's floors (their smallest
normal numbers) are drawn as reference lines when the values come near them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from rnnlab.figures import plots
from rnnlab.figures.log10_scale import (
    MAX_QUOTED,
    Log10Axis,
    apply_log10_axis,
    log10_axis,
    log10_column,
    size_text,
    step_range,
)
from rnnlab.figures.plots import CARRY_AXIS, COLORS, LEAF_DASH, STEP_AXIS, SWEEP_COLORS, style_figure
from rnnlab.figures.size_words import EXACT_ZERO, ZERO_CAUSES, describe_zero, zero_sentence
from rnnlab.i18n import N_, _, t, tn
from rnnlab.probing.logscale import log10_mean
from rnnlab.probing.probes import format_log10

FLOORS = {name: floor for name, (floor, _, _) in plots.FLOORS_SHOWN.items()}


class _PerFloor(Mapping[str, str]):
    """A floor's words by its name, made in the reader's language when read (``FLOOR_LABEL["float32"]``)."""

    def __init__(self, make: Callable[[str], str]):
        self._make = make

    def __getitem__(self, name: str) -> str:
        if name not in FLOORS:
            raise KeyError(name)
        return self._make(name)

    def __iter__(self) -> Iterator[str]:
        return iter(FLOORS)

    def __len__(self) -> int:
        return len(FLOORS)


def floor_text(name: str) -> str:
    """What floor ``name`` is and means, the same words as Gradient flow's: "float32's smallest normal number
    (1.2e-38): below it float32 gives 0"."""
    floor, what, meaning = plots.FLOORS_SHOWN[name]
    # TRANSLATORS: {what} is "float32's smallest normal number", {value} it (1.2e-38), {meaning} "below it float32
    # gives 0"
    return t("{what} ({value:.2g}): {meaning}", what=_(what), value=10.0 ** floor, meaning=_(meaning))


def floor_label(name: str) -> str:
    """A floor's tag: "float32's floor (1.2e-38)"."""
    # TRANSLATORS: a line's tag on a chart; {name} is float32 or float64, {value} its smallest normal number
    return t("{name}'s floor ({value:.2g})", name=name, value=10.0 ** FLOORS[name])


FLOOR_TEXT: Mapping[str, str] = _PerFloor(floor_text)
FLOOR_LABEL: Mapping[str, str] = _PerFloor(floor_label)
FLOOR_DASH = plots.FLOOR_DASH
NEAR_DECADES = plots.FLOOR_NEAR  # a floor is drawn once the smallest value shown is within this many decades above it
ZERO_GAP = 2.0  # exact zeros sit this many decades below the lowest value or floor drawn
BOTTOM_GAP = 0.5  # without zeros, the axis starts this many decades below them
ZERO_NAME = N_("exactly 0 (hover: why)")  # a legend name, translated where shown: _(ZERO_NAME)


def floors_near(lowest: float) -> list[str]:
    """The floors to draw for values down to ``lowest`` (log10): those within :data:`NEAR_DECADES` of it or above."""
    if not math.isfinite(lowest):
        return []
    return [name for name, floor in FLOORS.items() if lowest <= floor + NEAR_DECADES]


def finite(log10) -> np.ndarray:
    """The finite entries of ``log10`` (no -inf, no nan)."""
    values = np.asarray(log10, float).ravel()
    return values[np.isfinite(values)]


def zero_row(log10, floors: list[str]) -> float:
    """The axis' bottom, where exact zeros are drawn: :data:`ZERO_GAP` decades below the lowest value and every
    floor drawn (:data:`BOTTOM_GAP` when there is no exact 0)."""
    lows = [*finite(log10), *(FLOORS[name] for name in floors)]
    gap = ZERO_GAP if np.isneginf(np.asarray(log10, float)).any() else BOTTOM_GAP
    return (min(lows) if lows else 0.0) - gap


def power_ticks(low: float, high: float, count: int = 6) -> tuple[list[float], list[str]]:
    """Tick positions between ``low`` and ``high`` (log10), at most ``count``, labelled as Gradient flow's are."""
    return plots.log10_ticks(low, high, max_ticks=count)


power_text = plots.power_text


def log_axis(low: float, high: float, title: str) -> dict:
    """A y axis of log10 values from ``low`` to ``high`` (with a margin), labelled in powers of ten."""
    margin = max(0.08 * (high - low), 0.4)
    ticks, text = power_ticks(low - margin, high + margin)
    return dict(title=title, type="linear", range=[low - margin, high + margin], tickvals=ticks, ticktext=text,
                zeroline=False)


def floor_traces(floors: list[str], x: list, yaxis: str = "y", showlegend: bool = True) -> list[go.Scatter]:
    """A horizontal line per floor across ``x`` (its first and last value)."""
    ends = [x[0], x[-1]] if len(x) else []
    return [go.Scatter(x=ends, y=[FLOORS[name]] * len(ends), mode="lines", name=FLOOR_LABEL[name],
                       line=dict(color="gray", dash=FLOOR_DASH[name], width=1), hovertext=FLOOR_TEXT[name],
                       hoverinfo="text",
                       yaxis=yaxis, legendgroup=f"floor_{name}", showlegend=showlegend)
            for name in floors]


def add_floor_lines(fig: go.Figure, floors: list[str]) -> go.Figure:
    """Each floor as a dashed line across the whole plot, labelled at its right end (a categorical axis has no
    x to draw a trace from edge to edge)."""
    for name in floors:
        fig.add_hline(y=FLOORS[name], line=dict(color="gray", dash=FLOOR_DASH[name], width=1),
                      annotation=dict(text=FLOOR_LABEL[name], font=dict(size=10, color="gray")),
                      annotation_position="bottom right")
    return fig


def log10_bar_figure(summary: pd.DataFrame, title: str, y_title: str, log10: str = "h0_log10",
                     cause: str = "h0_zero_cause", at: str = "h0_zero_at") -> go.Figure:
    """Sizes per label from their log10 (column ``log10``): a bar at the mean over seeds with a lowest-to-highest
    whisker, each seed as a dot, exact zeros on a row of their own named by ``cause``/``at``; float32's and
    float64's floors drawn across the plot (:func:`add_floor_lines`) when the values come near them."""
    from rnnlab.i18n import _, localize_number, t

    def size(log10_value: float) -> str:  # a size in a hover, written the reader's way
        return _("0 in float32") if np.isneginf(log10_value) else localize_number(format_log10(log10_value))

    values = summary[log10].astype(float)
    shown = summary[~values.isna()]
    floors = floors_near(float(finite(values).min()) if len(finite(values)) else math.inf)
    bottom = zero_row(values, floors)
    top = max([*finite(values), *(FLOORS[name] for name in floors), bottom + 1.0])
    fig = go.Figure()
    labels = list(dict.fromkeys(shown["label"]))
    means, lows, highs = [], [], []
    for label in labels:
        seeds = shown.loc[shown["label"] == label, log10].to_numpy(float)
        means.append(float(log10_mean(seeds, axis=0)))
        lows.append(max(float(seeds.min()), bottom))
        highs.append(max(float(seeds.max()), bottom))
    heights = [m - bottom if math.isfinite(m) else 0.0 for m in means]
    fig.add_trace(go.Bar(
        x=labels, y=heights, base=bottom, name=_("mean over seeds"),
        marker_color=[COLORS[n % len(COLORS)] for n in range(len(labels))],
        hovertext=[t("{label}: mean over seeds {size}", label=label, size=size(m)) for label, m in zip(labels, means)],
        hoverinfo="text",
        error_y=dict(type="data", symmetric=False, array=[h - max(m, bottom) for h, m in zip(highs, means)],
                     arrayminus=[max(m, bottom) - low for low, m in zip(lows, means)])))
    live = shown[np.isfinite(shown[log10].astype(float))]
    fig.add_trace(go.Scatter(
        x=live["label"], y=live[log10], mode="markers", name=_("each seed"), marker=dict(color="black", size=6),
        hovertext=[t("{label}, seed {seed}: {size}", label=row.label, seed=row.seed, size=size(v))
                   for row, v in zip(live.itertuples(), live[log10])],
        hoverinfo="text"))
    zeros = shown[np.isneginf(shown[log10].astype(float))]
    if len(zeros):
        fig.add_trace(go.Scatter(
            x=zeros["label"], y=[bottom] * len(zeros), mode="markers", name=_("exactly 0 (hover: why)"),
            marker=dict(symbol="triangle-down-open", size=9, color="black"), hoverinfo="text",
            hovertext=[t("{label}, seed {seed}: {size}", label=row.label, seed=row.seed,
                         size=describe_zero(getattr(row, cause), getattr(row, at), "h", 0))
                       for row in zeros.itertuples()]))
    add_floor_lines(fig, floors)
    fig = style_figure(fig, title, _("configuration"), y_title)
    fig.update_yaxes(**log_axis(bottom, top, y_title))
    return fig.update_layout(legend=dict(orientation="h", yanchor="top", y=-0.3, xanchor="left", x=0.0),
                             margin=dict(l=10, r=10, t=50, b=90), height=420, hovermode="closest")


# ---- the gradient charts (Gradient flow) ----------------------------------------------------------------------
def add_exact_zeros(fig: go.Figure, x, causes: np.ndarray, texts: np.ndarray, axis: Log10Axis, shown: set[str],
                    color: str | None = None) -> None:
    """Mark exact zeros (at ``x``) at the bottom of ``axis``, one legend entry per cause
    (:data:`~rnnlab.figures.size_words.ZERO_CAUSES`; those in ``shown`` already have one), each point's hover its
    sentence (``texts``)."""
    x, causes, texts = np.asarray(x), np.asarray(causes, str), np.asarray(texts, str)
    for cause in dict.fromkeys(causes):
        pick = causes == cause
        fig.add_trace(go.Scatter(x=list(x[pick]), y=[axis.zero_y] * int(pick.sum()), mode="markers",
                                 name=_(ZERO_CAUSES.get(cause, EXACT_ZERO)), legendgroup=f"zero {cause}",
                                 showlegend=cause not in shown, hovertext=list(texts[pick]), hoverinfo="text",
                                 marker=dict(symbol="triangle-down-open", size=10, color=color or "black")))
        shown.add(cause)


def _zero_parts(group: pd.DataFrame, log10: pd.Series) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where ``log10`` is an exact 0 (-inf), and each row's zero cause and step (as the probe tables hold them)."""
    causes = group["zero_cause"].to_numpy(str) if "zero_cause" in group else np.full(len(group), "")
    return np.isneginf(log10.to_numpy()), causes, group.get("zero_at", pd.Series(-1, group.index)).to_numpy(int)


def _size_trace(x, log10: pd.Series, name: str, x_name: str, quantity: str, **line) -> go.Scatter:
    """A line of log10 sizes (gaps at exact zeros), its hover giving each true size (:func:`format_log10`)."""
    y = log10.where(np.isfinite(log10))
    return go.Scatter(x=list(x), y=y, mode="lines", name=name, line=line or None,
                      customdata=[size_text(v) for v in log10],
                      hovertemplate=f"{x_name} = %{{x}}<br>{quantity} = %{{customdata}}<extra>{name}</extra>")


def grad_through_time_figure(grads: pd.DataFrame, axis: Log10Axis | None = None) -> go.Figure:
    """||dL/dh_t|| against t at its true size (a log10 axis, :func:`log10_axis`; ``axis`` to share one), one line
    per training step and carry leaf; exact zeros marked at the bottom and named by cause, the floors dashed."""
    log10 = log10_column(grads, "grad_norm")
    axis = axis or log10_axis(log10)
    fig, shown, points = go.Figure(), set[str](), []
    for (step, leaf), group in grads.groupby(["step", "leaf"], sort=False):
        y = log10[group.index]
        # TRANSLATORS: a line of a chart: the model after {n} training steps; {leaf} is the carry leaf (h or c)
        name = tn("after {n} training step, {leaf}", "after {n} training steps, {leaf}", int(step), leaf=leaf)
        fig.add_trace(_size_trace(group["t"], y, name, "t", f"||dL/d{leaf}_t||", dash=LEAF_DASH.get(leaf, "solid")))
        points.append((group["t"].to_numpy(float), y.to_numpy()))
        zero, causes, at = _zero_parts(group, y)
        texts = [zero_sentence(c, a, leaf, when) for c, a, when in zip(causes, at, group["t"])]
        add_exact_zeros(fig, group["t"].to_numpy()[zero], causes[zero], np.asarray(texts)[zero], axis, shown)
    last = float(grads["t"].max()) if len(grads) else 1.0
    fig = style_figure(fig, _("Gradient of the loss with respect to the carry at each time step"), _(CARRY_AXIS),
                       _("||dL/dh_t|| (log scale)"))
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
        # TRANSLATORS: a legend entry: {name} is a cell's name; {steps} a fractional number of time steps (2.9)
        label = t("{name} (halves every {steps:.3g} steps)", name=name, steps=h) if math.isfinite(h) else \
            t("{name} (does not decay)", name=name) if math.isinf(h) else t("{name} (no decay fitted)", name=name)
        color = SWEEP_COLORS[n % len(SWEEP_COLORS)]
        y = log10[group.index]
        trace = _size_trace(group["T"], y, label, "T", "||dL/dh_0||", color=color)
        trace.update(mode="lines+markers", legendgroup=cell)
        if sweep["cell"].nunique() == 1 and len(group) <= MAX_QUOTED:  # few points: each quoted on the chart
            ends = ("top right", "bottom left") if y.iloc[-1] <= y.iloc[0] else ("bottom right", "top left")
            trace.update(mode="lines+markers+text", text=[size_text(v, 1) for v in y], textfont=dict(size=11),
                         cliponaxis=False, textposition=[ends[0]] * (len(y) - 1) + [ends[1]])
        fig.add_trace(trace)
        points.append((group["T"].to_numpy(float), y.to_numpy()))
        xs, ys = _fit_line(group, y, rates.get(cell, math.nan), log_x)
        if len(xs):
            rate = rates[cell]
            # TRANSLATORS: a hover: the fitted factor per step of T (0.787)
            fitted = t("fitted: ×{rate:.3g} per step", rate=rate)
            fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", name=t("{name}: fitted line", name=name),
                                     legendgroup=cell, showlegend=False, line=dict(color=color, dash="dot", width=1),
                                     hovertemplate=f"{fitted}<extra>{name}</extra>"))
        zero, causes, at = _zero_parts(group, y)
        texts = [f"T = {T}: {zero_sentence(c, a, 'h', 0)}" for c, a, T in zip(causes, at, group["T"])]
        add_exact_zeros(fig, group["T"].to_numpy()[zero], causes[zero], np.asarray(texts)[zero], axis, shown, color)
    fig = style_figure(fig, _("Gradient reaching the initial carry against sequence length"), _("sequence length T"),
                       _("||dL/dh_0|| (log scale)"))
    if log_x:
        fig.update_xaxes(type="log")
    return apply_log10_axis(fig, axis, points, log_x)


def connectivity_figure(conn: pd.DataFrame, axis: Log10Axis | None = None) -> go.Figure:
    """||d y_T / d x_t|| against the step t that reads x_t at its true size (a log10 axis); exact zeros marked at
    the bottom, the floors dashed."""
    log10 = log10_column(conn, "connectivity")
    axis = axis or log10_axis(log10)
    fig = go.Figure(_size_trace(conn["t"], log10, _("connectivity"), "t", "||dy_T/dx_t||"))
    zero = np.isneginf(log10.to_numpy())
    # TRANSLATORS: {where} is a norm such as ||dy_T/dx_3||
    texts = np.asarray([t("{where} is exactly 0 by the cell's arithmetic.", where=f"||dy_T/dx_{when}||")
                        for when in conn["t"]])
    add_exact_zeros(fig, conn["t"].to_numpy()[zero], np.full(int(zero.sum()), ""), texts[zero], axis, set())
    fig = style_figure(fig, _("Connectivity: how much the last output depends on each input step"), _(STEP_AXIS),
                       _("||dy_T / dx_t|| (log scale)"))
    fig.update_xaxes(range=step_range(float(conn["t"].max()) if len(conn) else 1.0))
    return apply_log10_axis(fig, axis, [(conn["t"].to_numpy(float), log10.to_numpy())])
