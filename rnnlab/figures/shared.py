"""What a pristine run's charts show at one step, built once for every session that shows it.

A class on one link shows the same run at the same steps: a pristine run's history is a function of its
configuration, so the figures, tables and sentences of one of its steps are too. :class:`SharedViews` keeps them by
key (:func:`view_key`: the run's configuration, step and whatever else the view depends on; a sweep's view by its
settings), bounded (least recently used first beyond ``max_entries`` or ``max_bytes``), and builds each key once at
a time: a session asking for a key another is building waits for that one. What it returns is shared between
sessions' threads and must never be changed: build everything a view needs (marks, clickable points) inside
``build``.
"""

from __future__ import annotations

import dataclasses
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from rnnlab.device import env_float
from rnnlab.i18n import language

T = TypeVar("T")

ENV_MAX_VIEWS = "RNNLAB_MAX_SHARED_VIEWS"
DEFAULT_MAX_ENTRIES = 256
DEFAULT_MAX_BYTES = 128 * 2**20
_ARRAY_KEYS = ("x", "y", "z", "text", "customdata", "hovertext")


def _array_bytes(value: Any) -> int:
    if value is None or isinstance(value, (str, int, float)):
        return 0
    try:
        return int(np.asarray(value, dtype=object).size) * 16
    except (TypeError, ValueError):
        return 0


def view_bytes(value: Any) -> int:
    """Rough memory of a view: a figure's data arrays (and its frames'), a table's, a tuple's or a view's parts',
    else a small constant."""
    if isinstance(value, go.Figure):
        traces = list(value.data) + [t for frame in value.frames for t in frame.data]
        return 4096 + sum(_array_bytes(trace[k]) for trace in traces for k in _ARRAY_KEYS if k in trace)
    if isinstance(value, pd.DataFrame):
        return int(value.memory_usage(index=True, deep=True).sum())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return 64 + sum(view_bytes(getattr(value, f.name)) for f in dataclasses.fields(value))
    if isinstance(value, (tuple, list)):
        return 64 + sum(view_bytes(v) for v in value)
    if isinstance(value, dict):
        return 64 + sum(view_bytes(v) for v in value.values())
    if isinstance(value, str):
        return 64 + len(value)
    return 256


def view_key(run: Any, *parts: Hashable) -> tuple | None:
    """The key of a view of ``run`` at its step in the reader's language, depending on ``parts`` too; None (not
    shared) when the run is not pristine (its history is not its configuration's alone)."""
    if not getattr(run, "pristine", False):
        return None
    return (run.config, run.step, language(), *parts)


class SharedViews:
    """Built views by key, and the keys being built. Thread-safe."""

    def __init__(self, max_entries: int = DEFAULT_MAX_ENTRIES, max_bytes: int = DEFAULT_MAX_BYTES):
        self.max_entries, self.max_bytes = max_entries, max_bytes
        self._cond = threading.Condition(threading.Lock())
        self._done: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._building: set[Hashable] = set()
        self.builds = 0
        self.hits = 0

    def get(self, key: Hashable | None, build: Callable[[], T]) -> T:
        """The view kept under ``key``, else ``build()`` (kept for everyone); ``key`` None: built, not kept."""
        if key is None:
            return build()
        with self._cond:
            self._cond.wait_for(lambda: key not in self._building)
            if key in self._done:
                self._done.move_to_end(key)
                self.hits += 1
                return self._done[key][0]
            self._building.add(key)
        try:
            value = build()
        except BaseException:
            with self._cond:
                self._building.discard(key)
                self._cond.notify_all()
            raise
        nbytes = view_bytes(value)
        with self._cond:
            self._building.discard(key)
            self.builds += 1
            if nbytes <= self.max_bytes:
                self._done[key] = (value, nbytes)
                self._evict()
            self._cond.notify_all()
        return value

    def _evict(self) -> None:
        total = sum(n for _, n in self._done.values())
        while self._done and (len(self._done) > self.max_entries or total > self.max_bytes):
            _, (_, n) = self._done.popitem(last=False)
            total -= n

    def stats(self) -> dict[str, int]:
        """Entries, bytes kept, builds and hits so far."""
        with self._cond:
            return {"entries": len(self._done), "bytes": sum(n for _, n in self._done.values()),
                    "builds": self.builds, "hits": self.hits}

    def clear(self) -> None:
        with self._cond:
            self._done.clear()


VIEWS = SharedViews(max_entries=int(env_float(ENV_MAX_VIEWS, DEFAULT_MAX_ENTRIES)))
