"""Turns for page runs: one (or ``limit``) at a time, first come first served.

A class opening one link starts thirty script runs within a second. Python runs one thread at a time, so thirty runs
sharing the interpreter all finish near the end of the class's total work, and the event loop that accepts the
connections and sends the pages is slowed by all of them: every student waits about as long as the whole class.
Taking turns, the first students' pages arrive while the others still wait, and the event loop keeps its share.

A page run holds its turn until it ends or starts waiting for something else (a job, a training, the end of an
interrupted run's call): it calls :meth:`Turns.step_aside` first, so a wait never holds up the pages behind it. No run
waits longer than ``patience_s`` for its turn: then a turn held longer than that is taken back and handed on, and
a run that still has none goes ahead without one.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from rnnlab.device import env_float

ENV_TURNS = "RNNLAB_PAGE_TURNS"
DEFAULT_TURNS = 1  # measured: one at a time delivers pages in arrival order; two already share out the delay
PATIENCE_S = 10.0  # the longest a page run waits for its turn before it goes ahead anyway
SAY_AFTER_S = 0.5  # how long a page run waits before ``waiting(place, waited)`` is first called
SAY_EVERY_S = 1.0  # and then how often


@dataclass(eq=False)
class _Waiter:
    """One run in line: its thread, and the event its turn is handed over with."""

    ident: int
    given: threading.Event = field(default_factory=threading.Event)


class Turns:
    """At most ``limit`` holders at once, in arrival order; a holder is a thread (a page's script run). A turn given
    back is handed to the first in line, so waking one waiter does not wake them all."""

    def __init__(self, limit: int = DEFAULT_TURNS, patience_s: float = PATIENCE_S):
        self.limit, self.patience_s = max(1, int(limit)), patience_s
        self._lock = threading.Lock()
        self._holders: dict[int, float] = {}  # thread -> when it took its turn
        self._queue: deque[_Waiter] = deque()
        self._mine = threading.local()

    @property
    def waiting(self) -> int:
        """How many runs wait for a turn now."""
        with self._lock:
            return len(self._queue)

    @property
    def holding(self) -> int:
        """How many runs hold a turn now."""
        with self._lock:
            return len(self._holders)

    def _hand_over(self) -> None:
        """Give free turns to the first in line (with the lock held)."""
        while self._queue and len(self._holders) < self.limit:
            first = self._queue.popleft()
            self._holders[first.ident] = time.monotonic()
            first.given.set()

    def _expire(self, before: float) -> None:
        """Take back the turns held since before ``before`` (a run stuck without stepping aside), and hand them on
        (with the lock held): one stuck page holds up the others for the patience once, not for good."""
        for ident, since in list(self._holders.items()):
            if since < before:
                del self._holders[ident]
        self._hand_over()

    def _take(self, waiting: Callable[[int, float], None] | None) -> bool:
        """Wait in line for a turn, at most :attr:`patience_s`: True when taken, False when the wait ran out."""
        me, began = _Waiter(threading.get_ident()), time.monotonic()
        with self._lock:
            if not self._queue and len(self._holders) < self.limit:
                self._holders[me.ident] = time.monotonic()
                return True
            self._queue.append(me)
        try:
            say_at = SAY_AFTER_S
            while True:
                waited = time.monotonic() - began
                pause = min(self.patience_s, say_at if waiting is not None else self.patience_s) - waited
                if me.given.wait(max(0.0, pause)):
                    return True
                waited = time.monotonic() - began
                with self._lock:
                    if me.given.is_set():
                        return True
                    if waited >= self.patience_s:
                        self._expire(time.monotonic() - self.patience_s)
                        if me.given.is_set():
                            return True
                        self._queue.remove(me)
                        return False
                    place = self._queue.index(me) + 1
                if waiting is not None and waited >= say_at:
                    waiting(place, waited)
                    say_at = waited + SAY_EVERY_S
        except BaseException:  # a drawing failed (a closed tab): leave the line, or pass on a turn just given
            with self._lock:
                if me.given.is_set():
                    self._holders.pop(me.ident, None)
                else:
                    self._queue.remove(me)
                self._hand_over()
            raise

    @contextmanager
    def turn(self, waiting: Callable[[int, float], None] | None = None) -> Iterator[bool]:
        """Hold a turn for the ``with`` body (or until :meth:`step_aside`), waiting in line for it first;
        ``waiting(place in line, seconds waited)`` is called once the wait has lasted :data:`SAY_AFTER_S`, then every
        :data:`SAY_EVERY_S`. Yields whether a turn was taken (False: the wait ran out). Leaving in any way, an
        exception raised by ``waiting`` included, gives the turn back. A thread that holds one already keeps it."""
        if getattr(self._mine, "held", False):
            yield True
            return
        taken = self._take(waiting)
        self._mine.held = taken
        try:
            yield taken
        finally:
            self.step_aside()

    def step_aside(self) -> None:
        """Give back this thread's turn, if it holds one (before it waits for something else); idempotent."""
        if not getattr(self._mine, "held", False):
            return
        self._mine.held = False
        with self._lock:
            self._holders.pop(threading.get_ident(), None)
            self._hand_over()


PAGE_TURNS = Turns(int(env_float(ENV_TURNS, DEFAULT_TURNS)))
