"""A page's heavy work on runs, through the executor (:mod:`ui.queue`): starting, loading and training runs, and
probing them. Each function submits a :class:`~rnnlab.server.work.executor.Work` of :mod:`rnnlab.server.work.jobs` and
waits for it on the page; none computes anything itself.

Labels and progress texts are marked (``N_``) and stay English in the work (the queue's ledger reads them); the
progress bar shows them in the reader's language (:func:`ui.progress.progress_bar`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from rnnlab.config import Config
from rnnlab.i18n import N_, _, t
from rnnlab.model.cells import CELLS
from rnnlab.model.tasks import TASKS
from rnnlab.server.work import RunLease, Work, current_executor, jobs
from rnnlab.training import estimate
from rnnlab.training.history import CallProgress
from rnnlab.training.program import is_compiled
from rnnlab.training.train import CALL_SECONDS, Run
from ui.queue import client_id, poll_until_ready, run_job, show_queue


def start_run(config: Config, placeholder=None) -> Run:
    """A run of ``config`` (``Run(config)``: an initialisation and one evaluation), or a copy of the one another
    session trained. It takes no slot of its own: a page builds the run before it draws its buttons, and the
    run's training (where Stop acts) is what waits for a slot."""
    compiled = is_compiled(config)
    names = {"cell": _(CELLS[config.cell].label), "task": _(TASKS[config.task].label)}
    # TRANSLATORS: what the page waits for; {cell} is a cell's name, {task} a task's name
    what = t("Starting a run of {cell} on {task}", **names) if compiled else \
        t("Starting a run of {cell} on {task}: compiling its model (once per configuration)", **names)
    return run_job(Work(jobs.start_run, (config,), kind="start run", label=N_("starting a run"),
                        memory_bytes=config.memory_bytes(), client=client_id(), slot=False), placeholder,
                   progress=what, expected_s=None if compiled else estimate.estimate(config, 0).compile_s)


def untrained_run(config: Config, placeholder=None) -> Run:
    """The untrained model of ``config`` that a page probes (never a run someone trains): built once for everyone
    who asks and shared, read only; like :func:`start_run`, without a slot of its own (the probes of it take one)."""
    return run_job(Work(jobs.untrained_run, (config,), kind="start run", label=N_("building the untrained model"),
                        memory_bytes=config.memory_bytes(), client=client_id(), slot=False,
                        key=("untrained run", config)), placeholder)


def load_run(data: bytes, name: str, config: Config, placeholder=None) -> Run:
    """A new run of ``config`` from a parameter file's ``data`` (its errors raised: ExportError, ConfigError)."""
    return run_job(Work(jobs.load_run, (data, name, config), kind="upload", label=N_("parameter upload"),
                        memory_bytes=config.memory_bytes(), client=client_id()), placeholder)


def probe(fn: Callable, run: Run, label: str, what: str, placeholder=None) -> pd.DataFrame:
    """``fn`` (a probe of :mod:`rnnlab.server.work.jobs` taking a :class:`~rnnlab.server.work.jobs.Model`) of ``run``,
    with a progress bar saying ``what``; computed once for everyone for a pristine run (its configuration and step)."""
    key = (label, run.config, run.step) if run.pristine else None
    return run_job(Work(fn, (jobs.Model.of(run),), kind="probe", label=label, memory_bytes=run.config.memory_bytes(),
                        client=client_id(), key=key), placeholder, progress=what)


def robustness(run: Run, placeholder=None) -> pd.DataFrame:
    """``run``'s losses from other starts (nine small evaluations), with a progress bar."""
    return probe(jobs.robustness, run, N_("robustness check"), N_("Starting the model elsewhere"), placeholder)


@dataclass
class Training:
    """A run being trained in a held slot (:func:`training`): ``run`` is the run to train."""

    run: Run
    lease: RunLease

    def call(self, placeholder=None) -> CallProgress | None:
        """One compiled call of the run (about :data:`CALL_SECONDS`), or, while another watcher's call on it is in
        progress, a wait for that one (None then)."""
        run = self.run
        # TRANSLATORS: said when a compiled call of training takes long (the first one compiles first)
        what = t("Training from step {step} of {steps}: the first call compiles the training step first",
                 step=run.step, steps=run.config.steps)
        return run_job(Work(jobs.call_job, (run, CALL_SECONDS), kind="train call", label=N_("training"),
                            client=client_id()), placeholder, lease=self.lease, progress=what,
                       quiet_s=3 * CALL_SECONDS)  # the progress bar shows the training; a long call says why


@contextmanager
def training(run: Run, keep: Callable[[Run], None], placeholder=None, what: str = "training") -> Iterator[Training]:
    """The run to train for the session's ``run``, with a slot held for the ``with`` body: the shared run of the
    same configuration and seed (identical steps computed once, for everyone watching it; one slot for all of
    them), or ``run`` alone. ``keep`` receives the session's run afterwards: what was trained (a copy of it when
    others go on training it)."""
    placeholder = placeholder if placeholder is not None else st.empty()
    lease = current_executor().run_lease(run, what, client_id())
    try:
        poll_until_ready(lease, lambda _waited: show_queue(placeholder, lease.queue))
        placeholder.empty()
        yield Training(lease.run, lease)
    finally:
        keep(lease.release())
