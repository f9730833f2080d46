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
