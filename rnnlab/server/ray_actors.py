"""State the web processes of a Ray cluster share, as named detached actors on the head node: for now the gate.

:class:`GateActor` holds a :class:`~rnnlab.server.gate.JobGate` (its fair shares, memory budget and queue) behind
calls that never block: a ticket is a number; admission happens when tickets join or leave. Each web process is
an *owner* that renews its lease (:data:`LEASE_S`) while it holds tickets, so the tickets of a web process that
died are released within seconds.

:class:`RemoteGate` is that actor seen from a web process with :class:`~rnnlab.server.gate.JobGate`'s interface
(``ticket``, ``waiting_reason``, ``counts``, ...), so :class:`~rnnlab.server.executor.EmbeddedExecutor` and
:func:`~rnnlab.server.gate.queue_message` use it unchanged: ``EmbeddedExecutor(gate=RemoteGate.named())``. A
ticket's :meth:`RemoteTicket.wait` asks the actor every :data:`POLL_S`.
"""

from __future__ import annotations

import threading
import time
import uuid

import ray

from rnnlab.device import memory_budget_bytes
from rnnlab.server.gate import JobGate, Ticket

GATE_NAME = "rnnlab-gate"
NAMESPACE = "rnnlab"
LEASE_S = 6.0  # an owner (web process) not heard from for this long has its tickets released
POLL_S = 0.1
HEAD = {"node:__internal_head__": 0.001}  # a resource only the head node has: the actor lives there


class GateActor:
    """A :class:`JobGate` shared by the cluster's web processes; every method returns at once."""

    def __init__(self, limit: int, budget_bytes: int, per_client: int | None = None, lease_s: float = LEASE_S):
        self.gate = JobGate(limit, budget=lambda: budget_bytes, per_client=per_client)
        self.lease_s = lease_s
        self.tickets: dict[int, tuple[str, Ticket]] = {}
        self.seen: dict[str, float] = {}

    def enqueue(self, owner: str, memory_bytes: int, label: str, client: str) -> int:
        """A new ticket's number; it may be admitted at once."""
        self.heartbeat(owner)
        ticket = self.gate.ticket(memory_bytes, label, client)
        self.tickets[ticket.number] = (owner, ticket)
        return ticket.number

    def state(self, owner: str, numbers: list[int]) -> dict[int, tuple[int, str]]:
        """Per ticket number: (position: 0 admitted, >= 1 waiting, -1 unknown or released; why it waits)."""
        self.heartbeat(owner)
        out = {}
        for number in numbers:
            held = self.tickets.get(number)
            if held is None:
                out[number] = (-1, "")
            else:
                out[number] = (held[1].position, self.gate.waiting_reason(held[1]))
        return out

    def release(self, owner: str, number: int) -> None:
        held = self.tickets.pop(number, None)
        if held is not None:
            held[1].release()

    def heartbeat(self, owner: str) -> None:
        """``owner`` is alive; owners not heard from for ``lease_s`` lose their tickets."""
        now = time.monotonic()
        self.seen[owner] = now
        gone = {o for o, t in self.seen.items() if now - t > self.lease_s}
        for number, (o, ticket) in list(self.tickets.items()):
            if o in gone:
                del self.tickets[number]
                ticket.release()
        for o in gone:
            del self.seen[o]

    def summary(self) -> dict:
        running, waiting = self.gate.counts()
        return {"limit": self.gate.limit, "per_client": self.gate.per_client, "running": running,
                "waiting": waiting, "available_bytes": self.gate.available_bytes(), "owners": len(self.seen),
                "lease_s": self.lease_s}


def gate_actor(limit: int | None = None, budget_bytes: int | None = None, per_client: int | None = None,
               lease_s: float = LEASE_S):
    """The cluster's gate actor, created on the head node when none runs (``limit``: the cluster's CPUs by
    default; ``budget_bytes``: this machine's memory budget). Needs :func:`ray.init` first."""
    if limit is None:
        limit = max(1, int(ray.cluster_resources().get("CPU", 1)))
    if budget_bytes is None:
        budget_bytes = memory_budget_bytes()
    cls = ray.remote(GateActor)
    return cls.options(name=GATE_NAME, namespace=NAMESPACE, lifetime="detached", get_if_exists=True,
                       max_restarts=-1, num_cpus=0, resources=HEAD).remote(limit, budget_bytes, per_client, lease_s)


class RemoteTicket:
    """A ticket of the gate actor, with :class:`~rnnlab.server.gate.Ticket`'s interface."""

    def __init__(self, gate: RemoteGate, number: int, memory_bytes: int, label: str, client: str):
        self.scheduler, self.number = gate, number
        self.memory_bytes, self.label, self.client = int(memory_bytes), label, client
        self.admitted = self.released = False

    @property
    def position(self) -> int:
        if self.released:
            return -1
        return 0 if self.admitted else self.scheduler.ticket_state(self)[0]

    def wait(self, timeout: float | None = None) -> bool:
        """Ask the actor every :data:`POLL_S` for up to ``timeout`` seconds; True once admitted."""
        if self.released:
            raise RuntimeError("this ticket was released; ask for a new one")
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self.admitted:
            self.scheduler.ticket_state(self)
            if self.admitted or (deadline is not None and time.monotonic() >= deadline):
                break
            time.sleep(POLL_S if deadline is None else max(0.0, min(POLL_S, deadline - time.monotonic())))
        return self.admitted

    def release(self) -> None:
        if not self.released:
            self.released = True
            self.scheduler.forget(self)

    def __enter__(self) -> RemoteTicket:
        return self

    def __exit__(self, *exc) -> None:
        self.release()


class RemoteGate:
    """The gate actor from this web process, as a :class:`JobGate` (what the executor and the queue messages
    use). A thread renews this process's lease while it holds tickets."""

    def __init__(self, actor, timeout_s: float = 10.0):
        self.actor, self.timeout_s = actor, timeout_s
        self.owner = uuid.uuid4().hex
        self._held: dict[int, RemoteTicket] = {}
        self._lock = threading.Lock()
        self._beating: threading.Thread | None = None
        self._summary = ray.get(actor.summary.remote(), timeout=timeout_s)

    @classmethod
    def named(cls) -> RemoteGate:
        """The cluster's gate (:func:`gate_actor`), created when none runs."""
        return cls(gate_actor())

    def call(self, method, *args):
        return ray.get(method.remote(*args), timeout=self.timeout_s)

    # ---- JobGate's interface ------------------------------------------------------------------------------
    @property
    def limit(self) -> int:
        return self._summary["limit"]

    @property
    def per_client(self) -> int:
        return self._summary["per_client"]

    def ticket(self, memory_bytes: int = 0, label: str = "", client: str = "") -> RemoteTicket:
        number = self.call(self.actor.enqueue, self.owner, int(memory_bytes), label, client)
        ticket = RemoteTicket(self, number, memory_bytes, label, client)
        with self._lock:
            self._held[number] = ticket
        self.ticket_state(ticket)
        self._keep_alive()
        return ticket

    def counts(self) -> tuple[int, int]:
        self._summary = self.call(self.actor.summary)
        return self._summary["running"], self._summary["waiting"]

    def available_bytes(self) -> int:
        self._summary = self.call(self.actor.summary)
        return self._summary["available_bytes"]

    def waiting_reason(self, ticket: RemoteTicket) -> str:
        return "" if ticket.admitted or ticket.released else self.ticket_state(ticket)[1]

    # ---- used by RemoteTicket -----------------------------------------------------------------------------
    def ticket_state(self, ticket: RemoteTicket) -> tuple[int, str]:
        position, reason = self.call(self.actor.state, self.owner, [ticket.number])[ticket.number]
        if position == 0:
            ticket.admitted = True
        return position, reason

    def forget(self, ticket: RemoteTicket) -> None:
        with self._lock:
            self._held.pop(ticket.number, None)
        self.call(self.actor.release, self.owner, ticket.number)

    def _keep_alive(self) -> None:
        with self._lock:
            if self._beating is not None and self._beating.is_alive():
                return
            self._beating = threading.Thread(target=self._beat, name="rnnlab-gate-lease", daemon=True)
            self._beating.start()

    def _beat(self) -> None:
        while True:
            time.sleep(self._summary["lease_s"] / 3)
            with self._lock:
                if not self._held:
                    self._beating = None
                    return
            try:
                self.call(self.actor.heartbeat, self.owner)
            except Exception:  # noqa: BLE001 - the actor restarts; the next beat or poll reaches it again
                continue
