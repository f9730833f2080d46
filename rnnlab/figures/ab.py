"""A/B on one screen: a pinned run (A) and the current one (B) on the same axes, and the comparison in numbers.

Everything here reads the two runs' histories; nothing is trained or probed again.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from rnnlab.config import CHOICES, SETTING, SETTINGS, Config
from rnnlab.figures.log10_scale import zero_level
from rnnlab.figures.plots import COLORS, NUMBER_AXIS, style_figure
from rnnlab.i18n import N_, _, count_for, join_list, join_sentences, labelled, number, t, text, tn
from rnnlab.probing import analysis

LOSS_TITLE = N_("A/B: evaluation loss")  # the titles in English (tests find the figures by them): shown with _()
MOVED_TITLE = N_("A/B: how far the initial carry moved")
SHOWN_FIRST = ("cell", "carry_mode", "carry_init", "task", "seq_len")  # named even when equal, in this order


def describe_setting(config: Config, name: str) -> str:
    """'GRU', 'learnable carry', 'T = 100': one setting as a reader names it, in the reader's language."""
    value = getattr(config, name)
    setting = SETTING[name]
    if setting.phrase is not None:
        return setting.phrase(value)
    if setting.kind == "choice":
        return text(getattr(CHOICES[name][value], "label", value))
    label = text(setting.label).lower()
    return f"{label} {number(value, 'g')}" if isinstance(value, float) else f"{label} {value}"


def labels(a: Config, b: Config) -> tuple[str, str]:
    """Short names of A and B: the cell and carry mode, plus every setting that differs between them."""
    differ = [s.name for s in SETTINGS if getattr(a, s.name) != getattr(b, s.name)]
    names = [n for n in SHOWN_FIRST if n in ("cell", "carry_mode") or n in differ]
    names += [n for n in differ if n not in names]
    return tuple(join_list(describe_setting(c, n) for n in names) for c in (a, b))  # type: ignore[return-value]


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


def _amount(ratio: float) -> str:
    """Three significant digits, and from 100 on a whole number with its thousands grouped: '3.2', '230,000'."""
    return f"{float(f'{ratio:.3g}'):,.0f}" if ratio >= 100 else f"{ratio:.3g}"


def written_ratio(ratio: float) -> str:
    """:func:`_amount` written the reader's way: '3,2', '230 000' in Russian."""
    return number(float(f"{ratio:.3g}"), ",.0f") if ratio >= 100 else number(ratio, ".3g")


def times(x: float, y: float) -> str:
    """'230,000 times less than' / '3.2 times more than' / 'as much as': x against y, in English (the page
    states whole sentences: :func:`compare`)."""
    if x == y:
        return "as much as"
    if y == 0 or x == 0:
        return "more than" if x > y else "less than"
    ratio = max(x, y) / min(x, y)
    return f"{_amount(ratio)} times {'more' if x > y else 'less'} than"


def compare(what: str, x: float, y: float) -> str:
    """The sentence comparing B's ``x`` with A's ``y``: ``what`` is 'loss' (the evaluation loss) or 'moved' (how
    far the initial carry moved). 'B's loss is 3.2 times more than A's.', in the reader's language."""
    if what == "loss":
        if x == y:
            return _("B's loss is as much as A's.")
        if y == 0 or x == 0:
            return _("B's loss is more than A's.") if x > y else _("B's loss is less than A's.")
        ratio = max(x, y) / min(x, y)
        amount, n = written_ratio(ratio), count_for(ratio)
        if x > y:
            # TRANSLATORS: {ratio} is a number written the reader's way ("3.2", "230,000"); the plural form follows it.
            return tn("B's loss is {ratio} times more than A's.", "B's loss is {ratio} times more than A's.", n,
                      ratio=amount)
        # TRANSLATORS: {ratio} is a number written the reader's way ("3.2", "230,000"): B's loss is A's / {ratio}.
        return tn("B's loss is {ratio} times less than A's.", "B's loss is {ratio} times less than A's.", n,
                  ratio=amount)
    if x == y:
        return _("B's initial carry moved as much as A's.")
    if y == 0 or x == 0:
        return _("B's initial carry moved more than A's.") if x > y else _("B's initial carry moved less than A's.")
    ratio = max(x, y) / min(x, y)
    amount, n = written_ratio(ratio), count_for(ratio)
    if x > y:
        # TRANSLATORS: {ratio} is a number written the reader's way ("3.2", "230,000"); the plural form follows it.
        return tn("B's initial carry moved {ratio} times more than A's.",
                  "B's initial carry moved {ratio} times more than A's.", n, ratio=amount)
    # TRANSLATORS: {ratio} is a number written the reader's way: B's initial carry moved A's distance / {ratio}.
    return tn("B's initial carry moved {ratio} times less than A's.",
              "B's initial carry moved {ratio} times less than A's.", n, ratio=amount)


def describe_side(name: str, s: Side) -> str:
    """'**A** (GRU, learnable carry): after 20 steps the evaluation loss is 0.12 and its initial carry moved 0.034.'"""
    # TRANSLATORS: the start of a sentence about run A or B: "after 20 steps the evaluation loss is ...".
    after = tn("after {n} step", "after {n} steps", s.step)
    values = dict(name=name, label=s.label, after=after, loss=s.eval_loss)
    if s.trained > s.step:
        # TRANSLATORS: inside a parenthesis: "(its latest evaluation; it has trained 23 steps, and evaluates ...)".
        trained = tn("it has trained {n} step", "it has trained {n} steps", s.trained)
        if s.learnable:
            # TRANSLATORS: {name} is A or B, {label} the run's settings, {after} "after 20 steps", {trained} "it
            # has trained 23 steps" (trained past its latest evaluation).
            return t("**{name}** ({label}): {after} (its latest evaluation; {trained}, and evaluates at the end of "
                     "each chunk) the evaluation loss is {loss:.3g} and its initial carry moved {moved:.2g}.",
                     trained=trained, moved=s.moved, **values)
        # TRANSLATORS: as above, for a run whose initial carry is not a parameter.
        return t("**{name}** ({label}): {after} (its latest evaluation; {trained}, and evaluates at the end of "
                 "each chunk) the evaluation loss is {loss:.3g} and its initial carry is not trained (it does not "
                 "move).", trained=trained, **values)
    if s.learnable:
        # TRANSLATORS: {name} is A or B, {label} the run's settings, {after} "after 20 steps".
        return t("**{name}** ({label}): {after} the evaluation loss is {loss:.3g} and its initial carry moved "
                 "{moved:.2g}.", moved=s.moved, **values)
    # TRANSLATORS: {name} is A or B, {label} the run's settings, {after} "after 20 steps".
    return t("**{name}** ({label}): {after} the evaluation loss is {loss:.3g} and its initial carry is not trained "
             "(it does not move).", **values)


def describe(a: Side, b: Side) -> str:
    """The comparison as the page states it, every number from the two histories, in the reader's language."""
    parts = [describe_side("A", a), describe_side("B", b)]
    if np.isfinite(a.eval_loss) and np.isfinite(b.eval_loss) and a.eval_loss > 0 and b.eval_loss > 0:
        parts.append(compare("loss", b.eval_loss, a.eval_loss))
    if a.learnable and b.learnable:
        parts.append(compare("moved", b.moved, a.moved))
    return join_sentences(*parts)


def loss_figure(a_history, b_history, a_label: str, b_label: str, baseline: float | None) -> go.Figure:
    """Both runs' evaluation loss against training step, on one log axis."""
    fig = go.Figure()
    for name, history, color, label in (("A", a_history, COLORS[0], a_label), ("B", b_history, COLORS[1], b_label)):
        evals = history.chunks_df()
        fig.add_trace(go.Scatter(x=evals["step"], y=evals["eval_loss"], mode="lines+markers",
                                 name=labelled(name, label), line=dict(color=color), marker=dict(size=5)))
    if baseline is not None:
        fig.add_hline(y=baseline, line=dict(color="gray", dash="dash"), annotation_text=_("memoryless baseline"),
                      annotation_position="bottom right")
    return style_figure(fig, _(LOSS_TITLE), _("training step"), _("evaluation loss (log scale)"), log_y=True)


def moved_figure(a_history, b_history, a_label: str, b_label: str) -> go.Figure:
    """How far each run's initial carry moved from its start, per leaf, on one log axis (zeros marked)."""
    fig = go.Figure()
    tables = {"A": analysis.carry_distance_df(a_history), "B": analysis.carry_distance_df(b_history)}
    floor = zero_level(*(table["distance"] for table in tables.values()))
    for (name, table), color, label in zip(tables.items(), (COLORS[0], COLORS[1]), (a_label, b_label)):
        for leaf, group in table.groupby("leaf", sort=False):
            shown = group["distance"].where(group["distance"] > 0, floor)
            fig.add_trace(go.Scatter(x=group["step"], y=shown, mode="lines+markers",
                                     name=labelled(name, join_list([label, leaf])),
                                     line=dict(color=color, dash="dot" if leaf == "c" else "solid"),
                                     marker=dict(size=5)))
    fig = style_figure(fig, _(MOVED_TITLE), _("training step"),
                       _("distance from the start (log scale)"), log_y=True)
    fig.add_annotation(x=0, xref="paper", y=np.log10(floor), yref="y", text=_("0 (not moved)"), showarrow=False,
                       xanchor="left", yanchor="bottom", font=dict(size=10, color="gray"))
    fig.update_xaxes(**NUMBER_AXIS)
    return fig
