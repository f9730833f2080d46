"""The default executor (``RNNLAB_EXECUTOR=embedded``): work in worker threads of this process, under this
process's :data:`~rnnlab.server.work.gate.GATE`, :data:`~rnnlab.server.work.shared_runs.RUNS` and
:data:`~rnnlab.server.work.results.RESULTS` (or the gate and results it is given: the Ray executor gives the cluster's).

A job is admitted when polled: a result another session has computed (or is computing) under the same key is
taken (or followed) without a slot; other work takes a ticket of the gate and runs in a thread once admitted.
Jobs and queue places nobody has polled for :data:`LEFT_ALONE_S` are cancelled.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

from rnnlab.i18n import Msg
from rnnlab.server.work import gate as gates
from rnnlab.server.work import results as kept_results
from rnnlab.server.work import shared_runs
from rnnlab.server.work.executor import (
    CANCELLED,
    DONE,
    FAILED,
    FINISHED,
    QUEUED,
    RUNNING,
    Cancelled,
    Lease,
    QueueInfo,
    Work,
)
from rnnlab.server.work.gate import Gate, SlotTicket
from rnnlab.server.work.reporting import reporting_to
from rnnlab.training.train import Run

LEFT_ALONE_S = 60.0  # a job nobody has polled for this long is cancelled: nothing runs that nobody waits for
RESULT_MESSAGE = Msg("Someone else on this server is computing exactly this; waiting for their result…")


def ticket_queue(ticket: SlotTicket | None, gate: Gate) -> QueueInfo | None:
    """A waiting ticket's :class:`~rnnlab.server.work.executor.QueueInfo`; None when it is not waiting."""
    if ticket is None or ticket.position < 1:
        return None
    return QueueInfo(ticket.position, gate.waiting_reason(ticket) or "slots", gates.queue_message(ticket, gate))


class TicketLease:
    """A lease on one ticket of this process's gate."""

    def __init__(self, gate: Gate, memory_bytes: int, label: str, client: str):
        self.gate, self.ticket = gate, gate.ticket(memory_bytes, label, client)
        self.last_poll = time.monotonic()

    @property
    def queue(self) -> QueueInfo | None:
        return ticket_queue(self.ticket, self.gate)

    def poll(self, timeout_s: float = 0.0) -> bool:
        self.last_poll = time.monotonic()
        return self.ticket.wait(timeout_s)

    def release(self) -> None:
        self.ticket.release()

    def abandoned(self) -> bool:
        return not self.ticket.admitted and time.monotonic() - self.last_poll > LEFT_ALONE_S


class SharedRunLease:
    """A slot for training a session's run: the shared run of its configuration while others watch it (one slot
    for all its watchers, :class:`rnnlab.server.work.shared_runs.Watch`), else the run alone with a slot of its own.

    ``run`` is the run to train; :meth:`release` returns the session's run afterwards (what was trained, or a copy
    of it when others go on training it).
    """

    def __init__(self, gate: Gate, watch: shared_runs.Watch | None, run: Run, label: str, client: str):
        self.gate, self.watch, self.label, self.client = gate, watch, label, client
        self.run = watch.lead if watch is not None else run
        self.ticket: SlotTicket | None = (gate.ticket(run.config.memory_bytes(), label, client) if watch is None
                                          else None)
        self.kept: Run | None = None

    @property
    def queue(self) -> QueueInfo | None:
        return ticket_queue(self.ticket, self.gate)

    def poll(self, timeout_s: float = 0.0) -> bool:
        if self.watch is None:
            return self.ticket is not None and self.ticket.wait(timeout_s)
        deadline = time.monotonic() + timeout_s
        while self.watch.needs_slot():
            ticket = self.ticket = self.watch.waiting_ticket(
                lambda: self.gate.ticket(self.run.config.memory_bytes(), self.label, self.client))
            if ticket.wait(max(0.0, deadline - time.monotonic())):
                if not self.watch.hold(ticket):
                    ticket.release()
            elif time.monotonic() >= deadline:
                return False
        self.ticket = None
        return True

    def release(self) -> Run:
        """Free the slot (or the place in the queue); the session's run from now on."""
        if self.kept is None:
            if self.watch is None:
                if self.ticket is not None:
                    self.ticket.release()
                self.kept = self.run
            else:
                self.watch.leave()
                self.kept = self.watch.lead if self.watch.last else self.watch.lead.fork()
        return self.kept


class EmbeddedJob:
    """A job of :class:`EmbeddedExecutor`: admitted when polled, run in a worker thread of this process."""

    def __init__(self, executor: EmbeddedExecutor, work: Work, lease: Lease | None):
        self.work, self.lease = work, lease
        self.gate, self.results = executor.gate(), executor.results()
        self.kills: list[Callable[[], None]] = []
        self.last_poll = time.monotonic()
        self._lock = threading.Lock()
        self._status, self._claimed, self._waits_for_result = QUEUED, False, False
        self._ticket: SlotTicket | None = None
        self._progress: float | None = None
        self._note: Msg | str = ""
        self._stop, self._ended = threading.Event(), threading.Event()
        self._value: Any = None
        self._error: BaseException | None = None

    @property
    def status(self) -> str:
        return self._status

    @property
    def progress(self) -> float | None:
        return self._progress

    @property
    def note(self) -> Msg | str:
        return self._note

    @property
    def queue(self) -> QueueInfo | None:
        if self._status != QUEUED:
            return None
        if self._waits_for_result:
            return QueueInfo(0, "result", RESULT_MESSAGE)
        return ticket_queue(self._ticket, self.gate)

    def poll(self, timeout_s: float = 0.0) -> bool:
        """Advance the job for up to ``timeout_s`` seconds; True once it has finished."""
        now = self.last_poll = time.monotonic()
        deadline = now + max(0.0, timeout_s)
        while self._status == QUEUED:
            if not self._admit(deadline):
                return self._status in FINISHED
        if self._status == RUNNING:
            self._ended.wait(max(0.0, deadline - time.monotonic()))
        return self._status in FINISHED

    def result(self) -> Any:
        """The work's value; its exception (:class:`Cancelled` when cancelled before it returned) is raised."""
        if self._status not in FINISHED:
            raise RuntimeError("the job has not finished; poll it until it has")
        if self._error is not None:
            raise self._error
        return self._value

    def cancel(self, force: bool = False) -> None:
        """Stop the job: it leaves the queue, or its work stops at its next :func:`report`; ``force`` also kills
        what it registered with :func:`on_force` at once. Finished jobs are left as they are."""
        with self._lock:
            if self._status in FINISHED:
                return
            self._stop.set()
            if self._status == QUEUED:
                self._finish_queued(CANCELLED, Cancelled("cancelled while queued"))
                return
            if force:
                self._status, self._error = CANCELLED, Cancelled("cancelled")
            kills = list(self.kills) if force else []
        for kill in kills:
            kill()

    # ---- called by the work's thread (report) and by the executor -------------------------------------------
    def reported(self, fraction: float | None, note: Msg | str | None) -> None:
        if fraction is not None:
            self._progress = min(1.0, max(0.0, float(fraction)))
        if note is not None:
            self._note = note
        if self.stopping():
            raise Cancelled("cancelled")

    def stopping(self) -> bool:
        if time.monotonic() - self.last_poll > LEFT_ALONE_S:
            self._stop.set()
        return self._stop.is_set()

    def abandoned(self) -> bool:
        return self._status in (QUEUED, RUNNING) and time.monotonic() - self.last_poll > LEFT_ALONE_S

    # ---- internals ---------------------------------------------------------------------------------------------
    def _admit(self, deadline: float) -> bool:
        """One step from queued towards running; False when the deadline passed first."""
        work, left = self.work, max(0.0, deadline - time.monotonic())
        if work.key is not None and not self._claimed:
            value = self.results.get(work.key)
            if value is not None:
                with self._lock:
                    if self._status == QUEUED:
                        self._value, self._status = value, DONE
                        self._ended.set()
                return True
            self._claimed = self.results.claim(work.key)
            self._waits_for_result = not self._claimed
            if not self._claimed:
                if self.results.get(work.key, wait_s=left) is None and time.monotonic() >= deadline:
                    return False
                return True
        if work.slot and self.lease is None:
            with self._lock:
                if self._status != QUEUED:
                    return True
                if self._ticket is None:
                    self._ticket = self.gate.ticket(work.memory_bytes, work.label or work.kind, work.client)
                ticket = self._ticket
            if not ticket.wait(left):
                return False
        elif work.slot and self.lease is not None and not self.lease.poll(left):  # its slot taken back: wait
            return False
        with self._lock:
            if self._status == QUEUED:
                self._status = RUNNING
                threading.Thread(target=self._run, name=f"rnnlab-{work.kind}", daemon=False).start()
        return True

    def _run(self) -> None:
        value: Any = None
        error: BaseException | None = None
        try:
            with reporting_to(self):
                value = self.work.fn(*self.work.args, **self.work.kwargs)
        except Cancelled as e:
            error = e
        except Exception as e:  # noqa: BLE001 - the work's exception, raised again by result()
            error = e
        finally:
            stopped = self._stop.is_set()
            if self._claimed:
                if error is None and not stopped:
                    self.results.put(self.work.key, value)
                else:
                    self.results.drop(self.work.key)
            if self._ticket is not None:
                self._ticket.release()
            with self._lock:
                if self._status == RUNNING:
                    self._value, self._error = value, error
                    self._status = FAILED if error is not None and not isinstance(error, Cancelled) else (
                        CANCELLED if stopped else DONE)
            self._ended.set()

    def _finish_queued(self, status: str, error: BaseException) -> None:
        if self._ticket is not None:
            self._ticket.release()
        if self._claimed:
            self.results.drop(self.work.key)
        self._status, self._error = status, error
        self._ended.set()


class EmbeddedExecutor:
    """Work in worker threads of this process, under its gate, shared runs and kept results (each defaults to
    the module's server-wide one, looked up when used)."""

    def __init__(self, gate: Gate | None = None, runs: shared_runs.SharedRuns | None = None,
                 results: kept_results.ResultStore | None = None):
        self._gate, self._runs, self._results = gate, runs, results
        self._live: weakref.WeakSet = weakref.WeakSet()

    def gate(self) -> Gate:
        return self._gate or gates.GATE

    def runs(self) -> shared_runs.SharedRuns:
        return self._runs or shared_runs.RUNS

    def results(self) -> kept_results.ResultStore:
        return self._results or kept_results.RESULTS

    def submit(self, work: Work, lease: Lease | None = None) -> EmbeddedJob:
        """A job for ``work`` (inside ``lease``'s slot when given); it starts when polled."""
        self.reap()
        job = EmbeddedJob(self, work, lease)
        self._live.add(job)
        return job

    def lease(self, memory_bytes: int, label: str = "", client: str = "") -> TicketLease:
        """One slot, held until released, for several pieces of work."""
        self.reap()
        lease = TicketLease(self.gate(), memory_bytes, label, client)
        self._live.add(lease)
        return lease

    def run_lease(self, run: Run, label: str = "training", client: str = "") -> SharedRunLease:
        """A slot for training ``run``, shared with the other watchers of its configuration's run; that run when
        another session trained it further and left it."""
        runs = self.runs()
        further = runs.copy_of(run.config, after_step=run.step) if run.pristine else None
        run = further if further is not None else run
        return SharedRunLease(self.gate(), runs.join(run), run, label, client)

    def reap(self) -> None:
        """Cancel jobs and leave queues nobody has polled for :data:`LEFT_ALONE_S`."""
        for thing in list(self._live):
            if not thing.abandoned():
                continue
            if isinstance(thing, EmbeddedJob):
                thing.cancel()
            else:
                thing.release()
