"""A run's charts at one step as values: the figures and sentences of Explore's sections 1-4, built by pure
functions of the run's configuration and history, so that :mod:`rnnlab.figures.shared` can build them once for
every session showing a pristine run at that step."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from rnnlab.figures import ab, example_plots, example_words, plots
from rnnlab.i18n import N_, _, count_for, number, t, tn
from rnnlab.model.cells import CARRY_INITS
from rnnlab.model.gates import GateSpec
from rnnlab.model.network import carry_mode_phrase
from rnnlab.probing import analysis
from rnnlab.probing.example import Look
from rnnlab.training.history import History
from rnnlab.training.train import Run, RunView


def loss_view(run: Run | RunView) -> tuple[go.Figure, go.Figure | None]:
    """The loss figure (divergence marked) and the metric's when it is not the loss."""
    history, task = run.history, run.program.task
    steps, evals = analysis.thin(history.steps_df()), history.chunks_df()
    loss = plots.loss_figure(steps, evals, task.baseline(run.config.seq_len), _(task.baseline_text))
    if history.diverged_at is not None:
        loss.add_vline(x=history.diverged_at, line=dict(color="red", dash="dot"),
                       annotation_text=t("diverged at step {step}", step=history.diverged_at),
                       annotation_position="top left")
    metric = None if task.metric_is_loss else plots.metric_figure(steps, evals, _(task.metric_name))
    return loss, metric


@dataclass(frozen=True)
class CarryView:
    """Section 2's figures and sentence at one step."""

    heatmaps: tuple[go.Figure, ...]  # one per carry leaf
    distance: go.Figure
    path: go.Figure
    movement: str  # empty before the first training step


def carry_view(history: History) -> CarryView:
    """The initial carry's heatmaps, distance and PCA path, and how far it moved, in words."""
    heatmaps = tuple(plots.carry_heatmap(analysis.thin_evaluations(analysis.carry_units_df(history, leaf)), leaf)
                     for leaf in history.leaves)
    # TRANSLATORS: {movement} is one clause per carry leaf ("the hidden state h moved 0.31 in all (...)").
    movement = t("**By step {step}:** {movement}. The heatmap's colours run from -1 to 1 (a tanh unit's range) or "
                 "wider, the same for every run, so a tiny movement stays pale.", step=history.evaluated_step,
                 movement=analysis.describe_movement(history)) if history.steps else ""
    return CarryView(heatmaps, plots.carry_distance_figure(analysis.carry_distance_df(history)),
                     plots.carry_pca_figure(analysis.carry_pca_df(history)), movement)


@dataclass(frozen=True)
class PerStepView:
    """Section 3's figures and sentences at one step, with the marked step ``t``."""

    figure: go.Figure
    caption: str  # why nothing or little shows, after a divergence
    gap: str  # the first steps against the zero-carry twin, in numbers
    first: go.Figure | None  # the first steps zoomed in, with the twin


PER_STEP_TITLE = N_("Loss at each time step of the sequence")
FIRST_STEPS_TITLE = N_("The first time steps, zoomed in")


def describe_twin(sigma: float, mine: float, theirs: float) -> str:
    """This run's loss and its zero-trained twin's from fresh carries, and how many times larger one is."""
    values = dict(sigma=sigma, mine=mine, theirs=theirs)
    if theirs >= mine:
        ratio = theirs / mine
        # TRANSLATORS: {ratio} is a number written the reader's way; the plural form follows it ("3.2 times").
        return tn("From fresh N(0, {sigma:g}) carries, this run's loss is {mine:.3g} and the zero-trained twin's "
                  "{theirs:.3g}: {ratio} times as large.",
                  "From fresh N(0, {sigma:g}) carries, this run's loss is {mine:.3g} and the zero-trained twin's "
                  "{theirs:.3g}: {ratio} times as large.", count_for(ratio), ratio=number(ratio, ".3g"),
                  **values)
    ratio = mine / theirs
    # TRANSLATORS: {ratio} is a number written the reader's way; the plural form follows it: the twin's loss is
    # this run's / {ratio}.
    return tn("From fresh N(0, {sigma:g}) carries, this run's loss is {mine:.3g} and the zero-trained twin's "
              "{theirs:.3g}: {ratio} times smaller.",
              "From fresh N(0, {sigma:g}) carries, this run's loss is {mine:.3g} and the zero-trained twin's "
              "{theirs:.3g}: {ratio} times smaller.", count_for(ratio), ratio=number(ratio, ".3g"), **values)


def describe_gap(gap: dict[str, float]) -> str:
    """The first time steps' loss with this run's initial carry and with a zero carry, and their ratio."""
    # TRANSLATORS: what follows "Over" in "Over the first 3 time steps the loss is ...".
    first = tn("the first {n} time step", "the first {n} time steps", int(gap["steps"]))
    ratio = gap["ratio"]
    values = dict(first=first, run=gap["run"], zero=gap["zero"])
    if ratio >= 1:
        # TRANSLATORS: {first} is "the first 3 time steps"; {ratio} a number written the reader's way, whose plural
        # form this message follows ("3.2 times as large").
        return tn("**Over {first}** the loss is {run:.3g} with this run's initial carry and {zero:.3g} with a "
                  "fixed zero carry: the zero carry's is {ratio} times as large.",
                  "**Over {first}** the loss is {run:.3g} with this run's initial carry and {zero:.3g} with a "
                  "fixed zero carry: the zero carry's is {ratio} times as large.",
                  count_for(ratio), ratio=number(ratio, ".3g"), **values)
    # TRANSLATORS: {first} is "the first 3 time steps"; {ratio} a number written the reader's way, whose plural
    # form this message follows: the zero carry's loss is this run's / {ratio}.
    return tn("**Over {first}** the loss is {run:.3g} with this run's initial carry and {zero:.3g} with a fixed "
              "zero carry: the zero carry's is {ratio} times smaller here.",
              "**Over {first}** the loss is {run:.3g} with this run's initial carry and {zero:.3g} with a fixed "
              "zero carry: the zero carry's is {ratio} times smaller here.",
              count_for(1 / ratio), ratio=number(1 / ratio, ".3g"), **values)


def per_step_view(run: Run | RunView, t_mark: int, pinned: RunView | None, zero: Run | None) -> PerStepView:
    """The loss at each time step of ``run`` (with its zero-carry twin and run A when given), step ``t_mark``
    marked."""
    history, task, mode = run.history, run.program.task, run.config.carry_mode
    # TRANSLATORS: a line of the per-step loss chart: "learnable carry (zeros)"; {init} is carry_init's name.
    table = analysis.per_step_loss_table(history, t("{mode} ({init})", mode=carry_mode_phrase(mode),
                                                    init=CARRY_INITS[run.config.carry_init].word))
    if zero is not None:
        table = pd.concat([table, analysis.per_step_loss_table(zero.history, _("fixed zero carry"))])
    if pinned is not None and pinned.history.per_step_loss:
        a_label, _b = ab.labels(pinned.config, run.config)
        table = pd.concat([table, analysis.per_step_loss_table(pinned.history, f"A: {a_label}")])
    step_baselines = task.step_baselines(run.config.seq_len)
    figure = plots.marked_figure(plots.per_step_loss_figure(table, step_baselines, title=_(PER_STEP_TITLE)), t_mark,
                                 1, len(step_baselines))
    caption = ""
    if len(table) and not np.isfinite(table["loss"].to_numpy(float)).any():
        caption = _("Nothing to draw: every per-step loss of the last evaluation is infinite or not a number, "
                    "because the run diverged (see the message above).")
    elif len(table) and (table["loss"].to_numpy(float) > 1e30).all():
        caption = _("The per-step losses of the last evaluation are enormous because the run diverged.")
    gap_text, first_figure = "", None
    if zero is not None:
        gap = analysis.first_steps_gap(history, zero.history)
        gap_text = describe_gap(gap)
        first = table[table["t"] <= max(8, 2 * gap["steps"])]
        last = int(first["t"].max())
        first_figure = plots.marked_figure(plots.per_step_loss_figure(first, step_baselines[:last],
                                                                      title=_(FIRST_STEPS_TITLE)),
                                           t_mark, 1, last)
    return PerStepView(figure, caption, gap_text, first_figure)


@dataclass(frozen=True)
class ExampleView:
    """Section 4's figures and sentences: one example unrolled under the kept snapshots."""

    unrolled: go.Figure
    summary: str
    keeper: go.Figure | None  # the keeper gate's heatmap (cells with gates)
    keeper_summary: str


def example_view(looks: list[Look], index: int, mark: int, log_time: bool, gates: GateSpec | None) -> ExampleView:
    """The unrolled example (clickable, step ``mark`` marked) and what it shows, for ``looks`` (the first
    untrained, the last now) of example number ``index``."""
    now, untrained = looks[-1], looks[0]
    unrolled = plots.clickable(example_plots.unrolled_figure(looks, mark, log_time, gates))
    keeper, keeper_text = None, ""
    if gates is not None and now.gates:
        keeper = example_plots.keeper_heatmap(now, gates, mark, log_time)
        keeper_text = example_words.keeper_summary(now, gates)
    return ExampleView(unrolled, example_words.summary(now, untrained, index), keeper, keeper_text)
