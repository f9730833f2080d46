"""Timing helpers: a median over repeated runs after warm-up, waiting for JAX's asynchronous results."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import jax


@dataclass(frozen=True)
class Timing:
    """Seconds of each repeated run and their median."""

    samples: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def spread(self) -> float:
        """(max - min) / median: how noisy the repeats were."""
        return (max(self.samples) - min(self.samples)) / self.median if self.median > 0 else 0.0

    def per(self, n: int) -> Timing:
        """The same timing divided by ``n`` (e.g. seconds per step of a chunk of n steps)."""
        return Timing(tuple(s / n for s in self.samples))


def paired_ratio(a: Timing, b: Timing) -> float:
    """The median of ``a``'s samples over ``b``'s taken in the same turn of :func:`interleaved`: a ratio that a
    slow drift of the machine's speed, shared by both of a turn's samples, leaves alone."""
    return statistics.median(x / y for x, y in zip(a.samples, b.samples, strict=True))


def measure(fn: Callable[[], object], repeats: int, warmup: int = 1) -> Timing:
    """Call ``fn`` ``warmup`` times, then time ``repeats`` calls; JAX results are waited for inside the timing."""
    for _ in range(warmup):
        jax.block_until_ready(fn())
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn())
        samples.append(time.perf_counter() - start)
    return Timing(tuple(samples))


def timed(fn: Callable[[], object]) -> tuple[float, object]:
    """(seconds, result) of one call, waiting for JAX's result."""
    start = time.perf_counter()
    out = jax.block_until_ready(fn())
    return time.perf_counter() - start, out


def interleaved(fns: dict[str, Callable[[], object]], repeats: int, warmup: int = 1) -> dict[str, Timing]:
    """Like :func:`measure` for several functions, taking turns (a, b, c, a, b, c, ...), so that a change in the
    machine's load during the measurement falls on all of them alike and their ratios stay fair."""
    for fn in fns.values():
        for _ in range(warmup):
            jax.block_until_ready(fn())
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            start = time.perf_counter()
            jax.block_until_ready(fn())
            samples[name].append(time.perf_counter() - start)
    return {name: Timing(tuple(s)) for name, s in samples.items()}
