"""Plotly figure builders: pure functions of the DataFrames rnnlab computes (they never compute)."""

from __future__ import annotations

import math
import numbers
import unicodedata

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio

from rnnlab.figures.log10_scale import NARROW_MARGIN, add_float32_zeros, narrow_log_ticks, tick_number, zero_level
from rnnlab.i18n import N_, _, language_layout, t, tick_text, tp

# Plotly's own JSON writer for every chart (Streamlit's too): where orjson is installed Plotly would pick it, and it
# refuses Python integers past 64 bits, which a diverged run's loss chart holds.
pio.json.config.default_engine = "json"

LEAF_NAMES = {"c": N_("cell state c"), "h": N_("hidden state h")}  # translated where shown: leaf_name(leaf)
LEAF_DASH = {"c": "dot", "h": "solid"}


# Okabe and Ito's colours: told apart with the common colour-vision deficiencies and on a washed-out projector.
COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")
# Plain numbers on every axis: powers of ten (1e-23 as 10^-23, never "10y" or SI prefixes such as 1u, 100n).
NUMBER_AXIS = dict(exponentformat="power", separatethousands=True)
# The legend under the chart, anchored to the bottom of the whole figure: Plotly makes room for it below the x axis'
# title whatever the chart's height and width (one placed at a share of the plot's height ran over that title on a
# short or narrow chart). Above the plot it covered the title when its entries were long.
LEGEND_BELOW = dict(orientation="h", yref="container", yanchor="bottom", y=0.0, xanchor="left", x=0.0)


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
    wrapped = wrap_title(title)
    fig.update_layout(title=wrapped, xaxis_title=x, yaxis_title=y,
                      margin=dict(l=10, r=10, t=50 if wrapped == title else 72, b=10),
                      legend=LEGEND_BELOW,
                      height=380, colorway=COLORS, **language_layout())
    fig.update_xaxes(**NUMBER_AXIS)
    fig.update_yaxes(**NUMBER_AXIS)
    for axis in ("x", "y") if not log_y else ("x",):
        ticks = power_ticks(_axis_values(fig, axis))
        if ticks:
            fig.update_layout({f"{axis}axis": dict(tickvals=ticks, ticktext=[tick_text(v) for v in ticks])})
    if log_y:
        fig.update_yaxes(type="log", minorloglabels="none")  # no bare "2, 5" digits between the decades
        span = log_span(fig)
        ticks = narrow_log_ticks(*span) if span else None
        if span and ticks:  # the range spans every value with a margin, so that none sits on the plot's edge
            lo, hi = span
            fig.update_yaxes(tickvals=ticks, ticktext=[tick_number(t) for t in ticks],
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


POWER_BELOW, POWER_FROM = 1e-3, 1e5  # a linear axis whose largest value is outside these writes powers of ten
AXIS_TICKS = 5  # about this many ticks on such an axis


def _axis_values(fig: go.Figure, axis: str) -> list[float]:
    """The finite numbers ``fig``'s traces plot on its first ``axis`` ('x' or 'y'); none for text or dates."""
    values: list[float] = []
    for trace in fig.data:
        if (getattr(trace, f"{axis}axis", None) or axis) != axis:
            continue
        data = getattr(trace, axis, None)
        if data is None:
            continue
        array = np.asarray(data)
        if array.dtype.kind == "O" and all(v is None or (isinstance(v, numbers.Real) and not isinstance(v, bool))
                                           for v in array.ravel()):
            array = array.astype(float)  # numbers with gaps (None) in a list
        if array.dtype.kind not in "iuf":
            return []  # text (categories), dates or booleans: not a number axis
        array = array.astype(float).ravel()
        values.extend(array[np.isfinite(array)].tolist())
    return values


def power_ticks(values: list[float]) -> list[float] | None:
    """Ticks (1, 2 or 5 times a power of ten apart) for a linear axis of ``values`` whose largest size is below
    :data:`POWER_BELOW` or from :data:`POWER_FROM` up, where Plotly would write one shared power under every tick
    ('0.2×10⁻⁸') with its own signs: written by :func:`rnnlab.i18n.tick_text` instead ('2×10⁻⁹'). None for an axis
    Plotly writes as plain numbers."""
    sizes = [abs(v) for v in values]
    if not sizes or max(sizes) == 0 or POWER_BELOW <= max(sizes) < POWER_FROM:
        return None
    lo, hi = min(values), max(values)
    if hi == lo:
        return [lo]
    rough = (hi - lo) / AXIS_TICKS
    power = 10.0 ** math.floor(math.log10(rough))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= rough)
    first, last = math.floor(lo / step), math.ceil(hi / step)
    return [float(f"{k * step:.12g}") for k in range(first, last + 1)]


def log_span(fig: go.Figure) -> tuple[float, float] | None:
    """The smallest and largest positive finite y value of ``fig``'s traces (None if there is none)."""
    values = [float(v) for trace in fig.data if getattr(trace, "y", None) is not None for v in trace.y
              if isinstance(v, (int, float)) and math.isfinite(v) and v > 0]
    return (min(values), max(values)) if values else None


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
    # TRANSLATORS: the metric chart's y axis, short: the chart's title and legend name the metric.
    return style_figure(fig, t("Metric: {metric}", metric=metric_name), _("training step"), tp("axis", "metric"))


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
                        _("distance from the start"))


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
    add_float32_zeros(fig, summary["label"], summary[column], zero_level(summary[column]))
    if baseline is not None:
        fig.add_hline(y=baseline, line=dict(color="gray", dash="dash"))
        fig.add_trace(go.Scatter(x=[stats["label"].iloc[0], stats["label"].iloc[-1]] if len(stats) else [],
                                 y=[baseline] * min(2, len(stats)), mode="lines",
                                 name=t("memoryless baseline {baseline:.4g}", baseline=baseline),
                                 line=dict(color="gray", dash="dash")))
    fig = style_figure(fig, title, _("configuration"), y_title, log_y=True)
    return fig.update_layout(height=420)
