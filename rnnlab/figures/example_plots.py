"""Figures of one example, unrolled in time (:mod:`rnnlab.probing.example`): pure functions of the looks they draw.

The unrolled view stacks the example, the prediction, the gates, the carry's norm and ||dL/dh_t|| on ONE
time axis, so hovering any of them marks the same step t in all of them; its frames replay the kept snapshots
of training (play, pause, or drag the slider), computed from the parameters the run kept, not by training again.
||dL/dh_t|| is drawn at its true size (its log10, on the true-size axis of :mod:`rnnlab.figures.log10_scale`), with
float32's floor once the values come near it and exact zeros on a row of their own, their hover saying why they are 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import plotly.graph_objects as go

from rnnlab.figures.example_words import grad_text
from rnnlab.figures.log10_scale import ZERO_MARKER, Log10Axis, apply_log10_axis, log10_axis, zero_name
from rnnlab.figures.plots import COLORS, LEAF_NAMES, LEGEND_BELOW, NUMBER_AXIS, mark_step, wrap_title
from rnnlab.i18n import N_, _, labelled, language_layout, parenthesized, t, text
from rnnlab.model.gates import GateSpec
from rnnlab.probing.example import Look

TITLE = N_("The example, unrolled in time")  # shown with _()
FRAME_MS = 900  # one snapshot per 0.9 s while playing: slow enough to follow
MAX_CELLS = 2000  # cells drawn in the row of cells; a longer sequence shows every k-th
MAX_COLUMNS = 600  # a heatmap wider than this is thinned in time (every k-th step) to stay light in a browser
MAX_STEPS = 4000  # time steps drawn per line of the unrolled view; a longer sequence draws every k-th (and T)
GAP = 0.035


def time_axis(steps: int, log_time: bool) -> tuple[np.ndarray, str]:
    """x values for t = 0..steps (t = 0: the initial carry) and the axis title; on a log axis t + 1."""
    t = np.arange(steps + 1)
    if log_time:
        return t + 1.0, _("time step t + 1 (log scale; h_0 at 1)")
    return t.astype(float), _("time step t (t = 0: the initial carry h_0)")


def rows_of(look: Look) -> list[str]:
    """The panels of the unrolled view, top to bottom."""
    return ["cells", "example", "prediction"] + (["gates"] if look.gates else []) + ["carry", "gradient"]


def kept_steps(steps: int) -> np.ndarray:
    """The time steps t (0..``steps``) the unrolled view draws: all up to :data:`MAX_STEPS`, else every k-th and the
    last, so that its message stays a few MB at the longest T (an LSTM's four frames: about 500 bytes a step drawn)."""
    every = max(1, math.ceil((steps + 1) / MAX_STEPS))
    return np.unique(np.r_[np.arange(0, steps + 1, every), steps])


def on_kept(indices: np.ndarray, kept: np.ndarray) -> np.ndarray:
    """``indices`` (marks, exact zeros) as drawn: all of them when they are few, else those on ``kept`` steps."""
    return indices if len(indices) <= MAX_STEPS else np.intersect1d(indices, kept)


ROW_TITLES = {"cells": N_("Cells"), "example": N_("The example"), "prediction": N_("Prediction"),
              "gates": N_("Gates (mean over units)"), "carry": N_("Carry norm"),
              "gradient": N_("||dL/dh_t||, true size")}  # shown with _()
ROW_WEIGHT = {"cells": 0.35, "example": 1.0, "prediction": 1.2, "gates": 1.0, "carry": 1.0, "gradient": 1.3}


def _domains(rows: list[str]) -> dict[str, tuple[float, float]]:
    total = sum(ROW_WEIGHT[r] for r in rows)
    usable = 1 - GAP * (len(rows) - 1)
    top, out = 1.0, {}
    for r in rows:
        height = usable * ROW_WEIGHT[r] / total
        out[r] = (max(0.0, round(top - height, 6)), min(1.0, round(top, 6)))
        top -= height + GAP
    return out


GRADIENT_TICKS = 6  # labelled ticks on the gradient panel at most (a short panel)


def grad_axis(looks: list[Look]) -> Log10Axis:
    """One true-size axis (:func:`~rnnlab.figures.log10_scale.log10_axis`) for ||dL/dh_t|| in every frame of
    ``looks``: exact zeros on its bottom row, the floors its values come near."""
    return log10_axis(*(v for look in looks for v in look.grad_log10.values()))


@dataclass(frozen=True)
class CellsRow:
    """How the row of unrolled cells is coloured: log10 ||dL/dh_t|| on one scale for every frame."""

    low: float
    high: float
    domain: tuple[float, float]


def _cells_trace(look: Look, x: np.ndarray, axis: dict[str, str], scale: Log10Axis, row: CellsRow) -> go.Scatter:
    """One square per cell, h_0 at the left, coloured by the log10 of the gradient that reaches its carry."""
    every = max(1, math.ceil(len(x) / MAX_CELLS))  # a long sequence: every k-th cell, to stay light
    picked = np.arange(0, len(x), every)
    grads = look.grad_log10["h"][picked]
    shown = np.where(np.isfinite(grads), grads, scale.zero_y)
    text = [labelled(f"h_{t}", grad_text(look, 'h', int(t))) for t in picked]
    size = float(np.clip(700 / len(picked), 3, 16))
    bar = dict(title=dict(text="log10<br>||dL/dh_t||", side="right", font=dict(size=10)), thickness=10,
               len=max(0.12, row.domain[1] - row.domain[0]) * 2.2, y=sum(row.domain) / 2, yanchor="middle")
    # TRANSLATORS: a long sequence draws one cell in every {every} (4).
    name = t("cells (colour: ||dL/dh_t||), one in {every}", every=every) if every > 1 else _(
        "cells (colour: ||dL/dh_t||)")
    return go.Scatter(x=x[picked], y=np.zeros(len(picked)), mode="markers", name=name,
                      hovertext=text, hoverinfo="text", showlegend=False, yaxis=axis["cells"],
                      marker=dict(symbol="square", size=size, color=shown, cmin=row.low, cmax=row.high,
                                  colorscale="Viridis", showscale=True, colorbar=bar,
                                  line=dict(width=0.5, color="white")))


def _changing_traces(look: Look, untrained: Look, x: np.ndarray, axis: dict[str, str], scale: Log10Axis,
                     gate_names: dict[str, str], row: CellsRow) -> list[go.Scatter]:
    """The traces that change with training, in a fixed order (frames replace them one for one), on the steps
    :func:`kept_steps` keeps."""
    kept = kept_steps(len(x) - 1)
    at = kept[kept >= 1] - 1  # the same steps in arrays of t = 1..T
    steps_x = x[1:][at]
    out = [_cells_trace(look, x, axis, scale, row)]
    if look.confidence is not None:
        out.append(go.Scatter(x=steps_x, y=look.confidence[at],
                              name=t("p(right answer) at training step {step}", step=look.step), mode="lines+markers",
                              marker=dict(size=4), line=dict(color=COLORS[0]),
                              yaxis=axis["prediction"], legendgroup="now"))
    else:
        out.append(go.Scatter(x=steps_x, y=look.prediction[at],
                              name=t("prediction at training step {step}", step=look.step), mode="lines",
                              line=dict(color=COLORS[0]), yaxis=axis["prediction"], legendgroup="now"))
    for i, (gate, label) in enumerate(gate_names.items()):
        out.append(go.Scatter(x=steps_x, y=look.gates[gate].mean(axis=1)[at], name=text(label), mode="lines",
                              line=dict(color=COLORS[(i + 2) % len(COLORS)]), yaxis=axis["gates"]))
    for leaf, norms in look.carry_norms.items():
        out.append(go.Scatter(x=x[kept], y=norms[kept], name=f"||{leaf}_t||", mode="lines",
                              line=dict(color=COLORS[1], dash="dot" if leaf == "c" else "solid"),
                              yaxis=axis["carry"], legendgroup=f"carry_{leaf}"))
    for leaf, log10 in look.grad_log10.items():
        live = np.isfinite(log10[kept])
        out.append(go.Scatter(x=x[kept], y=np.where(live, log10[kept], np.nan),
                              name=parenthesized(f"||dL/d{leaf}_t||", text(LEAF_NAMES[leaf])),
                              mode="lines", line=dict(color=COLORS[4], dash="dot" if leaf == "c" else "solid"),
                              hovertext=[grad_text(look, leaf, int(t)) if ok else "" for t, ok in zip(kept, live)],
                              hoverinfo="text", yaxis=axis["gradient"], legendgroup=f"grad_{leaf}"))
        zero = on_kept(np.flatnonzero(np.isneginf(log10)), kept)  # exact zeros (the unread c_T: NaN, not drawn)
        out.append(go.Scatter(x=x[zero], y=np.full(len(zero), scale.zero_y), name=zero_name(""),
                              mode="markers",
                              hovertext=[grad_text(look, leaf, int(t)) for t in zero], hoverinfo="text",
                              showlegend=bool(len(zero)), marker=dict(ZERO_MARKER, size=8),
                              yaxis=axis["gradient"], legendgroup="zero"))
    return out


def frame_updates(per_frame: list[list[go.Scatter]]) -> list[list[dict[str, Any]]]:
    """Each frame's traces as its frame carries them: only what differs between frames.

    Plotly's animation merges a frame's trace into the one drawn (nested attributes one by one, arrays whole), so
    what every frame shares (the x values, the axes, colours, colour bars, names that do not change) is sent once,
    in the figure's own traces, and a click's invisible markers (:func:`~rnnlab.figures.plots.clickable`) stay.
    """
    plain = [[trace.to_plotly_json() for trace in traces] for traces in per_frame]
    return [[_differing(trace, [frame[i] for frame in plain]) for i, trace in enumerate(traces)] for traces in plain]


def _differing(trace: dict[str, Any], versions: list[dict[str, Any]]) -> dict[str, Any]:
    """``trace`` without the attributes that are equal in every one of ``versions`` (its type kept)."""
    out = {}
    for key, value in trace.items():
        others = [v.get(key, _MISSING) for v in versions]
        if key == "type":
            out[key] = value
        elif isinstance(value, dict) and all(isinstance(o, dict) for o in others):
            inner = _differing(value, others)
            if inner:
                out[key] = inner
        elif not all(_equal(value, o) for o in others):
            out[key] = value
    return out


_MISSING = object()


def _equal(a: Any, b: Any) -> bool:
    """Whether two attribute values are the same (arrays element by element, NaN equal to NaN)."""
    if a is _MISSING or b is _MISSING:
        return a is b
    if isinstance(a, (np.ndarray, list, tuple)) or isinstance(b, (np.ndarray, list, tuple)):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return False
        if a.dtype.kind == "f" and b.dtype.kind == "f":
            return bool(np.array_equal(a, b, equal_nan=True))
        return bool(np.array_equal(a, b))
    return bool(a == b)


def unrolled_figure(looks: list[Look], mark: int | None = None, log_time: bool = False,
                    gates: GateSpec | None = None) -> go.Figure:
    """The example unrolled over t, one frame per look (a training step; the last is shown first).

    ``looks[0]`` is the untrained model (drawn dotted throughout); ``mark`` draws a line at time step ``mark``.
    The example and the untrained prediction stay; the cells, the prediction now, the gates, the carry and
    the gradient change from frame to frame.
    """
    now, untrained = looks[-1], looks[0]
    steps = len(now.view.values)
    x, x_title = time_axis(steps, log_time)
    rows = rows_of(now)
    domains = _domains(rows)
    axis = {r: "y" if i == 0 else f"y{i + 1}" for i, r in enumerate(rows)}
    gate_names = gates.names if gates is not None and now.gates else {}
    scale = grad_axis(looks)

    fig = go.Figure()
    fig.add_traces([*_example_traces(now, x[1:], axis["example"]),
                    *_reference_traces(now, untrained, x[1:], axis["prediction"])])
    apply_log10_axis(fig, scale, [(x, look.grad_log10[leaf]) for look in looks for leaf in look.grad_log10],
                     log_time, axis["gradient"], GRADIENT_TICKS)  # its floors: fixed traces, before the frames'
    fixed = len(fig.data)
    row = _cells_row(looks, scale, domains["cells"])
    fig.add_traces(_changing_traces(now, untrained, x, axis, scale, gate_names, row))
    changing = [_changing_traces(look, untrained, x, axis, scale, gate_names, row) for look in looks]
    fig.frames = [go.Frame(name=str(look.step), data=data, traces=list(range(fixed, len(fig.data))))
                  for look, data in zip(looks, frame_updates(changing))]
    fig.update_layout(**_layout(now, rows, axis, domains, x_title, log_time))
    if mark is not None and 0 <= mark <= steps:
        mark_step(fig, x[mark], f"t = {mark}")
    if len(looks) > 1:
        _add_player(fig, looks)
    return fig


def _example_traces(look: Look, all_x: np.ndarray, yaxis: str) -> list[go.Scatter]:
    """The example panel: what the model reads (symbols or values), with what the answer needs circled, on the
    steps :func:`kept_steps` keeps (``all_x``: t = 1..T)."""
    view = look.view
    steps = len(view.values)
    kept = kept_steps(steps)
    at = kept[kept >= 1] - 1
    steps_x, values = all_x[at], view.values[at]
    if view.symbols is not None:
        symbols = [view.symbols[int(v)] for v in values]
        read = go.Scatter(x=steps_x, y=values, mode="markers+text" if steps <= 60 else "markers", text=symbols,
                          textposition="top center", hovertext=symbols, hoverinfo="name+text",
                          name=text(view.input_name),
                          marker=dict(size=5, color="grey"), yaxis=yaxis)
    else:
        read = go.Scatter(x=steps_x, y=values, mode="lines+markers" if steps <= 200 else "lines",
                          name=text(view.input_name), line=dict(color="grey"), marker=dict(size=4), yaxis=yaxis)
    marked = on_kept(np.flatnonzero(view.marked), at)
    needed = go.Scatter(x=all_x[marked], y=view.values[marked], mode="markers", name=_("what the answer needs"),
                        marker=dict(size=11, color=COLORS[1], symbol="circle-open", line=dict(width=2)),
                        yaxis=yaxis, hoverinfo="skip")
    return [read, needed]


def _reference_traces(now: Look, untrained: Look, all_x: np.ndarray, yaxis: str) -> list[go.Scatter]:
    """The prediction panel's fixed traces: the untrained model (dotted) and the right answers, on the steps
    :func:`kept_steps` keeps (``all_x``: t = 1..T)."""
    view = now.view
    kept = kept_steps(len(view.values))
    at = kept[kept >= 1] - 1
    scored = on_kept(np.flatnonzero(np.isfinite(view.target)), at)
    if look_is_classification(now):
        classes = view.classes or ()  # a classification task names its classes
        target_text = [classes[int(v)] for v in view.target[scored]]
        return [go.Scatter(x=all_x[at], y=None if untrained.confidence is None else untrained.confidence[at],
                           name=_("p(right answer), untrained"),
                           mode="lines", line=dict(color="grey", dash="dot"), yaxis=yaxis),
                go.Scatter(x=all_x[scored], y=np.ones(len(scored)), mode="markers",
                           name=_("the right answer (p = 1)"), text=target_text, hovertext=target_text,
                           hoverinfo="text+x", marker=dict(symbol="x", size=7, color="black"), yaxis=yaxis)]
    return [go.Scatter(x=all_x[at], y=untrained.prediction[at], name=_("prediction, untrained"), mode="lines",
                       line=dict(color="grey", dash="dot"), yaxis=yaxis),
            go.Scatter(x=all_x[scored], y=view.target[scored], mode="markers", name=_("target"),
                       marker=dict(symbol="x", size=7 if len(scored) > 1 else 11, color="black"), yaxis=yaxis)]


def _cells_row(looks: list[Look], scale: Log10Axis, domain: tuple[float, float]) -> CellsRow:
    """One colour scale for the row of cells in every frame: from the zeros' row to the largest gradient."""
    values = np.concatenate([look.grad_log10["h"] for look in looks])
    shown = values[np.isfinite(values)]
    high = float(shown.max()) if len(shown) else scale.zero_y
    return CellsRow(scale.zero_y, max(high, scale.zero_y + 1), domain)


def _layout(now: Look, rows: list[str], axis: dict[str, str], domains: dict[str, tuple[float, float]],
            x_title: str, log_time: bool) -> dict[str, Any]:
    """The shared time axis and one y axis per panel, each with its title, range and scale."""
    view = now.view
    layout: dict[str, Any] = dict(
        title=dict(text=_(TITLE), y=0.995, yanchor="top"), height=170 * len(rows) + 150,
        margin=dict(l=10, r=10, t=40, b=10), hovermode="x unified", hoversubplots="axis",
        hoverlabel=dict(namelength=-1), colorway=COLORS,
        legend=LEGEND_BELOW,
        xaxis=dict(title=x_title, type="log" if log_time else "linear", showspikes=True, spikemode="across",
                   spikesnap="cursor", spikethickness=1, spikedash="solid", anchor=axis[rows[-1]], **NUMBER_AXIS),
        **language_layout())
    for r in rows:
        layout[layout_key(axis[r])] = dict(domain=domains[r], title=dict(text=_(ROW_TITLES[r]), font=dict(size=12)),
                                           **NUMBER_AXIS)
    layout[layout_key(axis["cells"])].update(
        showticklabels=False, showgrid=False, zeroline=False, range=[-1, 1])
    if "gates" in rows:
        layout[layout_key(axis["gates"])]["range"] = [-0.02, 1.02]
    if look_is_classification(now):
        layout[layout_key(axis["prediction"])]["range"] = [-0.02, 1.08]
    if view.symbols is not None and len(view.symbols) <= 10:
        layout[layout_key(axis["example"])].update(tickvals=list(range(len(view.symbols))),
                                                   ticktext=list(view.symbols))
    return layout


def layout_key(axis: str) -> str:
    """The layout entry of a trace's y axis: 'y' -> 'yaxis', 'y3' -> 'yaxis3'."""
    return "yaxis" + axis[1:]


def look_is_classification(look: Look) -> bool:
    return look.confidence is not None


def _add_player(fig: go.Figure, looks: list[Look]) -> None:
    """Play / pause and a slider over the frames (one per kept training step), starting at the last."""
    play = dict(label=_("Play"), method="animate",
                args=[None, dict(frame=dict(duration=FRAME_MS, redraw=True), fromcurrent=False,
                                 transition=dict(duration=0), mode="immediate")])
    pause = dict(label=_("Pause"), method="animate",
                 args=[[None], dict(frame=dict(duration=0, redraw=False), mode="immediate")])
    fig.update_layout(
        updatemenus=[dict(type="buttons", direction="left", buttons=[play, pause], x=0.0, y=1.0, xanchor="left",
                          yanchor="bottom", pad=dict(t=0, b=62), showactive=False)],
        sliders=[dict(active=len(looks) - 1, x=0.0, len=1.0, y=1.0, yanchor="bottom", pad=dict(t=0, b=6),
                      currentvalue=dict(prefix=_("training step "), font=dict(size=12)),
                      steps=[dict(label=str(look.step), method="animate",
                                  args=[[str(look.step)], dict(frame=dict(duration=0, redraw=True),
                                                               mode="immediate", transition=dict(duration=0))])
                             for look in looks])],
        margin=dict(t=140))


def keeper_heatmap(look: Look, gates: GateSpec, mark: int | None = None, log_time: bool = False) -> go.Figure:
    """The gate that keeps the carry, for every unit over time (values 0..1; thinned to MAX_COLUMNS steps)."""
    values = look.gates[gates.keeper]  # (steps, features)
    x, x_title = time_axis(len(values), log_time)
    every = max(1, math.ceil(len(values) / MAX_COLUMNS))
    # the gate's id (f, z) comes from the trace's meta: a hovertemplate's %{...} are Plotly's, not placeholders
    fig = go.Figure(go.Heatmap(z=values[::every].T, x=x[1:][::every], zmin=0, zmax=1, colorscale="Viridis",
                               colorbar=dict(title=dict(text=gates.keeper, side="right"), thickness=12),
                               meta=gates.keeper,
                               hovertemplate=_("t %{x}<br>unit %{y}<br>%{meta} %{z:.3f}<extra></extra>")))
    gate = text(gates.names[gates.keeper])
    if every > 1:
        # TRANSLATORS: {gate} is a gate's name ("forget gate f"); a long sequence shows one step in every {every} (4).
        title = t("The {gate} of every unit at training step {step} (one time step in {every})", gate=gate,
                  step=look.step, every=every)
    else:
        # TRANSLATORS: {gate} is a gate's name ("forget gate f"); {step} the training step.
        title = t("The {gate} of every unit at training step {step}", gate=gate, step=look.step)
    wrapped = wrap_title(title)
    fig.update_layout(title=wrapped, height=320, margin=dict(l=10, r=10, t=50 if wrapped == title else 72, b=10),
                      xaxis=dict(title=x_title, type="log" if log_time else "linear", **NUMBER_AXIS),
                      yaxis=dict(title=_("unit"), **NUMBER_AXIS), **language_layout())
    if mark is not None and 1 <= mark <= len(values):
        mark_step(fig, x[mark], f"t = {mark}")
    return fig
