"""The Compare page's words in the reader's language: what a sweep keeps in English (its labels, verdicts and
progress notes, which the CSV and the worker thread write), its plan and its refusals."""

from __future__ import annotations

import math
import re

from rnnlab import sweep
from rnnlab.grids import FIELDS, carry_mode_carry, list_separator
from rnnlab.i18n import _, language, t, tn, tp
from rnnlab.model.cells import CARRY_INITS, CELLS
from rnnlab.probing.probes import format_log10
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
    """Why an exact 0 is 0 (a key of :data:`rnnlab.figures.size_words.ZERO_CAUSES`) as the table shows it."""
    words = {"unread": tp("why a gradient is exactly 0", "unread"),
             "saturated": tp("why a gradient is exactly 0", "saturated"),
             "gate": tp("why a gradient is exactly 0", "gate"),
             "cancelled": tp("why a gradient is exactly 0", "cancelled")}
    return words.get(cause, cause)


def shown_size(log10: float) -> str:
    """||dL/dh_0|| as the table writes it: the machine format of :func:`format_log10`, or words."""
    if math.isnan(log10):
        return _("not measured")
    if math.isinf(log10) and log10 < 0:
        return _("0 in float32")

    return format_log10(log10)


def program_of(configs: list, number: int) -> str:
    """The reader's words for the compiled program ``number`` (from 1) of ``configs``: 'GRU, fixed carry, init
    zeros'."""
    groups = sweep.group_configs(configs)
    if not 1 <= number <= len(groups):
        return ""
    config = configs[groups[number - 1][0]]
    return list_separator().join([_(CELLS[config.cell].label), carry_mode_carry(config.carry_mode),
                                  t("init {name}", name=CARRY_INITS[config.carry_init].word)])


COMPILING = re.compile(r"^Compiling program (\d+) of (\d+) \(.*\)…$")
TRAINING = re.compile(r"^step (\d+) / (\d+) of program (\d+) of (\d+)$")


def progress_note(note, configs: list) -> str:
    """What the sweep says it does (its worker thread writes English) in the reader's language."""
    text = str(note or "")
    if (match := COMPILING.match(text)) is not None:
        number, total = int(match[1]), int(match[2])
        return t("Compiling program {number} of {total} ({program})…", number=number, total=total,
                 program=program_of(configs, number))
    if (match := TRAINING.match(text)) is not None:
        # TRANSLATORS: progress of a sweep: the training step reached by compiled program {number} of {total}.
        return t("step {step} / {steps} of program {number} of {total}", step=int(match[1]), steps=int(match[2]),
                 number=int(match[3]), total=int(match[4]))
    if text == sweep.MEASURING:
        return _("Measuring the gradient that reaches the initial carry…")
    return text


def too_many_runs(base, axes: dict[str, list]) -> str | None:
    """Why the grid is refused when it has more runs than a sweep trains (what
    :func:`rnnlab.sweep.expand` says in English), in the reader's language; None when it is not."""
    values = {name: list(dict.fromkeys(axes.get(name) or [getattr(base, name)])) for name in FIELDS}
    count = math.prod(len(v) for v in values.values())
    if count <= sweep.MAX_RUNS:
        return None
    # TRANSLATORS: one factor of a grid's size: {n} values of the field {field}, e.g. "25 seed".
    sizes = [t("{n} {field}", n=len(v), field=FIELDS[n].shown_label.lower()) for n, v in values.items()
             if len(v) > 1]
    return tn("{sizes} make {n} run; a sweep trains at most {most}. Choose fewer values.",
              "{sizes} make {n} runs; a sweep trains at most {most}. Choose fewer values.", count,
              sizes=(" x " if language() == "en" else " × ").join(sizes), most=sweep.MAX_RUNS)


def over_memory(configs: list) -> str | None:
    """Why the grid is refused when its runs together need more memory than the server allows."""
    need, budget = sweep.total_memory_bytes(configs), sweep.memory_budget_bytes()
    if need <= budget:
        return None
    return tn("The {n} run together needs about {need} for backpropagation through time; the limit is {limit}. "
              "Choose fewer runs, or lower the sequence length, the batch or the features.",
              "The {n} runs together need about {need} for backpropagation through time; the limit is {limit}. "
              "Choose fewer runs, or lower the sequence length, the batch or the features.", len(configs),
              need=format_bytes(need), limit=format_bytes(budget))


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
