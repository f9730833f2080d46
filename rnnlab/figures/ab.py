"""A/B on one screen: a pinned run (A) and the current one (B) on the same axes, and the comparison in numbers.

Everything here reads the two runs' histories; nothing is trained or probed again.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from rnnlab.config import CHOICES, SETTING, SETTINGS, Config
from rnnlab.figures.plots import COLORS, NUMBER_AXIS, log_floor, style_figure
from rnnlab.probing import analysis

LOSS_TITLE = "A/B: evaluation loss"
MOVED_TITLE = "A/B: how far the initial carry moved"
SHOWN_FIRST = ("cell", "carry_mode", "carry_init", "task", "seq_len")  # named even when equal, in this order


def describe_setting(config: Config, name: str) -> str:
    """'GRU', 'learnable carry', 'T = 100': one setting as a reader names it."""
    value = getattr(config, name)
    setting = SETTING[name]
    if name == "seq_len":
        return f"T = {value}"
    if name == "carry_mode":
        return f"{value} carry"
    if name == "carry_init":
        return f"carry_init {value}"
    if setting.kind == "choice":
        label = getattr(CHOICES[name][value], "label", value)
        return str(label)
    return f"{setting.label.lower()} {value:g}" if isinstance(value, float) else f"{setting.label.lower()} {value}"


def labels(a: Config, b: Config) -> tuple[str, str]:
    """Short names of A and B: the cell and carry mode, plus every setting that differs between them."""
    differ = [s.name for s in SETTINGS if getattr(a, s.name) != getattr(b, s.name)]
    names = [n for n in SHOWN_FIRST if n in ("cell", "carry_mode") or n in differ]
    names += [n for n in differ if n not in names]
    return tuple(", ".join(describe_setting(c, n) for n in names) for c in (a, b))  # type: ignore[return-value]


@dataclass(frozen=True)
class Side:
    """One run's numbers in the comparison."""

    label: str
    step: int  # of the evaluation quoted
    eval_loss: float
    moved: float  # how far the initial carry moved (the leaf that moved most), 0 when it is not a parameter
    learnable: bool
    trained: int = -1  # steps trained so far, when more than ``step``


def side(config: Config, history, label: str) -> Side:
    movement = analysis.carry_movement(history)
    moved = max((m["distance"] for m in movement.values()), default=0.0)
    loss = history.chunks[-1]["eval_loss"] if history.chunks else float("nan")
    trained = history.last_step if history.last_step > history.evaluated_step else -1
    return Side(label, history.evaluated_step, float(loss), moved, config.carry_mode == "learnable", trained)


def times(x: float, y: float) -> str:
    """'230,000 times less than' / '3.2 times more than' / 'as much as': x against y."""
    if x == y:
        return "as much as"
    if y == 0 or x == 0:
        return "more than" if x > y else "less than"
    ratio = max(x, y) / min(x, y)
    amount = f"{float(f'{ratio:.3g}'):,.0f}" if ratio >= 100 else f"{ratio:.3g}"  # three significant digits
    return f"{amount} times {'more' if x > y else 'less'} than"


def describe(a: Side, b: Side) -> str:
    """The comparison as the page states it, every number from the two histories."""
    def one(s: Side) -> str:
        moved = (f"its initial carry moved {s.moved:.2g}" if s.learnable
                 else "its initial carry is not trained (it does not move)")
        since = (f" (its latest evaluation; it has trained {s.trained} steps, and evaluates at the end of each "
                 "chunk)") if s.trained > s.step else ""
        return f"after {s.step} steps{since} the evaluation loss is {s.eval_loss:.3g} and {moved}"
    text = f"**A** ({a.label}): {one(a)}. **B** ({b.label}): {one(b)}."
    if np.isfinite(a.eval_loss) and np.isfinite(b.eval_loss) and a.eval_loss > 0 and b.eval_loss > 0:
        text += f" B's loss is {times(b.eval_loss, a.eval_loss)} A's."
    if a.learnable and b.learnable:
        text += f" B's initial carry moved {times(b.moved, a.moved)} A's."
    return text


def loss_figure(a_history, b_history, a_label: str, b_label: str, baseline: float | None) -> go.Figure:
    """Both runs' evaluation loss against training step, on one log axis."""
    fig = go.Figure()
    for name, history, color, label in (("A", a_history, COLORS[0], a_label), ("B", b_history, COLORS[1], b_label)):
        evals = history.chunks_df()
        fig.add_trace(go.Scatter(x=evals["step"], y=evals["eval_loss"], mode="lines+markers", name=f"{name}: {label}",
                                 line=dict(color=color), marker=dict(size=5)))
    if baseline is not None:
        fig.add_hline(y=baseline, line=dict(color="gray", dash="dash"), annotation_text="memoryless baseline",
                      annotation_position="bottom right")
    return style_figure(fig, LOSS_TITLE, "training step", "evaluation loss (log scale)", log_y=True)


def moved_figure(a_history, b_history, a_label: str, b_label: str) -> go.Figure:
    """How far each run's initial carry moved from its start, per leaf, on one log axis (zeros marked)."""
    fig = go.Figure()
    tables = {"A": analysis.carry_distance_df(a_history), "B": analysis.carry_distance_df(b_history)}
    floor = log_floor(*(t["distance"] for t in tables.values()))
    for (name, table), color, label in zip(tables.items(), (COLORS[0], COLORS[1]), (a_label, b_label)):
        for leaf, group in table.groupby("leaf", sort=False):
            shown = group["distance"].where(group["distance"] > 0, floor)
            fig.add_trace(go.Scatter(x=group["step"], y=shown, mode="lines+markers", name=f"{name}: {label}, {leaf}",
                                     line=dict(color=color, dash="dot" if leaf == "c" else "solid"),
                                     marker=dict(size=5)))
    fig = style_figure(fig, MOVED_TITLE, "training step", "||carry - carry at step 0|| (log scale)", log_y=True)
    fig.add_annotation(x=0, xref="paper", y=np.log10(floor), yref="y", text="0 (not moved)", showarrow=False,
                       xanchor="left", yanchor="bottom", font=dict(size=10, color="gray"))
    fig.update_xaxes(**NUMBER_AXIS)
    return fig
