"""Row 3: the one-pass gradient probe against a training step and against one backward pass per time step, and the
log-scaled probe (true sizes, however small) against the float32 one."""

from __future__ import annotations

import time

import jax
import jax.numpy as jnp
import numpy as np

from rnnlab.bench.report import RowResult, Target
from rnnlab.bench.timing import interleaved, measure, paired_ratio
from rnnlab.config import Config
from rnnlab.probing.logscale import carry_grad_log10
from rnnlab.probing.probes import carry_grad_norms, probe_batch
from rnnlab.training.program import Program, get_program, hyper_args

TARGET_RATIO = 1.3
LOG_TARGET_RATIO = 1.3  # the log-scaled probe against the float32 probe
RATIO_PAIRS = 8  # turns of the two probes alone per repeat, for their ratio


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


CELLS = ("gru", "lstm", "simple")


def step_and_probe(cell: str, quick: bool, repeats: int):
    """(config, program, params, root, scale, step timing, probe timing, log-scaled probe / probe) for ``cell`` at
    T = 100; the log-scaled probe's ratio is the median of ratios of runs taken in the same turn, the two probes
    alone (``RATIO_PAIRS`` turns per repeat)."""
    config = Config(cell=cell, seq_len=10 if quick else 100, batch=8 if quick else 64,
                    features=8 if quick else 64, chunk=2 if quick else 10)
    program = get_program(config)
    lr, clip, scale = hyper_args(config)
    state = {"s": program.init(np.int32(config.seed), scale, lr, clip)}
    n = np.int32(config.chunk)

    def chunk():
        state["s"], records, evaluation = program.train_chunk(state["s"], lr, clip, scale, n)
        return records

    measure(chunk, repeats=0, warmup=1)
    # The chunk donates its state, so the probe looks at a copy of the trained parameters.
    params, root = jax.tree_util.tree_map(jnp.copy, (state["s"]["params"], state["s"]["root"]))
    batch = probe_batch(program, root)
    probes = {"probe": lambda: carry_grad_norms(program, params, root, scale, batch),
              "log probe": lambda: carry_grad_log10(program, params, batch, scale)}
    timings = interleaved({"step": chunk, **probes}, repeats)
    pairs = interleaved(probes, RATIO_PAIRS * repeats)  # the two probes alone, in many short turns
    return (config, program, params, root, scale, timings["step"].per(config.chunk), timings["probe"],
            timings["log probe"], paired_ratio(pairs["log probe"], pairs["probe"]))


def naive_check(program: Program, params, root, scale, repeats: int):
    """(timing of the naive loop, largest relative difference between its norms and the probe's)."""
    batch = probe_batch(program, root)
    naive = make_naive(program)
    timing = measure(lambda: naive_norms(program, naive, params, batch, scale), repeats)
    one_pass = carry_grad_norms(program, params, root, scale)
    ours = np.stack([one_pass[leaf][1:] for leaf in program.spec.leaves])  # t = 1..steps
    theirs = naive_norms(program, naive, params, batch, scale)
    return timing, float(np.max(np.abs(ours - theirs) / np.maximum(np.abs(theirs), 1e-30)))


def run(quick: bool = False) -> RowResult:
    """Every cell at T = 100 (batch 64, 64 hidden): training step and probe; for the GRU also the naive loop,
    whose norms are checked against the probe's."""
    start = time.perf_counter()
    repeats = 2 if quick else 5
    rows: list[dict] = []
    ratios: dict[str, float] = {}
    log_ratios: dict[str, float] = {}
    for cell in CELLS:
        config, program, params, root, scale, step, probe, log_probe, log_ratios[cell] = step_and_probe(
            cell, quick, repeats)
        ratios[cell] = probe.median / step.median
        rows += [{"cell": cell, "what": "one training step (Adam, clipping; from a chunk)", "ms": step.median * 1e3,
                  "/ step": 1.0},
                 {"cell": cell, "what": "probe: all ||dL/dh_t|| in one backward pass", "ms": probe.median * 1e3,
                  "/ step": ratios[cell]},
                 {"cell": cell, "what": f"log-scaled probe (true sizes): x{log_ratios[cell]:.2f} the probe",
                  "ms": log_probe.median * 1e3, "/ step": log_probe.median / step.median}]
        if cell != "gru":
            continue
        gru_step, gru_probe = step, probe
        naive_t, rel_diff = naive_check(program, params, root, scale, max(2, repeats // 2))
        rows.append({"cell": cell, "what": f"naive: one backward pass per t ({program.steps} jitted calls)",
                     "ms": naive_t.median * 1e3, "/ step": naive_t.median / step.median})

    notes = [f"Adding problem, T = {config.seq_len}, batch {config.batch}, {config.features} hidden. Step: "
             f"a `train_chunk` of {config.chunk} steps / {config.chunk}; probe: "
             "`rnnlab.probing.probes.carry_grad_norms` on the evaluation batch (same batch size), including the copy "
             "of its result to the host; the two take turns (one of each, then again). Naive (GRU): a jitted "
             "gradient with respect to a perturbation at a traced "
             f"step t, called for every t. Medians of {repeats} (naive: {max(2, repeats // 2)}) after a warm-up.",
             f"Check: the naive norms equal the probe's to a relative {rel_diff:.1e} (largest over t).",
             f"The probe is {naive_t.median / gru_probe.median:.0f}x faster than the naive loop (GRU).",
             "Log-scaled probe: `rnnlab.probing.logscale.carry_grad_log10` on the same batch, in the same turns, "
             "including the copy of its result to the host and the float64 sums there; its ratio to the probe is the "
             f"median of the ratios of {RATIO_PAIRS * repeats} turns of the two probes alone, one of each."]
    worst = max(ratios, key=ratios.__getitem__)
    met = ratios[worst] <= TARGET_RATIO
    log_worst = max(log_ratios, key=log_ratios.__getitem__)
    log_met = log_ratios[log_worst] <= LOG_TARGET_RATIO
    targets = [Target("gradient probe / training step, every cell", f"<= {TARGET_RATIO}",
                      " / ".join(f"{c} {r:.2f}" for c, r in ratios.items()), met,
                      "" if met else f"{worst}: the probe runs the forward and backward pass of a step over a batch "
                                     f"of the same size, plus the norms at every step and their copy to the host"),
               Target("log-scaled probe / float32 probe, every cell", f"<= {LOG_TARGET_RATIO}",
                      " / ".join(f"{c} {r:.2f}" for c, r in log_ratios.items()), log_met,
                      "" if log_met else f"{log_worst}: every step also rescales the cotangent per example and keeps "
                                         "its log10, and the forward pass keeps the activations' derivatives")]
    method = ("The gradient probe (every ||dL/dh_t|| from one backward pass with zero perturbations added after "
              "each step) against one plain training step, for every cell, and for the GRU against the naive "
              "way, one backward pass per t.")
    return RowResult("probe", "3. Gradient probe", method, ["cell", "what", "ms", "/ step"], rows, notes, targets,
                     time.perf_counter() - start,
                     extra={"ratio": max(ratios.values()), "ratios": ratios, "log_ratios": log_ratios,
                            "log_ratio": max(log_ratios.values()), "rel_diff": rel_diff,
                            "naive_ratio": naive_t.median / gru_probe.median, "gru_step": gru_step.median})
