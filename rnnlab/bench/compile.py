"""Row 2: compile time against T, rnnlab's scanned training steps against a Python loop over time."""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax.nn import initializers

from rnnlab.bench.report import RowResult, Target
from rnnlab.bench.timing import Timing
from rnnlab.config import Config, static_part
from rnnlab.model.cells import CELLS
from rnnlab.model.optimizers import make_optimizer
from rnnlab.training.program import Program, hyper_args

LENGTHS = (10, 100, 1000, 10000)
QUICK_LENGTHS = (10, 40)
TARGET_RATIO = 1.5  # compile(T max) / compile(T min)


class LoopModel(nn.Module):
    """Published learnable-carry answers' pattern: ``for t in range(T): carry, y = cell(carry, x[:, t])``, then
    a readout on y_T."""

    cell: str
    features: int

    @nn.compact
    def __call__(self, x):
        cell = CELLS[self.cell].build(self.features, initializers.zeros)
        carry = cell.initialize_carry(jax.random.PRNGKey(0), x[:, 0].shape)
        y = None
        for t in range(x.shape[1]):
            carry, y = cell(carry, x[:, t])
        return nn.Dense(1)(y)


def loop_compile_seconds(cell: str, batch: int, T: int, hidden: int) -> float:
    """Wall time of ``jax.jit(train_step).lower(...).compile()`` for the Python-loop model at length T.

    The step: MSE of the readout on the last step, ``value_and_grad``, rnnlab's clipped Adam, the update.
    """
    model = LoopModel(cell, hidden)
    tx = make_optimizer("adam")
    params = jax.eval_shape(model.init, jax.random.PRNGKey(0), jnp.zeros((batch, 2, 2)))  # weights do not depend on T
    opt_state = jax.eval_shape(tx.init, params)
    x = jax.ShapeDtypeStruct((batch, T, 2), jnp.float32)
    y = jax.ShapeDtypeStruct((batch, 1), jnp.float32)

    def train_step(params, opt_state, x, y):
        loss, grads = jax.value_and_grad(lambda p: jnp.mean((model.apply(p, x) - y) ** 2))(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    start = time.perf_counter()
    jax.jit(train_step).lower(params, opt_state, x, y).compile()
    return time.perf_counter() - start


def rnnlab_compile_seconds(cell: str, batch: int, T: int, hidden: int, chunk: int = 25) -> float:
    """Wall time of ``program.train_steps.lower(...).compile()`` for a fresh :class:`Program` (no cache)."""
    config = Config(task="adding", cell=cell, batch=batch, seq_len=T, features=hidden, chunk=chunk)
    program = Program(static_part(config))
    lr, clip, scale = hyper_args(config)
    state = jax.eval_shape(program.plain_init, np.int32(0), scale, lr, clip)
    start = time.perf_counter()
    program.train_steps.lower(state, lr, clip, scale, np.int32(chunk)).compile()
    return time.perf_counter() - start


def median_compile(fn: Callable[[], float], repeats: int) -> Timing:
    return Timing(tuple(fn() for _ in range(repeats)))


def power_fit(points: list[tuple[int, float]]) -> tuple[float, float]:
    """(a, b) of seconds = a * T**b fitted to (T, seconds) points in log-log; b = 1 with one point."""
    if len(points) == 1:
        T, sec = points[0]
        return sec / T, 1.0
    logT, logs = np.log([p[0] for p in points]), np.log([p[1] for p in points])
    b, log_a = np.polyfit(logT, logs, 1)
    return float(np.exp(log_a)), float(b)


def loop_series(lengths: tuple[int, ...], budget_s: float, compile_fn: Callable[[int], float],
                repeats_first: int = 3) -> list[dict]:
    """Compile the loop model at each T (ascending) while its compile is predicted to fit ``budget_s``.

    The prediction is a power law fitted to the lengths measured so far (linear in T after the first). The
    smallest T is compiled ``repeats_first`` times (median), the others once. Returns one dict per T:
    ``seconds`` when compiled, else ``extrapolated`` (the fitted prediction) with ``skipped`` True.
    """
    out: list[dict] = []
    measured: list[tuple[int, float]] = []
    for i, T in enumerate(lengths):
        predicted = None
        if measured:
            a, b = power_fit(measured)
            predicted = a * T**b
        if predicted is not None and predicted > budget_s:
            out.append({"T": T, "seconds": None, "extrapolated": predicted, "skipped": True, "repeats": 0})
            continue
        n = repeats_first if i == 0 else 1
        seconds = median_compile(partial(compile_fn, T), n).median
        out.append({"T": T, "seconds": seconds, "extrapolated": None, "skipped": False, "repeats": n})
        measured.append((T, seconds))
    if measured:
        a, b = power_fit(measured)
        for r in out:
            if r["skipped"]:
                r["extrapolated"] = a * r["T"] ** b  # the final fit, from every measured length
    return out


def run(quick: bool = False) -> RowResult:
    """rnnlab's train_steps and the Python-loop train step compiled at every T, persistent cache off."""
    start = time.perf_counter()
    jax.config.update("jax_enable_compilation_cache", False)
    cell, batch, hidden = ("gru", 8, 8) if quick else ("gru", 32, 64)
    lengths = QUICK_LENGTHS if quick else LENGTHS
    repeats = 2  # capped for time: rnnlab compiles take seconds each
    budget = 5.0 if quick else 45.0
    loop_lengths = tuple(sorted(set(lengths) | ({40} if not quick else set())))
    jax.jit(jnp.sin).lower(jnp.zeros(3)).compile()  # XLA's one-off start-up, untimed
    ours = {T: median_compile(partial(rnnlab_compile_seconds, cell, batch, T, hidden), repeats) for T in lengths}
    loop = loop_series(loop_lengths, budget, lambda T: loop_compile_seconds(cell, batch, T, hidden),
                       repeats_first=repeats)
    by_T = {r["T"]: r for r in loop}
    rows = []
    for T in lengths:
        theirs = by_T[T]
        loop_s = theirs["seconds"] if theirs["seconds"] is not None else theirs["extrapolated"]
        rows.append({"T": T, "rnnlab compile s": ours[T].median, "loop compile s": theirs["seconds"],
                     "loop extrapolated s": theirs["extrapolated"], "loop / rnnlab": loop_s / ours[T].median,
                     "rnnlab vs T min": ours[T].median / ours[lengths[0]].median})
    ratio = ours[lengths[-1]].median / ours[lengths[0]].median
    skipped = [r["T"] for r in loop if r["skipped"]]
    notes = [f"{cell.upper()} cell, batch {batch}, {hidden} hidden. Persistent compilation cache off "
             "(`jax_enable_compilation_cache=False`); one tiny untimed compile first pays XLA's one-off "
             "start-up. Each figure: the wall time of "
             "`jax.jit(f).lower(...).compile()` (tracing, lowering and XLA compilation), median of "
             f"{repeats} compiles for rnnlab, each of a fresh `Program` (no in-memory cache).",
             "rnnlab compiles its whole `train_steps` (25 steps in a `lax.scan`, on-device batches, records, "
             "the evaluation after the last step); the loop model compiles one plain training step on given arrays.",
             f"Python loop: {repeats} compiles at T = {loop_lengths[0]} (median), one compile at each longer T "
             "(capped: each takes long). Measured: "
             + ", ".join(f"T={r['T']}: {r['seconds']:.2f} s" for r in loop if not r["skipped"]) + "."]
    if skipped:
        a, b = power_fit([(r["T"], r["seconds"]) for r in loop if not r["skipped"]])
        notes.append(f"Capped: the Python loop at T = {', '.join(map(str, skipped))} was not compiled, its "
                     f"compile predicted above the budget of {budget:.0f} s per compile; `loop extrapolated s` "
                     f"is a power law fitted to the measured lengths, {a:.3g} · T^{b:.2f} s.")
    met = ratio <= TARGET_RATIO
    targets = [Target("compile time flat in T", f"T={lengths[-1]} within {TARGET_RATIO}x of T={lengths[0]}",
                      f"{ratio:.2f}x", met,
                      "" if met else f"rnnlab compile at T={lengths[-1]}: {ours[lengths[-1]].median:.2f} s "
                                     f"against {ours[lengths[0]].median:.2f} s at T={lengths[0]}")]
    method = ("Compile time against sequence length T: rnnlab's training steps (`train_steps`), where `nn.RNN` "
              "scans one cell over time, against a Flax model that loops over time in Python (as published "
              "learnable-carry answers do), its training step jitted. The scan compiles one step whatever T; the loop "
              "unrolls T copies.")
    columns = ["T", "rnnlab compile s", "loop compile s", "loop extrapolated s", "loop / rnnlab", "rnnlab vs T min"]
    return RowResult("compile", "2. Compile time against T", method, columns, rows, notes, targets,
                     time.perf_counter() - start, extra={"ratio": ratio, "loop": loop})
