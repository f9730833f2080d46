"""Plotly figure builders: pure functions of the DataFrames rnnlab computes (they never compute)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from rnnlab.norms import ZERO_CAUSES, ZERO_NORM

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
                      height=380, colorway=COLORS)
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
    fig.add_annotation(x=x, xref="x", y=1, yref="paper", text=label, showarrow=False, yanchor="bottom",
                       font=dict(color=MARK_COLOR, size=11))
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


def grad_through_time_figure(grads: pd.DataFrame) -> go.Figure:
    """||dL/dh_t|| against t (log scale), one line per training step and carry leaf; exact zeros marked."""
    fig = go.Figure()
    floor = log_floor(grads["grad_norm"])
    first_zero = True
    for (step, leaf), group in grads.groupby(["step", "leaf"], sort=False):
        values = group["grad_norm"].where(group["grad_norm"] > 0)
        fig.add_trace(go.Scatter(x=group["t"], y=values, mode="lines",
                                 name=f"after {step} training steps, {leaf}",
                                 line=dict(dash=LEAF_DASH.get(leaf, "solid"))))
        # the final cell state c is read by nothing, so its 0 has another cause: the page says so instead
        zeros = group["grad_norm"].where((leaf != "c") | (group["t"] != grads["t"].max()), 1.0)
        if (zeros == 0).any():
            add_zeros(fig, group["t"], zeros, floor, showlegend=first_zero)
            first_zero = False
    return style_figure(fig, "Gradient of the loss with respect to the carry at each time step",
                   CARRY_AXIS, "||dL/dh_t|| (log scale)", log_y=True)


def decay_figure(sweep: pd.DataFrame, fits: pd.DataFrame, labels: dict[str, str] | None = None) -> go.Figure:
    """||dL/dh_0|| against sequence length T, one line per cell (named by ``labels``), with its halving length.
    Exact zeros (0 in float32) are marked at the bottom of the axis, not dropped."""
    fig = go.Figure()
    halving = dict(zip(fits["cell"], fits["halving_steps"])) if len(fits) else {}
    floor = log_floor(sweep["h0_grad_norm"])
    for n, (cell, group) in enumerate(sweep.groupby("cell", sort=False)):
        h, name = halving.get(cell, math.nan), (labels or {}).get(cell, cell)
        label = f"{name} (halves every {h:.3g} steps)" if math.isfinite(h) else f"{name} (no decay fitted)"
        color = SWEEP_COLORS[n % len(SWEEP_COLORS)]
        fig.add_trace(go.Scatter(x=group["T"], y=group["h0_grad_norm"].where(group["h0_grad_norm"] > 0),
                                 mode="lines+markers", name=label, line=dict(color=color)))
        add_zeros(fig, group["T"], group["h0_grad_norm"], floor, color=color, showlegend=n == 0)
    fig = style_figure(fig, "Gradient reaching the initial carry against sequence length", "sequence length T",
                  "||dL/dh_0|| (log scale)", log_y=True)
    if len(sweep) and sweep["T"].max() / max(1, sweep["T"].min()) >= 20:
        fig.update_xaxes(type="log")
    return fig


def connectivity_figure(conn: pd.DataFrame) -> go.Figure:
    """||d y_T / d x_t|| against the step t that reads x_t (log scale); exact zeros marked at the bottom."""
    fig = go.Figure(go.Scatter(x=conn["t"], y=conn["connectivity"].where(conn["connectivity"] > 0), mode="lines",
                               name="connectivity"))
    add_zeros(fig, conn["t"], conn["connectivity"], log_floor(conn["connectivity"]))
    return style_figure(fig, "Connectivity: how much the last output depends on each input step",
                   STEP_AXIS, "||dy_T / dx_t|| (log scale)", log_y=True)


# ---- sweeps (the Compare page) --------------------------------------------------------------------------
SWEEP_COLORS = COLORS


def _rgba(hex_color: str, alpha: float) -> str:
    r, g, b = (int(hex_color[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def sweep_curves_figure(spread: pd.DataFrame, baseline: float | None = None) -> go.Figure:
    """Training loss against step per label: the mean over seeds as a line, min-max over seeds as a band."""
    fig = go.Figure()
    for n, (label, group) in enumerate(spread.groupby("label", sort=False)):
        color = SWEEP_COLORS[n % len(SWEEP_COLORS)]
        seeds = int(group["seeds"].max())
        if seeds > 1:
            fig.add_trace(go.Scatter(x=group["step"], y=group["max"], mode="lines", line=dict(width=0),
                                     showlegend=False, hoverinfo="skip", legendgroup=label))
            fig.add_trace(go.Scatter(x=group["step"], y=group["min"], mode="lines", line=dict(width=0),
                                     fill="tonexty", fillcolor=_rgba(color, 0.2), name=f"{label}: min-max",
                                     showlegend=False, hoverinfo="skip", legendgroup=label))
        name = f"{label} (mean of {seeds} seeds)" if seeds > 1 else label
        fig.add_trace(go.Scatter(x=group["step"], y=group["mean"], mode="lines", name=name,
                                 line=dict(color=color), legendgroup=label))
    if baseline is not None and len(spread):
        fig.add_trace(go.Scatter(x=[0, int(spread["step"].max())], y=[baseline, baseline], mode="lines",
                                 name=f"memoryless baseline {baseline:.4g}", line=dict(color="gray", dash="dash")))
    return style_figure(fig, "Training loss: mean and spread over seeds", "training step", "loss (log scale)",
                   log_y=True)


def sweep_bar_figure(summary: pd.DataFrame, column: str, title: str, y_title: str,
                     baseline: float | None = None) -> go.Figure:
    """``column`` per label: a bar at the mean over seeds with a min-max whisker, each seed as a dot."""
    stats = summary.groupby("label", sort=False)[column].agg(["mean", "min", "max"]).reset_index()
    fig = go.Figure(go.Bar(
        x=stats["label"], y=stats["mean"], name="mean over seeds",
        marker_color=[SWEEP_COLORS[n % len(SWEEP_COLORS)] for n in range(len(stats))],
        error_y=dict(type="data", symmetric=False, array=stats["max"] - stats["mean"],
                     arrayminus=stats["mean"] - stats["min"])))
    fig.add_trace(go.Scatter(x=summary["label"], y=summary[column].where(summary[column] > 0), mode="markers",
                             name="each seed", marker=dict(color="black", size=6),
                             hovertext=[f"seed {s}" for s in summary["seed"]]))
    add_zeros(fig, summary["label"], summary[column], log_floor(summary[column]))
    if baseline is not None:
        fig.add_hline(y=baseline, line=dict(color="gray", dash="dash"))
        fig.add_trace(go.Scatter(x=[stats["label"].iloc[0], stats["label"].iloc[-1]] if len(stats) else [],
                                 y=[baseline] * min(2, len(stats)), mode="lines",
                                 name=f"memoryless baseline {baseline:.4g}", line=dict(color="gray", dash="dash")))
    fig = style_figure(fig, title, "configuration", y_title, log_y=True)
    # Half-width charts: a legend above the plot would cover the title, so it goes under the axis.
    return fig.update_layout(legend=dict(orientation="h", yanchor="top", y=-0.3, xanchor="left", x=0.0),
                             margin=dict(l=10, r=10, t=50, b=90), height=420)
