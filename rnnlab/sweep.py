"""Vmapped sweeps: many configurations trained at once, one compiled program per static configuration.

:func:`expand` turns a base configuration and the values of what varies (carry mode, carry_init, cell,
learning rate, seed) into a validated grid of configurations. :func:`run_sweep` groups them by
``Config.static_key()``: a group shares one :class:`~rnnlab.training.program.Program`, whose un-jitted
``plain_init`` and ``plain_train_steps`` are ``jax.vmap``-ed over the runs (seed, carry scale, learning rate and
clip are per-run arguments), jitted once, and sharded along the runs axis across every device JAX sees. Different cells,
carry modes or initialisers are different programs; learning rates and seeds of one program train together.

Every run of a group takes the same compiled calls, so all configurations of a sweep share ``steps`` and ``chunk``.
||dL/dh_0|| of each run's final parameters is measured once at the end, run by run, by the log-scaled probe
(:mod:`rnnlab.probing.logscale`: its true size as log10, however small, and why where it is exactly 0); its
host-side assembly does not compose with ``jax.vmap``, and one probe costs about one training step.
A run whose loss, gradient or parameters become non-finite stops updating (the per-run ``diverged`` flag of
the training state); the other runs of its group carry on. Each run's :class:`~rnnlab.training.history.History` is
filled exactly as :class:`~rnnlab.training.train.Run` fills it, and equals a one-by-one run to float tolerance (the
vmapped matmuls are batched, so XLA may sum in another order: equal to about 1e-6 relative, not bit for bit).
"""

from __future__ import annotations

import itertools
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

import jax
import numpy as np
import pandas as pd
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from rnnlab.config import Config, ConfigError, Static, static_part
from rnnlab.device import memory_budget_bytes
from rnnlab.grids import FIELDS, SWEEP_FIELDS
from rnnlab.i18n import N_, Msg, _, t, times_sign, tn
from rnnlab.model.cells import CARRY_INITS, CELLS
from rnnlab.model.network import carry_mode_phrase
from rnnlab.model.tasks import TASKS
from rnnlab.probing import logscale, probe_segments
from rnnlab.probing.probes import PROBE_COMPILE_S, probe_batch
from rnnlab.text import format_bytes
from rnnlab.training import estimate
from rnnlab.training.compiled import compile_count
from rnnlab.training.divergence import check_call
from rnnlab.training.history import History
from rnnlab.training.program import Program, get_program
from rnnlab.training.train import at_boundary, call_steps

MAX_RUNS = 48
AXIS = "runs"


class SweepError(ConfigError):
    """A sweep that cannot run; ``messages`` says why."""


def too_many_runs(base: Config, axes: dict[str, list]) -> str | None:
    """Why the grid ``axes`` over ``base`` is refused when it has more runs than a sweep trains, in the reader's
    language; None when it is not."""
    values = {name: list(dict.fromkeys(axes.get(name) or [getattr(base, name)])) for name in FIELDS}
    count = math.prod(len(v) for v in values.values())
    if count <= MAX_RUNS:
        return None
    # TRANSLATORS: one factor of a grid's size: {n} values of the field {field}, e.g. "25 values of seed".
    sizes = [tn("{n} value of {field}", "{n} values of {field}", len(v), field=_(FIELDS[name].label).lower())
             for name, v in values.items() if len(v) > 1]
    # TRANSLATORS: {sizes} is how many values each setting takes ("3 values of learning rate x 4 values of seed");
    # {n} the runs
    return tn("{sizes} make {n} run; a sweep trains at most {most}. Choose fewer values.",
              "{sizes} make {n} runs; a sweep trains at most {most}. Choose fewer values.", count,
              sizes=times_sign().join(sizes), most=MAX_RUNS)


def expand(base: Config, axes: dict[str, list], budget: int | None = None) -> list[Config]:
    """Every combination of ``axes`` (field -> values; a missing or empty list keeps ``base``'s value).

    Raises :class:`SweepError` for an unknown field, more than :data:`MAX_RUNS` combinations, a combination
    that cannot run (e.g. a cell that does not fit the task), or runs that together need more memory than
    ``budget`` (default: :func:`rnnlab.config.memory_budget_bytes`), with one message per problem.
    """
    unknown = [name for name in axes if name not in FIELDS]
    if unknown:
        # TRANSLATORS: {unknown} and {fields} list settings' ids (lr, seed)
        raise SweepError([t("A sweep cannot vary {unknown}; it varies {fields}.", unknown=", ".join(unknown),
                            fields=", ".join(FIELDS))])
    refused = too_many_runs(base, axes)
    if refused:
        raise SweepError([refused])
    values = {name: list(dict.fromkeys(axes.get(name) or [getattr(base, name)])) for name in FIELDS}
    configs = [replace(base, **dict(zip(values, combo))) for combo in itertools.product(*values.values())]
    messages: list[str] = []
    for config in configs:
        for error in config.validate():
            if error not in messages:
                messages.append(error)
    budget = memory_budget_bytes() if budget is None else budget
    need = total_memory_bytes(configs)
    if not messages and need > budget:
        # TRANSLATORS: {n} runs; {need} and {limit} are sizes in bytes (1.2 GB)
        messages.append(tn("The {n} run together needs about {need} for backpropagation through time; the limit is "
                           "{limit}. Choose fewer runs, or lower the sequence length, the batch or the features.",
                           "The {n} runs together need about {need} for backpropagation through time; the limit is "
                           "{limit}. Choose fewer runs, or lower the sequence length, the batch or the features.",
                           len(configs), need=format_bytes(need), limit=format_bytes(budget)))
    if messages:
        raise SweepError(messages)
    return configs


def varying_fields(configs: list[Config]) -> tuple[str, ...]:
    """The sweep fields that take more than one value in ``configs`` (in :data:`SWEEP_FIELDS` order)."""
    return tuple(f.name for f in SWEEP_FIELDS if len({getattr(c, f.name) for c in configs}) > 1)


def label_of(config: Config, varying: tuple[str, ...]) -> str:
    """A readable label from the fields that vary, seed excluded (so seeds of one setting share a label)."""
    parts = [FIELDS[name].describe(getattr(config, name)) for name in varying if FIELDS[name].in_label]
    if not parts:
        parts = [CELLS[config.cell].label, f"{config.carry_mode} carry", f"init {config.carry_init}"]
    return ", ".join(parts)


def group_configs(configs: list[Config]) -> list[list[int]]:
    """Indices of ``configs`` grouped by static key (first appearance order): one compiled program each."""
    groups: dict[tuple, list[int]] = {}
    for i, config in enumerate(configs):
        groups.setdefault(config.static_key(), []).append(i)
    return list(groups.values())


def total_memory_bytes(configs: list[Config]) -> int:
    """What the sweep's runs need together for backpropagation through time (the sum of the estimates)."""
    return sum(c.memory_bytes() for c in configs)


def describe_plan(configs: list[Config]) -> str:
    """'6 runs in 2 compiled programs (about 1.2 MB)'."""
    n, m = len(configs), len(group_configs(configs))
    runs = tn("{n} run", "{n} runs", n)
    programs = tn("{n} compiled program", "{n} compiled programs", m)
    # TRANSLATORS: {runs} is "6 runs", {programs} "2 compiled programs" (each counted on its own); {size} in bytes
    return t("{runs} in {programs} (about {size} for backpropagation)", runs=runs, programs=programs,
             size=format_bytes(total_memory_bytes(configs)))


# ---- compiled, vmapped, sharded programs -------------------------------------------------------------------
@dataclass
class Vmapped:
    """The jitted, vmapped functions of one program for a number of runs sharded over ``mesh``.

    ``init(seeds, scale, lr, clip) -> (state, evaluation)``: the runs' initial states and their evaluation
    at step 0. ``train_steps(state, lr, clip, scale, n_active) -> (state, records, evaluation)``: one compiled call of
    every run and its evaluation with the new parameters. Folding the evaluation into these two functions keeps
    it at two compilations per program.
    """

    mesh: Mesh
    init: Callable
    train_steps: Callable


# Vmapped program sets kept for reuse, least recently used first out: like rnnlab.training.program's cache, bounded,
# because every compiled XLA program holds memory and memory mappings for the life of the process.
MAX_VMAPPED = 4
_COMPILED: OrderedDict[tuple, Vmapped] = OrderedDict()
_COMPILED_LOCK = threading.Lock()


def _build(program: Program, mesh: Mesh) -> Vmapped:
    runs = NamedSharding(mesh, PartitionSpec(AXIS))
    replicated = NamedSharding(mesh, PartitionSpec())

    def init(seed, scale, lr, clip):
        state = program.plain_init(seed, scale, lr, clip)
        return state, program.plain_evaluate(state["params"], state["root"], scale)

    def train_steps(state, lr, clip, scale, n_active):
        return program.plain_train_steps(state, lr, clip, scale, n_active)

    return Vmapped(
        mesh,
        jax.jit(jax.vmap(init), in_shardings=(runs,) * 4, out_shardings=runs),
        jax.jit(jax.vmap(train_steps, in_axes=(0, 0, 0, 0, None)),
                in_shardings=(runs, runs, runs, runs, replicated), out_shardings=runs, donate_argnums=(0,)))


def vmapped(program: Program, size: int, devices: list) -> Vmapped:
    """The cached vmapped functions for ``program``, ``size`` runs (a multiple of len(devices)), ``devices``.

    Cached per (static key, size, devices) for the whole process, so every session reuses them.
    """
    key = (program.static, size, tuple(d.id for d in devices))
    with _COMPILED_LOCK:
        found = _COMPILED.get(key)
        if found is None:
            found = _COMPILED[key] = _build(program, Mesh(np.array(devices), (AXIS,)))
        _COMPILED.move_to_end(key)
        while len(_COMPILED) > MAX_VMAPPED:
            _COMPILED.popitem(last=False)
    return found


def estimate_sweep(configs: list[Config], devices: list | None = None) -> estimate.Estimate:
    """How long :func:`run_sweep` of ``configs`` will take here (compiles included): the training, and the
    final probe of ||dL/dh_0|| (about one training step per run, and its compile with the program's)."""
    devices = list(devices or jax.devices())
    parts = []
    probe_compile_s = probe_s = 0.0
    for indices in group_configs(configs):
        config = configs[indices[0]]
        size = len(indices) + (-len(indices) % len(devices))
        key = (static_part(config), size, tuple(d.id for d in devices))
        with _COMPILED_LOCK:
            fns = _COMPILED.get(key)
        compiled = fns is not None and compile_count(fns.train_steps) > 0
        parts.append((config, len(indices), compiled))
        probe_compile_s += 0.0 if compiled else PROBE_COMPILE_S
        probe_s += len(indices) * estimate.estimate(config, 1).step_s
    training = estimate.together(parts, configs[0].steps)
    steps = max(training.steps, 1)
    return replace(training, compile_s=training.compile_s + probe_compile_s, step_s=training.step_s + probe_s / steps)


def cached_program_sets() -> int:
    """Number of vmapped program sets built so far in this process."""
    with _COMPILED_LOCK:
        return len(_COMPILED)


SOLVED_FRACTION = 0.1  # at most this fraction of the memoryless baseline: the task is learned
MEMORY_FRACTION = 0.9  # below this fraction: the run uses some memory, but has not learned the task


# The verdicts stay English in the summary table and its CSV; they are marked for the catalog, so that a page shows
# them translated: _(verdict).
NOT_EVALUATED = N_("not evaluated (stopped while compiling)")


def memory_verdict(eval_loss: float, baseline: float) -> str:
    """In words, what a final loss says against the memoryless baseline (thresholds: 10% and 90% of it)."""
    if not math.isfinite(eval_loss):
        return N_("diverged")
    ratio = eval_loss / baseline
    if ratio <= SOLVED_FRACTION:
        return N_("learned the task")
    if ratio < MEMORY_FRACTION:
        return N_("uses some memory, not solved")
    return N_("no better than memoryless") if ratio <= 1 / MEMORY_FRACTION else N_("worse than memoryless")


# ---- results ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class H0Size:
    """||dL/dh_0|| of one run at its true size: ``log10`` (-inf for an exact 0, nan when not measured) and, for
    an exact 0, why (``cause``, :data:`rnnlab.figures.log10_scale.ZERO_CAUSES`) and the step that cut it."""

    log10: float = math.nan
    cause: str = ""
    at: int = -1

    @property
    def value(self) -> float:
        """The norm as a float64 number (0 below float64's range)."""
        return float(logscale.to_float(self.log10)) if not math.isnan(self.log10) else math.nan


def h0_size(sizes: logscale.LogGrads) -> H0Size:
    """||dL/dh_0|| over every carry leaf from the log-scaled probe's result, with the cause of an exact 0."""
    log10 = sizes.h0_log10()
    zero = [i for i in range(len(sizes.leaves)) if sizes.zero_cause[i, 0]]
    if math.isinf(log10) and log10 < 0 and zero:
        return H0Size(log10, str(sizes.zero_cause[zero[0], 0]), int(sizes.zero_at[zero[0], 0]))
    return H0Size(log10)


@dataclass
class SweepResult:
    """What a sweep produced, one entry per configuration (in the order given).

    ``histories``: each run's :class:`~rnnlab.training.history.History` (per-step loss, metric, grad_norm and
    ||dL/dh_0|| of the training batch; an evaluation after every chunk). ``h0``: ||dL/dh_0|| (all carry leaves)
    on the run's fixed evaluation batch with its final parameters, at its true size (:class:`H0Size`, from the
    log-scaled probe). ``params``: final (last finite) parameters, on the host.
    ``stop_reasons``: why a run stopped early (divergence), else None.
    """

    configs: list[Config]
    histories: list[History]
    params: list
    h0: list[H0Size]
    stop_reasons: list[str | None]
    baseline: float
    programs: int
    devices: int
    seconds: float = 0.0
    stopped: bool = False  # the callback stopped the sweep before ``steps``
    varying: tuple[str, ...] = field(init=False)
    labels: list[str] = field(init=False)

    def __post_init__(self) -> None:
        self.varying = varying_fields(self.configs)
        self.labels = [label_of(c, self.varying) for c in self.configs]

    @property
    def h0_grad_norms(self) -> list[float]:
        """||dL/dh_0|| per run as float64 numbers (0 below float64's range; nan where not measured)."""
        return [size.value for size in self.h0]

    @property
    def diverged(self) -> list[bool]:
        return [reason is not None for reason in self.stop_reasons]

    @property
    def steps(self) -> int:
        """The steps every configuration was asked to train."""
        return self.configs[0].steps

    def _columns(self, i: int) -> dict:
        config = self.configs[i]
        row: dict[str, object] = {"label": self.labels[i]}
        row.update({name: getattr(config, name) for name in self.varying if FIELDS[name].in_label})
        row["seed"] = config.seed
        return row

    def curves_df(self) -> pd.DataFrame:
        """Long table: label, the varying fields, seed, step, loss, metric (one row per run and step)."""
        frames = []
        for i, history in enumerate(self.histories):
            steps = history.steps_df()[["step", "loss", "metric"]]
            frames.append(steps.assign(**self._columns(i))[[*self._columns(i), "step", "loss", "metric"]])
        return pd.concat(frames, ignore_index=True)

    def summary_df(self) -> pd.DataFrame:
        """One row per configuration: the varying fields, seed, steps trained, the last training-batch loss,
        the final evaluation loss and metric, ||dL/dh_0|| (``h0_grad_norm`` in float64, 0 below its range;
        ``h0_log10`` its true size, -inf for an exact 0; ``h0_zero_cause`` and ``h0_zero_at`` why an exact 0 is 0),
        the evaluation loss as a fraction of the memoryless baseline with its verdict (:func:`memory_verdict`),
        diverged."""
        rows = []
        for i, history in enumerate(self.histories):
            last = history.steps[-1] if history.steps else {}
            final = history.chunks[-1] if history.chunks else {"eval_loss": math.nan, "eval_metric": math.nan}
            verdict = memory_verdict(final["eval_loss"], self.baseline) if history.chunks else NOT_EVALUATED
            rows.append({**self._columns(i), "steps": history.last_step,
                         "final_loss": last.get("loss", math.nan), "eval_loss": final["eval_loss"],
                         "eval_metric": final["eval_metric"], "h0_grad_norm": self.h0[i].value,
                         "h0_log10": self.h0[i].log10, "h0_zero_cause": self.h0[i].cause,
                         "h0_zero_at": self.h0[i].at,
                         "of_baseline": final["eval_loss"] / self.baseline, "verdict": verdict,
                         "diverged": self.diverged[i]})
        return pd.DataFrame(rows)

    def spread_df(self) -> pd.DataFrame:
        """Per label and step, the training loss over seeds: mean, min, max, std (0 for one seed), seeds."""
        curves = self.curves_df()
        order = list(dict.fromkeys(self.labels))
        stats = (curves.groupby(["label", "step"], sort=False)["loss"]
                 .agg(mean="mean", min="min", max="max", std=partial(np.std, ddof=0), seeds="count")
                 .reset_index())
        stats["label"] = pd.Categorical(stats["label"], categories=order, ordered=True)
        stats = stats.sort_values(["label", "step"], kind="stable").reset_index(drop=True)
        stats["label"] = stats["label"].astype(str)
        return stats

    def to_csv(self) -> str:
        """The summary table as CSV text."""
        return self.summary_df().to_csv(index=False)

    def nbytes(self) -> int:
        """Rough memory held: the histories and the final parameters."""
        params = sum(np.asarray(leaf).nbytes for p in self.params for leaf in jax.tree_util.tree_leaves(p))
        return sum(h.nbytes() for h in self.histories) + params


# ---- training --------------------------------------------------------------------------------------------
def _pick(tree, i: int):
    return jax.tree_util.tree_map(lambda a: a[i], tree)


@dataclass
class _Group:
    """The runs of one compiled program, padded to a multiple of the devices, and how far they are."""

    program: Program
    indices: list[int]
    fns: Vmapped
    hyper: tuple[np.ndarray, np.ndarray, np.ndarray]  # lr, clip, scale, padded
    seeds: np.ndarray  # padded
    state: dict | None = None
    step: int = 0
    step_s: float = 0.0  # seconds per step of the whole group: from its size, then as measured


@dataclass
class _Progress:
    """What a sweep has recorded so far: every run's history and stop reason, and the reports to the callback."""

    configs: list[Config]
    groups: list[_Group]
    callback: Callable[[float, Any], bool | None] | None
    histories: list[History] = field(init=False)
    stop_reasons: list[str | None] = field(init=False)

    def __post_init__(self) -> None:
        self.histories = [History(get_program(c).spec.leaves) for c in self.configs]
        self.stop_reasons = [None] * len(self.configs)

    @property
    def steps(self) -> int:
        return self.configs[0].steps

    def report(self, text: Msg) -> bool:
        """Tell the callback how far the sweep is; False when it says to stop."""
        done = sum(min(g.step, self.steps) for g in self.groups) / (self.steps * len(self.groups))
        return self.callback is None or self.callback(done, text) is not False


def run_sweep(configs: list[Config], callback: Callable[[float, Any], bool | None] | None = None,
              devices: list | None = None, max_seconds: float | None = None) -> SweepResult:
    """Train ``configs`` together: one vmapped, sharded program per static key, chunk by chunk to ``steps``.

    ``callback(fraction, text)`` is called before each program's first compile and after every compiled call;
    when it returns False the sweep stops there and returns what it has. ``max_seconds`` bounds a compiled
    call (from the measured time per step; see :meth:`rnnlab.training.train.Run.run_call`), so that the callback
    comes that often; evaluations are recorded at chunk ends either way. ``devices`` defaults to jax.devices();
    each group is padded to a multiple of their number by repeating its last configuration (the padding is
    dropped from the results). Raises :class:`SweepError` for an invalid or inconsistent list.
    """
    _check_sweep(configs)
    start = time.perf_counter()
    groups = _make_groups(configs, list(devices or jax.devices()))
    progress = _Progress(list(configs), groups, callback)
    stopped = not _start_groups(progress)
    while not stopped and any(g.step < progress.steps for g in groups):
        stopped = not _train_round(progress, max_seconds)
    return _collect(progress, time.perf_counter() - start, stopped)


def _check_sweep(configs: list[Config]) -> None:
    """Raise :class:`SweepError` unless ``configs`` can train together (valid, few enough, one length)."""
    if not configs:
        raise SweepError(["The sweep has no configurations."])
    if len(configs) > MAX_RUNS:
        raise SweepError([f"{len(configs)} runs; a sweep trains at most {MAX_RUNS}."])
    for name in ("steps", "task", "seq_len"):
        if len({getattr(c, name) for c in configs}) > 1:
            raise SweepError([f"All configurations of a sweep share {name}; got "
                              f"{sorted({getattr(c, name) for c in configs})}."])
    messages = list(dict.fromkeys(e for c in configs for e in c.validate()))
    if messages:
        raise SweepError(messages)


def _make_groups(configs: list[Config], devices: list) -> list[_Group]:
    """One group per static key, its runs padded to a multiple of len(devices), with its vmapped program."""
    groups = []
    for indices in group_configs(configs):
        padded = indices + [indices[-1]] * (-len(indices) % len(devices))
        program = get_program(configs[indices[0]])
        lr, clip, scale = (np.array([getattr(configs[i], name) for i in padded], np.float32)
                           for name in ("lr", "clip", "carry_scale"))
        seeds = np.array([configs[i].seed for i in padded], np.int32)
        guess = estimate.together([(configs[indices[0]], len(padded), True)], 1).step_s  # until measured
        groups.append(_Group(program, indices, vmapped(program, len(padded), devices), (lr, clip, scale), seeds,
                             step_s=guess))
    return groups


def _start_groups(progress: _Progress) -> bool:
    """Initialise every group (compiling its program first) and record its evaluation at step 0.

    False when the callback said to stop before a compile (the groups after it stay uninitialised).
    """
    groups = progress.groups
    for number, group in enumerate(groups, 1):
        if compile_count(group.fns.init) == 0 and not progress.report(_compiling(number, len(groups),
                                                                                 group.program.static)):
            return False
        lr, clip, scale = group.hyper
        group.state, evaluation = group.fns.init(group.seeds, scale, lr, clip)
        evaluation = jax.device_get(evaluation)
        for j, i in enumerate(group.indices):
            progress.histories[i].add_evaluation(0, _pick(evaluation, j))
    return True


def _train_round(progress: _Progress, max_seconds: float | None) -> bool:
    """One compiled call of every group that has steps left, each followed by a report; False on stop."""
    groups = progress.groups
    for number, group in enumerate(groups, 1):
        if group.step >= progress.steps:
            continue
        _train_call(progress, group, max_seconds)
        # kept as a message: made in a worker thread, shown in the reader's language on the page
        # TRANSLATORS: progress of a sweep: training step {step} of {steps}, compiled program {n} of {total}
        note = Msg("step {step} / {steps} of program {n} of {total}", step=group.step, steps=progress.steps,
                   n=number, total=len(groups))
        if not progress.report(note):
            return False
    return True


def _train_call(progress: _Progress, group: _Group, max_seconds: float | None) -> None:
    """Train ``group`` one compiled call (the rest of the chunk, or the steps of it that fit in ``max_seconds``), and
    record it in each run's history.

    A run that has stopped (diverged) is no longer recorded; its state keeps its last finite parameters.
    """
    steps, chunk = progress.steps, group.program.static.chunk
    n_active = call_steps(group.step, chunk, steps, group.step_s, max_seconds)
    lr, clip, scale = group.hyper
    compiled = compile_count(group.fns.train_steps) > 0
    began = time.perf_counter()
    group.state, records, evaluation = group.fns.train_steps(group.state, lr, clip, scale, np.int32(n_active))
    records, evaluation = jax.device_get((records, evaluation))
    if compiled:
        group.step_s = (time.perf_counter() - began) / n_active
    complete = at_boundary(group.step + n_active, chunk, steps)
    for j, i in enumerate(group.indices):
        if progress.stop_reasons[i] is not None:
            continue
        config, history, run_records = progress.configs[i], progress.histories[i], _pick(records, j)
        applied = history.add_records(group.step, run_records)
        if complete or applied < n_active:
            history.add_evaluation(group.step + applied, _pick(evaluation, j))
        check_call(history, config, TASKS[config.task].baseline(config.seq_len), group.step, applied, run_records)
        progress.stop_reasons[i] = history.stop_reason  # the same record and message as a one-by-one Run
    group.step += n_active


# a progress note, kept as a message (made in a worker thread, shown in the reader's language on the page)
MEASURING = Msg("Measuring the gradient that reaches the initial carry…")


def _collect(progress: _Progress, seconds: float, stopped: bool) -> SweepResult:
    """The sweep's result: each run's final parameters taken off the devices and its ||dL/dh_0|| probed, in the
    given order."""
    configs = progress.configs
    sizes = [H0Size()] * len(configs)
    params: list = [None] * len(configs)
    used = 0
    if not stopped:
        progress.report(MEASURING)
    for group in progress.groups:
        if group.state is None:
            continue
        used = max(used, len(group.state["step"].sharding.device_set))
        host_params, roots = jax.device_get((group.state["params"], group.state["root"]))
        for j, i in enumerate(group.indices):
            params[i] = _pick(host_params, j)
        sizes_of = _probe_h0(group, configs[group.indices[0]], host_params, roots)
        for j, i in enumerate(group.indices):
            sizes[i] = sizes_of[j]
    baseline = TASKS[configs[0].task].baseline(configs[0].seq_len)
    return SweepResult(configs, progress.histories, params, sizes, progress.stop_reasons, baseline,
                       len(progress.groups), used, seconds, stopped)


def _probe_h0(group: _Group, config: Config, host_params, roots) -> list[H0Size]:
    """||dL/dh_0|| of each run of ``group`` (its final parameters, its evaluation batch) by the log-scaled probe;
    ``config`` is one of the group's (a long sequence is probed in segments, as the Gradient flow page does)."""
    program = group.program
    segment = probe_segments.segment_length(config, program.steps)
    out = []
    for j in range(len(group.indices)):
        batch = probe_batch(program, roots[j])
        grads = logscale.carry_grad_log10(program, _pick(host_params, j), batch, group.hyper[2][j], segment)
        out.append(h0_size(grads))
    return out


def _compiling(number: int, total: int, static: Static) -> Msg:
    """The progress note before a compile, kept as a message (made in a worker thread, shown on the page)."""
    # TRANSLATORS: progress: compiling program {n} of {total}; {cell} is a cell's name, {mode} a carry mode
    # ("learnable carry"), {init} an initialiser's name ("zeros")
    return Msg("Compiling program {n} of {total} ({cell}, {mode}, init {init})…", n=number, total=total,
               cell=Msg(CELLS[static.cell].label), mode=carry_mode_phrase(static.carry_mode),
               init=Msg(CARRY_INITS[static.carry_init].word_en))
