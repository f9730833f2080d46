"""Identical runs computed once: sessions that train the same configuration and seed share one run.

Training is deterministic: a configuration and seed give the same history however the work is divided into
calls (see :mod:`rnnlab.training.train`). A *pristine* run (started from the seed, no setting changed during it) is
registered here under its full configuration as that configuration's *lead*. A session that trains a pristine
run of the same configuration, not further along than the lead, follows the lead instead of computing the same
steps again: in flight, it sees the history so far and each call from then on; finished, the result at once.

The lead's watchers train it together: each loop asks for the next call and, while another watcher's call is in
progress, waits for it (:meth:`rnnlab.training.train.Run.run_call` with ``wait=False``), so every step is computed once
and training goes on while anyone watches and stops when the last watcher leaves. One server slot is held for
the lead as a whole (:class:`Watch`): taken by the first watcher admitted, released when the last one leaves.
A session that stops watching while others go on takes a copy (``lead.fork()``); the last one keeps the lead.
A lead whose settings a session then changes is no longer pristine and is forgotten here.

Bounded: leads nobody watches are forgotten beyond ``max_runs`` such runs or ``max_bytes`` of their memory
(``RNNLAB_SHARED_RUNS_MB``, 256 MB by default; those watched are kept alive by their sessions anyway), those copied
least often first and the least recently used first among them, so that a class's link outlasts many single
students' runs, however many of those wait in the queue.
"""

from __future__ import annotations

import math
import os
import threading
from collections import OrderedDict
from collections.abc import Callable

from rnnlab.config import Config
from rnnlab.server.work.gate import Ticket
from rnnlab.training.train import Run

ENV_MAX_MB = "RNNLAB_SHARED_RUNS_MB"
DEFAULT_MAX_RUNS = 64


def max_bytes_from_env(default_mb: float = 256.0) -> int:
    """``$RNNLAB_SHARED_RUNS_MB`` in bytes; a malformed or non-positive value means the default."""
    try:
        mb = float(os.environ.get(ENV_MAX_MB, default_mb))
    except ValueError:
        mb = default_mb
    return int((mb if math.isfinite(mb) and mb > 0 else default_mb) * 2**20)


class Watch:
    """One session watching (and helping to train) a lead; the lead's slot is held while anyone watches."""

    def __init__(self, registry: SharedRuns, lead: Run):
        self.registry, self.lead = registry, lead
        self.left = False
        self.last = False

    def needs_slot(self) -> bool:
        """Whether no watcher of the lead holds a server slot for it yet."""
        return self.registry._ticket_of(self.lead) is None

    def waiting_ticket(self, make: Callable[[], Ticket]) -> Ticket:
        """The lead's one place in the server's queue, made with ``make()`` by the first watcher to ask: its
        watchers wait on one ticket, so that a run many people watch takes one place, not one per person."""
        return self.registry._waiting_ticket(self.lead, make)

    def hold(self, ticket: Ticket) -> bool:
        """Give an admitted ``ticket`` to the lead; False when it holds one already (then release yours)."""
        return self.registry._hold(self.lead, ticket)

    def leave(self) -> bool:
        """Stop watching (idempotent). True for the last watcher to leave, which frees the lead's slot and may
        keep the lead itself as its run: nobody else trains a lead nobody watches (see :meth:`SharedRuns.join`)."""
        if not self.left:
            self.left = True
            self.last = self.registry._leave(self.lead)
        return self.last

    def __enter__(self) -> Watch:
        return self

    def __exit__(self, *exc) -> None:
        self.leave()


class SharedRuns:
    """Leads by configuration, with their watchers and slots. Thread-safe.

    A lead nobody watches may be the run of the session that watched it last; another session that wants to
    train it takes a copy (:meth:`copy_of`), which becomes the lead (:meth:`join`), so that a session's run is
    only ever trained by the sessions watching it.
    """

    def __init__(self, max_runs: int = DEFAULT_MAX_RUNS, max_bytes: int | None = None):
        self.max_runs = max_runs
        self.max_bytes = max_bytes_from_env() if max_bytes is None else max_bytes
        self._lock = threading.Lock()
        self._leads: OrderedDict[Config, Run] = OrderedDict()  # least recently used first
        self._watchers: dict[int, int] = {}  # id(lead) -> sessions watching it
        self._tickets: dict[int, Ticket] = {}  # id(lead) -> the slot held for it
        self._waiting: dict[int, Ticket] = {}  # id(lead) -> its place in the queue while it waits for a slot
        self._served: dict[int, int] = {}  # id(lead) -> copies given out

    def copy_of(self, config: Config, after_step: int = -1, wait_s: float = 2.0) -> Run | None:
        """A copy of ``config``'s lead as of its last finished call, when it has got further than ``after_step``;
        None when there is none, or when its call in progress has not ended within ``wait_s`` seconds. A finished
        lead has no call to wait for: a class arriving at once gets it however long the copies before theirs take."""
        lead = self._lead(config)
        if lead is None or lead.step <= after_step or (not lead.done and not lead.settle(wait_s)):
            return None
        copy = lead.fork()
        if not (copy.pristine and copy.config == config):
            return None
        with self._lock:
            self._served[id(lead)] = self._served.get(id(lead), 0) + 1
        return copy

    def join(self, run: Run) -> Watch | None:
        """Watch the run to train for a session's ``run``: its configuration's lead while others watch it and it
        has got at least as far, else ``run`` itself, which becomes the lead. None when ``run`` is not pristine,
        or a lead others watch is behind it: ``run`` is then trained alone."""
        if not run.pristine:
            return None
        config = run.config
        with self._lock:
            lead = self._valid(config)
            if lead is not None and lead is not run and self._watchers.get(id(lead)):
                if lead.step < run.step:
                    return None
            else:
                lead = self._leads[config] = run
            self._leads.move_to_end(config)
            self._watchers[id(lead)] = self._watchers.get(id(lead), 0) + 1
            self._evict()
            return Watch(self, lead)

    def offer(self, run: Run) -> bool:
        """Make the pristine ``run`` (e.g. a finished run another web process trained) its configuration's lead
        when it has none, without watching it, so that :meth:`copy_of` serves it; False when it already has one."""
        if not run.pristine:
            return False
        with self._lock:
            if self._valid(run.config) is not None:
                return False
            self._leads[run.config] = run
            self._evict()
            return True

    def watchers(self, run: Run) -> int:
        with self._lock:
            return self._watchers.get(id(run), 0)

    def is_lead(self, run: Run) -> bool:
        with self._lock:
            return self._leads.get(run.config) is run

    def __len__(self) -> int:
        with self._lock:
            return len(self._leads)

    def clear(self) -> None:
        """Forget every lead nobody watches."""
        with self._lock:
            for config in [c for c, lead in self._leads.items() if not self._watchers.get(id(lead))]:
                self._served.pop(id(self._leads.pop(config)), None)

    # ---- internals ----------------------------------------------------------------------------------------
    def _lead(self, config: Config) -> Run | None:
        with self._lock:
            lead = self._valid(config)
            if lead is not None:
                self._leads.move_to_end(config)
            return lead

    def _valid(self, config: Config) -> Run | None:
        """``config``'s lead, forgotten (with the lock held) if a setting of it has changed since."""
        lead = self._leads.get(config)
        if lead is not None and not (lead.pristine and lead.config == config):
            del self._leads[config]
            self._served.pop(id(lead), None)
            return None
        return lead

    def _ticket_of(self, lead: Run) -> Ticket | None:
        with self._lock:
            return self._tickets.get(id(lead))

    def _waiting_ticket(self, lead: Run, make: Callable[[], Ticket]) -> Ticket:
        with self._lock:
            ticket = self._waiting.get(id(lead))
            if ticket is None or ticket.released:
                ticket = self._waiting[id(lead)] = make()
            return ticket

    def _hold(self, lead: Run, ticket: Ticket) -> bool:
        with self._lock:
            if self._waiting.get(id(lead)) is ticket:
                del self._waiting[id(lead)]
            if self._tickets.get(id(lead)) is ticket:
                return True
            if id(lead) in self._tickets:
                return False
            self._tickets[id(lead)] = ticket
            return True

    def _leave(self, lead: Run) -> bool:
        with self._lock:
            left = self._watchers.get(id(lead), 0) - 1
            if left > 0:
                self._watchers[id(lead)] = left
                return False
            self._watchers.pop(id(lead), None)
            tickets = [self._tickets.pop(id(lead), None), self._waiting.pop(id(lead), None)]
            self._evict()
        for ticket in tickets:
            if ticket is not None:
                ticket.release()
        return True

    def _evict(self) -> None:
        """Forget unwatched leads while they are over the bounds (with the lock held): those copied least often
        first, the least recently used first among them, so that a class's link outlasts the runs of single students,
        however many of those wait in the queue."""
        idle = [(i, config, lead) for i, (config, lead) in enumerate(self._leads.items())
                if not self._watchers.get(id(lead))]  # those watched are kept alive by their sessions anyway
        count, total = len(idle), sum(lead.nbytes() for _, _, lead in idle)
        for _, config, lead in sorted(idle, key=lambda item: (self._served.get(id(item[2]), 0), item[0])):
            if count <= self.max_runs and total <= self.max_bytes:
                break
            count, total = count - 1, total - lead.nbytes()
            del self._leads[config]
            self._served.pop(id(lead), None)


RUNS = SharedRuns()  # the server's: shared by every session in this process
