"""The fused cells compute Flax's cells: same parameter trees, same predictions, same gradients, for every fused
cell, carry mode and task, through the program's own loss, probe and probe-segment functions."""

from __future__ import annotations

from dataclasses import replace
from functools import cache

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from rnnlab.config import Config, static_part
from rnnlab.model.cells import CELLS
from rnnlab.model.fused import fused_scan
from rnnlab.model.network import CARRY_MODES
from rnnlab.model.tasks import TASKS, compatible
from rnnlab.training.program import BATCH, Program, get_program

FUSED = [name for name, spec in CELLS.items() if spec.fused is not None]
VECTOR_TASKS = [name for name, task in TASKS.items() if compatible(False, task)]
RTOL = 2e-5  # float32: the two compute the same sums in a different order
ROOT = jax.random.PRNGKey(5)


def close(a, b, rtol: float = RTOL) -> None:
    """Every leaf of ``a`` equals ``b``'s within ``rtol`` of the leaf's largest magnitude."""
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b), strict=True):
        x, y = np.asarray(x), np.asarray(y)
        scale = max(float(np.abs(y).max()), 1e-30)
        assert float(np.abs(x - y).max()) <= rtol * scale, (float(np.abs(x - y).max()), scale)


@cache
def programs(cell: str, mode: str, task: str) -> tuple[Program, Program]:
    config = Config(task=task, cell=cell, features=6, seq_len=12, batch=3, carry_mode=mode,
                    carry_init="normal", carry_scale=0.5, chunk=2)
    static = static_part(config)
    return Program(static, fused=True), Program(static, fused=False)


def test_the_registry_runs_every_vector_cell_fused_and_the_app_uses_it():
    assert set(FUSED) == {n for n, s in CELLS.items() if not s.spatial}
    program = get_program(Config(task="adding", cell="lstm", features=4, seq_len=5, batch=2))
    assert program.fused and program.model.fused and program.model.hand_backward
    x, _ = program.batch_for(ROOT, BATCH, 0)
    params = program.model.init(ROOT, x, ROOT, 0.1)
    calls = []

    def count_rnn(next_fun, args, kwargs, context):
        if isinstance(context.module, nn.RNN):
            calls.append(context.method_name)
        return next_fun(*args, **kwargs)

    with nn.intercept_methods(count_rnn):
        program.model.apply(params, x, ROOT, 0.1)
        Program(program.static, fused=False).model.apply(params, x, ROOT, 0.1)
    assert calls == ["__call__"]  # only the Flax program went through nn.RNN


def everything(program: Program, params, x, y, key, scale, reals):
    """What the app computes from a model, in one compiled call: loss, predictions and gradients (weights and
    initial carry), dL/dh_t at every step (the probe), and two probe pieces (whole, and padded after a step)."""
    grad = jax.value_and_grad(program.loss_fn, argnums=(0, 1), has_aux=True)
    (loss, preds), grads = grad(params, program.zero_carry(), x, y, key, scale)
    leaves = len(program.spec.leaves)
    eps = jnp.zeros(x.shape[:-1] + (leaves * program.static.features,))
    probe = jax.grad(lambda e: program.task.loss(program.probe_model.apply(params, x, key, scale, eps=e), y))(eps)
    start = program.model.apply(params, x, key, scale, start_only=True)

    def piece(p, carry, real):
        final, out = program.model.apply(p, x, key, scale, carry=carry, steps=real)
        mask = (jnp.arange(out.shape[1]) < real)[None, :, None]
        total = sum(jnp.sum(leaf ** 2) for leaf in jax.tree_util.tree_leaves(final)) + jnp.sum((out * mask) ** 2)
        return total, (final, out * mask)

    pieces = [jax.value_and_grad(piece, argnums=(0, 1), has_aux=True)(params, start, real) for real in reals]
    return {"loss": loss, "preds": preds, "grads": grads, "probe": probe, "pieces": pieces}


# Every fused cell once, the carry modes and the tasks taking turns over them: each mode and each task is met (the
# fused scan's code differs by cell and by carry mode; the task changes only the inputs and the loss).
CELL_MODE_TASK = [(cell, list(CARRY_MODES)[i % len(CARRY_MODES)], VECTOR_TASKS[i % len(VECTOR_TASKS)])
                  for i, cell in enumerate(FUSED)]


def test_the_cases_cover_every_cell_carry_mode_and_task():
    assert [cell for cell, _, _ in CELL_MODE_TASK] == FUSED
    assert {mode for _, mode, _ in CELL_MODE_TASK} == set(CARRY_MODES)
    assert {task for _, _, task in CELL_MODE_TASK} == set(VECTOR_TASKS)


@pytest.mark.parametrize("cell, mode, task", CELL_MODE_TASK)
def test_fused_loss_gradients_probe_and_segments_equal_flax(cell, mode, task):
    fused, flax = programs(cell, mode, task)
    x, y = fused.batch_for(ROOT, BATCH, 0)
    key = fused.carry_key(ROOT, 3)
    scale = jnp.float32(0.5)
    init = jax.jit(flax.model.init)(ROOT, x, key, scale)
    # Shift the weights off their initial values so every path of the cell matters.
    params = jax.tree_util.tree_map(lambda p: p + 0.3 * jax.random.normal(ROOT, p.shape), init)
    reals = (jnp.int32(x.shape[1]), jnp.int32(7))  # a whole piece, and one padded after step 7
    a = jax.jit(everything, static_argnums=0)(fused, params, x, y, key, scale, reals)
    b = jax.jit(everything, static_argnums=0)(flax, params, x, y, key, scale, reals)
    assert float(jnp.abs(b["probe"]).max()) > 0
    for part in a:  # loss, predictions, gradients, dL/dh_t (what the gradient flow page draws), pieces
        close(a[part], b[part])


@pytest.mark.parametrize("cell", FUSED)
def test_fused_models_have_flax_parameter_trees(cell):
    """Same tree, bit for bit, from the same key: downloads, uploads and the carry views read it unchanged."""
    fused, flax = programs(cell, "learnable", "adding")
    x, _ = fused.batch_for(ROOT, BATCH, 0)
    mine, theirs = (jax.jit(p.model.init)(ROOT, x, ROOT, jnp.float32(0.5)) for p in (fused, flax))
    assert jax.tree_util.tree_structure(mine) == jax.tree_util.tree_structure(theirs)
    close(mine, theirs, rtol=0.0)


@pytest.mark.parametrize("cell", FUSED)
def test_training_calls_follow_flax(cell):
    """A few optimiser steps of the app's compiled call give the same run with fused and Flax cells."""
    fused, flax = programs(cell, "learnable", "adding")
    args = (np.float32(1e-2), np.float32(1.0), np.float32(0.5))
    runs = []
    for program in (fused, flax):
        state = program.init(np.int32(0), args[2], args[0], args[1])
        state, records, evaluation = program.train_steps(state, *args, np.int32(2))
        runs.append((state["params"], records["loss"], evaluation["loss"]))
    close(runs[0], runs[1], rtol=1e-4)


def test_fused_scan_works_on_its_own():
    """Outside the model: GRU over a batch, final carry is the last output, padding leaves the carry alone."""
    params = nn.GRUCell(features=3).init(ROOT, jnp.zeros((2, 3)), jnp.zeros((2, 2)))["params"]
    xs = jax.random.normal(ROOT, (2, 5, 2))
    final, hs = fused_scan(CELLS["gru"].fused, params, (jnp.zeros((2, 3)),), xs)
    np.testing.assert_array_equal(final[0], hs[:, -1])
    shorter, _ = fused_scan(CELLS["gru"].fused, params, (jnp.zeros((2, 3)),), xs, steps=3)
    np.testing.assert_array_equal(shorter[0], hs[:, 2])
    cell = nn.GRUCell(features=3)
    carry = jnp.zeros((2, 3))
    for t in range(5):
        carry, _ = cell.apply({"params": params}, carry, xs[:, t])
    close(final[0], carry)


def test_a_config_change_keeps_the_fused_choice():
    program = get_program(replace(Config(task="adding", cell="gru", features=4, seq_len=5, batch=2), lr=0.5))
    assert program.fused


FLAX_CELLS = {"lstm": nn.LSTMCell, "optimized_lstm": nn.OptimizedLSTMCell, "gru": nn.GRUCell, "mgu": nn.MGUCell,
              "simple": nn.SimpleCell}


@pytest.mark.parametrize("name", sorted(FUSED))
@pytest.mark.parametrize("steps", [None, 4])
def test_hand_written_backward_equals_automatic_differentiation(name, steps):
    """The hand-written backward pass gives the gradients automatic differentiation of the same fused scan gives:
    for the kernels, the initial carry, the inputs and the perturbations, with the final carry taken after a
    padded piece's last real step, and under ``vmap`` (the sweep's path)."""
    assert set(FLAX_CELLS) == set(FUSED)
    batch, T, inputs, features = 3, 7, 2, 5
    keys = jax.random.split(ROOT, 5)
    cell = FLAX_CELLS[name](features=features)
    params = cell.init(keys[0], cell.initialize_carry(keys[0], (batch, inputs)), jnp.zeros((batch, inputs)))["params"]
    leaves = len(jax.tree_util.tree_leaves(cell.initialize_carry(keys[0], (batch, inputs))))
    carry0 = tuple(jax.random.normal(k, (batch, features)) for k in jax.random.split(keys[1], leaves))
    xs = jax.random.normal(keys[2], (batch, T, inputs))
    eps = 0.1 * jax.random.normal(keys[3], (batch, T, leaves * features))
    weights = jax.random.normal(keys[4], (batch, T, features))

    def loss(hand, params, carry0, xs, eps):
        final, hs = fused_scan(CELLS[name].fused, params, carry0, xs, eps, steps, hand_backward=hand)
        return jnp.sum(jnp.tanh(hs) * weights) + sum(jnp.sum(leaf ** 2) for leaf in final)

    args = (params, carry0, xs, eps)
    grads = {hand: jax.jit(jax.grad(lambda *a, hand=hand: loss(hand, *a), argnums=(0, 1, 2, 3)))(*args)
             for hand in (True, False)}
    close(grads[True], grads[False])
    assert float(loss(True, *args)) == pytest.approx(float(loss(False, *args)), rel=1e-6)
    no_eps = {hand: jax.grad(lambda p, hand=hand: loss(hand, p, carry0, xs, None))(params) for hand in (True, False)}
    close(no_eps[True], no_eps[False])
    batched = {hand: jax.vmap(jax.grad(lambda p, x, hand=hand: loss(hand, p, carry0, x, eps)), in_axes=(None, 0))(
        params, jnp.stack([xs, 2 * xs])) for hand in (True, False)}
    close(batched[True], batched[False])
