"""The Compare page's words in the reader's language: what a sweep keeps in English (its labels and verdicts, which
the CSV writes), its plan and its refusals."""

from __future__ import annotations

import math

from rnnlab import sweep
from rnnlab.figures.log10_scale import size_text
from rnnlab.i18n import _, t, tn, tp
from rnnlab.text import format_bytes


# ---- the reader's words for what the sweep keeps in English (its labels, verdicts and the CSV stay English) ----
def shown_verdict(verdict: str) -> str:
    """A verdict of :func:`rnnlab.sweep.memory_verdict` (or :data:`~rnnlab.sweep.NOT_EVALUATED`)
    in the reader's language."""
    words = {
        # TRANSLATORS: a verdict in the Compare table: the run's loss became infinite or NaN.
        "diverged": tp("verdict", "diverged"),
        # TRANSLATORS: a verdict in the Compare table: the final loss is at most 10% of the memoryless baseline.
        "learned the task": tp("verdict", "learned the task"),
        # TRANSLATORS: a verdict in the Compare table: below 90% of the memoryless baseline, above 10%.
        "uses some memory, not solved": tp("verdict", "uses some memory, not solved"),
        "no better than memoryless": tp("verdict", "no better than memoryless"),
        "worse than memoryless": tp("verdict", "worse than memoryless"),
        sweep.NOT_EVALUATED: tp("verdict", "not evaluated (stopped while compiling)"),
    }
    return words.get(verdict, verdict)


def shown_zero_cause(cause: str) -> str:
    """Why an exact 0 is 0 (a key of :data:`rnnlab.figures.log10_scale.ZERO_CAUSES`) as the table shows it."""
    words = {"unread": tp("why a gradient is exactly 0", "unread"),
             "saturated": tp("why a gradient is exactly 0", "saturated"),
             "gate": tp("why a gradient is exactly 0", "gate"),
             "cancelled": tp("why a gradient is exactly 0", "cancelled")}
    return words.get(cause, cause)


def shown_size(log10: float) -> str:
    """||dL/dh_0|| as the table writes it: its true size written the reader's way (an exact 0 named as everywhere),
    or that it was not measured."""
    if math.isnan(log10):
        return _("not measured")
    return size_text(log10)


def describe_plan(configs: list, base) -> str:
    """'**6 runs in 2 compiled programs (about 1.2 MB for backpropagation)**, each 50 steps of 10 per chunk ...'."""
    runs, programs = len(configs), len(sweep.group_configs(configs))
    return t("**{runs} in {programs} (about {size} for backpropagation)**, each {steps} of {chunk} per chunk "
             "(a sweep's runs share the number of steps).",
             runs=tn("{n} run", "{n} runs", runs),
             programs=tn("{n} compiled program", "{n} compiled programs", programs),
             size=format_bytes(sweep.total_memory_bytes(configs)),
             # TRANSLATORS: part of "each {steps} of {chunk} per chunk": the training steps of every run.
             steps=tn("{n} step", "{n} steps", base.steps), chunk=base.chunk)
