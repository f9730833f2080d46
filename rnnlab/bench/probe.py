"""Row 3: the one-pass gradient probe and the log-scaled probe (true sizes, however small) against a training step,
for every cell the probe supports at two sizes, and against one backward pass per time step."""

from __future__ import annotations

import time
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from rnnlab.bench.report import RowResult, Target
from rnnlab.bench.timing import Timing, interleaved, measure
from rnnlab.config import Config
from rnnlab.model.cells import CELLS as CELL_SPECS
from rnnlab.probing.logscale import carry_grad_log10, needs_exact_logs
from rnnlab.probing.probes import carry_grad_norms, probe_batch
from rnnlab.training.program import Program, get_program, hyper_args

TARGET_RATIO = 1.3  # the float32 probe against a training step
LOG_TARGET_RATIO = 1.3  # the log-scaled probe against a training step
CELLS = tuple(name for name, spec in CELL_SPECS.items() if not spec.spatial)  # the cells of a flat task
HIDDEN = (64, 256)
SATURATING_GAIN = 300.0  # the cell's weights this many times as large: every unit saturates, gates shut


def make_naive(program: Program):
    """Jitted ``(params, x, y, carry_key, scale, t) -> (leaves,)``: ||dL/dh_t|| by its own backward pass.

    The perturbation is zero except at step ``t`` (a traced index, so one compiled program serves every t),
    and the gradient is taken with respect to that step's perturbation only.
    """
    n_leaves = len(program.spec.leaves)
    features = program.static.features

    def fn(params, x, y, carry_key, scale, t):
        def loss(delta):
            eps = jnp.zeros(x.shape[:-1] + (n_leaves * features,), x.dtype)
            eps = jax.lax.dynamic_update_slice_in_dim(eps, delta[:, None], t, axis=1)
            preds = program.probe_model.apply(params, x, carry_key, scale, eps=eps)
            return program.task.loss(preds, y)

        g = jax.grad(loss)(jnp.zeros(x.shape[:1] + x.shape[2:-1] + (n_leaves * features,), x.dtype))
        return jnp.stack([jnp.sqrt(jnp.sum(leaf**2)) for leaf in jnp.split(g, n_leaves, axis=-1)])

    return jax.jit(fn)


def naive_norms(program: Program, naive, params, batch, scale) -> np.ndarray:
    """(leaves, steps): ||dL/dh_t|| for t = 1..steps, one jitted backward pass per step."""
    x, y, carry_key = batch
    return np.stack([naive(params, x, y, carry_key, scale, np.int32(t)) for t in range(program.steps)], axis=1)


def saturating(params, cell: str, gain: float = SATURATING_GAIN):
    """``params`` with the cell's kernels and biases ``gain`` times as large."""
    params = jax.tree_util.tree_map(np.array, params)
    p = CELL_SPECS[cell].params_in(params)
    for layer in p.values():
        for name in layer:
            layer[name] = (np.float32(gain) * layer[name]).astype(np.float32)
    return params


@dataclass
class Point:
    """One cell at one size: its program and trained weights, and the timings taken in the same turns."""

    config: Config
    program: Program
    params: dict
    root: jax.Array
    scale: np.float32
    step: Timing  # one training step (a compiled call of a chunk / its steps)
    probe: Timing
    log_probe: Timing
    exact_logs: bool  # whether the log-scaled probe took its exact-log branch on this batch


def config_for(cell: str, hidden: int, quick: bool) -> Config:
    return Config(cell=cell, seq_len=10 if quick else 100, batch=8 if quick else 64, features=hidden,
                  chunk=2 if quick else 10)


def measure_point(cell: str, hidden: int, quick: bool, repeats: int) -> Point:
    """A compiled training call, the float32 probe and the log-scaled probe of ``cell`` with ``hidden`` units,
    taking turns (one of each, then again), on the weights after one call."""
    config = config_for(cell, hidden, quick)
    program = get_program(config)
    lr, clip, scale = hyper_args(config)
    state = {"s": program.init(np.int32(config.seed), scale, lr, clip)}
    n = np.int32(config.chunk)

    def call():
        state["s"], records, evaluation = program.train_steps(state["s"], lr, clip, scale, n)
        return records

    measure(call, repeats=0, warmup=1)
    # The call donates its state, so the probes look at a copy of the trained parameters.
    params, root = jax.tree_util.tree_map(jnp.copy, (state["s"]["params"], state["s"]["root"]))
    batch = probe_batch(program, root)
    timings = interleaved({"step": call, "probe": lambda: carry_grad_norms(program, params, root, scale, batch),
                           "log probe": lambda: carry_grad_log10(program, params, batch, scale)}, repeats)
    return Point(config, program, params, root, scale, timings["step"].per(config.chunk), timings["probe"],
                 timings["log probe"], needs_exact_logs(program, params, batch, scale))


def naive_check(program: Program, params, root, scale, repeats: int):
    """(timing of the naive loop, largest relative difference between its norms and the probe's)."""
    batch = probe_batch(program, root)
    naive = make_naive(program)
    timing = measure(lambda: naive_norms(program, naive, params, batch, scale), repeats)
    one_pass = carry_grad_norms(program, params, root, scale)
    ours = np.stack([one_pass[leaf][1:] for leaf in program.spec.leaves])  # t = 1..steps
    theirs = naive_norms(program, naive, params, batch, scale)
    return timing, float(np.max(np.abs(ours - theirs) / np.maximum(np.abs(theirs), 1e-30)))


def exact_branch(point: Point, repeats: int) -> tuple[Timing, bool]:
    """The log-scaled probe on the point's weights made saturating (:data:`SATURATING_GAIN`): its timing and
    whether it took the exact-log branch."""
    cell = point.config.cell
    params = saturating(point.params, cell)
    batch = probe_batch(point.program, point.root)
    timing = measure(lambda: carry_grad_log10(point.program, params, batch, point.scale), repeats)
    return timing, needs_exact_logs(point.program, params, batch, point.scale)


def _ratios(ratios: dict[tuple[str, int], float]) -> str:
    """'H=64: gru 0.89 / lstm 0.90; H=256: ...'."""
    return "; ".join(f"H={h}: " + " / ".join(f"{c} {r:.2f}" for (c, hh), r in ratios.items() if hh == h)
                     for h in dict.fromkeys(h for _, h in ratios))


def _target(name: str, goal: float, ratios: dict[tuple[str, int], float], points: dict, attr: str,
            why: str) -> Target:
    worst = max(ratios, key=ratios.__getitem__)
    met = ratios[worst] <= goal
    p = points[worst]
    detail = (f"worst {worst[0]} at H={worst[1]}: {getattr(p, attr).median * 1e3:.1f} ms against a "
              f"{p.step.median * 1e3:.1f} ms step; {why}")
    return Target(name, f"<= {goal}", _ratios(ratios), met, "" if met else detail)


def _rows(points: dict[tuple[str, int], Point]) -> list[dict]:
    rows = []
    for (cell, hidden), p in points.items():
        step = p.step.median
        rows += [{"cell": cell, "hidden": hidden, "what": "one training step (Adam, clipping; from a compiled call)",
                  "ms": step * 1e3, "/ step": 1.0},
                 {"cell": cell, "hidden": hidden, "what": "probe: all ||dL/dh_t|| in one backward pass",
                  "ms": p.probe.median * 1e3, "/ step": p.probe.median / step},
                 {"cell": cell, "hidden": hidden,
                  "what": f"log-scaled probe (true sizes): x{p.log_probe.median / p.probe.median:.2f} the probe",
                  "ms": p.log_probe.median * 1e3, "/ step": p.log_probe.median / step}]
    return rows


def run(quick: bool = False) -> RowResult:
    """Every cell of a flat task at T = 100, batch 64, with 64 and 256 hidden units: training step, float32 probe
    and log-scaled probe; for the GRU (64 hidden) also the naive loop, whose norms are checked against the probe's,
    and the log-scaled probe on saturating weights (its exact-log branch)."""
    start = time.perf_counter()
    repeats = 2 if quick else 5
    hidden_sizes = tuple(h // 8 for h in HIDDEN) if quick else HIDDEN
    points = {(cell, h): measure_point(cell, h, quick, repeats) for h in hidden_sizes for cell in CELLS}
    gru = points[("gru", hidden_sizes[0])]
    naive_t, rel_diff = naive_check(gru.program, gru.params, gru.root, gru.scale, max(2, repeats // 2))
    exact_t, exact_taken = exact_branch(gru, repeats)
    rows = _rows(points)
    at = 3 * list(points).index(("gru", hidden_sizes[0])) + 3  # after the GRU's three rows at the first size
    rows[at:at] = [{"cell": "gru", "hidden": hidden_sizes[0], "what": "naive: one backward pass per t "
                    f"({gru.program.steps} jitted calls)", "ms": naive_t.median * 1e3,
                    "/ step": naive_t.median / gru.step.median},
                   {"cell": "gru", "hidden": hidden_sizes[0], "what": f"log-scaled probe, weights x{SATURATING_GAIN:g} "
                    "(saturated units, shut gates: exact logs)", "ms": exact_t.median * 1e3,
                    "/ step": exact_t.median / gru.step.median}]
    ratios = {k: p.probe.median / p.step.median for k, p in points.items()}
    log_ratios = {k: p.log_probe.median / p.step.median for k, p in points.items()}
    fast = [f"{c} H={h}" for (c, h), p in points.items() if not p.exact_logs]
    config = gru.config
    notes = [f"Adding problem, T = {config.seq_len}, batch {config.batch}, {' and '.join(map(str, hidden_sizes))} "
             f"hidden units (`hidden`), every cell of a flat task. Step: one `train_steps` call of {config.chunk} "
             f"steps / {config.chunk}; probe: `rnnlab.probing.probes.carry_grad_norms` (float32) on the evaluation "
             "batch (same batch size); log-scaled probe: `rnnlab.probing.logscale.carry_grad_log10` on the same batch. "
             "Both probes include the copy of their result to the host (and the log-scaled probe the float64 sums "
             "there); the three take turns (one of each, then again). Naive (GRU): a jitted gradient with respect "
             f"to a perturbation at a traced step t, called for every t. Medians of {repeats} "
             f"(naive: {max(2, repeats // 2)}) after a warm-up.",
             f"Check: the naive norms equal the probe's to a relative {rel_diff:.1e} (largest over t).",
             f"The probe is {naive_t.median / gru.probe.median:.0f}x faster than the naive loop (GRU).",
             "The log-scaled probe's forward pass keeps each step's factors (the gates and the activations' "
             "derivatives it multiplies by) as they are; only where some example's factor is below e^-40 (and not "
             "exactly 0) does it run the forward pass again, keeping every factor scaled with its exact log "
             "(`rnnlab.probing.logscale.needs_exact_logs`). Branch taken here: factors as they are for "
             f"{len(fast)} of {len(points)} points" + ("" if len(fast) == len(points) else
                                                       f" ({', '.join(fast)})") +
             "; on the GRU's weights made saturating (x"
             f"{SATURATING_GAIN:g}) the exact branch ({'taken' if exact_taken else 'NOT taken'}) costs "
             f"{exact_t.median / gru.log_probe.median:.1f}x the ordinary probe. The page's float32 backward pass "
             "(run where a true size comes near float32's floor, `rnnlab.probing.probes.carry_grad_df`) is not "
             "part of the log-scaled probe and not timed here."]
    targets = [_target("gradient probe / training step, every cell and size", TARGET_RATIO, ratios, points, "probe",
                       "the probe runs the forward and backward pass of a step over a batch of the same size, plus "
                       "the norms at every step and their copy to the host"),
               _target("log-scaled probe / training step, every cell and size", LOG_TARGET_RATIO, log_ratios, points,
                       "log_probe", "every step also rescales the cotangent per example and keeps its log10, and "
                                    "the forward pass keeps the activations' derivatives")]
    method = ("The gradient probe (every ||dL/dh_t|| from one backward pass with zero perturbations added after "
              "each step) and the log-scaled probe (every ||dL/dh_t|| at its true size, however small) against one "
              "plain training step, for every cell of a flat task at two sizes, and for the GRU against the naive "
              "way, one backward pass per t.")
    return RowResult("probe", "3. Gradient probe", method, ["cell", "hidden", "what", "ms", "/ step"], rows, notes,
                     targets, time.perf_counter() - start,
                     extra={"ratio": max(ratios.values()), "ratios": ratios, "log_ratios": log_ratios,
                            "log_ratio": max(log_ratios.values()), "rel_diff": rel_diff,
                            "naive_ratio": naive_t.median / gru.probe.median, "gru_step": gru.step.median,
                            "exact_taken": exact_taken, "fast_points": len(fast)})
