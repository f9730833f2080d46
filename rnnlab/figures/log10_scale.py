"""The true-size axis, the one home of every chart of a size kept as its log10 (:mod:`rnnlab.figures.true_size` draws
Gradient flow's and Compare's charts with it, :mod:`rnnlab.figures.example_plots` the unrolled example's gradient):
log10 plotted on a linear axis whose ticks are written as powers of ten, float32's and float64's floors drawn as
dashed lines by one rule and in one style, and a row at the bottom for exact zeros. Also where an exact 0 sits on a
log axis of values (a loss, a distance), which Plotly cannot draw."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from rnnlab.i18n import N_, _, localize_number, t
from rnnlab.true_sizes import EXACT_ZERO, F32_LOG10_FLOOR, F64_LOG10_FLOOR, FLOAT32_ZERO, format_log10

NARROW_MARGIN = 1.3  # a narrow log axis reaches this factor beyond its smallest and largest value

# The names of the kinds of zero, one each (translated where shown: _()): a true size that is exactly 0 by the
# arithmetic is EXACT_ZERO ("exactly 0"), in a legend with its cause as ZERO_CAUSES names it; a value that float32
# alone gives as 0 (a loss on a log axis) is FLOAT32_ZERO ("0 in float32").
ZERO_CAUSES = {  # each cause of an exact 0 the probes find (rnnlab.probing.logscale) and its name in a legend
    "unread": N_("exactly 0: read by nothing"),
    "saturated": N_("exactly 0: saturated units"),
    "gate": N_("exactly 0: a closed gate"),
    "cancelled": N_("exactly 0: cancelled by the weights"),
}
ZERO_MARKER = dict(symbol="triangle-down-open", color="black")  # an exact 0, on the bottom row of its axis


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


# ---- true sizes on a log10 axis (the gradient probes) ---------------------------------------------------------
# A gradient probed at its true size may be 1e-600, and Plotly's log axis ends near float64's 1e-308: these
# charts plot log10 on a linear axis and write its ticks as powers of ten.

MAX_TICKS = 8  # labelled ticks on a log10 axis at most (readable on a phone)
MAX_QUOTED = 6  # a decay chart of one cell with at most this many lengths writes each size beside its point
FLOOR_NEAR = 10.0  # decades: a floor is drawn when the lowest value comes this close to it (see log10_axis)
FLOORS_SHOWN = {  # the floors' lines: their log10, what they are, what they mean (translated where shown: _())
    "float32": (F32_LOG10_FLOOR, N_("float32's smallest normal number"), N_("below it float32 gives 0")),
    "float64": (F64_LOG10_FLOOR, N_("float64's smallest normal number"), N_("below it float64 gives 0")),
}
FLOORS = {name: floor for name, (floor, _what, _effect) in FLOORS_SHOWN.items()}  # each floor's log10
FLOOR_COLOR = "#555555"
FLOOR_DASH = {"float32": "dash", "float64": "dot"}


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


def size_text(log10: float, digits: int = 3) -> str:
    """A size from its log10 for a reader (:func:`format_log10` written the reader's way): '4.700e-54' in English,
    '4,700·10⁻⁵⁴' in Russian, '4.700×10⁻⁵⁴' in Chinese; an exact 0 as :data:`EXACT_ZERO` in the reader's language
    (the CSV keeps :func:`format_log10`)."""
    if math.isinf(log10) and log10 < 0:
        return _(EXACT_ZERO)
    return localize_number(format_log10(log10, digits))


def tick_number(value: float) -> str:
    """A tick label of a narrow log axis, '0.5', written the reader's way ('0,5' in Russian)."""
    return localize_number(f"{value:g}")


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
            return [math.log10(v) for v in narrow], [tick_number(v) for v in narrow]
    for step in (m * 10**k for k in itertools.count() for m in ((1, 2, 5) if k == 0 else (1, 2, 2.5, 5))):
        first, last = math.ceil(bottom / step), math.floor(top / step)
        if last - first + 1 <= max_ticks:
            break
    values = [float(k * step) for k in range(first, last + 1)]  # step: 1, 2, 5, 10, 20, 25, 50, 100, ...
    if not values:  # no power of ten inside a very narrow range: its two ends
        values = [bottom, top]
        return values, [size_text(v, 1) for v in values]
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


def floor_words(name: str) -> str:
    """What floor ``name`` is and means, in a legend: "float32's smallest normal number (1.2e-38):<br>below it
    float32 gives 0"."""
    floor, what, effect = FLOORS_SHOWN[name]
    # TRANSLATORS: a legend entry: {what} is "float32's smallest normal number", {value} it (1.2e-38),
    # {effect} "below it float32 gives 0"
    return t("{what} ({value:.2g}):<br>{effect}", what=_(what), value=10.0 ** floor, effect=_(effect))


def floor_tag(name: str) -> str:
    """A floor's tag on its line: "float32's floor"."""
    # TRANSLATORS: a tag on a line across a chart; {name} is float32 or float64
    return t("{name}'s floor", name=name)


def apply_log10_axis(fig: go.Figure, axis: Log10Axis, points: list[tuple[np.ndarray, np.ndarray]],
                     log_x: bool = False, yaxis: str = "y", max_ticks: int = MAX_TICKS) -> go.Figure:
    """``fig``'s y axis ``yaxis`` as ``axis`` (ticks as powers of ten, at most ``max_ticks``) with its floors as
    dashed lines across the plot, each tagged at the end where ``points`` (the (x, log10) values drawn) leave room
    and said in full in the legend."""
    ticks, texts = log10_ticks(axis.bottom, axis.top, max_ticks)
    fig.update_layout({"yaxis" + yaxis[1:]: dict(range=[axis.bottom, axis.top], tickvals=ticks, ticktext=texts,
                                                 zeroline=False)})
    on_axis = {} if yaxis == "y" else {"yref": yaxis}  # a panel of a figure with several y axes
    for name in axis.floors:
        floor = FLOORS[name]
        left, above = _label_place(points, floor, axis, log_x)
        line = dict(color=FLOOR_COLOR, dash=FLOOR_DASH[name], width=1.2)
        fig.add_shape(type="line", xref="paper", x0=0, x1=1, y0=floor, y1=floor, layer="below", line=line,
                      **on_axis)
        fig.add_annotation(xref="paper", x=0.01 if left else 0.99, xanchor="left" if left else "right", y=floor,
                           yanchor="bottom" if above else "top", showarrow=False, text=floor_tag(name),
                           name=name, font=dict(size=10, color=FLOOR_COLOR), **on_axis)
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines+markers", marker=dict(size=0), line=line,
                                 hoverinfo="skip", name=floor_words(name), legendgroup=name,
                                 **({} if yaxis == "y" else {"yaxis": yaxis})))
    return fig


def step_range(last: float) -> list[float]:
    """The time axis of the per-step gradient charts, 0 to ``last`` and a margin (a marker at an end shows whole):
    the same in every chart compared."""
    pad = max(0.5, 0.01 * last)
    return [-pad, last + pad]


def zero_name(cause: str) -> str:
    """The legend name of an exact 0 of ``cause`` (a key of :data:`ZERO_CAUSES`; any other: "exactly 0")."""
    return _(ZERO_CAUSES.get(cause, EXACT_ZERO))


def add_exact_zeros(fig: go.Figure, x, causes: np.ndarray, texts: np.ndarray, axis: Log10Axis, shown: set[str],
                    color: str | None = None) -> None:
    """Mark exact zeros (at ``x``) on the bottom row of ``axis``, one legend entry per cause (:func:`zero_name`;
    those in ``shown`` already have one), each point's hover its sentence (``texts``)."""
    x, causes, texts = np.asarray(x), np.asarray(causes, str), np.asarray(texts, str)
    for cause in dict.fromkeys(causes):
        pick = causes == cause
        fig.add_trace(go.Scatter(x=list(x[pick]), y=[axis.zero_y] * int(pick.sum()), mode="markers",
                                 name=zero_name(cause), legendgroup=f"zero {cause}",
                                 showlegend=cause not in shown, hovertext=list(texts[pick]), hoverinfo="text",
                                 marker=dict(ZERO_MARKER, size=10, color=color or "black")))
        shown.add(cause)


# ---- exact zeros on a log axis of values (Plotly's own log axis: a loss, a distance) ---------------------------
def zero_level(*columns: pd.Series | np.ndarray) -> float:
    """Where exact zeros sit on a log axis of values: a decade below the smallest positive value shown (1e-45 if
    none; NaN and infinities are not shown, so they do not count)."""
    values = np.concatenate([np.ravel(np.asarray(c, float)) for c in columns]) if columns else np.zeros(0)
    positive = values[np.isfinite(values) & (values > 0)]
    return 10 ** (math.floor(math.log10(positive.min())) - 1) if positive.size else 1e-45


def add_float32_zeros(fig: go.Figure, x, y: pd.Series, level: float, color: str | None = None,
                      showlegend: bool = True) -> None:
    """Mark the values of ``y`` that float32 gives as exactly 0 at ``level`` (:func:`zero_level`) with a named
    marker instead of dropping them (a log axis has no 0)."""
    zero = (y == 0).to_numpy()
    if not zero.any():
        return
    xs = pd.Series(list(x))[zero]
    # TRANSLATORS: the hover of a value drawn at the bottom of a log axis because float32 gives it as 0
    hover = _("0 in float32 (below its smallest number), drawn at the bottom of the log axis")
    fig.add_trace(go.Scatter(x=xs, y=[level] * int(zero.sum()), mode="markers", name=_(FLOAT32_ZERO),
                             legendgroup="zero", showlegend=showlegend, hovertext=hover, hoverinfo="text+x",
                             marker=dict(ZERO_MARKER, size=10, color=color or "black")))
