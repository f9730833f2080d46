"""Gradients drawn at their true size: values given as log10 (:mod:`rnnlab.probing.logscale`), however small.

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
from rnnlab.figures.plots import COLORS, style_figure
from rnnlab.i18n import N_, _, t
from rnnlab.probing.logscale import describe_zero, log10_mean
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
