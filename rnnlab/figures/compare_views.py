"""The Compare page's results as values: the loss curves, the two bar charts, the exact zeros in words and the table,
built by one pure function of a sweep's result, so that :mod:`rnnlab.figures.shared` can build them once for every
session showing the same finished sweep (a sweep is a function of its configurations: training is deterministic)."""

from __future__ import annotations

import math
from collections.abc import Hashable
from dataclasses import dataclass

import pandas as pd
import plotly.graph_objects as go

from rnnlab import sweep
from rnnlab.figures import plots, true_size
from rnnlab.figures.compare_words import shown_size, shown_verdict, shown_zero_cause
from rnnlab.figures.size_words import describe_zero
from rnnlab.grids import FIELDS, shown_label
from rnnlab.i18n import _, join_sentences, language, t

MAX_CURVE_POINTS = 500  # steps per curve drawn (the table and the CSV keep every number)


@dataclass(frozen=True)
class CompareView:
    """A sweep's charts and table in the reader's words."""

    labels: tuple[str, ...]  # each run's label in the reader's language
    curves: go.Figure
    final_loss: go.Figure
    h0: go.Figure
    zero_caption: str  # '' when no run's ||dL/dh_0|| is exactly 0
    table: pd.DataFrame  # the numbers as a table writes them; headers still the CSV's names
    csv: str  # the final figures as the CSV keeps them (English, whatever the reader's language)


def compare_view(result: sweep.SweepResult) -> CompareView:
    """What the Compare page draws of ``result``."""
    labels = [shown_label(config, result.varying) for config in result.configs]
    summary = result.summary_df().assign(label=labels)  # for the charts and the table (the CSV keeps English)
    shown_of = dict(zip(result.labels, labels))
    spread = result.spread_df()
    spread["label"] = spread["label"].map(lambda label: shown_of.get(label, label))
    every = max(1, math.ceil(result.steps / MAX_CURVE_POINTS))
    if every > 1:
        last = spread.groupby("label")["step"].transform("max")
        spread = spread[(spread["step"] % every == 0) | (spread["step"] == last)]
    curves = plots.sweep_curves_figure(spread, result.baseline)
    final_loss = plots.sweep_bar_figure(summary, "eval_loss", _("Final evaluation loss per configuration"),
                                        _("evaluation loss (log scale)"), result.baseline)
    h0 = true_size.log10_bar_figure(summary, _("Gradient reaching the initial carry per configuration"),
                                    _("||dL/dh_0|| (true size)"))
    zero = [(label, config.seed, size) for label, config, size in zip(labels, result.configs, result.h0)
            if size.cause]
    zero_caption = ""
    if zero:
        # TRANSLATORS: a run's exact zero, e.g. "GRU (seed 1): ||dL/dh_0|| is exactly 0: ...".
        runs = join_sentences(*(t("{label} (seed {seed}): {why}", label=label, seed=seed,
                                  why=describe_zero(size.cause, size.at, "h", 0))
                                for label, seed, size in zero))
        zero_caption = t("Exactly 0 by the arithmetic, not too small to store (the probe keeps any size), drawn on "
                         "the bottom row: {runs}", runs=runs)
    return CompareView(tuple(labels), curves, final_loss, h0, zero_caption, results_table(summary), result.to_csv())


READ_FIRST = ("label", "verdict", "of_baseline", "eval_loss")  # the table's first columns: what a student reads


def results_table(summary: pd.DataFrame) -> pd.DataFrame:
    """The table as the reader sees it, narrow enough for a projector: each configuration by its label (the varying
    settings' own columns stay in the CSV), its verdict and share of the baseline first; verdicts and the causes of
    exact zeros in the reader's words; diverged only when a run did; the numbers as a table writes them (machine
    format)."""
    table = summary.assign(h0_grad_norm=[shown_size(v) for v in summary["h0_log10"]],
                           verdict=[shown_verdict(v) for v in summary["verdict"]])
    table = table.drop(columns=[c for c in table.columns if c in FIELDS and c != "seed"])
    if not table["diverged"].any():
        table = table.drop(columns=["diverged"])
    if not (table["h0_zero_cause"] != "").any():  # the columns that say why an exact 0 is 0: only when one is
        table = table.drop(columns=["h0_zero_cause", "h0_zero_at"])
    else:
        table["h0_zero_cause"] = [shown_zero_cause(v) for v in table["h0_zero_cause"]]
    return table[[*READ_FIRST, *(c for c in table.columns if c not in READ_FIRST)]]


def view_key(result: sweep.SweepResult) -> Hashable | None:
    """The shared view's key of ``result`` in the reader's language: its configurations, for a sweep that trained
    them all (a stopped one is the stopping session's own); None (not shared) otherwise."""
    if result.stopped:
        return None
    return ("compare view", tuple(result.configs), language())


def sweep_key(configs: list) -> Hashable:
    """The key of a whole sweep of ``configs``: computed once for everyone who asks for it."""
    return ("compare sweep", tuple(configs))
