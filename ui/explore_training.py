"""The Explore page's heavy work: runs, training loops that redraw as they go, the zero-carry twin, robustness
and parameter uploads. All of it goes through the seam (:mod:`ui.work`, :mod:`ui.queue`): this module waits,
loops and draws.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import replace

import pandas as pd
import streamlit as st

from rnnlab.config import DURING_RUN, Config, ConfigError
from rnnlab.files import export
from rnnlab.i18n import Msg, t, tn
from rnnlab.server.work import Cancelled
from rnnlab.text import error_text
from rnnlab.training import estimate
from rnnlab.training.train import Run, RunView
from ui import work
from ui.compiling import compile_first
from ui.queue import job_slot
from ui.session import keep_run, session_id, tab_open

CHART_INTERVAL_S = 1.0  # while training, charts are redrawn at most this often (the progress bar every call)

Draw = Callable[[Run | RunView, int], None]  # draws the charts of a run; the int keeps element keys unique
Progress = Callable[..., None]  # draws the progress of a run, with its speed in steps per second when known


def slot(config: Config, what: str, queue) -> AbstractContextManager:
    """Hold one of the server's slots (the queue position shows in ``queue`` meanwhile)."""
    return job_slot(config.memory_bytes(), queue, label=what)


def zero_key(run: Run | RunView) -> tuple:
    """What a run's zero-carry twin depends on."""
    return (run.config.static_key(), run.config.seed, run.config.lr, run.config.clip, run.step)


def follow_settings(run: Run, config: Config) -> None:
    """Give ``run`` the settings it follows while it trains (:data:`rnnlab.config.DURING_RUN`)."""
    dynamic = {k: getattr(config, k) for k in DURING_RUN}
    if dynamic != {k: getattr(run.config, k) for k in dynamic}:
        run.update(**dynamic)


def load_run(file, config: Config) -> tuple[Run | None, Msg]:
    """A new run of ``config`` from an uploaded parameter file, and what to tell (kept: a message rendered when
    shown); None when the file is bad."""
    try:
        loaded = work.load_run(file.getvalue(), file.name, config, st.empty())
    except (export.ExportError, ConfigError) as e:
        why = str(e)
    except Exception as e:  # noqa: BLE001  (a file must never crash the page)
        why = error_text(e)
    else:
        # TRANSLATORS: {file} is the uploaded file's name, {optimizer} an optimiser's name (adam, sgd), {seed} the
        # random seed
        return loaded, Msg(
            "Loaded the parameters in {file}. A new run starts from them at step 0: the file holds only the "
            "parameters, so the optimiser's state ({optimizer}'s running averages, if it keeps any) starts fresh, "
            "and the step count, history and batches start over from seed {seed}. The charts show the loaded "
            "parameters; press Train or Step to train them further.",
            file=file.name, optimizer=config.optimizer, seed=config.seed)
    # TRANSLATORS: {file} is the uploaded file's name; {why} says what is wrong with it
    return None, Msg("{file} was not loaded: {why}. The current run is unchanged.", file=file.name,
                     why=why.rstrip("."))


def robustness(run: Run, cache: dict, keep: tuple[Run, ...], queue) -> pd.DataFrame:
    """``run``'s robustness table, from ``cache`` (computed once per run and step, shared by the server for a
    pristine run); entries of runs other than ``keep`` leave the cache."""
    key = (id(run), run.step)
    for old in [k for k in cache if k[0] not in map(id, keep)]:
        del cache[old]
    if key not in cache:
        cache[key] = work.robustness(run, queue)
    return cache[key]


def compile_pending(config: Config, status, queue, keep_going: Callable[[], bool]) -> bool:
    """Compile the pending ``config`` in a worker, holding a slot; False when it was stopped."""
    with slot(config, "compiling", queue):
        return compile_first(config, status, keep_going)


def train(run: Run, keep: Callable[[Run], None], keep_going: Callable[[], bool], status, queue,
          draw_progress: Progress, draw_charts: Draw) -> None:
    """Train ``run`` until it is done or ``keep_going()`` turns False, redrawing the progress after every call and
    the charts at most every :data:`CHART_INTERVAL_S` (redrawing every chart is the browser's heaviest work).
    A finished run (a class link's run that someone already trained) is shown as it is, taking no slot."""
    if run.done:
        return
    watched = tab_open(session_id())
    with work.training(run, keep, queue) as training:
        lead = training.run
        if not compile_first(lead.config, status, keep_going):
            return
        n, drawn, began, first_step = 0, time.monotonic(), time.monotonic(), lead.step
        while not lead.done and keep_going() and watched():
            trained_call(training, queue)
            keep_run(lead, throttle=True)
            n += 1
            if n == 1:  # the first call may include compiling: the rate counts from its end
                began, first_step = time.monotonic(), lead.step
            view = lead.view()
            rate = (view.step - first_step) / (time.monotonic() - began) if n > 1 else None
            draw_progress(view, rate)  # steps per second of the user's clock, drawing included
            if n == 1 or time.monotonic() - drawn >= CHART_INTERVAL_S:
                draw_charts(view, n)
                drawn = time.monotonic()


class TrainingFailed(Exception):
    """A call of the training failed (e.g. a cluster left without workers); ``message`` says so for the page (kept:
    rendered in the reader's language when shown)."""

    def __init__(self, message: Msg):
        super().__init__(str(message))
        self.message = message


def trained_call(training: work.Training, queue) -> None:
    """One compiled call of ``training``; a failure raises :class:`TrainingFailed` with what to tell: the run stays
    at its last step, and leaving the ``with`` block of :func:`ui.work.training` releases its slot."""
    try:
        training.call(queue)
    except Cancelled:
        raise
    except Exception as e:  # a failed call must not end the page with a traceback
        # TRANSLATORS: {error} is the error's own text, in English (e.g. "RuntimeError: no worker")
        raise TrainingFailed(Msg("Training stopped at step {step}: {error} The run is kept; press Train to go on.",
                                 step=training.run.step, error=error_text(e))) from e


def chunk_end(run: Run) -> int:
    """The step that ends ``run``'s current chunk."""
    return min(run.config.steps, (run.step // run.config.chunk + 1) * run.config.chunk)


def step_once(run: Run, keep: Callable[[Run], None], status, queue, draw_progress: Progress,
              described: str) -> float | None:
    """Train ``run`` to the end of its chunk (``described``: how long that takes); the steps per second, or None
    when its compile was stopped."""
    with work.training(run, keep, queue) as training:
        lead = training.run
        if not compile_first(lead.config, status, lambda: True):
            return None
        began, first_step, target = time.monotonic(), lead.step, chunk_end(lead)
        watched = tab_open(session_id())
        # TRANSLATORS: {time} is an estimate such as "about 2 s (10 steps at about 0.2 s each)"
        with st.spinner(tn("Training one chunk of {n} step: {time}…", "Training one chunk of {n} steps: {time}…",
                           lead.config.chunk, time=described)):
            while not lead.done and lead.step < target and watched():
                trained_call(training, queue)
                draw_progress(lead.view())  # also where a Stop click takes effect
        status.empty()
        trained = lead.step - first_step
    return trained / max(time.monotonic() - began, 1e-9)


def zero_twin(run: Run, queue) -> Run:
    """``run``'s configuration trained as many steps with a fixed zero initial carry (a progress bar meanwhile)."""
    zero_config = replace(run.config, carry_mode="fixed", carry_init="zeros", steps=run.step)
    twin: dict[str, Run] = {}
    # TRANSLATORS: {time} is an estimate such as "about 2 s (50 steps at about 20 ms each)"
    with st.spinner(tn("Training the zero-carry comparison ({n} step, {time})…",
                       "Training the zero-carry comparison ({n} steps, {time})…", run.step,
                       time=estimate.estimate(zero_config).describe())):
        with work.training(work.start_run(zero_config, queue), lambda r: twin.update(run=r), queue,
                           "zero-carry comparison") as training:
            lead = training.run
            bar = st.progress(0.0, text=t("zero-carry comparison: step {step}", step=0))
            watched = tab_open(session_id())
            while not lead.done and watched():
                training.call(queue)
                bar.progress(min(1.0, lead.step / lead.config.steps),
                             text=t("zero-carry comparison: step {step} / {total}", step=lead.step,
                                    total=lead.config.steps))
            bar.empty()
    return twin["run"]
