"""Results computed once across the cluster's web processes, and the progress of work on workers: named detached
actors on the head node.

:class:`ResultsActor` keeps :class:`~rnnlab.server.work.results.Results` (finished results by key, bounded, and the keys
being computed) for every web process. A key is its ``repr`` (work keys are tuples of names, numbers and
configurations). A web process that claims a key computes it and puts or drops it; one that died while computing
loses its claims after :data:`LEASE_S` (its owner lease lapses), so the next asker computes it.

:class:`RemoteResults` is that actor from a web process with :class:`~rnnlab.server.work.results.Results`' interface
(``get``, ``claim``, ``put``, ``drop``), for :class:`~rnnlab.server.work.embedded.EmbeddedExecutor`. Each call waits
at most a bounded time; when the actor does not answer, a claim is granted here (the work is computed, not
shared) rather than waited for.

:class:`ProgressActor` carries how far work on a worker has got (:func:`rnnlab.server.work.reporting.report` from inside
it, sent by :class:`TaskProgress` at most every :data:`REPORT_EVERY_S`) to the web process whose job waits for it,
which asks with :func:`progress_of` while it waits.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Hashable
from typing import Any

import ray

from rnnlab.i18n import Msg
from rnnlab.server.on_ray.actors import LEASE_S, POLL_S, named_actor, shared_actor
from rnnlab.server.work.results import DEFAULT_MAX_BYTES, DEFAULT_MAX_ENTRIES, Results

RESULTS_NAME = "rnnlab-results"
PROGRESS_NAME = "rnnlab-progress"
REPORT_EVERY_S = 0.25
PROGRESS_KEPT_S = 600.0  # a task's progress not updated for this long is forgotten
CALL_TIMEOUT_S = 2.0  # a web process waits this long at most for the actor's answer, then computes it itself


class ResultsActor:
    """Results by key for the cluster's web processes; every method returns at once."""

    def __init__(self, max_entries: int = DEFAULT_MAX_ENTRIES, max_bytes: int = DEFAULT_MAX_BYTES,
                 lease_s: float = LEASE_S):
        self.results = Results(max_entries, max_bytes)
        self.lease_s = lease_s
        self.claims: dict[str, str] = {}  # key -> the owner computing it
        self.seen: dict[str, float] = {}
        self.granted = 0  # claims granted: how many times a result was computed

    def get(self, owner: str, key: str) -> tuple[Any, bool]:
        """(the result or None, whether someone computes it now)."""
        self.heartbeat(owner)
        return self.results.get(key), self.results.computing(key)

    def claim(self, owner: str, key: str) -> bool:
        """True when ``owner`` is to compute ``key`` (neither kept nor being computed)."""
        self.heartbeat(owner)
        if not self.results.claim(key):
            return False
        self.claims[key] = owner
        self.granted += 1
        return True

    def put(self, owner: str, key: str, value: Any) -> None:
        self.heartbeat(owner)
        self.claims.pop(key, None)
        self.results.put(key, value)

    def drop(self, owner: str, key: str) -> None:
        self.heartbeat(owner)
        if self.claims.get(key) == owner:
            del self.claims[key]
            self.results.drop(key)

    def heartbeat(self, owner: str) -> None:
        """``owner`` is alive; the claims of owners not heard from for ``lease_s`` are dropped."""
        now = time.monotonic()
        self.seen[owner] = now
        gone = {o for o, t in self.seen.items() if now - t > self.lease_s}
        for key, o in list(self.claims.items()):
            if o in gone:
                del self.claims[key]
                self.results.drop(key)
        for o in gone:
            del self.seen[o]

    def summary(self) -> dict[str, Any]:
        return {"kept": len(self.results), "computing": len(self.claims), "owners": len(self.seen),
                "granted": self.granted}


def results_actor(max_entries: int = DEFAULT_MAX_ENTRIES, max_bytes: int = DEFAULT_MAX_BYTES,
                  lease_s: float = LEASE_S):
    """The cluster's results actor, created on the head node when none runs. Needs :func:`ray.init` first."""
    return shared_actor(ResultsActor, RESULTS_NAME, max_entries, max_bytes, lease_s)


class RemoteResults:
    """The results actor from this web process, as :class:`~rnnlab.server.work.results.Results`."""

    def __init__(self, actor, timeout_s: float = CALL_TIMEOUT_S):
        self.actor, self.timeout_s = actor, timeout_s
        self.owner = uuid.uuid4().hex
        self._lock = threading.Lock()
        self._claimed: set[str] = set()
        self._beating: threading.Thread | None = None

    @classmethod
    def named(cls) -> RemoteResults:
        return cls(results_actor())

    def call(self, method: str, *args: Any, timeout_s: float | None = None) -> Any:
        return ray.get(getattr(self.actor, method).remote(self.owner, *args),
                       timeout=self.timeout_s if timeout_s is None else timeout_s)

    def get(self, key: Hashable, wait_s: float = 0.0) -> Any | None:
        """The result for ``key``; while another web process computes it, ask again every :data:`POLL_S` for up
        to ``wait_s`` seconds. None when there is none (yet) or the actor does not answer."""
        deadline = time.monotonic() + wait_s
        while True:
            try:
                value, computing = self.call("get", repr(key))
            except Exception:  # noqa: BLE001 - the actor is away: nothing kept as far as this process knows
                return None
            left = deadline - time.monotonic()
            if value is not None or not computing or left <= 0:
                return value
            time.sleep(min(POLL_S, left))

    def computing(self, key: Hashable) -> bool:
        try:
            return bool(self.call("get", repr(key))[1])
        except Exception:  # noqa: BLE001
            return False

    def claim(self, key: Hashable) -> bool:
        """True when this process is to compute ``key`` (also when the actor does not answer: computed here)."""
        try:
            claimed = bool(self.call("claim", repr(key)))
        except Exception:  # noqa: BLE001 - computed here rather than waited for
            return True
        if claimed:
            with self._lock:
                self._claimed.add(repr(key))
            self._keep_alive()
        return claimed

    def put(self, key: Hashable, value: Any) -> None:
        self._settle("put", key, value)

    def drop(self, key: Hashable) -> None:
        self._settle("drop", key)

    def _settle(self, method: str, key: Hashable, *value: Any) -> None:
        with self._lock:
            self._claimed.discard(repr(key))
        try:
            self.call(method, repr(key), *value)
        except Exception:  # noqa: BLE001 - the claim lapses with this process's lease
            pass

    def _keep_alive(self) -> None:
        with self._lock:
            if self._beating is not None and self._beating.is_alive():
                return
            self._beating = threading.Thread(target=self._beat, name="rnnlab-results-lease", daemon=True)
            self._beating.start()

    def _beat(self) -> None:
        while True:
            time.sleep(LEASE_S / 4)
            with self._lock:
                if not self._claimed:
                    self._beating = None
                    return
            try:
                self.call("heartbeat")
            except Exception:  # noqa: BLE001 - the next beat tries again
                continue


# ---- progress of work on workers -----------------------------------------------------------------------------
class ProgressActor:
    """The latest (fraction, note) of each task that reports, by a token its job chose; every method returns at
    once. Entries not updated for :data:`PROGRESS_KEPT_S` are forgotten."""

    def __init__(self) -> None:
        self.latest: dict[str, tuple[float | None, Msg | str | None, float]] = {}

    def set(self, token: str, fraction: float | None, note: Msg | str | None) -> None:
        now = time.monotonic()
        self.latest[token] = (fraction, note, now)
        if len(self.latest) > 1000:
            self.latest = {k: v for k, v in self.latest.items() if now - v[2] < PROGRESS_KEPT_S}

    def get(self, token: str) -> tuple[float | None, Msg | str | None] | None:
        found = self.latest.get(token)
        return None if found is None else found[:2]

    def forget(self, token: str) -> None:
        self.latest.pop(token, None)


def progress_actor():
    """The cluster's progress actor, created on the head node when none runs. Needs :func:`ray.init` first."""
    return shared_actor(ProgressActor, PROGRESS_NAME)


class TaskProgress:
    """Inside a task on a worker: what its work reports (:func:`rnnlab.server.work.reporting.reporting_to`), sent to the
    progress actor under ``token`` at most every :data:`REPORT_EVERY_S` (the last report before a pause is sent
    with the next). Stopping is Ray's cancel, not asked here."""

    def __init__(self, token: str):
        self.token = token
        self.kills: list = []
        self.sent_at = 0.0
        self.actor: Any = None

    def reported(self, fraction: float | None, note: Msg | str | None) -> None:
        now = time.monotonic()
        if now - self.sent_at < REPORT_EVERY_S:
            return
        self.sent_at = now
        try:
            if self.actor is None:
                self.actor = named_actor(PROGRESS_NAME)
            self.actor.set.remote(self.token, fraction, note)
        except Exception:  # noqa: BLE001 - progress is a courtesy: the work goes on without it
            pass

    def stopping(self) -> bool:
        return False


def progress_of(actor, token: str, timeout_s: float = CALL_TIMEOUT_S) -> tuple[float | None, str | None] | None:
    """The latest progress reported under ``token``; None when none was or the actor does not answer."""
    try:
        return ray.get(actor.get.remote(token), timeout=timeout_s)
    except Exception:  # noqa: BLE001
        return None
