"""Gradients drawn at their true size: values given as log10 (:mod:`rnnlab.probing.logscale`), however small. Every
chart of a true size is drawn here: the gradient through time, the decay against T, connectivity, and the bars of
a sweep's sizes.

A log axis in Plotly takes the values themselves, so a gradient of 1e-400 (0 in float64) cannot be drawn on one.
These figures draw log10 on the true-size axis of :mod:`rnnlab.figures.log10_scale` instead: powers of ten, an
exact 0 (log10 = -inf) on a row of its own below everything, its hover saying why it is 0, float32's and float64's
floors (their smallest normal numbers) dashed when the values come near them.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from rnnlab.figures.log10_scale import (
    MAX_QUOTED,
    Log10Axis,
    add_exact_zeros,
    apply_log10_axis,
    log10_axis,
    log10_column,
    size_text,
    step_range,
)
from rnnlab.figures.plots import CARRY_AXIS, COLORS, LEAF_DASH, STEP_AXIS, SWEEP_COLORS, style_figure
from rnnlab.figures.size_words import describe_zero, zero_sentence
from rnnlab.i18n import _, count_for, labelled, t, tn
from rnnlab.probing.logscale import log10_mean


def log10_bar_figure(summary: pd.DataFrame, title: str, y_title: str, log10: str = "h0_log10",
                     cause: str = "h0_zero_cause", at: str = "h0_zero_at") -> go.Figure:
    """Sizes per label from their log10 (column ``log10``) on the true-size axis: a bar from the bottom row up to
    the mean over seeds with a lowest-to-highest whisker, each seed as a dot, exact zeros on the bottom row named by
    ``cause``/``at``; the floors drawn as on every true-size axis (:func:`apply_log10_axis`)."""
    values = summary[log10].astype(float)
    shown = summary[~values.isna()]
    axis = log10_axis(values[~values.isna()])
    bottom = axis.bottom  # the bars rise from the bottom of the plot
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
        hovertext=[t("{label}: mean over seeds {size}", label=label, size=size_text(m)) for label, m in
                   zip(labels, means)],
        hoverinfo="text",
        error_y=dict(type="data", symmetric=False, array=[h - max(m, bottom) for h, m in zip(highs, means)],
                     arrayminus=[max(m, bottom) - low for low, m in zip(lows, means)])))
    live = shown[np.isfinite(shown[log10].astype(float))]
    fig.add_trace(go.Scatter(
        x=live["label"], y=live[log10], mode="markers", name=_("each seed"), marker=dict(color="black", size=6),
        hovertext=[t("{label}, seed {seed}: {size}", label=row.label, seed=row.seed, size=size_text(v))
                   for row, v in zip(live.itertuples(), live[log10])],
        hoverinfo="text"))
    zeros = shown[np.isneginf(shown[log10].astype(float))]
    texts = [t("{label}, seed {seed}: {size}", label=row.label, seed=row.seed,
               size=describe_zero(getattr(row, cause), getattr(row, at), "h", 0)) for row in zeros.itertuples()]
    add_exact_zeros(fig, zeros["label"], zeros[cause].to_numpy(str) if cause in zeros else np.full(len(zeros), ""),
                    np.asarray(texts, str), axis, set())
    fig = style_figure(fig, title, _("configuration"), y_title)
    index = {label: i for i, label in enumerate(labels)}  # where each label's values sit along the categorical axis
    points = [(np.array([index[label] for label in shown["label"]], float), values[~values.isna()].to_numpy())]
    apply_log10_axis(fig, axis, points)
    return fig.update_layout(margin=dict(l=10, r=10, t=50, b=10), height=420, hovermode="closest")


# ---- the gradient charts (Gradient flow) ----------------------------------------------------------------------
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
        name = tn("after {n} training step, {leaf}", "after {n} training steps, {leaf}", int(step), leaf=leaf) \
            if step else t("before training, {leaf}", leaf=leaf)
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


def decay_label(name: str, halving: float) -> str:
    """A line's legend entry on the decay chart: 'GRU (halves every 2.9 steps)', or that it does not decay, or
    that no decay could be fitted."""
    if math.isnan(halving):
        return t("{name} (no decay fitted)", name=name)
    if math.isinf(halving):
        # TRANSLATORS: a legend entry: {name} is a cell's name, whose gradient does not decay with T
        return t("{name} (does not decay)", name=name)
    # TRANSLATORS: a legend entry: {name} is a cell's name; {steps} a number of time steps written to three digits
    # (2.9, 150); the form follows it as written: «каждые 2,9 шага», «каждые 150 шагов»
    return tn("{name} (halves every {steps:.3g} step)", "{name} (halves every {steps:.3g} steps)",
              count_for(halving), name=name, steps=halving)


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
        label = decay_label(name, h)
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
        texts = [labelled(f"T = {T}", zero_sentence(c, a, 'h', 0)) for c, a, T in zip(causes, at, group["T"])]
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
