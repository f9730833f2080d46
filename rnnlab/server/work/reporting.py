"""What work calls between its pieces, wherever it runs: how far it is (:func:`report`, :func:`keep_going`),
whether it should stop (:func:`should_stop`; a gentle cancel stops it at its next report) and what a forced cancel
kills at once (:func:`on_force`). Each goes to the :class:`Reporter` of the calling thread: the job that runs the
work (:func:`reporting_to`), or nothing outside a job.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Protocol

from rnnlab.i18n import Msg
from rnnlab.server.work.executor import Cancelled

_local = threading.local()


class Reporter(Protocol):
    """Where :func:`report`, :func:`should_stop` and :func:`on_force` go from inside work (a job of this process,
    or the job on a web process that waits for a Ray task)."""

    kills: list[Callable[[], None]]

    def reported(self, fraction: float | None, note: Msg | str | None) -> None: ...
    def stopping(self) -> bool: ...


@contextmanager
def reporting_to(reporter: Reporter) -> Iterator[None]:
    """Within the block, work called in this thread reports to ``reporter``."""
    previous = getattr(_local, "job", None)
    _local.job = reporter
    try:
        yield
    finally:
        _local.job = previous


def report(fraction: float | None = None, note: Msg | str | None = None) -> None:
    """From inside work: how far it is (and what it does now: a :class:`~rnnlab.i18n.Msg`, which the page renders
    in its reader's language; work runs in another thread); raises :class:`~rnnlab.server.work.executor.Cancelled`
    when it should stop. Outside a job it does nothing."""
    job = getattr(_local, "job", None)
    if job is not None:
        job.reported(fraction, note)


def keep_going(fraction: float | None = None, note: Msg | str | None = None) -> bool:
    """:func:`report` for callbacks that return False to stop (the work then returns what it has)."""
    try:
        report(fraction, note)
    except Cancelled:
        return False
    return True


def should_stop() -> bool:
    """From inside work: whether it has been asked to stop."""
    job = getattr(_local, "job", None)
    return job is not None and job.stopping()


def on_force(kill: Callable[[], None]) -> None:
    """From inside work: ``kill()`` is called at once when the job is cancelled with ``force``."""
    job = getattr(_local, "job", None)
    if job is not None:
        job.kills.append(kill)
