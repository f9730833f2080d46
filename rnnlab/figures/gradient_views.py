"""The Gradient flow page's charts as values: its probes' figures and sentences (parts 1 and 3) and a decay sweep's
figure, fitted lines, table and sentences (part 2), built by pure functions of what was probed, so that
:mod:`rnnlab.figures.shared` can build them once for every session showing the same pristine run or sweep.

A marked time step is the reader's own: :func:`time_figure` and :func:`connectivity_figure` take it, and a view
key that holds it (:func:`rnnlab.figures.shared.view_key`) builds each marked step once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from rnnlab.config import Config
from rnnlab.figures import plots, size_words, true_size
from rnnlab.figures.log10_scale import Log10Axis, log10_axis, log10_column, size_text
from rnnlab.grids import SWEEP_TRAINING
from rnnlab.i18n import _, join_sentences, language, t, tn
from rnnlab.model.cells import CELLS
from rnnlab.model.tasks import TASKS
from rnnlab.probing import probes


@dataclass(frozen=True)
class ProbeView:
    """Parts 1 and 3 without the marked step: the axis both charts share and the sentences under them."""

    axis: Log10Axis
    last_t: int  # the last time step of part 1
    inputs: int  # the input steps of part 3
    captions: tuple[str, ...]  # under part 1's chart, in order
    decay_back: str  # part 1's list of fitted factors (Markdown)
    connectivity_caption: str  # under part 3's chart ('' for none)


def probe_view(grads: pd.DataFrame, conn: pd.DataFrame) -> ProbeView:
    """What parts 1 and 3 say of the probes ``grads`` (||dL/dh_t||) and ``conn`` (connectivity)."""
    axis = log10_axis(log10_column(grads, "grad_norm"), log10_column(conn, "connectivity"))
    last_t = grads["t"].max()
    captions: list[str] = []
    if ((grads["leaf"] == "c") & (grads["t"] == last_t)).any():
        # TRANSLATORS: {t} is the last time step
        captions.append(t("The gradient with respect to the final cell state c at t = {t} is exactly 0: nothing "
                          "reads it after the last step, so it is marked at the bottom of the chart, not drawn on "
                          "the line.", t=int(last_t)))
    captions.extend(size_words.describe_exact_zeros(grads))
    below = size_words.describe_below_float32(log10_column(grads, "grad_norm"), "||dL/dh_t||")
    float32 = describe_float32_zeros(grads, "||dL/dh_t||")
    note = size_words.floors_note(axis)
    if below or float32 or note:
        captions.append(join_sentences(below, float32, note))
    decay_back = "\n".join(f"- {sentence}" for sentence in size_words.describe_decay_back(grads))
    conn_below = size_words.describe_below_float32(log10_column(conn, "connectivity"), "||dy_T/dx_t||")
    return ProbeView(axis, int(last_t), len(conn), tuple(captions), decay_back, conn_below)


def float32_zeros(grads: pd.DataFrame) -> int:
    """How many of ``grads``' values a float32 backward pass gives as exactly 0 while their true size is not 0
    (its column ``float32``, :func:`rnnlab.probing.probes.carry_grad_df`; 0 where it was not run)."""
    if "float32" not in grads:
        return 0
    return int(((grads["float32"] == 0) & np.isfinite(log10_column(grads, "grad_norm"))).sum())


def describe_float32_zeros(grads: pd.DataFrame, quantity: str) -> str:
    """What a float32 backward pass gives where the true size is not 0: how many exact zeros ('' when none)."""
    count = float32_zeros(grads)
    if not count:
        return ""
    # TRANSLATORS: {quantity} is a norm such as ||dL/dh_t||; {n} counts its values that are exactly 0 in float32
    return tn("A float32 backward pass on the same batch gives exactly 0 for {n} value of {quantity} whose true size "
              "is not 0: float32 loses a gradient once every one of its components is below its smallest normal "
              "number or cut by a saturated unit or a closed gate.",
              "A float32 backward pass on the same batch gives exactly 0 for {n} values of {quantity} whose true "
              "size is not 0: float32 loses a gradient once every one of its components is below its smallest "
              "normal number or cut by a saturated unit or a closed gate.", count, quantity=quantity)


def time_figure(grads: pd.DataFrame, view: ProbeView, mark: int) -> go.Figure:
    """Part 1's chart with the time step ``mark`` marked, clickable."""
    return plots.marked_figure(true_size.grad_through_time_figure(grads, view.axis), mark, 0, view.last_t)


def connectivity_figure(conn: pd.DataFrame, view: ProbeView, mark: int) -> go.Figure:
    """Part 3's chart with the input step ``mark`` marked, clickable."""
    return plots.marked_figure(true_size.connectivity_figure(conn, view.axis), mark, 1, view.inputs)


@dataclass(frozen=True)
class SweepView:
    """Part 2 for one decay sweep: its chart, one Markdown item per fitted cell, the table and the sentences."""

    figure: go.Figure
    fits: tuple[str, ...]
    table: pd.DataFrame
    zero_captions: tuple[str, ...]
    floor_caption: str  # '' for none
    weights_caption: str


def sweep_view(sweep: pd.DataFrame, fits: pd.DataFrame, task_name: str, weights: str, seed: int) -> SweepView:
    """What part 2 shows of a decay sweep (``sweep``, ``fits``) of the task ``task_name`` with ``weights``
    ('trained' or 'untrained') from ``seed``."""
    labels = {name: _(spec.label) for name, spec in CELLS.items()}
    axis = log10_axis(log10_column(sweep, "h0_grad_norm"))
    figure = true_size.decay_figure(sweep, fits, labels, axis)
    # TRANSLATORS: a list item: {cell} is a cell's name, {fit} the fitted decay ("×0.787 per step: ...")
    fitted = tuple(t("- **{cell}**: {fit}.", cell=_(CELLS[row.cell].label),
                     fit=probes.describe_fit(row.rate_per_step, row.halving_steps)) for row in fits.itertuples())
    sizes = sweep.assign(log10=log10_column(sweep, "h0_grad_norm"))
    table = sizes.pivot(index="T", columns="cell", values="log10")[list(fits["cell"])].rename(columns=labels)
    table = table.map(size_text)  # every size written the reader's way, an exact 0 as it is named everywhere
    zeros = sweep[sweep["zero_cause"] != ""] if "zero_cause" in sweep else sweep.iloc[:0]
    # TRANSLATORS: {cell} is a cell's name at sequence length {T}; {sentence} why its gradient is exactly 0
    zero_captions = tuple(t("{cell} at T = {T}: {sentence}", cell=_(CELLS[row.cell].label), T=row.T,
                            sentence=size_words.describe_zero(row.zero_cause, row.zero_at, "h", 0))
                          for row in zeros.itertuples())
    below = size_words.describe_below_float32(sizes["log10"], "||dL/dh_0||")
    note = size_words.floors_note(axis)
    floor_caption = join_sentences(below, note) if below or note else ""
    return SweepView(figure, fitted, table, zero_captions, floor_caption, weights_caption(task_name, weights, seed))


def weights_caption(task_name: str, weights: str, seed: int) -> str:
    """Which weights the sweep probed, and what to compare them with."""
    task_words = TASKS[task_name].noun if task_name in TASKS else task_name
    if weights == "trained":
        # TRANSLATORS: {n} training steps on the task {task} (named in a sentence: adding, copy) at sequence length
        # {T}, with random seed {seed}
        return tn("Each cell trained for {n} step on the {task} task at T = {T} (seed {seed}), then probed at "
                  "every T. Compare with the untrained weights: there, every cell forgets about equally fast.",
                  "Each cell trained for {n} steps on the {task} task at T = {T} (seed {seed}), then probed at "
                  "every T. Compare with the untrained weights: there, every cell forgets about equally fast.",
                  SWEEP_TRAINING["steps"], task=task_words, T=SWEEP_TRAINING["seq_len"], seed=seed)
    # TRANSLATORS: {task} is the task named in a sentence (adding, copy), {seed} the random seed
    return t("Untrained weights (seed {seed}) on the {task} task: every cell forgets about equally fast before "
             "training. Choose the trained weights to see the gates at work.", seed=seed, task=task_words)


def sweep_key(base: Config, cells: tuple[str, ...], lengths: tuple[int, ...], weights: str) -> tuple:
    """The key of a decay sweep's result (the same for everyone: a sweep is a function of these) and, with the
    reader's language, of its view."""
    return ("decay_sweep", base, tuple(cells), tuple(lengths), weights)


def sweep_view_key(key: tuple) -> tuple:
    """The shared view's key of the sweep computed under ``key`` (:func:`sweep_key`), in the reader's language."""
    return ("decay_sweep view", key, language())
