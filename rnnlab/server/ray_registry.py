"""Results computed once across the cluster's web processes: a named detached actor on the head node.

:class:`ResultsActor` keeps :class:`~rnnlab.server.results.Results` (finished results by key, bounded, and the keys
being computed) for every web process. A key is its ``repr`` (work keys are tuples of names, numbers and
configurations). A web process that claims a key computes it and puts or drops it; one that died while computing
loses its claims after :data:`LEASE_S` (its owner lease lapses), so the next asker computes it.

:class:`RemoteResults` is that actor from a web process with :class:`~rnnlab.server.results.Results`' interface
(``get``, ``claim``, ``put``, ``drop``), for :class:`~rnnlab.server.executor.EmbeddedExecutor`. Each call waits
at most a bounded time; when the actor does not answer, a claim is granted here (the work is computed, not
shared) rather than waited for.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Hashable
from typing import Any

import ray

from rnnlab.server.results import DEFAULT_MAX_BYTES, DEFAULT_MAX_ENTRIES, Results

RESULTS_NAME = "rnnlab-results"
NAMESPACE = "rnnlab"
LEASE_S = 6.0
POLL_S = 0.1
CALL_TIMEOUT_S = 2.0  # a web process waits this long at most for the actor's answer
HEAD = {"node:__internal_head__": 0.001}


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
    cls = ray.remote(ResultsActor)
    return cls.options(name=RESULTS_NAME, namespace=NAMESPACE, lifetime="detached", get_if_exists=True,
                       max_restarts=-1, num_cpus=0, resources=HEAD).remote(max_entries, max_bytes, lease_s)


class RemoteResults:
    """The results actor from this web process, as :class:`~rnnlab.server.results.Results`."""

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
