"""The Explore page's progress line and charts: 1. loss (with A/B when a run is pinned), 2. the initial carry
(with the robustness table), 3. the loss at each time step. Each function draws what it is given."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from rnnlab.figures import ab
from rnnlab.figures.run_views import carry_view, describe_twin, loss_view, per_step_view
from rnnlab.figures.shared import VIEWS, view_key
from rnnlab.i18n import _, join_sentences, t, text, tn
from rnnlab.model.network import carry_mode_phrase
from rnnlab.probing import probes
from rnnlab.training import estimate
from rnnlab.training.train import Run, RunView
from ui.charts import chart, number_table
from ui.controls import explain
from ui.marks import clickable_chart, marked

Robustness = Callable[[Run], pd.DataFrame]  # a run's losses from other starts, indexed by start


@dataclass
class Places:
    """The page's placeholders that training redraws, top to bottom."""

    progress: Any
    finished: Any
    status: Any  # what is happening (compiling) or what went wrong
    queue: Any  # the place in the server's queue while waiting for a slot
    charts: Any


def places() -> Places:
    """The placeholders, created here: the progress bar beside the finished note, then one per line."""
    progress_column, finished_column = st.columns([3, 2], vertical_alignment="center")
    return Places(progress_column.empty(), finished_column.empty(), st.empty(), st.empty(), st.empty())


def draw_progress(where: Places, run: Run | RunView, steps_per_second: float | None = None) -> None:
    """The progress bar (with the speed when known), why the run stopped, or that it finished."""
    fraction = min(1.0, run.step / max(run.config.steps, 1))
    if steps_per_second:
        # TRANSLATORS: the progress bar: "step 30 / 300 · 120 steps/s".
        line = t("step {step} / {steps} · {speed}", step=run.step, steps=run.config.steps,
                 speed=estimate.format_rate(steps_per_second))
    else:
        # TRANSLATORS: the progress bar: "step 30 / 300".
        line = t("step {step} / {steps}", step=run.step, steps=run.config.steps)
    where.progress.progress(fraction, text=line)
    if run.history.stop_reason:
        # TRANSLATORS: {reason} is why the run stopped (a sentence or two).
        where.status.error(t("{reason} Then press Train for a new run.", reason=text(run.history.stop_reason)),
                           icon=":material/warning:")
    else:
        where.status.empty()
    if run.done and not run.history.stop_reason:
        where.finished.success(tn("Finished {n} step.", "Finished {n} steps.", run.step),
                               icon=":material/check_circle:")
    else:
        where.finished.empty()


def draw_charts(where, run: Run | RunView, n: int, pinned: RunView | None, zero: Run | None,
                robustness: Robustness | None) -> None:
    """All charts of ``run`` in the placeholder ``where``, with run A (``pinned``) and the zero-carry twin
    (``zero``) when there are; the robustness table when ``robustness`` is given. ``n`` makes element keys unique
    when redrawn during training."""
    shown = run.view() if isinstance(run, Run) else run  # one step throughout, however far training gets meanwhile
    with where.container():
        draw_loss(shown, n)
        if pinned is not None:
            draw_ab(pinned, shown, n)
        draw_initial_carry(run, shown, n, zero, robustness)
        draw_per_step_loss(shown, n, pinned, zero)


def draw_loss(run: RunView, n: int) -> None:
    """1. The training and evaluation loss (and the metric when it is not the loss), divergence marked."""
    task = run.program.task
    loss, metric = VIEWS.get(view_key(run, "loss"), lambda: loss_view(run))
    st.subheader(_("1. Loss"))
    if metric is None:  # the metric is the loss itself: one chart
        chart(st, loss, key=f"loss_{n}")
    else:
        left, right = st.columns(2)
        chart(left, loss, key=f"loss_{n}")
        chart(right, metric, key=f"metric_{n}")
    # TRANSLATORS: {baseline} is how the task's memoryless baseline is computed ("chance over 4 classes: ln 4").
    explain(t("The training loss of each batch (a fresh batch every step) and the loss on a fixed evaluation "
              "batch after each chunk, on a log scale. The dashed line is the memoryless baseline: the loss "
              "of the best prediction that sees, at each step, only the position and the current input, and "
              "nothing earlier ({baseline}). A cell below it uses what it remembers.",
              baseline=text(task.baseline_text)))


def draw_ab(pinned: RunView, run: Run | RunView, n: int) -> None:
    """Run A (pinned) and this run (B) on shared axes, and the comparison in numbers."""
    st.subheader(_("A/B: the pinned run (A) and this one (B)"))
    a_label, b_label = ab.labels(pinned.config, run.config)
    baseline = run.program.task.baseline(run.config.seq_len) if pinned.config.task == run.config.task else None
    left, right = st.columns(2)
    chart(left, ab.loss_figure(pinned.history, run.history, a_label, b_label, baseline), key=f"ab_loss_{n}")
    chart(right, ab.moved_figure(pinned.history, run.history, a_label, b_label), key=f"ab_moved_{n}")
    a, b = ab.side(pinned.config, pinned.history, a_label), ab.side(run.config, run.history, b_label)
    st.markdown(ab.describe(a, b))  # registry labels and numbers only


def draw_initial_carry(run: Run | RunView, shown: RunView, n: int, zero: Run | None,
                       robustness: Robustness | None) -> None:
    """2. The initial carry (of ``shown``, a view of ``run``): its units after every chunk, its distance from the
    start and its path (PCA); for a carry that is not learned, the robustness table when ``robustness`` is given."""
    history, mode = shown.history, shown.config.carry_mode
    st.subheader(_("2. The initial carry"))
    if mode != "learnable":
        if mode == "fixed":
            # TRANSLATORS: {init} is carry_init's value (zeros, normal...): code, kept as it is.
            said = t("In **fixed** mode the initial carry is not a parameter: it is "
                     "`cell.initialize_carry(key, input_shape)` with {init}, drawn once for the whole run, so it "
                     "does not learn. The heatmap shows what it is; choose the learnable mode to watch it move.",
                     init=run.config.carry_init)
        elif mode == "noisy":
            # TRANSLATORS: {init} is carry_init's value (zeros, normal...): code, kept as it is.
            said = t("In **noisy** mode the initial carry is not a parameter: it is "
                     "`cell.initialize_carry(key, input_shape)` with {init}, drawn again for every batch (the "
                     "evaluation batch's draw is shown), so it does not learn. The heatmap shows what it is; choose "
                     "the learnable mode to watch it move.", init=run.config.carry_init)
        else:
            # TRANSLATORS: {mode} is a carry mode's id, {init} carry_init's value: code, kept as they are.
            said = t("In **{mode}** mode the initial carry is not a parameter: it is "
                     "`cell.initialize_carry(key, input_shape)` with {init}, drawn again for every batch (the "
                     "evaluation batch's draw is shown), so it does not learn. The heatmap shows what it is; choose "
                     "the learnable mode to watch it move.", mode=mode, init=run.config.carry_init)
        st.info(said, icon=":material/lock:")
    view = VIEWS.get(view_key(shown, "carry"), lambda: carry_view(history))
    for leaf, heatmap in zip(history.leaves, view.heatmaps):
        chart(st, heatmap, key=f"heat_{leaf}_{n}")
    left, right = st.columns(2)
    chart(left, view.distance, key=f"dist_{n}")
    chart(right, view.path, key=f"pca_{n}")
    if mode != "learnable" and history.steps and robustness is not None and isinstance(run, Run):
        draw_robustness(run, zero, robustness)
    if view.movement:
        st.markdown(view.movement)
    explain(_("A learnable initial carry is a parameter per carry leaf (`c0`, `h0`), broadcast over the batch "
            "and trained with the weights; its gradient is the sum over the batch of dL/dh_0. The heatmap "
            "shows each unit after every chunk, the middle chart its distance from where it started, and "
            "the right one its path projected on the two directions it varied most (PCA). LSTMs carry two "
            "leaves, c and h, shown separately. Gers, Schraudolph & Schmidhuber (2002) argue the initial "
            "state should be learned."))


def draw_robustness(run: Run, zero: Run | None, robustness: Robustness) -> None:
    """How the model does when started from other initial carries, beside its zero-carry twin when there is one."""
    # TRANSLATORS: a table's column: "this run (fixed carry)".
    losses = {t("this run ({mode})", mode=carry_mode_phrase(run.config.carry_mode)):
              robustness(run).set_index("start")["loss"]}
    if zero is not None:
        losses[_("trained from a zero carry")] = robustness(zero).set_index("start")["loss"]
    table = pd.DataFrame(losses)
    table.index = start_names(run, table.index)
    st.markdown(tn("**Started from other initial carries** (the evaluation batch's loss; fresh carries: the mean "
                   "of {n} draw):", "**Started from other initial carries** (the evaluation batch's loss; fresh "
                   "carries: the mean of {n} draws):", probes.ROBUSTNESS_DRAWS))
    number_table(st, table, {c: ".3g" for c in table.columns})
    if zero is not None:
        mine, theirs = table.iloc[1, 0], table.iloc[1, 1]
        st.markdown(describe_twin(probes.start_sigma(run.config), float(mine), float(theirs)))


def start_names(run: Run, index: pd.Index) -> list[str]:
    """The robustness table's starts in the reader's language (:func:`rnnlab.probing.probes.start_robustness`
    names them in English: a zero carry, then fresh draws at the run's scale and at a wider one)."""
    if len(index) != 3:
        return [text(name) for name in index]
    sigma = probes.start_sigma(run.config)
    # TRANSLATORS: a table's row: the evaluation loss started from fresh initial carries drawn from N(0, sigma²).
    return [_("zero carry"), t("fresh N(0, {sigma:g}) carries", sigma=sigma),
            t("fresh N(0, {sigma:g}) carries", sigma=probes.ROBUSTNESS_WIDER * sigma)]


def draw_per_step_loss(run: RunView, n: int, pinned: RunView | None, zero: Run | None) -> None:
    """3. The loss at each time step, with the zero-carry twin's and run A's, and the first steps zoomed in."""
    task = run.program.task
    st.subheader(_("3. Loss at each time step"))
    mark = marked()
    shared = view_key(run, "per_step", mark) if zero is None and pinned is None else None
    view = VIEWS.get(shared, lambda: per_step_view(run, mark, pinned, zero))
    clickable_chart(st, view.figure, f"per_step_{n}")
    if view.caption:
        st.caption(view.caption)
    if view.gap:
        st.markdown(view.gap)
    if view.first is not None:
        clickable_chart(st, view.first, f"per_step_first_{n}")
    scored = task.scored_steps(run.config.seq_len)
    # TRANSLATORS: {task} is the task's name.
    only_last = "" if scored.all() else t(
        "{task} scores only the last step, so the memoryless baseline is drawn there only: the earlier "
        "steps show how the final answer forms as the sequence is read, and are not compared with it.",
        task=text(task.label))
    said = _("The loss on the evaluation batch at every time step of the sequence, after the latest chunk, "
             "with the memoryless baseline of each step (dashed). A learned start shows its value at the "
             "first steps: a zero carry has to spend steps finding where the sequence is, a learned carry can "
             "already encode what every sequence shares (R2RT, \"Non-Zero Initial States for Recurrent Neural "
             "Networks\", 2016).")
    explain(join_sentences(said, only_last))
