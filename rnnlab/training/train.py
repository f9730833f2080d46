"""Training in chunks: a :class:`Run` turns a configuration into a :class:`History`, one compiled call at a time.

A chunk is ``config.chunk`` steps, with an evaluation at its end. A compiled call trains the rest of the current
chunk, or as many of its steps as fit in the time given. Between calls a callback can report progress or stop the
run; stopping keeps every step computed so far, and training again resumes from there with the results an
uninterrupted run would give.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace

import jax
import jax.numpy as jnp
import numpy as np

from rnnlab.config import DURING_RUN, Config, ConfigError
from rnnlab.training import estimate
from rnnlab.training.calls import CallResult, compute_call
from rnnlab.training.divergence import check_call
from rnnlab.training.history import CallProgress, History
from rnnlab.training.program import Program, get_program, hyper_args

MAX_SNAPSHOTS = 9


class RunFacts:
    """What a :class:`Run` and a :class:`RunView` of it both say from their configuration and history: how far it
    has got, whether it is done, and its compiled program."""

    config: Config
    history: History

    @property
    def step(self) -> int:
        return self.history.last_step

    @property
    def done(self) -> bool:
        return self.step >= self.config.steps or self.history.stop_reason is not None

    @property
    def program(self) -> Program:
        """The compiled program of these settings, from the server-wide cache (built again if it was dropped): a run
        kept by a session that has gone does not keep its compiled program alive."""
        return get_program(self.config)


@dataclass(frozen=True)
class RunView(RunFacts):
    """What a run had computed at one moment, for drawing while another thread may train it further; ``pristine``
    as the run was then."""

    config: Config
    history: History
    pristine: bool = False


class Run(RunFacts):
    """One training run of ``config``. ``train()`` runs to ``config.steps``; ``run_call()`` does one compiled call.

    ``params`` (e.g. from :func:`rnnlab.files.export.load_params`) replaces the seed's initial parameters; the rest
    starts as for a new run: step 0, the optimiser's state fresh (Adam's moments at zero), the seed's batches.
    Calls are serialised: threads may take turns training one run (each call continues where the last ended),
    :meth:`view` reads what it has computed at any moment, and :meth:`fork` gives an independent copy.
    A run is *pristine* while its history is exactly what a fresh run of its configuration gives: started from
    the seed (no ``params``) and no setting changed during it.
    """

    def __init__(self, config: Config, budget: int | None = None, params=None, origin: str | None = None):
        errors = config.validate(budget)
        if errors:
            raise ConfigError(errors)
        self.config = config
        self.origin = origin  # where the starting parameters came from when not from the seed (shown on screen)
        self.pristine = params is None and origin is None
        self._lock = threading.RLock()
        self._history_lock = threading.Lock()  # held while a call appends to the history, and by view()
        program = self.program
        lr, clip, scale = hyper_args(config)
        self.state = program.init(np.int32(config.seed), scale, lr, clip)
        if params is not None:
            wanted = jax.tree_util.tree_structure(self.state["params"])
            if jax.tree_util.tree_structure(params) != wanted:  # type: ignore[operator]  # PyTreeDef has no stubs
                raise ValueError("the parameters do not have the structure this configuration needs; "
                                 "load them with rnnlab.files.export.load_params")
            self.state["params"] = jax.tree_util.tree_map(jnp.asarray, params)
        self.history = History(program.spec.leaves)
        self.history.add_evaluation(0, jax.device_get(program.evaluate(
            self.state["params"], self.state["root"], scale)))
        self.snapshots: list[tuple[int, dict]] = [(0, jax.device_get(self.state["params"]))]
        self._last_end: float | None = None  # perf_counter() when the last compiled call ended

    @classmethod
    def restored(cls, config: Config, state: dict, history: History, snapshots: list[tuple[int, dict]],
                 pristine: bool, origin: str | None = None) -> Run:
        """A run of ``config`` with the given state, history and kept parameters (e.g. read back from bytes or
        computed elsewhere); nothing is computed or compiled."""
        errors = config.validate(2**62)
        if errors:
            raise ConfigError(errors)
        run = object.__new__(cls)
        run.config, run.origin, run.pristine = config, origin, pristine
        run._lock, run._history_lock = threading.RLock(), threading.Lock()
        run.state, run.history, run.snapshots = state, history, list(snapshots)
        run._last_end = None
        return run

    @property
    def params(self):
        """The current (last finite) parameters."""
        return self.state["params"]

    def matches(self, config: Config) -> bool:
        """Whether ``config`` continues this run: the same compiled settings and seed (the rest may change)."""
        return (self.config.static_key(), self.config.seed) == (config.static_key(), config.seed)

    @property
    def root(self) -> jax.Array:
        """The run's root key: every batch, carry and evaluation of the run is drawn from it."""
        return self.state["root"]

    @property
    def scale(self) -> np.float32:
        """The carry initialiser's parameter as the compiled functions take it."""
        return hyper_args(self.config)[2]

    def update(self, **changes) -> None:
        """Change the settings a running run follows (:data:`rnnlab.config.DURING_RUN`) between calls."""
        if not set(changes) <= set(DURING_RUN):
            raise ValueError(f"only {sorted(DURING_RUN)} can change during a run; start a new run for the rest")
        config = replace(self.config, **changes)
        errors = config.validate(budget=2**62)
        if errors:
            raise ConfigError(errors)
        if config != self.config:
            self.pristine = False
        self.config = config

    def run_call(self, max_seconds: float | None = None, wait: bool = True,
                 compute: Callable[[Config, dict, int], CallResult] = compute_call) -> CallProgress | None:
        """One compiled call: train to the end of the current chunk (every ``config.chunk`` steps, and the last step)
        and evaluate.

        With ``max_seconds``, stop earlier after the steps expected to fit in that time (at least one), so that
        a caller can check for Stop at that granularity; the evaluation is added only once the chunk is
        complete, so the history does not depend on how a chunk was divided. A call waits for one in progress
        in another thread, or with ``wait=False`` returns None at once (that thread is training it); a run that
        is done by then trains no further. ``compute`` computes the steps (:func:`rnnlab.training.calls.compute_call`,
        or a drop-in that computes it elsewhere, e.g. :func:`rnnlab.training.calls.through_bytes`).
        """
        if not self._lock.acquire(blocking=wait):
            return None
        try:
            if self.done:
                return CallProgress(self.step, self.config.steps, self._last_loss(), 0.0, 0.0)
            return self._train_call(max_seconds, compute)
        finally:
            self._lock.release()

    def take_call(self, step: int, n_active: int, result: CallResult) -> CallProgress | None:
        """Apply ``result``, ``n_active`` steps computed elsewhere from this run's state at ``step`` (by another
        process training the same pristine run), when the run is still at ``step`` and no call is in progress;
        None otherwise (then nothing changed)."""
        if not self._lock.acquire(blocking=False):
            return None
        try:
            if self.done or self.step != step:
                return None
            start = time.perf_counter()
            applied = self.apply_call(n_active, *result)
            seconds = time.perf_counter() - start
            return CallProgress(self.step, self.config.steps, self._last_loss(),
                                applied / seconds if seconds else 0.0, seconds)
        finally:
            self._lock.release()

    @contextmanager
    def between_calls(self) -> Iterator[Run]:
        """Hold the run between compiled calls (waiting for one in progress), to read its state consistently."""
        with self._lock:
            yield self

    def view(self) -> RunView:
        """The configuration and a copy of the history as of the last finished call (never waits for one)."""
        with self._history_lock:
            return RunView(self.config, self.history.copy(), self.pristine)

    def settle(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for a call in progress in another thread; True once none is."""
        if not self._lock.acquire(timeout=timeout):
            return False
        self._lock.release()
        return True

    def next_call_steps(self, max_seconds: float | None = None) -> int:
        """How many steps the next call trains (see :meth:`run_call`)."""
        return call_steps(self.step, self.config.chunk, self.config.steps,
                          estimate.estimate(self.config, 1).step_s, max_seconds)

    def apply_call(self, n_active: int, state: dict, records: dict, evaluation: dict) -> int:
        """Take the result of training ``n_active`` steps from this run's state (:func:`rnnlab.training.calls.
        compute_call`): the new state, the applied steps' records, the evaluation at a chunk's end, a divergence.
        Returns the number of steps applied. Call it between calls (holding :meth:`between_calls`)."""
        first = self.step
        self.state = state
        with self._history_lock:
            applied = self.history.add_records(first, records)
            complete = applied < n_active or at_boundary(first + applied, self.config.chunk, self.config.steps)
            if complete:
                self.history.add_evaluation(first + applied, evaluation)
            check_call(self.history, self.config, self.program.task.baseline(self.config.seq_len), first, applied,
                       records)
        if applied and complete:
            self._keep_snapshot()
        return applied

    def _train_call(self, max_seconds: float | None,
                    compute: Callable[[Config, dict, int], CallResult]) -> CallProgress:
        start = time.perf_counter()
        n_active = self.next_call_steps(max_seconds)
        compiled = self.program.is_compiled()
        applied = self.apply_call(n_active, *compute(self.config, self.state, n_active))
        end = time.perf_counter()
        seconds = end - start
        if compiled:  # a call that follows the last at once is timed from its end: the caller's drawing counts too
            last = self._last_end
            followed = last is not None and start - last < FOLLOWS_S
            estimate.record_call(self.config, n_active, end - last if last is not None and followed else seconds)
        else:
            estimate.record_compiled(self.config)
        self._last_end = end
        return CallProgress(self.step, self.config.steps, self._last_loss(), applied / seconds if seconds else 0.0,
                            seconds)

    def _last_loss(self) -> float:
        return self.history.steps[-1]["loss"] if self.history.steps else float("nan")

    def train(self, callback: Callable[[CallProgress], bool | None] | None = None,
              max_seconds: float | None = None) -> History:
        """Train call after call until ``config.steps`` or divergence; a callback returning False stops early.

        ``max_seconds`` bounds each compiled call (see :meth:`run_call`), so the callback comes that often.
        """
        while not self.done:
            progress = self.run_call(max_seconds)
            if callback is not None and progress is not None and callback(progress) is False:
                break
        return self.history

    def fork(self) -> Run:
        """An independent copy at the last finished call: training either one leaves the other as it is."""
        with self._lock:
            other = object.__new__(Run)
            other.__dict__.update(self.__dict__)
            other._lock, other._history_lock = threading.RLock(), threading.Lock()
            # own device buffers: a call donates its input state, which must not delete the other run's
            other.state = jax.device_put(self.state, may_alias=False)  # one call: the lock is held briefly
            other.history = self.history.copy()
            other.snapshots = list(self.snapshots)
            return other

    def nbytes(self) -> int:
        """Rough memory this run holds: its state, the kept parameter snapshots and the history."""
        def tree_bytes(tree) -> int:
            return sum(int(x.nbytes) for x in jax.tree_util.tree_leaves(tree))
        return tree_bytes(self.state) + sum(tree_bytes(p) for _, p in self.snapshots) + self.history.nbytes()

    def _keep_snapshot(self) -> None:
        """Keep host copies of the parameters: the first, the latest, and at most MAX_SNAPSHOTS evenly thinned."""
        self.snapshots.append((self.step, jax.device_get(self.state["params"])))
        if len(self.snapshots) > MAX_SNAPSHOTS:
            self.snapshots = self.snapshots[:-1:2] + self.snapshots[-1:]

    def snapshots_at(self, count: int = 3) -> list[tuple[int, dict]]:
        """``count`` kept parameter snapshots spread from the start to the latest (start, middle, end)."""
        return spread(self.snapshots, count)


def spread(kept: list, count: int) -> list:
    """``count`` items of ``kept`` spread from its first to its last (all of them when there are no more)."""
    if len(kept) <= count:
        return list(kept)
    picks = sorted({round(i * (len(kept) - 1) / (count - 1)) for i in range(count)})
    return [kept[i] for i in picks]



FOLLOWS_S = 2.0  # a call starting this soon after the last one ended continues the same training
CALL_SECONDS = 1.0  # interactive callers bound each compiled call to about this long, so Stop acts within it


def at_boundary(step: int, chunk: int, steps: int) -> bool:
    """Whether ``step`` ends a chunk: a multiple of ``chunk``, or the last of ``steps``."""
    return step % chunk == 0 or step >= steps


def call_steps(step: int, chunk: int, steps: int, step_seconds: float, max_seconds: float | None) -> int:
    """How many steps to train after ``step``: to the end of the chunk, or (with ``max_seconds``) the steps
    that fit in that time at ``step_seconds`` each, at least one."""
    left = min(chunk - step % chunk, steps - step)
    if max_seconds is None or not step_seconds > 0:
        return max(left, 1)
    return max(1, min(left, int(max_seconds / step_seconds)))


def train(config: Config, callback: Callable[[CallProgress], bool | None] | None = None) -> Run:
    """Build a :class:`Run` for ``config`` and train it to the end; returns the run."""
    run = Run(config)
    run.train(callback)
    return run
