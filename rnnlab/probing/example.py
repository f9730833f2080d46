"""One example of the task, step by step: what the model reads, what it answers, its carry and its gates.

:func:`look` runs the run's own Flax cell over one sequence (a fresh draw per example number, from the run's
key) and returns, per time step, the prediction, the norm of every carry leaf, the gate activations (gated
cells) and ||dL/dh_t|| for that example's loss, with t = 0 the initial carry. The gradient comes from the
log-scaled probe (:mod:`rnnlab.probing.logscale`) on that one sequence: its true size as log10 however small,
and for an exact 0 its cause. It reads parameters the run already keeps (its snapshots), so nothing is trained
again; it is compiled once per configuration (and the probe once for a batch of one), apart from the training
step.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import jax
import jax.numpy as jnp
import numpy as np

from rnnlab.config import Config
from rnnlab.model.tasks import SequenceView
from rnnlab.norms import scaled_norm
from rnnlab.probing import logscale
from rnnlab.training import estimate
from rnnlab.training.program import EVAL_CARRY, Program, stream

EXAMPLES = 6  # the key stream of the examples shown (after the program's streams 0-5)
LIGHT_S = 1.0  # looks estimated below this need no training slot: they do not wait behind a class's runs


@dataclass(frozen=True)
class Look:
    """One example under one set of parameters (``step``: the training step they are from)."""

    step: int
    view: SequenceView  # the example itself
    prediction: np.ndarray  # (steps,) the value predicted, or the class predicted (its index)
    confidence: np.ndarray | None  # (steps,) the probability given to the right answer (classification tasks)
    carry_norms: dict[str, np.ndarray]  # leaf -> (steps + 1,) ||carry_t||, t = 0 the initial carry
    grads: logscale.LogGrads  # ||dL/dcarry_t|| for this example's loss at its true size, t = 0..steps
    gates: dict[str, np.ndarray]  # gate -> (steps, features) activations (spatial cells: none)
    loss: float  # this example's loss

    @property
    def grad_log10(self) -> dict[str, np.ndarray]:
        """leaf -> (steps + 1,) log10 ||dL/dcarry_t|| (-inf for an exact 0; NaN where the loss cannot depend on
        the leaf: an LSTM's last cell state c_T, read by no later step)."""
        out = {}
        for i, leaf in enumerate(self.grads.leaves):
            out[leaf] = np.where(self.grads.zero_cause[i] == "unread", np.nan, self.grads.log10[i])
        return out

    @property
    def grad_norms(self) -> dict[str, np.ndarray]:
        """leaf -> (steps + 1,) ||dL/dcarry_t|| as float64 numbers (0 below float64's range; NaN as in
        :attr:`grad_log10`)."""
        return {leaf: np.where(np.isnan(v), np.nan, logscale.to_float(v)) for leaf, v in self.grad_log10.items()}


def looks_seconds(config: Config, count: int) -> float:
    """About how long ``count`` looks of ``config`` take once compiled: each is a forward pass and the
    log-scaled probe's forward and backward pass over one sequence, about a training step of batch 1."""
    return count * estimate.estimate(replace(config, batch=1), 1).step_s


def _make_look(program: Program):
    spec, task, static = program.spec, program.task, program.static
    cell = spec.build(static.features, None, static.kernel_size)

    def fn(params, root, scale, index):
        x, y = task.generate(stream(root, EXAMPLES, index), static.batch, static.seq_len)
        carry_key = stream(root, EVAL_CARRY) if static.carry_mode == "noisy" else program.carry_key(root, 0)
        start = program.model.apply(params, x, carry_key, scale, start_only=True)
        start = jax.tree_util.tree_map(lambda leaf: leaf[:1], start)  # the example's row, batch axis kept
        x1, y1 = x[:1], y[:1]
        p_cell = spec.params_in(params)
        gated = spec.fused if spec.gates is not None else None  # a gated cell's gates: read from its fused step
        w = gated.weights(p_cell) if gated is not None else None

        def step(carry, x_t):
            new, _ = cell.apply({"params": p_cell}, carry, x_t)
            gates = {}
            if gated is not None and w is not None and spec.gates is not None:
                gates = spec.gates.read(gated.step(w, spec.carry_as_tuple(carry), x_t)[1])
            return new, (spec.carry_as_tuple(new), gates)

        _, (leaves, gates) = jax.lax.scan(step, start, jnp.swapaxes(x1, 0, 1))
        outputs = jnp.swapaxes(leaves[spec.output_leaf], 0, 1)  # (1, steps, ...)
        readout = params["params"]["readout"]
        preds = jnp.dot(outputs, readout["kernel"]) + readout["bias"]
        preds = preds[..., 0].reshape(preds.shape[:2] + (-1,)) if spec.spatial else preds
        leaves = tuple(jnp.concatenate([c0[None], c], axis=0) for c0, c in zip(spec.carry_as_tuple(start), leaves))
        norm_axes = lambda a: tuple(range(1, a.ndim))  # noqa: E731  (all but time)
        carry_norms = tuple(scaled_norm(leaf, axis=norm_axes(leaf)) for leaf in leaves)
        gates = {name: a[:, 0] for name, a in gates.items()}  # (steps, features)
        return {"x": x1[0], "y": y1[0], "preds": preds[0], "loss": task.loss(preds, y1), "carry_norms": carry_norms,
                "gates": gates, "carry_key": carry_key}

    return fn


def look(program: Program, params: dict, root: jax.Array, scale, index: int, step: int = 0) -> Look:
    """Example number ``index`` of a run (its root key) under ``params``: see :class:`Look`."""
    out = jax.device_get(program.jitted("example", _make_look)(params, root, scale, np.int32(index)))
    task = program.task
    x, y, preds = np.asarray(out["x"]), np.asarray(out["y"]), np.asarray(out["preds"], float)
    if task.view is None:
        raise ValueError(f"the {task.label} task draws no example")
    view = task.view(x, y)
    if task.out_features == 1 and not program.spec.spatial:
        prediction, confidence = preds[:, 0], None
    else:
        shifted = preds - preds.max(axis=-1, keepdims=True)
        probs = np.exp(shifted) / np.exp(shifted).sum(axis=-1, keepdims=True)
        prediction = probs.argmax(axis=-1).astype(float)
        right = np.nan_to_num(view.target, nan=0).astype(int)
        confidence = np.where(np.isfinite(view.target), probs[np.arange(len(probs)), right], np.nan)
    grads = logscale.carry_grad_log10(program, params, (x[None], y[None], out["carry_key"]), scale)
    return Look(step, view, prediction, confidence,
                dict(zip(program.spec.leaves, map(np.asarray, out["carry_norms"]))),
                grads,
                {name: np.asarray(a) for name, a in out["gates"].items()}, float(out["loss"]))
