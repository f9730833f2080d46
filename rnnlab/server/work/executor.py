"""The seam through which every piece of heavy work a user starts reaches the server's slots and JAX: its
interface.

A :class:`Work` is a module-level function with plain arguments, what kind of work it is, a label for the queue,
its memory estimate, who asks (for fair shares) and, for work computed once for everyone, a ``key``. An
:class:`Executor` turns it into a :class:`Job` the caller polls: queued (its place and why it waits, in words),
running (the fraction done it reports), then done, failed or cancelled. Nothing assumes the work runs in the
caller's thread or process: the caller only polls, reads and cancels. A :class:`Lease` is one slot held across
several pieces of work; a :class:`RunLease` holds one for a run that watchers of one configuration share.

Around this interface:

- :mod:`rnnlab.server.work.reporting`: what work calls between its pieces (progress, where a cancel stops it).
- :mod:`rnnlab.server.work.embedded`: :class:`~rnnlab.server.work.embedded.EmbeddedExecutor`, work in a worker
  thread of this process (``RNNLAB_EXECUTOR=embedded``, the default).
- :mod:`rnnlab.server.on_ray`: the same interface with the computing on a Ray cluster (``RNNLAB_EXECUTOR=ray``).
- :mod:`rnnlab.server.work.executors`: which of them serves this process
  (:func:`~rnnlab.server.work.executors.current_executor`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from rnnlab.i18n import Msg
from rnnlab.training.train import Run

ENV_EXECUTOR = "RNNLAB_EXECUTOR"  # which executor serves a process: rnnlab.server.work.executors
EXECUTORS = ("embedded", "ray")
QUEUED, RUNNING, DONE, FAILED, CANCELLED = "queued", "running", "done", "failed", "cancelled"
FINISHED = frozenset({DONE, FAILED, CANCELLED})


class Cancelled(Exception):
    """The job was cancelled: raised by :func:`rnnlab.server.work.reporting.report` inside the work, and by
    :meth:`Job.result`."""


@dataclass(frozen=True)
class Work:
    """One piece of heavy work: ``fn(*args, **kwargs)``, with ``fn`` a module-level function.

    ``slot``: False for light work that runs without a server slot. ``key``: the same key is computed once for
    everyone (a session asking while another computes it waits, holding no slot); None: not shared.
    """

    fn: Callable[..., Any]
    args: tuple = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    kind: str = "work"
    label: str = ""
    memory_bytes: int = 0
    client: str = ""
    key: Hashable | None = None
    slot: bool = True

    def __post_init__(self) -> None:
        name = getattr(self.fn, "__qualname__", "")
        if not name or "<" in name or "." in name or not getattr(self.fn, "__module__", None):
            raise ValueError(f"work must be a module-level function, not {self.fn!r}")


@dataclass(frozen=True)
class QueueInfo:
    """Why a job or lease waits: ``reason`` 'slots', 'memory', 'share' or 'result' (another session computes
    it); ``position`` its place in the queue (0 while it waits for a result); ``message`` what the user reads: a
    :class:`~rnnlab.i18n.Msg` that the page renders (``str``) in the reader's language."""

    position: int
    reason: str
    message: Msg | str


class Job(Protocol):
    """One submitted :class:`Work`: polled until it has finished, then read or cancelled."""

    work: Work

    @property
    def status(self) -> str: ...
    @property
    def queue(self) -> QueueInfo | None: ...
    @property
    def progress(self) -> float | None: ...
    @property
    def note(self) -> Msg | str: ...
    def poll(self, timeout_s: float = 0.0) -> bool: ...
    def result(self) -> Any: ...
    def cancel(self, force: bool = False) -> None: ...


class Lease(Protocol):
    """One slot held across several pieces of work; poll until admitted, release when done."""

    @property
    def queue(self) -> QueueInfo | None: ...
    def poll(self, timeout_s: float = 0.0) -> bool: ...
    def release(self) -> object: ...


class RunLease(Protocol):
    """A slot for training a session's run, shared with the other sessions watching the same configuration:
    ``run`` is the run to train; :meth:`release` returns the session's run afterwards."""

    run: Run

    @property
    def queue(self) -> QueueInfo | None: ...
    def poll(self, timeout_s: float = 0.0) -> bool: ...
    def release(self) -> Run: ...


class Executor(Protocol):
    """Turns work into jobs, and holds slots for leases and runs."""

    def submit(self, work: Work, lease: Lease | None = None) -> Job: ...
    def lease(self, memory_bytes: int, label: str = "", client: str = "") -> Lease: ...
    def run_lease(self, run: Run, label: str = "", client: str = "") -> RunLease: ...


def executor_name() -> str:
    """``$RNNLAB_EXECUTOR`` ('embedded' when unset); ValueError naming the allowed values."""
    name = os.environ.get(ENV_EXECUTOR, "").strip() or "embedded"
    if name not in EXECUTORS:
        raise ValueError(f"{ENV_EXECUTOR} must be one of {', '.join(EXECUTORS)}; got {name!r}")
    return name
