"""Pristine runs trained once for all the web processes of a cluster, through the results store they share.

Within one web process, the sessions watching a pristine run share one :class:`~rnnlab.training.train.Run`
(:mod:`rnnlab.server.work.shared_runs`). Across web processes each holds a run of its own, and what they share is its
compiled calls: training is deterministic, so the call of configuration C from step s is the same whoever computes
it. :func:`shared_call_job` claims ``(CALL, C, s)`` in the store every process shares (on a cluster, the results
actor: :class:`rnnlab.server.on_ray.registry.RemoteResults`); the process that gets the claim computes the call and
keeps it there as (steps, bytes), and the others apply it as it is (:meth:`~rnnlab.training.train.Run.take_call`)
instead of computing it again. A process that dies mid-call loses its claim with its lease, and the next to ask computes
it. A finished pristine run is kept whole (``(RUN, C)``: a run file's bytes), so that :func:`start_run` in any
process gives it at once, finished: that session trains nothing and waits for no slot.

With no shared store (``results`` None) these are :func:`rnnlab.server.work.jobs.call_job` and
:func:`rnnlab.server.work.jobs.start_run`. A new run can also be made elsewhere (``make``: on a Ray worker) and read
back here as bytes, so that a web process on a cluster computes and compiles nothing for it.
"""

from __future__ import annotations

from collections.abc import Callable

from rnnlab.config import Config
from rnnlab.server.storage import run_files
from rnnlab.server.work import jobs, reporting
from rnnlab.server.work.results import ResultStore
from rnnlab.server.work.shared_runs import RUNS
from rnnlab.training import calls
from rnnlab.training.history import CallProgress
from rnnlab.training.train import Run

CALL, RUN = "trained call", "finished run"
Compute = Callable[[Config, dict, int], calls.CallResult]  # computes a call (calls.compute_call or a drop-in)
WAIT_S = 0.5  # a call another process computes is waited for this long per job; the page polls in between


def call_key(config: Config, step: int) -> tuple:
    """The key of configuration ``config``'s compiled call that starts at ``step``."""
    return (CALL, config, step)


def run_key(config: Config) -> tuple:
    """The key of ``config``'s finished pristine run."""
    return (RUN, config)


def start_run(config: Config, results: ResultStore | None = None, make: Callable[[Config], bytes] | None = None) -> Run:
    """A run of ``config``: a copy of this process's run of it, else of the finished run another process kept in
    ``results``, else a new one (:func:`untrained_run`)."""
    local = RUNS.copy_of(config)
    if local is not None:
        return local
    data = results.get(run_key(config)) if results is not None else None
    if isinstance(data, bytes):
        try:
            kept = run_files.run_from_bytes(data)
        except (ValueError, KeyError, TypeError):
            kept = None
        if kept is not None and kept.pristine and kept.config == config and kept.done:
            RUNS.offer(kept)
            return RUNS.copy_of(config) or kept.fork()
    return untrained_run(config, make)


def untrained_run(config: Config, make: Callable[[Config], bytes] | None = None) -> Run:
    """A new run of ``config``, never a shared one: made here, or by ``make`` elsewhere (a worker) as a run file's
    bytes (:func:`rnnlab.server.work.jobs.untrained_run_bytes`) and read back here without computing anything."""
    if make is None:
        return Run(config)
    return run_files.run_from_bytes(make(config))


def shared_call_job(run: Run, max_seconds: float | None, results: ResultStore | None = None,
                    compute: Compute = calls.compute_call) -> CallProgress | None:
    """The next compiled call of ``run`` (:func:`rnnlab.server.work.jobs.call_job`), computed once for every process
    sharing ``results``: taken from there when another process computed it, computed with ``compute`` and kept there
    when this one claims it, else waited for up to :data:`WAIT_S` (None then, as while another session's call runs)."""
    if results is None or not run.pristine or run.done:
        return jobs.call_job(run, max_seconds, compute=compute)
    step = run.step
    key = call_key(run.config, step)
    found = results.get(key)
    if found is None:
        if results.claim(key):
            return _compute(run, step, key, max_seconds, results, compute)
        found = results.get(key, wait_s=WAIT_S)
    progress = None
    if found is not None:
        n_active, data = found
        progress = run.take_call(step, int(n_active), calls.result_from_bytes(run.config, data))
    reporting.report(run.step / max(1, run.config.steps))
    keep_finished(run, results)
    return progress


def keep_finished(run: Run, results: ResultStore) -> None:
    """Keep a finished pristine ``run`` whole in ``results`` (once: the first process to claim it)."""
    if not (run.done and run.pristine):
        return
    key = run_key(run.config)
    if not results.claim(key):
        return
    try:
        data = run_files.run_to_bytes(run)
    except BaseException:
        results.drop(key)
        raise
    results.put(key, data)


def _compute(run: Run, step: int, key: tuple, max_seconds: float | None, results: ResultStore,
             compute: Compute) -> CallProgress | None:
    kept = False

    def shared(config: Config, state: dict, n_active: int) -> calls.CallResult:
        nonlocal kept
        result = compute(config, state, n_active)
        if run.step == step:  # this thread holds the run: it is where the claim was made
            results.put(key, (n_active, calls.result_to_bytes(result)))
            kept = True
        return result

    try:
        progress = run.run_call(max_seconds, wait=False, compute=shared)
    finally:
        if not kept:
            results.drop(key)
    reporting.report(run.step / max(1, run.config.steps))
    keep_finished(run, results)
    return progress
