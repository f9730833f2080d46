"""Gradient probes: how the gradient travels back through time.

- :func:`carry_grad_norms`: ||dL/dh_t|| for t = 0..T and every carry leaf in ONE backward pass, by adding
  zero perturbations eps_t to the carry after each step and differentiating with respect to them.
- :func:`connectivity`: ||d y_T / d x_t|| for every input step t (Madsen 2019, "Visualizing memorization").
- :func:`decay_sweep` / :func:`fit_decay`: ||dL/dh_0|| against sequence length T per cell, with a fitted
  decay per step.

The tables (:func:`carry_grad_df`, :func:`run_grad_through_time`, :func:`run_connectivity`, :func:`decay_sweep`)
come from the log-scaled probe (:mod:`rnnlab.probing.logscale`): beside each float64 column, ``log10`` holds the
true size however small (-inf only for an exact 0) and ``zero_cause``/``zero_at`` say why an exact 0 is 0.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import replace

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

from rnnlab.config import Config
from rnnlab.grids import SWEEP_TRAINING
from rnnlab.i18n import Msg, _, count_for, t, tn
from rnnlab.model.cells import CELLS
from rnnlab.model.network import SeqModel
from rnnlab.model.tasks import TASKS
from rnnlab.norms import scaled_norm, tree_norm
from rnnlab.probing import logscale, probe_segments
from rnnlab.probing.logscale import LogGrads
from rnnlab.training import estimate
from rnnlab.training.program import EVAL_BATCH, EVAL_CARRY, Program, get_program, hyper_args, is_compiled, stream
from rnnlab.training.train import Run
from rnnlab.true_sizes import F32_LOG10_FLOOR

FractionDone = probe_segments.FractionDone

def _make_probe_batch(program: Program):
    def fn(root):
        x, y = program.batch_for(root, EVAL_BATCH)
        carry_key = stream(root, EVAL_CARRY) if program.static.carry_mode == "noisy" else program.carry_key(root, 0)
        return x, y, carry_key

    return fn


def probe_batch(program: Program, root: jax.Array):
    """The run's evaluation batch and carry key: probes look at the same sequences the charts do (compiled once
    per program: drawn op by op, the batch took longer than a probe of a small model)."""
    return program.jitted("probe_batch", _make_probe_batch)(root)


def _make_carry_grads(program: Program):
    n_leaves = len(program.spec.leaves)

    def fn(params, x, y, carry_key, scale):
        eps0 = program.zero_carry()
        eps = jnp.zeros(x.shape[:-1] + (n_leaves * program.static.features,), x.dtype)

        def loss(eps0, eps):
            preds = program.probe_model.apply(params, x, carry_key, scale, eps0=eps0, eps=eps)
            return program.task.loss(preds, y)

        g0, g = jax.grad(loss, argnums=(0, 1))(eps0, eps)
        g0 = program.spec.carry_as_tuple(g0)
        reduce_axes = tuple(a for a in range(g.ndim - 1) if a != 1)
        norms = []
        for leaf0, leaf in zip(g0, jnp.split(g, n_leaves, axis=-1)):
            after = scaled_norm(leaf, axis=reduce_axes + (g.ndim - 1,))
            norms.append(jnp.concatenate([scaled_norm(leaf0)[None], after]))
        return jnp.stack(norms)

    return fn


def carry_grad_norms(program: Program, params, root: jax.Array, scale, batch=None, segment: int | None = None,
                     progress: FractionDone | None = None) -> dict[str, np.ndarray]:
    """``{leaf: array (steps + 1,)}``: ||dL/dh_t|| over the batch (Frobenius norm) for t = 0..steps.

    t = 0 is the gradient that reaches the initial carry; L is the task's batch-mean loss.
    ``batch`` is ``(x, y, carry_key)``; by default the run's evaluation batch. With ``segment`` (a length), it is
    computed in segments of that many steps, calling ``progress(fraction)`` between them
    (:mod:`rnnlab.probing.probe_segments`).
    """
    x, y, carry_key = batch if batch is not None else probe_batch(program, root)
    if segment is not None:
        norms = probe_segments.carry_grad_norms(program, params, (x, y, carry_key), scale, segment, progress)
    else:
        norms = np.asarray(program.jitted("carry_grads", _make_carry_grads)(params, x, y, carry_key, scale))
    return dict(zip(program.spec.leaves, norms))


def carry_grad_sizes(program: Program, params, root: jax.Array, scale, batch=None, segment: int | None = None,
                     progress: FractionDone | None = None) -> LogGrads:
    """||dL/dh_t|| for t = 0..steps at its true size (log10) and the cause of each exact 0
    (:func:`rnnlab.probing.logscale.carry_grad_log10`); arguments as for :func:`carry_grad_norms`."""
    batch = batch if batch is not None else probe_batch(program, root)
    return logscale.carry_grad_log10(program, params, batch, scale, segment, progress)


GRAD_COLUMNS = ["step", "t", "leaf", "grad_norm", "log10", "zero_cause", "zero_at", "float32"]
FLOAT32_NEAR = 6.0
"""Decades above float32's floor within which the probe also runs a float32 backward pass: a float32 gradient can be
0 only where its true size comes this near its smallest normal number (a component falls below it before the norm
does) or where a step's float32 arithmetic cuts it (a zero cause)."""


def needs_float32(sizes: LogGrads) -> bool:
    """Whether a float32 backward pass may give 0 somewhere the true size is not 0 (:data:`FLOAT32_NEAR`)."""
    finite = sizes.log10[np.isfinite(sizes.log10)]
    near = bool(len(finite)) and float(finite.min()) < F32_LOG10_FLOOR + FLOAT32_NEAR
    return near or bool(np.isin(sizes.zero_cause, ["saturated", "gate"]).any())


def carry_grad_df(program: Program, params, root, scale, step: int = 0, segment: int | None = None,
                  progress: FractionDone | None = None) -> pd.DataFrame:
    """Long table of :func:`carry_grad_sizes`: step (training step), t, leaf, grad_norm (float64; 0 below its
    range), log10 (the true size; -inf for an exact 0), zero_cause (why it is exactly 0, "" where not 0),
    zero_at (the step that cut it, -1 where none) and float32 (what a float32 backward pass on the same batch gives,
    :func:`carry_grad_norms`; NaN where it is not run, :func:`needs_float32` being False)."""
    batch = probe_batch(program, root)
    sizes = carry_grad_sizes(program, params, root, scale, batch, segment=segment, progress=progress)
    values = sizes.values()
    float32 = np.full(values.shape, np.nan)
    if needs_float32(sizes):
        stoppable = None if progress is None else (lambda _f: progress(1.0))  # after the true sizes: no new share
        norms = carry_grad_norms(program, params, root, scale, batch, segment, stoppable)
        float32 = np.stack([np.asarray(norms[leaf], np.float64) for leaf in sizes.leaves])
    rows = [{"step": step, "t": t, "leaf": leaf, "grad_norm": float(values[i, t]), "log10": float(sizes.log10[i, t]),
             "zero_cause": str(sizes.zero_cause[i, t]), "zero_at": int(sizes.zero_at[i, t]),
             "float32": float(float32[i, t])}
            for i, leaf in enumerate(sizes.leaves) for t in range(values.shape[1])]
    return pd.DataFrame(rows, columns=GRAD_COLUMNS)


def _make_connectivity(program: Program):
    def fn(params, x, carry_key, scale):
        def last_output(x):
            return program.model.apply(params, x, carry_key, scale)[:, -1]

        out, vjp = jax.vjp(last_output, x)
        basis = jnp.broadcast_to(jnp.eye(out.shape[-1])[:, None, :], (out.shape[-1],) + out.shape)
        (gx,) = jax.vmap(vjp)(basis)  # (outputs, batch, steps, *input)
        axes = (0,) + tuple(range(3, gx.ndim))
        return jnp.mean(scaled_norm(gx, axis=axes), axis=0)  # mean over the batch of the norms

    return fn


def connectivity(program: Program, params, root: jax.Array, scale, segment: int | None = None,
                 progress: FractionDone | None = None) -> np.ndarray:
    """(steps,): the batch mean of ||d y_T / d x_t||_F, y_T the model's output at the last step.

    Examples are independent, so one vector-Jacobian product per output unit (vmapped) gives every example's
    Jacobian with respect to every input step at once. ``segment`` and ``progress`` as for
    :func:`carry_grad_norms`.
    """
    x, y, carry_key = probe_batch(program, root)
    if segment is not None:
        return probe_segments.connectivity(program, params, (x, y, carry_key), scale, segment, progress)
    return np.asarray(program.jitted("connectivity", _make_connectivity)(params, x, carry_key, scale))


def connectivity_log10(program: Program, params, root: jax.Array, scale, segment: int | None = None,
                       progress: FractionDone | None = None) -> np.ndarray:
    """(steps,): log10 of :func:`connectivity` at its true size (-inf for an exact 0)."""
    return logscale.connectivity_log10(program, params, probe_batch(program, root), scale, segment, progress)


def make_h0_grad(program: Program):
    def fn(params, root, scale):
        x, y, carry_key = probe_batch(program, root)
        grad = jax.grad(lambda e: program.loss_fn(params, e, x, y, carry_key, scale)[0])(program.zero_carry())
        return tree_norm(grad)

    return fn


def h0_grad_norm(program: Program, params, root, scale) -> float:
    """||dL/dh_0|| (all carry leaves together) on the run's evaluation batch."""
    return float(program.jitted("h0_grad", make_h0_grad)(params, root, scale))


MAX_TRAINED = 32  # trained parameter sets kept in memory (a few KB each), shared by every session
_trained: OrderedDict[Config, dict] = OrderedDict()
_trained_lock = threading.Lock()


def sweep_training_config(base: Config, cell: str) -> Config:
    """How ``cell`` is trained for the decay sweep: ``base``'s task and settings, briefly, at a short length."""
    seq_len = max(SWEEP_TRAINING["seq_len"], TASKS[base.task].min_T)
    return replace(base, cell=cell, seq_len=seq_len, steps=SWEEP_TRAINING["steps"])


def trained_params(config: Config, callback=None, max_seconds: float | None = None) -> dict:
    """The parameters of ``config`` trained to its end (a Run), kept for every later caller: runs are
    deterministic, so the same configuration is trained once per process. ``callback`` and ``max_seconds``
    as for ``Run.train``."""
    with _trained_lock:
        if config in _trained:
            _trained.move_to_end(config)
            return _trained[config]
    run = Run(config)
    run.train(callback, max_seconds)
    params = jax.device_get(run.params)
    with _trained_lock:
        _trained[config] = params
        while len(_trained) > MAX_TRAINED:
            _trained.popitem(last=False)
    return params


PROBE_COMPILE_S = 3.0  # compiling one probe of one (cell, T) here (measured: 2-3.5 s)


def is_trained(config: Config) -> bool:
    """Whether :func:`trained_params` of ``config`` is kept already (no training needed)."""
    with _trained_lock:
        return config in _trained


def estimate_decay_sweep(base: Config, cells: Sequence[str], lengths: Sequence[int], weights: str) -> str:
    """In words, how long the decay sweep (training the cells first for ``weights == 'trained'``) will take."""
    compile_s = work_s = 0.0
    for cell in cells:
        if weights == "trained" and not is_trained(training := sweep_training_config(base, cell)):
            guess = estimate.estimate(training)
            compile_s, work_s = compile_s + guess.compile_s, work_s + guess.step_s * guess.steps
        for T in lengths:
            config = replace(base, cell=cell, seq_len=int(T))
            compile_s += 0.0 if is_compiled(config, "log_carry_grads") else PROBE_COMPILE_S
            work_s += estimate.estimate(config, 1).step_s
    return estimate.describe_work(compile_s, work_s)


def decay_sweep(base: Config, cells: list[str], lengths: list[int], params: dict | None = None,
                callback: Callable[[float, int, Msg], object] | None = None) -> pd.DataFrame:
    """||dL/dh_0|| for every cell and sequence length T: columns cell, T, h0_grad_norm (float64, 0 below its
    range), log10 (the true size, -inf for an exact 0), zero_cause and zero_at (as :func:`carry_grad_df`).

    Each cell is initialised once with ``base.seed`` (its weights do not depend on T) unless ``params``
    gives ``{cell: params}`` (e.g. trained weights), then probed at every T on a fresh batch of length T.
    ``callback(done, total, text)`` is called before each probe, and between the pieces of a long one (``done``
    then counts the share of that probe done).
    """
    rows: list[dict] = []
    lr, clip, scale = hyper_args(base)
    total = len(cells) * len(lengths)
    for cell in cells:
        cell_params = (params or {}).get(cell)
        for T in lengths:
            # kept as a message: made in a worker thread, shown in the reader's language on the page
            # TRANSLATORS: {cell} is a cell's name (LSTM); {T} a sequence length; {n} of {total} probes
            text = Msg("Probing the {cell} at T = {T} ({n} of {total})…", cell=Msg(CELLS[cell].label), T=int(T),
                       n=len(rows) + 1, total=total)
            if callback is not None:
                callback(len(rows), total, text)
            config = replace(base, cell=cell, seq_len=int(T))
            program = get_program(config)
            root = jax.random.PRNGKey(base.seed)
            if cell_params is None:
                cell_params = program.init(np.int32(base.seed), scale, lr, clip)["params"]
            segment = probe_segments.segment_length(config, program.steps)
            done = len(rows)  # a long probe goes in pieces, reporting (and stoppable) between them
            part = None if callback is None or segment is None else (
                lambda f, done=done, text=text: callback(done + f, total, text))
            sizes = carry_grad_sizes(program, cell_params, root, scale, segment=segment, progress=part)
            log10 = sizes.h0_log10()
            zero = [i for i in range(len(sizes.leaves)) if sizes.zero_cause[i, 0]]
            cause, at = (str(sizes.zero_cause[zero[0], 0]), int(sizes.zero_at[zero[0], 0])) \
                if math.isinf(log10) and zero else ("", -1)
            rows.append({"cell": cell, "T": int(T), "h0_grad_norm": float(logscale.to_float(log10)), "log10": log10,
                         "zero_cause": cause, "zero_at": at})
    return pd.DataFrame(rows, columns=SWEEP_COLUMNS)


SWEEP_COLUMNS = ["cell", "T", "h0_grad_norm", "log10", "zero_cause", "zero_at"]


def fit_exponential(x: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """Least-squares fit of log y = a + b x over the finite, positive y.

    Returns ``rate`` (the factor per unit of x, exp b), ``halving`` (units of x for the value to halve,
    inf when it does not decay) and ``points`` used.
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = np.isfinite(y) & (y > 0)
    if ok.sum() < 2:
        return {"rate": math.nan, "halving": math.nan, "points": int(ok.sum())}
    b, _ = np.polyfit(x[ok], np.log(y[ok]), 1)
    return {"rate": float(math.exp(b)), "halving": math.log(2) / -b if b < 0 else math.inf,
            "points": int(ok.sum())}


def fit_log10(x: np.ndarray, log10: np.ndarray) -> dict[str, float]:
    """:func:`fit_exponential` from the values' log10 (true sizes, however small): a least-squares line through
    the finite log10 values; -inf (an exact 0) and nan are skipped."""
    x, y = np.asarray(x, float), np.asarray(log10, float)
    ok = np.isfinite(y)
    if ok.sum() < 2:
        return {"rate": math.nan, "halving": math.nan, "points": int(ok.sum())}
    b, _ = np.polyfit(x[ok], y[ok], 1)
    return {"rate": float(10.0 ** b), "halving": math.log10(2) / -b if b < 0 else math.inf,
            "points": int(ok.sum())}


def fit_decay(sweep: pd.DataFrame) -> pd.DataFrame:
    """Per cell, the fitted decay of ||dL/dh_0|| per step of T: rate per step and steps to halve (fitted on the
    ``log10`` column, the true sizes, where the table has one)."""
    rows = []
    for cell, group in sweep.groupby("cell", sort=False):
        if "log10" in group:
            fit = fit_log10(group["T"], group["log10"])
        else:
            fit = fit_exponential(group["T"], group["h0_grad_norm"])
        rows.append({"cell": cell, "rate_per_step": fit["rate"], "halving_steps": fit["halving"],
                     "points": fit["points"]})
    return pd.DataFrame(rows, columns=["cell", "rate_per_step", "halving_steps", "points"])


def describe_halving(halving: float) -> str:
    """'the gradient halves every 12.3 steps' (or that it does not decay, or could not be fitted)."""
    if math.isnan(halving):
        return _("no decay fitted: fewer than two lengths have a non-zero gradient (the others are exactly 0)")
    if math.isinf(halving):
        return _("the gradient does not decay with T")
    # TRANSLATORS: {steps} is a number of time steps written to three digits (2.9, 150); the form follows it as
    # written: «каждые 2,9 шага», «каждые 150 шагов»
    return tn("the gradient halves every {steps:.3g} step", "the gradient halves every {steps:.3g} steps",
              count_for(halving), steps=halving)


def describe_fit(rate: float, halving: float) -> str:
    """'x0.787 per step: the gradient halves every 2.9 steps', or why there is no fit."""
    if not math.isfinite(rate):
        return describe_halving(halving)
    if math.isinf(halving):
        # TRANSLATORS: {rate} is the factor the gradient is multiplied by per step of T (0.787)
        return t("×{rate:.3g} per step: the gradient does not decay with T", rate=rate)
    # TRANSLATORS: {rate} is the factor per step of T (0.787); {halves} says how fast it halves ("the gradient halves
    # every 2.9 steps")
    return t("×{rate:.3g} per step: {halves}", rate=rate, halves=describe_halving(halving))


def run_grad_through_time(run, count: int = 3, progress: FractionDone | None = None) -> pd.DataFrame:
    """:func:`carry_grad_df` of a :class:`~rnnlab.training.train.Run` at ``count`` recorded training steps (start to
    now).

    A long probe is computed in segments, calling ``progress(fraction of all)`` between them; raise there to stop.
    """
    snapshots = run.snapshots_at(count)
    segment = probe_segments.segment_length(run.config, run.program.steps)
    frames = []
    for i, (step, params) in enumerate(snapshots):
        part = None if progress is None else (lambda f, i=i: progress((i + f) / len(snapshots)))
        frames.append(carry_grad_df(run.program, params, run.root, run.scale, step, segment, part))
    return pd.concat(frames, ignore_index=True)

def run_connectivity(run, progress: FractionDone | None = None) -> pd.DataFrame:
    """:func:`connectivity` of a :class:`~rnnlab.training.train.Run`'s current parameters: columns t, connectivity
    (float64, 0 below its range) and log10 (its true size, -inf for an exact 0). ``progress`` as for
    :func:`run_grad_through_time`."""
    segment = probe_segments.segment_length(run.config, run.program.steps)
    log10 = connectivity_log10(run.program, run.params, run.root, run.scale, segment, progress)
    return pd.DataFrame({"t": range(1, len(log10) + 1), "connectivity": logscale.to_float(log10), "log10": log10})


ROBUSTNESS_DRAWS = 4  # fresh initial carries per scale when a run is started from elsewhere
ROBUSTNESS_WIDER = 4.0  # the wider draws: this many times the run's scale


def _make_start_eval(program: Program):
    model = SeqModel(cell=program.static.cell, task=program.static.task, features=program.static.features,
                     carry_mode="fixed", carry_init="normal", kernel_size=program.static.kernel_size)

    def fn(params, x, y, key, scale):
        preds = model.apply(params, x, key, scale)
        return program.task.loss(preds, y), program.task.metric(preds, y)

    return fn


def start_sigma(config: Config) -> float:
    """The standard deviation of the fresh starts: the run's own for a normal ``carry_init``, else 0.5."""
    return float(config.carry_scale) if config.carry_init == "normal" and config.carry_scale > 0 else 0.5


def start_robustness(run, draws: int = ROBUSTNESS_DRAWS, progress: FractionDone | None = None) -> pd.DataFrame:
    """How a run with a drawn (not learned) initial carry does when started from other carries: its evaluation
    loss and metric from a zero carry, from ``draws`` fresh N(0, sigma) carries (mean) and from fresh carries
    ``ROBUSTNESS_WIDER`` times as wide. Columns: start, loss, metric. ``progress(fraction)`` is called after each
    evaluation; raise there to stop."""
    if run.config.carry_mode == "learnable":
        raise ValueError("a learned initial carry is a parameter: start the model elsewhere on a drawn carry")
    program, sigma = run.program, start_sigma(run.config)
    x, y, _ = probe_batch(program, run.root)
    evaluate = program.jitted("start_eval", _make_start_eval)
    rows, done = [], 0
    for label, scale, count in (("zero carry", 0.0, 1), (f"fresh N(0, {sigma:g}) carries", sigma, draws),
                                (f"fresh N(0, {ROBUSTNESS_WIDER * sigma:g}) carries", ROBUSTNESS_WIDER * sigma,
                                 draws)):
        keys = [jax.random.fold_in(jax.random.PRNGKey(7_919), d) for d in range(count)]
        values = []
        for key in keys:
            values.append(jax.device_get(evaluate(run.params, x, y, key, np.float32(scale))))
            if progress is not None:
                progress((done := done + 1) / (1 + 2 * draws))
        rows.append({"start": label, "loss": float(np.mean([v[0] for v in values])),
                     "metric": float(np.mean([v[1] for v in values]))})
    return pd.DataFrame(rows, columns=["start", "loss", "metric"])
