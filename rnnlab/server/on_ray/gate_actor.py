"""State the web processes of a Ray cluster share, as named detached actors on the head node: the gate.

:class:`GateActor` holds a :class:`~rnnlab.server.work.gate.JobGate` (its fair shares, memory budget and queue) behind
one call that never blocks, :meth:`GateActor.sync`: a web process (an *owner*) sends every ticket it holds and
the ones it released, and gets back each ticket's place and why it waits. A ticket is known by its owner and a
number the owner gave it; whatever the actor does not know yet it registers, so the same call enqueues new
tickets and, after the actor restarted (``max_restarts``), registers the live ones again (admitted ones as
admitted). A restarted actor admits nothing for :data:`RECOVER_S`, until every live owner has told it what it
holds: no ticket is admitted twice. An owner not heard from for :data:`LEASE_S` loses its tickets (a web process
that died frees its slots).

:class:`RemoteGate` is that actor seen from a web process with :class:`~rnnlab.server.work.gate.JobGate`'s interface
(``ticket``, ``waiting_reason``, ``counts``, ...), so :class:`~rnnlab.server.work.embedded.EmbeddedExecutor` and
:func:`~rnnlab.server.work.gate.queue_message` use it unchanged. One poller thread per web process makes one
:meth:`GateActor.sync` call per :data:`POLL_S` (:data:`IDLE_POLL_S` while nothing waits) for all its tickets
and caches the answers; script threads read that cache and wait on it with a timeout, never on Ray.
"""

from __future__ import annotations

import atexit
import itertools
import os
import threading
import time
import uuid
import weakref
from typing import Any

import ray

from rnnlab.device import memory_budget_bytes
from rnnlab.server.on_ray.actors import LEASE_S, POLL_S, shared_actor
from rnnlab.server.work.gate import JobGate, Ticket

GATE_NAME = "rnnlab-gate"
RECOVER_S = 2.0  # a restarted gate admits nothing for this long: the owners register their live tickets first
IDLE_POLL_S = 1.0  # a web process's poller syncs every POLL_S while one of its tickets waits, this often otherwise
CALL_TIMEOUT_S = 10.0  # a sync (the poller's, and the first summary on connecting) waits this long at most
FIRST_STATE_S = 1.0  # a new ticket waits this long at most for its first place in the queue

TicketInfo = tuple[int, str, str, bool, "int | None"]  # (memory bytes, label, client, admitted, gate's number)
_polling: weakref.WeakSet = weakref.WeakSet()  # gates whose poller runs: stopped at exit, before Ray shuts down


def reconstructed() -> bool:
    """Whether this is a Ray actor that was restarted (False outside an actor)."""
    if not ray.is_initialized():
        return False
    try:
        return bool(ray.get_runtime_context().was_current_actor_reconstructed)
    except Exception:  # noqa: BLE001 - not in an actor
        return False


class GateActor:
    """A :class:`JobGate` shared by the cluster's web processes; every method returns at once."""

    def __init__(self, limit: int, budget_bytes: int, per_client: int | None = None, lease_s: float = LEASE_S,
                 recover_s: float = RECOVER_S):
        self.gate = JobGate(limit, budget=lambda: budget_bytes, per_client=per_client)
        self.lease_s, self.recover_s = lease_s, recover_s
        self.tickets: dict[tuple[str, int], Ticket] = {}
        self.seen: dict[str, float] = {}
        self.recovering_until = 0.0
        self.restarted = reconstructed()
        if self.restarted:
            self.begin_recovery()

    def begin_recovery(self) -> None:
        """Admit nothing for ``recover_s``: the owners' next syncs register the tickets they hold."""
        self.recovering_until = time.monotonic() + self.recover_s
        self.gate.pause()

    def sync(self, owner: str, live: dict[int, TicketInfo], released: list[int]) -> dict[str, Any]:
        """``owner``'s poll: ``live`` its tickets (registered when unknown), ``released`` those it let go. Per live
        ticket (position: 0 admitted, >= 1 waiting; why it waits; the gate's number), and :meth:`summary`."""
        now = time.monotonic()
        self.heartbeat(owner, now)
        for key in released:
            ticket = self.tickets.pop((owner, key), None)
            if ticket is not None:
                ticket.release()
        for key, (memory_bytes, label, client, admitted, number) in live.items():
            if (owner, key) not in self.tickets:
                if admitted or number is not None:
                    ticket = self.gate.restore(memory_bytes, label, client, admitted, number)
                else:
                    ticket = self.gate.ticket(memory_bytes, label, client)
                self.tickets[(owner, key)] = ticket
        if self.recovering_until and now >= self.recovering_until:
            self.recovering_until = 0.0
            self.gate.resume()
        states = {}
        for key in live:
            ticket = self.tickets[(owner, key)]
            states[key] = (ticket.position, self.gate.waiting_reason(ticket), ticket.number)
        return {"states": states, "summary": self.summary()}

    def heartbeat(self, owner: str, now: float | None = None) -> None:
        """``owner`` is alive; owners not heard from for ``lease_s`` lose their tickets."""
        now = time.monotonic() if now is None else now
        self.seen[owner] = now
        gone = {o for o, t in self.seen.items() if now - t > self.lease_s}
        for (o, key), ticket in list(self.tickets.items()):
            if o in gone:
                del self.tickets[(o, key)]
                ticket.release()
        for o in gone:
            del self.seen[o]

    def summary(self) -> dict[str, Any]:
        running, waiting = self.gate.counts()
        return {"limit": self.gate.limit, "per_client": self.gate.per_client,
                "per_address": self.gate.per_address, "running": running,
                "waiting": waiting, "available_bytes": self.gate.available_bytes(), "owners": len(self.seen),
                "lease_s": self.lease_s, "restarted": self.restarted, "recovering": bool(self.recovering_until),
                "pid": os.getpid()}


def gate_actor(limit: int | None = None, budget_bytes: int | None = None, per_client: int | None = None,
               lease_s: float = LEASE_S, recover_s: float = RECOVER_S):
    """The cluster's gate actor, created on the head node when none runs (``limit``: the cluster's CPUs by
    default; ``budget_bytes``: this machine's memory budget); Ray restarts it when its process dies. Needs
    :func:`ray.init` first."""
    if limit is None:
        limit = max(1, int(ray.cluster_resources().get("CPU", 1)))
    if budget_bytes is None:
        budget_bytes = memory_budget_bytes()
    return shared_actor(GateActor, GATE_NAME, limit, budget_bytes, per_client, lease_s, recover_s)


class RemoteTicket:
    """A ticket of the gate actor, with :class:`~rnnlab.server.work.gate.Ticket`'s interface, read from the web
    process's cache."""

    def __init__(self, gate: RemoteGate, key: int, memory_bytes: int, label: str, client: str):
        self.gate, self.key = gate, key
        self.memory_bytes, self.label, self.client = int(memory_bytes), label, client
        self.admitted = self.released = False
        self.number: int | None = None  # the gate's, once it has answered
        self.state: tuple[int, str] | None = None  # (position, why it waits) as last heard

    @property
    def position(self) -> int:
        """0 once admitted, else the place in the queue as last heard (1 before the gate has answered); -1 once
        released."""
        if self.released:
            return -1
        if self.admitted:
            return 0
        return max(1, self.state[0]) if self.state is not None else 1

    def wait(self, timeout: float | None = None) -> bool:
        """Wait up to ``timeout`` seconds for the poller to hear that this ticket is admitted; True once it is."""
        return self.gate.wait_admitted(self, timeout)

    def release(self) -> None:
        """Leave the queue or free the slot (idempotent; the gate hears of it at the next sync)."""
        self.gate.forget(self)

    def __enter__(self) -> RemoteTicket:
        return self

    def __exit__(self, *exc) -> None:
        self.release()


class RemoteGate:
    """The gate actor from this web process, as a :class:`JobGate` (what the executor and the queue messages
    use): one poller thread syncs all this process's tickets with it; nothing else here waits on Ray."""

    def __init__(self, actor, timeout_s: float = CALL_TIMEOUT_S, poll_s: float = POLL_S,
                 idle_poll_s: float = IDLE_POLL_S):
        self.actor, self.timeout_s, self.poll_s, self.idle_poll_s = actor, timeout_s, poll_s, idle_poll_s
        self.owner = uuid.uuid4().hex
        self.calls = 0  # syncs answered
        self.reachable = True  # whether the last sync was answered
        self._cond = threading.Condition()
        self._live: dict[int, RemoteTicket] = {}
        self._released: list[int] = []
        self._keys = itertools.count(1)
        self._wake, self._closed = threading.Event(), threading.Event()
        self._poller: threading.Thread | None = None
        self._summary: dict[str, Any] = self.call("summary")

    @classmethod
    def named(cls) -> RemoteGate:
        """The cluster's gate (:func:`gate_actor`), created when none runs."""
        return cls(gate_actor())

    def call(self, method: str, *args: Any) -> Any:
        """The actor's ``method(*args)``, waited for up to ``timeout_s`` (by the poller, and once at the start)."""
        return ray.get(getattr(self.actor, method).remote(*args), timeout=self.timeout_s)

    # ---- JobGate's interface ------------------------------------------------------------------------------
    @property
    def limit(self) -> int:
        return self._summary["limit"]

    @property
    def per_client(self) -> int:
        return self._summary["per_client"]

    @property
    def per_address(self) -> int:
        return self._summary["per_address"]

    def ticket(self, memory_bytes: int = 0, label: str = "", client: str = "") -> RemoteTicket:
        """Join the queue; waits up to :data:`FIRST_STATE_S` for the gate's first answer (admitted at once when a
        slot, the memory and the client's share allow)."""
        with self._cond:
            ticket = RemoteTicket(self, next(self._keys), memory_bytes, label, client)
            self._live[ticket.key] = ticket
            self._start()
        self._wake.set()
        with self._cond:
            self._cond.wait_for(lambda: ticket.state is not None or ticket.released, FIRST_STATE_S)
        return ticket

    def counts(self) -> tuple[int, int]:
        """(running, waiting) as last heard."""
        return self._summary["running"], self._summary["waiting"]

    def available_bytes(self) -> int:
        return self._summary["available_bytes"]

    def waiting_reason(self, ticket: RemoteTicket) -> str:
        if ticket.admitted or ticket.released:
            return ""
        return ticket.state[1] if ticket.state is not None and ticket.state[1] else "slots"

    def summary(self) -> dict[str, Any]:
        """The gate's counts and settings as last heard (see :meth:`GateActor.summary`)."""
        return dict(self._summary)

    # ---- used by RemoteTicket -----------------------------------------------------------------------------
    def wait_admitted(self, ticket: RemoteTicket, timeout: float | None) -> bool:
        with self._cond:
            if ticket.released:
                raise RuntimeError("this ticket was released; ask for a new one")
            self._cond.wait_for(lambda: ticket.admitted or ticket.released, timeout)
            return ticket.admitted and not ticket.released

    def forget(self, ticket: RemoteTicket) -> None:
        with self._cond:
            if ticket.released:
                return
            ticket.released = True
            self._live.pop(ticket.key, None)
            self._released.append(ticket.key)
            self._cond.notify_all()
        self._wake.set()

    def close(self) -> None:
        """Stop the poller (at exit: before Ray shuts down under it)."""
        self._closed.set()
        self._wake.set()
        poller = self._poller
        if poller is not None and poller is not threading.current_thread():
            poller.join(self.timeout_s)

    # ---- the poller ---------------------------------------------------------------------------------------
    def _start(self) -> None:
        if not self._closed.is_set() and (self._poller is None or not self._poller.is_alive()):
            if not _polling:
                atexit.register(close_all)
            _polling.add(self)
            self._poller = threading.Thread(target=self._poll, name="rnnlab-gate-poller", daemon=True)
            self._poller.start()

    def _poll(self) -> None:
        while not self._closed.is_set():
            self._wake.clear()
            answered = self.sync_once()
            with self._cond:
                busy = not answered or bool(self._released) or any(not t.admitted for t in self._live.values())
            self._wake.wait(self.poll_s if busy else min(self.idle_poll_s, self._summary["lease_s"] / 4))

    def sync_once(self) -> bool:
        """One :meth:`GateActor.sync` for all this process's tickets; False when the actor did not answer."""
        with self._cond:
            live: dict[int, TicketInfo] = {k: (t.memory_bytes, t.label, t.client, t.admitted, t.number)
                                           for k, t in self._live.items()}
            released = list(self._released)
        try:
            got = self.call("sync", self.owner, live, released)
        except Exception:  # noqa: BLE001 - the actor restarts or the cluster is away; the next sync tries again
            self.reachable = False
            return False
        with self._cond:
            self.calls += 1
            self.reachable = True
            self._summary = got["summary"]
            del self._released[:len(released)]
            for key, (position, reason, number) in got["states"].items():
                ticket = self._live.get(key)
                if ticket is not None:
                    ticket.number, ticket.state = number, (position, reason)
                    ticket.admitted = position == 0  # a restarted gate beyond its slots may take one back
            self._cond.notify_all()
        return True


def close_all() -> None:
    """Stop every gate's poller of this process."""
    for gate in list(_polling):
        gate.close()
