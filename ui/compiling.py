"""The first compile of a configuration, as a page shows it: a long one is a job of kind "compile" whose worker
process Stop kills."""

from __future__ import annotations

from collections.abc import Callable

from streamlit.runtime import Runtime

from rnnlab.config import Config
from rnnlab.i18n import N_, t
from rnnlab.server.work import CANCELLED, Work, jobs
from rnnlab.training import estimate
from rnnlab.training.program import get_program
from ui.queue import client_id, poll_until_ready, submit
from ui.session import connected, session_id


def compile_first(config: Config, status_slot, keep_going: Callable[[], bool]) -> bool:
    """Make sure ``config``'s program is compiled before a run of it starts; False when the user stopped it.

    Call it holding a slot (the compile takes none of its own). A compile expected to be long runs in a worker
    process (:func:`rnnlab.server.work.jobs.compile_program`) while the status says how long it has taken and should
    take; Stop, leaving the page, closing the tab or the job time limit kill the worker at once (a forced cancel).
    A short one (or a worker that failed) compiles in this process on the first call.
    """
    if get_program(config).is_compiled():
        return True
    expected = estimate.estimate(config, 1).compile_s
    if not jobs.long_compile(config):
        # TRANSLATORS: {expected} is a duration such as "6 s"
        status_slot.info(t("Compiling the training step for this configuration (once per configuration), about "
                           "{expected}…", expected=estimate.format_seconds(expected)), icon=":material/hourglass_top:")
        return True
    me, shown = session_id(), -1
    job = submit(Work(jobs.compile_program, (config, estimate.max_job_seconds()), kind="compile",
                      label=N_("compiling"), client=client_id(), slot=False))

    def draw(waited: float) -> None:
        nonlocal shown
        if int(waited) != shown:  # once a second; also where a Stop click or a page change interrupts the wait
            shown = int(waited)
            # TRANSLATORS: {elapsed} and {expected} are durations such as "12 s"
            status_slot.info(t("Compiling the training step for this configuration (once per configuration): "
                               "{elapsed} so far, about {expected} expected. Stop ends it at once.",
                               elapsed=estimate.format_seconds(shown), expected=estimate.format_seconds(expected)),
                             icon=":material/hourglass_top:")
        if not keep_going() or (Runtime.exists() and not connected(me)):  # stopped, or the tab is gone
            job.cancel(force=True)

    try:
        poll_until_ready(job, draw)
    finally:
        job.cancel(force=True)
    return job.status != CANCELLED and bool(job.result())


def compiles_in_worker(config: Config) -> bool:
    """Whether a new run of ``config`` should wait for a worker's compile (in the page body, where Stop acts)
    instead of being built at once (in a button's callback, where nothing can interrupt it)."""
    return jobs.long_compile(config)
