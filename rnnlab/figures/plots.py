"""Plotly figure builders: pure functions of the DataFrames rnnlab computes (they never compute)."""

from __future__ import annotations

import math
import unicodedata

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from rnnlab.figures.log10_scale import (  # noqa: F401  (re-exported: the figures' names, as they always were)
    FLOOR_COLOR,
    FLOOR_DASH,
    FLOOR_NEAR,
    FLOORS_SHOWN,
    MAX_QUOTED,
    MAX_TICKS,
    NARROW_MARGIN,
    ZERO_NAMES,
    Log10Axis,
    add_exact_zeros,
    apply_log10_axis,
    log10_axis,
    log10_column,
    log10_ticks,
    narrow_log_ticks,
    power_text,
    size_text,
    step_range,
)
from rnnlab.i18n import N_, _, language, language_layout, t, tn, tp
from rnnlab.norms import ZERO_CAUSES, ZERO_NORM
from rnnlab.probing.probes import (
    F32_LOG10_FLOOR,
    describe_zero,
    fit_log10,
)

LEAF_NAMES = {"c": N_("cell state c"), "h": N_("hidden state h")}  # translated where shown: leaf_name(leaf)
LEAF_DASH = {"c": "dot", "h": "solid"}


# Okabe and Ito's colours: told apart with the common colour-vision deficiencies and on a washed-out projector.
COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")
# Plain numbers on every axis: powers of ten (1e-23 as 10^-23, never "10y" or SI prefixes such as 1u, 100n).
NUMBER_AXIS = dict(exponentformat="power", separatethousands=True)


# One time axis for every per-step chart, so that a step marked in one is the same step in all of them.
STEP_AXIS = N_("time step t (step t reads input t)")  # translated where shown: _(STEP_AXIS)
CARRY_AXIS = N_("time step t (0 = initial carry; step t reads input t)")


def leaf_name(leaf: str) -> str:
    """A carry leaf's name in the reader's language ('hidden state h'); an unknown leaf as it is."""
    return _(LEAF_NAMES[leaf]) if leaf in LEAF_NAMES else leaf

TITLE_LINE = 44  # characters (a wide one counts 2): a longer title is wrapped in two lines, as Plotly does not
# wrap on a phone


def display_width(text: str) -> int:
    """How wide ``text`` is drawn, in narrow characters: a wide or full-width one (Chinese) counts 2."""
    return sum(2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in text)


def _wide(ch: str) -> bool:
    return unicodedata.east_asian_width(ch) in ("W", "F")


NO_LINE_START = set("，。、：；！？）」』】》”’,.:;!?)]}%")  # never at the start of a wrapped line
NO_LINE_END = set("（「『【《“‘([{")  # never at the end of one
CLAUSE_END = set("，、：；。")  # a wrapped Chinese title breaks after one of these where both lines fit


def wrap_title(title: str, width: int = TITLE_LINE) -> str:
    """``title`` in two lines (joined by <br>) when wider than ``width`` (:func:`display_width`): at the space
    nearest its middle, or, in a title of wide characters (Chinese, without spaces), between two characters
    nearest its middle (after a clause's punctuation where both lines fit; never before closing punctuation or after
    opening, never inside a Latin word)."""
    if display_width(title) <= width:
        return title
    half = display_width(title) / 2
    offsets = [display_width(title[:i]) for i in range(len(title) + 1)]
    spaces = [i for i, ch in enumerate(title) if ch == " "]
    if spaces and not any(_wide(ch) for ch in title):
        cut = min(spaces, key=lambda i: abs(offsets[i] - half))
        return f"{title[:cut]}<br>{title[cut + 1:]}"
    # a break between two characters where one is wide (or at a space); never inside a Latin word or number
    breaks = [i for i in range(1, len(title))
              if (title[i - 1] == " " or title[i] == " " or _wide(title[i - 1]) or _wide(title[i]))
              and title[i] not in NO_LINE_START and title[i - 1] not in NO_LINE_END]
    if not breaks:
        return title
    total = display_width(title)
    after_stop = [i for i in breaks
                  if title[i - 1] in CLAUSE_END and offsets[i] <= width and total - offsets[i] <= width]
    cut = min(after_stop or breaks, key=lambda i: abs(offsets[i] - half))  # after a clause's end where both fit
    head, tail = title[:cut].rstrip(" "), title[cut:].lstrip(" ")
    return f"{head}<br>{tail}" if head and tail else title


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


def t_label(step: int) -> str:
    """The label of a marked step: 't = 12' (its number written the reader's way)."""
    # TRANSLATORS: the label of the time step marked in a chart (notation: keep "t =")
    return t("t = {t}", t=step)


def marked_figure(fig: go.Figure, t: int, first: int, last: int, offset: float = 0.0) -> go.Figure:
    """A per-step ``fig`` (x = step + ``offset``, steps ``first``..``last``) with step ``t`` marked when it is
    among them, and clickable."""
    if first <= t <= last:
        mark_step(fig, t + offset, t_label(t))
    return clickable(fig)


def log_span(fig: go.Figure) -> tuple[float, float] | None:
    """The smallest and largest positive finite y value of ``fig``'s traces (None if there is none)."""
    values = [float(v) for trace in fig.data if getattr(trace, "y", None) is not None for v in trace.y
              if isinstance(v, (int, float)) and math.isfinite(v) and v > 0]
    return (min(values), max(values)) if values else None


ZERO_LABEL = ZERO_NORM  # translated where shown: _(ZERO_LABEL)
ZERO_HOVER = (f"exactly 0 in float32: on its way back, {ZERO_CAUSES}; drawn at the bottom of the "
              "log axis")  # English; zero_hover() is the reader's language


def zero_hover() -> str:
    """:data:`ZERO_HOVER` in the reader's language: why a norm shown as an exact 0 is 0."""
    return _("exactly 0 in float32: on its way back, every element of the gradient fell below float32's smallest "
             "normal number (about 1.2e-38; smaller results are flushed to 0) or passed through units so saturated "
             "that their derivative is 0 in float32; drawn at the bottom of the log axis")


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
    fig.add_trace(go.Scatter(x=xs, y=[floor] * int(zero.sum()), mode="markers", name=_(ZERO_LABEL),
                             legendgroup="zero", showlegend=showlegend, hovertext=zero_hover(), hoverinfo="text+x",
                             marker=dict(symbol="triangle-down-open", size=10, color=color or "black")))


def loss_figure(steps: pd.DataFrame, evals: pd.DataFrame, baseline: float, baseline_text: str) -> go.Figure:
    """Training loss per step and evaluation loss (log scale), with the memoryless baseline as a line."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=steps["step"], y=steps["loss"], mode="lines", name=_("training loss")))
    fig.add_trace(go.Scatter(x=evals["step"], y=evals["eval_loss"], mode="markers+lines",
                             name=_("evaluation loss"), line=dict(dash="dot")))
    last = max(1, int(steps["step"].max()) if len(steps) else 1)
    fig.add_trace(go.Scatter(x=[0, last], y=[baseline, baseline], mode="lines",
                             name=t("memoryless baseline {value:.4g}", value=baseline),
                             line=dict(color="gray", dash="dash"), hovertext=baseline_text, hoverinfo="text"))
    return style_figure(fig, _("Loss"), _("training step"), _("loss (log scale)"), log_y=True)


def metric_figure(steps: pd.DataFrame, evals: pd.DataFrame, metric_name: str) -> go.Figure:
    """The task's readable metric (accuracy or MSE) per step, and at each evaluation."""
    fig = go.Figure()
    # TRANSLATORS: {metric} is the task's metric, already translated (accuracy, MSE)
    fig.add_trace(go.Scatter(x=steps["step"], y=steps["metric"], mode="lines",
                             name=t("training {metric}", metric=metric_name)))
    # TRANSLATORS: {metric} is the task's metric, already translated (accuracy, MSE)
    fig.add_trace(go.Scatter(x=evals["step"], y=evals["eval_metric"], mode="markers+lines",
                             name=t("evaluation {metric}", metric=metric_name), line=dict(dash="dot")))
    # TRANSLATORS: a chart's title; {metric} is the task's metric, already translated (accuracy, MSE)
    return style_figure(fig, t("Metric: {metric}", metric=metric_name), _("training step"), metric_name)


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
                               colorscale="RdBu", zmin=-bound, zmax=bound,
                               colorbar=dict(title=tp("a unit's value in a heatmap", "value"))))
    fig.update_xaxes(type="category")
    # TRANSLATORS: a chart's title; {leaf} is a carry leaf's name (hidden state h, cell state c)
    return style_figure(fig, t("Initial carry, {leaf}: units against training step", leaf=leaf_name(leaf)),
                        _("training step"), tp("a carry's unit (a heatmap's axis)", "unit"))


def carry_distance_figure(distance: pd.DataFrame) -> go.Figure:
    """Distance of the initial carry from where it started, per carry leaf."""
    fig = go.Figure()
    for leaf, group in distance.groupby("leaf", sort=False):
        fig.add_trace(go.Scatter(x=group["step"], y=group["distance"], mode="lines+markers",
                                 name=leaf_name(leaf), line=dict(dash=LEAF_DASH.get(leaf, "solid"))))
    return style_figure(fig, _("How far the initial carry moved"), _("training step"),
                        _("||carry - carry at step 0||"))


def carry_pca_figure(pca: pd.DataFrame) -> go.Figure:
    """The initial carry's path in 2-D (its snapshots' first two principal components), per leaf."""
    fig = go.Figure()
    for leaf, group in pca.groupby("leaf", sort=False):
        fig.add_trace(go.Scatter(
            x=group["pc1"], y=group["pc2"], mode="lines+markers+text", name=leaf_name(leaf),
            text=[str(s) if i in (0, len(group) - 1) else "" for i, s in enumerate(group["step"])],
            # TRANSLATORS: a training step, in a point's hover
            textposition="top center", hovertext=[t("step {step}", step=s) for s in group["step"]],
            line=dict(dash=LEAF_DASH.get(leaf, "solid"))))
    explained = pca["explained"].iloc[0] if len(pca) else 1.0
    # TRANSLATORS: a chart's title; {share} is a percentage (45%)
    return style_figure(fig, t("Path of the initial carry (PCA, {share:.0%} of its variance)", share=explained),
                        _("PC 1"), _("PC 2"))


def per_step_loss_figure(table: pd.DataFrame, step_baselines=None, title: str | None = None) -> go.Figure:
    """Loss at every time step of the sequence, one line per run (e.g. learned carry vs zero carry), with the
    memoryless baseline of each step where the task scores it (``step_baselines``, NaN elsewhere); ``title``
    (already translated) or "Loss at each time step of the sequence"."""
    fig = go.Figure()
    for run, group in table.groupby("run", sort=False):
        fig.add_trace(go.Scatter(x=group["t"], y=group["loss"], mode="lines", name=str(run)))
    if step_baselines is not None and len(table):
        base = pd.Series(step_baselines, dtype=float, index=range(1, len(step_baselines) + 1))
        scored = base.notna()
        one = int(scored.sum()) == 1
        fig.add_trace(go.Scatter(
            x=base.index[scored] if one else base.index, y=base[scored] if one else base.where(base > 0),
            mode="markers" if one else "lines",
            name=_("memoryless baseline (scored step)") if one else _("memoryless baseline"),
            line=dict(color="gray", dash="dash"), marker=dict(color="gray", symbol="line-ew-open", size=16)))
    title = title if title is not None else _("Loss at each time step of the sequence")
    return style_figure(fig, title, _(STEP_AXIS), _("loss (log scale)"), log_y=True)


def _zero_parts(group: pd.DataFrame, log10: pd.Series) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where ``log10`` is an exact 0 (-inf), and each row's zero cause and step (as the probe tables hold them)."""
    causes = group["zero_cause"].to_numpy(str) if "zero_cause" in group else np.full(len(group), "")
    return np.isneginf(log10.to_numpy()), causes, group.get("zero_at", pd.Series(-1, group.index)).to_numpy(int)


def _zero_sentence(cause: str, zero_at: int, leaf: str, at_t: int) -> str:
    if cause:
        return describe_zero(cause, int(zero_at), leaf, int(at_t))
    # TRANSLATORS: {where} is a gradient's norm such as ||dL/dh_3||
    return t("{where} is exactly 0.", where=f"||dL/d{leaf}_{at_t}||")


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
        texts = [_zero_sentence(c, a, leaf, when) for c, a, when in zip(causes, at, group["t"])]
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
            t("{name} (no decay fitted)", name=name)
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
        texts = [f"T = {T}: {_zero_sentence(c, a, 'h', 0)}" for c, a, T in zip(causes, at, group["T"])]
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


# ---- the same sizes in words (the page's captions) --------------------------------------------------------------


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


def join_sentences(*sentences: str) -> str:
    """Sentences one after the other (the empty ones left out): with a space, or none in Chinese."""
    return ("" if language() == "zh" else " ").join(s for s in sentences if s)


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


def _decay_sentence(step: int, leaf: str, rate: float, halving: float, below: int, last: int) -> str:
    """One line of :func:`describe_decay_back`: a whole sentence for each case."""
    if below < 0 and math.isinf(halving):
        # TRANSLATORS: the model after {n} training steps; {leaf} is h or c; {rate} the fitted factor per step (0.87)
        return tn("After {n} training step, {leaf}: ×{rate:.3g} per step back (the gradient does not decay with T).",
                  "After {n} training steps, {leaf}: ×{rate:.3g} per step back (the gradient does not decay with "
                  "T).", step, leaf=leaf, rate=rate)
    if below < 0:
        # TRANSLATORS: the model after {n} training steps; {leaf} is h or c; {rate} the fitted factor per step (0.87);
        # {steps} a fractional number of time steps (2.9)
        return tn("After {n} training step, {leaf}: ×{rate:.3g} per step back (the gradient halves every {steps:.3g} "
                  "steps).", "After {n} training steps, {leaf}: ×{rate:.3g} per step back (the gradient halves every "
                  "{steps:.3g} steps).", step, leaf=leaf, rate=rate, steps=halving)
    if math.isinf(halving):
        # TRANSLATORS: as "After {n} training steps, {leaf}: ..."; below float32's floor from step {t}, which is
        # {before} steps before the last step {last} (in Russian write it so that {before} needs no agreement)
        return tn("After {n} training step, {leaf}: ×{rate:.3g} per step back (the gradient does not decay with T); "
                  "below float32's smallest normal number from t = {t}, {before} steps before the last.",
                  "After {n} training steps, {leaf}: ×{rate:.3g} per step back (the gradient does not decay with T); "
                  "below float32's smallest normal number from t = {t}, {before} steps before the last.",
                  step, leaf=leaf, rate=rate, t=below, before=last - below)
    # TRANSLATORS: as "After {n} training steps, {leaf}: ..."; below float32's floor from step {t}, which is {before}
    # steps before the last step (in Russian write it so that {before} needs no agreement)
    return tn("After {n} training step, {leaf}: ×{rate:.3g} per step back (the gradient halves every {steps:.3g} "
              "steps); below float32's smallest normal number from t = {t}, {before} steps before the last.",
              "After {n} training steps, {leaf}: ×{rate:.3g} per step back (the gradient halves every {steps:.3g} "
              "steps); below float32's smallest normal number from t = {t}, {before} steps before the last.",
              step, leaf=leaf, rate=rate, steps=halving, t=below, before=last - below)


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
        # TRANSLATORS: the model after {n} training steps; {sentence} says why a gradient is exactly 0
        first = tn("After {n} training step: {sentence}", "After {n} training steps: {sentence}", int(step),
                   sentence=describe_zero(cause, int(at), leaf, int(group["t"].max()),
                                          float(group.loc[group["t"].idxmax(), "log10"]) if "log10" in group
                                          else -math.inf))
        # TRANSLATORS: after a sentence saying that a gradient is exactly 0 at some step: so is it at the {n}
        # steps before that one
        more = tn("So are the {n} step before it.", "So are the {n} steps before it.", len(group) - 1) \
            if len(group) > 1 else ""
        out.append(join_sentences(first, more))
    return out


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
