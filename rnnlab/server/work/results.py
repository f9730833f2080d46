"""Results of deterministic heavy work (probes, sweeps) computed once per server, for every session asking.

The gradient probes of a run and the decay sweep depend only on their inputs (a pristine run's configuration
and step, or the sweep's settings), so a class opening one link needs each of them once. :class:`Results` keeps
them by key, bounded (beyond ``max_entries`` or ``max_bytes`` the ones given out least often go first, the least
recently used first among them), and computes each key
once at a time: a caller asking for a key being computed waits for that result instead of computing it again.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Protocol

import pandas as pd

DEFAULT_MAX_ENTRIES = 256
DEFAULT_MAX_BYTES = 64 * 2**20


def result_bytes(value: Any) -> int:
    """Rough memory of a result: a table's, bytes' length, a tuple's parts', what an object says of itself
    (``nbytes()``, as a run does), else a small constant."""
    if isinstance(value, pd.DataFrame):
        return int(value.memory_usage(index=True, deep=True).sum())
    if isinstance(value, (bytes, bytearray)):
        return len(value)
    if isinstance(value, (tuple, list)):
        return sum(result_bytes(v) for v in value)
    size = getattr(value, "nbytes", None)
    if callable(size):
        return int(size())
    return 1024


class ResultStore(Protocol):
    """Results computed once by key: this process's :class:`Results` or the cluster's ``RemoteResults``."""

    def get(self, key: Hashable, wait_s: float = 0.0) -> Any | None: ...
    def claim(self, key: Hashable) -> bool: ...
    def put(self, key: Hashable, value: Any) -> None: ...
    def drop(self, key: Hashable) -> None: ...


class Results:
    """Finished results by key, and the keys being computed. Thread-safe."""

    def __init__(self, max_entries: int = DEFAULT_MAX_ENTRIES, max_bytes: int = DEFAULT_MAX_BYTES):
        self.max_entries, self.max_bytes = max_entries, max_bytes
        self._cond = threading.Condition(threading.RLock())
        self._done: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()  # key -> (value, bytes)
        self._served: dict[Hashable, int] = {}  # key -> how many times it was given to a caller
        self._computing: set[Hashable] = set()

    def get(self, key: Hashable, wait_s: float = 0.0) -> Any | None:
        """The result for ``key``; while another caller computes it, wait up to ``wait_s`` seconds for it.
        None when there is none (yet)."""
        with self._cond:
            self._cond.wait_for(lambda: key not in self._computing, timeout=wait_s)
            if key in self._done:
                self._done.move_to_end(key)
                self._served[key] = self._served.get(key, 0) + 1
                return self._done[key][0]
            return None

    def computing(self, key: Hashable) -> bool:
        """Whether a caller is computing ``key`` now."""
        with self._cond:
            return key in self._computing

    def claim(self, key: Hashable) -> bool:
        """Take on computing ``key``: True when it is neither kept nor being computed (then the caller must
        :meth:`put` or :meth:`drop` it); False otherwise."""
        with self._cond:
            if key in self._done or key in self._computing:
                return False
            self._computing.add(key)
            return True

    def put(self, key: Hashable, value: Any) -> None:
        """Keep ``value`` for a claimed ``key``; callers waiting for it get it."""
        with self._cond:
            self._computing.discard(key)
            self._done[key] = (value, result_bytes(value))
            self._done.move_to_end(key)
            self._evict(keep=key)
            self._cond.notify_all()

    def drop(self, key: Hashable) -> None:
        """Give up a claimed ``key`` (it failed or was stopped): the next caller computes it."""
        with self._cond:
            self._computing.discard(key)
            self._cond.notify_all()

    def compute(self, key: Hashable, make: Callable[[], Any]) -> Any:
        """The result for ``key``: kept, or being computed by another caller (waited for), or ``make()`` now."""
        with self._cond:
            while not self.claim(key):
                if key in self._done:
                    self._done.move_to_end(key)
                    self._served[key] = self._served.get(key, 0) + 1
                    return self._done[key][0]
                self._cond.wait()
        try:
            value = make()
        except BaseException:
            self.drop(key)
            raise
        self.put(key, value)
        return value

    def __len__(self) -> int:
        with self._cond:
            return len(self._done)

    @property
    def nbytes(self) -> int:
        with self._cond:
            return sum(size for _, size in self._done.values())

    def clear(self) -> None:
        with self._cond:
            self._done.clear()
            self._served.clear()

    def _evict(self, keep: Hashable = None) -> None:
        """Beyond the bounds, forget the results given out least often, the least recently used first among them
        (never ``keep``, the one just kept): a result a whole class asks for outlasts many that one person
        computed."""
        total = sum(size for _, size in self._done.values())
        if len(self._done) <= self.max_entries and total <= self.max_bytes:
            return
        ranked = sorted(enumerate(self._done), key=lambda item: (self._served.get(item[1], 0), item[0]))
        for _, key in ranked:
            if len(self._done) <= self.max_entries and total <= self.max_bytes:
                break
            if key == keep:
                continue
            total -= self._done.pop(key)[1]
            self._served.pop(key, None)


RESULTS = Results()  # the server's: shared by every session in this process
