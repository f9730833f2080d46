"""Server-wide slots for heavy work: at most ``limit`` jobs at once, a fair queue, and a memory budget.

Every session of a Streamlit server shares one :data:`GATE`. A job (training, a sweep, a probe) asks for a
:class:`Ticket`, waits until it is admitted (its place is :attr:`Ticket.position`, the reason it waits
:meth:`JobGate.waiting_reason`), runs, and releases the ticket. When a slot is free, the first ticket in
the queue that can run is admitted: its memory estimate fits in what the running jobs leave of the budget
(one job is always admitted when nothing runs), its client (a person: one browser machine, however many
tabs; who is asking is :mod:`rnnlab.server.access.clients`'s to say) holds fewer than ``per_client`` running jobs,
and the clients of its address (the browsers a proxy names on one machine) hold fewer than ``per_address``, so
that one machine minting browser ids cannot take every slot. A ticket that cannot run does not hold up those behind it.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from typing import Protocol, TypeVar

from rnnlab import ledger
from rnnlab.device import memory_budget_bytes
from rnnlab.i18n import Msg, MsgN, localize_number, tp
from rnnlab.server.access.clients import AT, address_of

ENV_LIMIT = "RNNLAB_MAX_TRAININGS"
ENV_PER_CLIENT = "RNNLAB_MAX_JOBS_PER_CLIENT"
ENV_PER_ADDRESS = "RNNLAB_MAX_JOBS_PER_ADDRESS"


def parse_limit(text: str) -> int:
    """A training limit from text (at least 1); ValueError with a readable message otherwise."""
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{ENV_LIMIT} must be a whole number of trainings, got {text!r}") from None
    if value < 1:
        raise ValueError(f"{ENV_LIMIT} must be at least 1, got {value}")
    return value


def default_limit() -> int:
    """``$RNNLAB_MAX_TRAININGS``, else one per accelerator, else the number of CPU cores.

    A malformed variable is reported in the server log and the default is used, so users never see it.
    """
    env = os.environ.get(ENV_LIMIT, "").strip()
    if env:
        try:
            return parse_limit(env)
        except ValueError as e:
            logging.getLogger(__name__).warning("%s; using the default", e)
    import jax

    if jax.default_backend() != "cpu":
        return max(1, jax.device_count())
    return max(1, os.cpu_count() or 1)


def default_per_client(limit: int) -> int:
    """``$RNNLAB_MAX_JOBS_PER_CLIENT``, else all slots but one (at least one): a slot stays for someone else."""
    env = os.environ.get(ENV_PER_CLIENT, "").strip()
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            logging.getLogger(__name__).warning("%s must be a whole number, got %r; using the default",
                                                ENV_PER_CLIENT, env)
    return max(1, limit - 1)


def default_per_address(limit: int, per_client: int) -> int:
    """``$RNNLAB_MAX_JOBS_PER_ADDRESS``, else all slots but one (at least the per-client share): one machine leaves
    a slot for the others. Behind a NAT a whole class shares one address: raise it there."""
    env = os.environ.get(ENV_PER_ADDRESS, "").strip()
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            logging.getLogger(__name__).warning("%s must be a whole number, got %r; using the default",
                                                ENV_PER_ADDRESS, env)
    return max(per_client, limit - 1)


class SlotTicket(Protocol):
    """A place in a gate's queue, then one of its slots: what the executor and the queue messages read of a
    ticket, whether this process's (:class:`Ticket`) or the cluster's gate actor's (``RemoteTicket``)."""

    memory_bytes: int
    label: str
    client: str
    admitted: bool
    released: bool

    @property
    def position(self) -> int: ...
    def wait(self, timeout: float | None = None) -> bool: ...
    def release(self) -> None: ...


T = TypeVar("T", bound=SlotTicket)


class Gate(Protocol[T]):
    """What hands out :class:`SlotTicket` s: this process's :class:`JobGate` or the cluster's ``RemoteGate``."""

    @property
    def limit(self) -> int: ...
    @property
    def per_client(self) -> int: ...
    @property
    def per_address(self) -> int: ...
    def ticket(self, memory_bytes: int = 0, label: str = "", client: str = "") -> T: ...
    def counts(self) -> tuple[int, int]: ...
    def available_bytes(self) -> int: ...
    def waiting_reason(self, ticket: T) -> str: ...


class Ticket:
    """One job's place: waiting in the queue (``position`` >= 1) or running (``position`` == 0)."""

    def __init__(self, gate: JobGate, number: int, memory_bytes: int, label: str, client: str):
        self.gate = gate
        self.number = number
        self.memory_bytes = int(memory_bytes)
        self.label = label
        self.client = client or f"ticket-{number}"  # no client given: a person of its own
        self.admitted = False
        self.released = False

    @property
    def position(self) -> int:
        """0 once admitted, else 1 + the number of tickets ahead in the queue (-1 once released)."""
        return self.gate._position(self)

    def wait(self, timeout: float | None = None) -> bool:
        """Block up to ``timeout`` seconds for admission; True once admitted."""
        return self.gate._wait(self, timeout)

    def release(self) -> None:
        """Leave the queue or free the slot (idempotent)."""
        self.gate._release(self)

    def __enter__(self) -> Ticket:
        return self

    def __exit__(self, *exc) -> None:
        self.release()


class JobGate:
    """At most ``limit`` admitted tickets, admitted first come, first served, within a memory budget."""

    def __init__(self, limit: int | None = None, budget: Callable[[], int] = memory_budget_bytes,
                 per_client: int | None = None, per_address: int | None = None):
        self._limit = limit
        self._per_client = per_client
        self._per_address = per_address
        self._budget = budget
        self._cond = threading.Condition()
        self._queue: list[Ticket] = []
        self._running: list[Ticket] = []
        self._last_number = 0
        self._paused = False

    @property
    def limit(self) -> int:
        if self._limit is None:
            self._limit = default_limit()
        return self._limit

    @property
    def per_client(self) -> int:
        if self._per_client is None:
            self._per_client = default_per_client(self.limit)
        return self._per_client

    @property
    def per_address(self) -> int:
        if self._per_address is None:
            self._per_address = default_per_address(self.limit, self.per_client)
        return self._per_address

    def ticket(self, memory_bytes: int = 0, label: str = "", client: str = "") -> Ticket:
        """Join the queue; admitted at once when a slot, the memory and the client's share allow."""
        with self._cond:
            self._last_number += 1
            ticket = Ticket(self, self._last_number, memory_bytes, label, client)
            self._queue.append(ticket)
            self._admit()
            return ticket

    def restore(self, memory_bytes: int, label: str, client: str, admitted: bool,
                number: int | None = None) -> Ticket:
        """A ticket that existed before this gate (a gate that restarted learns its tickets again from their
        holders): an ``admitted`` one runs at once while the running ones stay within the limit (its work already
        runs); beyond it, and a waiting one, (re)join the queue in the order of their ``number`` (at the end, with a
        new number, when None), so that nothing runs beyond the slots: the holder hears that its ticket waits, and
        its work waits too."""
        with self._cond:
            if number is None:
                self._last_number += 1
                number = self._last_number
            self._last_number = max(self._last_number, number)
            ticket = Ticket(self, number, memory_bytes, label, client)
            if admitted and len(self._running) < self.limit:
                ticket.admitted = True
                self._running.append(ticket)
            else:
                at = next((i for i, t in enumerate(self._queue) if t.number > number), len(self._queue))
                self._queue.insert(at, ticket)
            self._admit()
            return ticket

    def pause(self) -> None:
        """Admit nothing until :meth:`resume` (tickets still join the queue and leave it)."""
        with self._cond:
            self._paused = True

    def resume(self) -> None:
        """Admit again after :meth:`pause`."""
        with self._cond:
            self._paused = False
            self._admit()

    def in_flight_bytes(self) -> int:
        """Memory estimates of the trainings running now."""
        with self._cond:
            return sum(t.memory_bytes for t in self._running)

    def available_bytes(self) -> int:
        """The memory budget less what the running trainings are estimated to use."""
        return self._budget() - self.in_flight_bytes()

    def counts(self) -> tuple[int, int]:
        """(running, waiting)."""
        with self._cond:
            return len(self._running), len(self._queue)

    def waiting_reason(self, ticket: Ticket) -> str:
        """Why ``ticket`` waits: 'share' (its client runs its share), 'address' (the clients of its address run
        theirs), 'memory', 'slots', or '' (not waiting)."""
        with self._cond:
            if ticket not in self._queue:
                return ""
            return self._blocker(ticket, self._free_bytes(), self._client_counts()) or "slots"

    # ---- internals (called with or taking the lock) ----------------------------------------------
    def _free_bytes(self) -> int:
        return self._budget() - sum(t.memory_bytes for t in self._running)

    def _client_counts(self) -> dict[str, int]:
        """Running tickets per client, and per address under the key ``AT + address``."""
        counts: dict[str, int] = {}
        for t in self._running:
            counts[t.client] = counts.get(t.client, 0) + 1
            if address := address_of(t.client):
                counts[AT + address] = counts.get(AT + address, 0) + 1
        return counts

    def _blocker(self, ticket: Ticket, free: int, counts: dict[str, int]) -> str:
        if counts.get(ticket.client, 0) >= self.per_client:
            return "share"
        address = address_of(ticket.client)
        if address and counts.get(AT + address, 0) >= self.per_address:
            return "address"
        if self._running and ticket.memory_bytes > free:
            return "memory"
        return ""

    def _admit(self) -> None:
        changed = False
        while not self._paused and len(self._running) < self.limit:
            free, counts = self._free_bytes(), self._client_counts()
            head = next((t for t in self._queue if not self._blocker(t, free, counts)), None)
            if head is None:
                break
            self._queue.remove(head)
            self._running.append(head)
            head.admitted = True
            changed = True
            if ledger.enabled():
                ledger.record("admit", client=head.client, label=head.label, held=counts.get(head.client, 0) + 1,
                              per_client=self.per_client, running=len(self._running), limit=self.limit)
        if changed:
            self._cond.notify_all()

    def _position(self, ticket: Ticket) -> int:
        with self._cond:
            if ticket.admitted and not ticket.released:
                return 0
            if ticket in self._queue:
                return self._queue.index(ticket) + 1
            return -1

    def _wait(self, ticket: Ticket, timeout: float | None) -> bool:
        with self._cond:
            if ticket.released:
                raise RuntimeError("this ticket was released; ask for a new one")
            self._admit()
            return self._cond.wait_for(lambda: ticket.admitted, timeout)

    def _release(self, ticket: Ticket) -> None:
        with self._cond:
            if ticket.released:
                return
            ticket.released = True
            if ticket in self._queue:
                self._queue.remove(ticket)
            if ticket in self._running:
                self._running.remove(ticket)
            self._admit()
            self._cond.notify_all()


class Bytes:
    """A memory size that a message shows the reader's way ('1.2 MB'; ru '1,2 МБ'), as
    :func:`rnnlab.text.format_bytes` writes it: a value of a kept message, rendered when the message is."""

    __slots__ = ("n",)

    def __init__(self, n: float):
        self.n = float(n)

    def __str__(self) -> str:
        n = self.n
        for unit in ("B", "KB", "MB", "GB", "TB"):
            if n < 1000 or unit == "TB":
                return f"{localize_number(f'{n:.0f}' if unit == 'B' else f'{n:.1f}')} {_unit(unit)}"
            n /= 1000
        raise AssertionError

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)

    def __repr__(self) -> str:
        return f"Bytes({self.n!r})"


def _unit(unit: str) -> str:
    """A unit of memory in the reader's language."""
    units = {"B": lambda: tp("unit of memory", "B"), "KB": lambda: tp("unit of memory", "KB"),
             "MB": lambda: tp("unit of memory", "MB"), "GB": lambda: tp("unit of memory", "GB"),
             "TB": lambda: tp("unit of memory", "TB")}
    return units[unit]()


def queue_message(ticket: T, gate: Gate[T]) -> Msg:
    """What a waiting user reads: why ``ticket`` waits, its place, and that it starts by itself. A message kept as
    its id and numbers: the page renders it (``str``) in the reader's language, whichever thread made it."""
    running, waiting = gate.counts()
    reason = gate.waiting_reason(ticket)
    if reason == "share":
        # TRANSLATORS: {n} is how many jobs this person runs (their share); {running} and {waiting} count every
        # person's jobs on the server
        return MsgN("You already have {n} job running on this server, your share while others may be waiting "
                    "({running} running, {waiting} waiting in all). This one starts by itself when one of yours "
                    "ends (Stop it in its tab to start this one sooner).",
                    "You already have {n} jobs running on this server, your share while others may be waiting "
                    "({running} running, {waiting} waiting in all). This one starts by itself when one of yours "
                    "ends (Stop it in its tab to start this one sooner).",
                    gate.per_client, running=running, waiting=waiting)
    if reason == "address":
        # TRANSLATORS: {n} is how many jobs the browsers of this person's machine (one network address) run, the
        # share of one machine; {running} and {waiting} count every person's jobs on the server
        return MsgN("Your machine (its network address) already runs {n} job on this server, the share of one "
                    "machine while others may be waiting ({running} running, {waiting} waiting in all). This one "
                    "starts by itself when one of them ends.",
                    "Your machine (its network address) already runs {n} jobs on this server, the share of one "
                    "machine while others may be waiting ({running} running, {waiting} waiting in all). This one "
                    "starts by itself when one of them ends.",
                    gate.per_address, running=running, waiting=waiting)
    if reason == "memory":
        # TRANSLATORS: {need} and {free} are memory sizes such as "1.2 GB"; {n} counts the jobs running now
        return MsgN("Waiting for memory: this needs about {need} and {free} of the server's budget is free while "
                    "{n} job runs. It starts by itself when enough is freed; smaller settings (T, batch, "
                    "features) need less.",
                    "Waiting for memory: this needs about {need} and {free} of the server's budget is free while "
                    "{n} jobs run. It starts by itself when enough is freed; smaller settings (T, batch, "
                    "features) need less.",
                    running, need=Bytes(ticket.memory_bytes), free=Bytes(max(0, gate.available_bytes())))
    # TRANSLATORS: {limit} is the number of jobs the server runs at once (its slots); {position} is the place in
    # the queue (1 = next)
    return Msg("All {limit} slots of this server are busy ({running} running, {waiting} waiting). You are number "
               "{position} in the queue; your job starts by itself.",
               limit=gate.limit, running=running, waiting=waiting, position=ticket.position)


GATE = JobGate()  # the server's: shared by every session in this process
