"""The sequence model: every cell x carry mode builds and runs, the carry modes do what they say, and the
``nn.RNN`` forward is the same computation as a hand-written loop over the cell with the same weights."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.nn import initializers

from rnnlab.config import Config
from rnnlab.model.cells import CARRY_INITS, CELLS, carry_init_fn
from rnnlab.model.network import CARRY_MODES, SeqModel, learned_carry, sample_carry
from rnnlab.training.program import BATCH, PARAMS, Program, get_program, stream

F, T, B = 4, 5, 3  # features, sequence length, batch
SCALE = 0.5  # stddev of the normal carry initialiser (large enough that a wrong carry shows)
ROOT = jax.random.PRNGKey(11)
CARRY_PARAM_NAMES = {"c0", "h0"}


def task_for(cell: str) -> str:
    return "moving_dot" if CELLS[cell].spatial else "adding"


def config_for(cell: str, mode: str, **changes) -> Config:
    base = Config(task=task_for(cell), cell=cell, features=F, seq_len=T, batch=B, carry_mode=mode,
                  carry_init="normal", carry_scale=SCALE, chunk=1)
    return replace(base, **changes)


def apply_capturing_carry(model: SeqModel, params, x, carry_key, scale, **kwargs):
    """``model.apply`` with Flax's cells (tests/test_fused.py holds the fused ones to them) that also returns the
    initial carry the model handed to ``nn.RNN``."""
    model = model.clone(fused=False)
    seen = []

    def interceptor(next_fun, args, kw, context):
        if isinstance(context.module, nn.RNN) and context.method_name == "__call__":
            seen.append(kw["initial_carry"])
        return next_fun(*args, **kw)

    with nn.intercept_methods(interceptor):
        preds = model.apply(params, x, carry_key, scale, **kwargs)
    assert len(seen) == 1
    return preds, seen[0]


@dataclass
class Built:
    program: Program
    params: dict
    x: jax.Array
    y: jax.Array
    carry_key: jax.Array
    preds: jax.Array
    carry0: object


@cache
def built(cell: str, mode: str) -> Built:
    """One model per (cell, carry mode), built and run once for the whole module."""
    program = get_program(config_for(cell, mode))
    x, y = program.batch_for(ROOT, BATCH, 0)
    carry_key = program.carry_key(ROOT, 0)
    scale = np.float32(SCALE)
    params = program.model.init(stream(ROOT, PARAMS), x, carry_key, scale)
    preds, carry0 = apply_capturing_carry(program.model, params, x, carry_key, scale)
    return Built(program, params, x, y, carry_key, preds, carry0)


ALL = [(cell, mode) for cell in CELLS for mode in CARRY_MODES]


def cell_params(b: Built) -> dict:
    name = b.program.spec.cls.__name__ + "_0"
    return b.params["params"][name]


def reference_cell(cell: str, carry_init=initializers.zeros) -> nn.RNNCellBase:
    """The Flax cell built by hand, not through rnnlab."""
    cls = CELLS[cell].cls
    if CELLS[cell].spatial:
        return cls(features=F, kernel_size=(3, 3), carry_init=carry_init)
    return cls(features=F, carry_init=carry_init)


# ---- shapes and structure ------------------------------------------------------------------------


@pytest.mark.parametrize("cell,mode", ALL)
def test_every_cell_and_carry_mode_builds_and_runs(cell, mode):
    b = built(cell, mode)
    task, spec = b.program.task, b.program.spec
    out = task.out_features
    assert b.x.shape[:2] == (B, T)
    assert b.preds.shape == (B, T, out)
    assert b.preds.dtype == jnp.float32
    assert np.isfinite(np.asarray(b.preds)).all()
    assert float(jnp.std(b.preds)) > 0  # not a constant output

    # carry: a tuple (c, h) for LSTM-style cells, a bare array otherwise, leaves of Program.carry_shapes()
    shapes = b.program.carry_shapes()
    expected_leaf = (B, 6, 6, F) if spec.spatial else (B, F)
    assert shapes == tuple(expected_leaf for _ in spec.leaves)
    if len(spec.leaves) == 1:
        assert spec.leaves == ("h",)
        assert isinstance(b.carry0, jax.Array)
    else:
        assert spec.leaves == ("c", "h")
        assert isinstance(b.carry0, tuple) and len(b.carry0) == 2
    leaves = spec.carry_as_tuple(b.carry0)
    assert tuple(leaf.shape for leaf in leaves) == shapes
    assert all(leaf.dtype == jnp.float32 for leaf in leaves)
    assert jax.tree_util.tree_structure(b.program.zero_carry()) == jax.tree_util.tree_structure(b.carry0)
    # the carry has the structure the cell itself makes
    ref = reference_cell(cell).initialize_carry(jax.random.PRNGKey(0), b.x.shape[:1] + b.x.shape[2:])
    assert jax.tree_util.tree_structure(ref) == jax.tree_util.tree_structure(b.carry0)
    assert jax.tree_util.tree_map(jnp.shape, ref) == jax.tree_util.tree_map(jnp.shape, b.carry0)

    # Program.initial_carry: the first example's carry, leaf by leaf
    first = b.program.initial_carry(b.params, b.carry_key, np.float32(SCALE))
    assert len(first) == len(spec.leaves)
    for got, leaf in zip(first, leaves):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(leaf[0]))


@pytest.mark.parametrize("cell,mode", ALL)
def test_learnable_carry_is_a_parameter_per_leaf(cell, mode):
    b = built(cell, mode)
    spec = b.program.spec
    p = b.params["params"]
    carry_names = CARRY_PARAM_NAMES & set(p)
    if mode != "learnable":
        assert carry_names == set()
        assert learned_carry(b.params, cell) is None
        return
    assert carry_names == {f"{name}0" for name in spec.leaves}
    leaf_shape = (6, 6, F) if spec.spatial else (F,)
    for name, leaf in zip(spec.leaves, spec.carry_as_tuple(b.carry0)):
        param = p[f"{name}0"]
        assert param.shape == leaf_shape
        assert float(jnp.std(param)) > 0.1 * SCALE  # drawn from normal(SCALE), not zeros
        # the carry handed to nn.RNN is the parameter broadcast over the batch
        np.testing.assert_array_equal(np.asarray(leaf), np.broadcast_to(np.asarray(param), (B,) + leaf_shape))
    assert set(learned_carry(b.params, cell)) == set(spec.leaves)
    if len(spec.leaves) == 2:
        assert not np.array_equal(np.asarray(p["c0"]), np.asarray(p["h0"]))  # separate draws


@pytest.mark.parametrize("cell,mode", [(cell, "learnable") for cell in CELLS] + [("gru", "fixed"), ("lstm", "fixed")])
def test_learnable_carry_gets_a_gradient_fixed_has_none(cell, mode):
    b = built(cell, mode)

    def loss(params):
        return b.program.loss_fn(params, None, b.x, b.y, b.carry_key, np.float32(SCALE))[0]

    grads = jax.grad(loss)(b.params)
    assert jax.tree_util.tree_structure(grads) == jax.tree_util.tree_structure(b.params)
    g = grads["params"]
    if mode == "learnable":
        for name in b.program.spec.leaves:
            norm = float(jnp.linalg.norm(g[f"{name}0"]))
            assert np.isfinite(norm) and norm > 1e-6, (name, norm)
    else:
        assert CARRY_PARAM_NAMES & set(g) == set()
    # the cell's weights get a gradient too
    weights = jax.tree_util.tree_leaves(g[b.program.spec.cls.__name__ + "_0"])
    assert sum(float(jnp.sum(w**2)) for w in weights) > 0


# ---- the same computation as a hand-written loop ------------------------------------------------


@pytest.mark.parametrize("cell", list(CELLS))
@pytest.mark.parametrize("mode", ["learnable", "fixed"])
def test_rnn_equals_a_python_loop_with_the_same_weights(cell, mode):
    b = built(cell, mode)
    spec = b.program.spec
    step_shape = b.x.shape[:1] + b.x.shape[2:]
    # the initial carry, computed without rnnlab
    if mode == "learnable":
        p = b.params["params"]
        leaves = tuple(jnp.broadcast_to(p[f"{n}0"], (B,) + p[f"{n}0"].shape) for n in spec.leaves)
        carry = leaves if len(leaves) > 1 else leaves[0]
    else:
        carry = reference_cell(cell, initializers.normal(stddev=SCALE)).initialize_carry(b.carry_key, step_shape)
    flax_cell = reference_cell(cell)
    weights = {"params": cell_params(b)}
    outputs = []
    for t in range(b.x.shape[1]):
        carry, out = flax_cell.apply(weights, carry, b.x[:, t])
        outputs.append(out)
    hs = jnp.stack(outputs, axis=1)
    readout = b.params["params"]["readout"]
    preds = hs @ readout["kernel"] + readout["bias"]
    if spec.spatial:
        preds = preds[..., 0].reshape(B, T, -1)
    assert preds.shape == b.preds.shape
    np.testing.assert_allclose(np.asarray(b.preds), np.asarray(preds), rtol=1e-5, atol=1e-5)
    # and the loop is sensitive to the weights (a different readout gives different predictions)
    assert float(jnp.max(jnp.abs(b.preds - (hs @ (2 * readout["kernel"]) + readout["bias"]).reshape(
        b.preds.shape)))) > 1e-3


# ---- fixed and noisy carries ---------------------------------------------------------------------


@pytest.mark.parametrize("cell", list(CELLS))
def test_fixed_carry_is_initialize_carry_with_the_scaled_initialiser(cell):
    b = built(cell, "fixed")
    step_shape = b.x.shape[:1] + b.x.shape[2:]
    ref = reference_cell(cell, initializers.normal(stddev=SCALE)).initialize_carry(b.carry_key, step_shape)
    for got, want in zip(jax.tree_util.tree_leaves(b.carry0), jax.tree_util.tree_leaves(ref)):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))  # bit for bit
        assert 0.5 * SCALE < float(jnp.std(want)) < 2 * SCALE
    # sample_carry (what the charts show) is the same draw
    same = sample_carry(b.program.model, b.carry_key, np.float32(SCALE), step_shape)
    for got, want in zip(jax.tree_util.tree_leaves(same), jax.tree_util.tree_leaves(ref)):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    # fixed: one key for the whole run
    assert np.array_equal(np.asarray(b.program.carry_key(ROOT, 0)), np.asarray(b.program.carry_key(ROOT, 7)))


@pytest.mark.parametrize("cell", ["gru", "lstm"])
def test_noisy_carry_is_redrawn_every_step(cell):
    b = built(cell, "noisy")
    program, scale = b.program, np.float32(SCALE)
    step_shape = b.x.shape[:1] + b.x.shape[2:]
    carries = []
    for step in (0, 1, 2):
        key = program.carry_key(ROOT, step)
        _, carry = apply_capturing_carry(program.model, b.params, b.x, key, scale)
        ref = reference_cell(cell, initializers.normal(stddev=SCALE)).initialize_carry(key, step_shape)
        for got, want in zip(jax.tree_util.tree_leaves(carry), jax.tree_util.tree_leaves(ref)):
            np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
        carries.append(jax.tree_util.tree_leaves(carry))
    for i in range(3):
        for j in range(i + 1, 3):
            for a, c in zip(carries[i], carries[j]):
                assert float(jnp.max(jnp.abs(a - c))) > 1e-2
    # step 0 of the noisy run and the fixed run use different keys
    assert not np.array_equal(np.asarray(program.carry_key(ROOT, 0)),
                              np.asarray(built(cell, "fixed").program.carry_key(ROOT, 0)))


@pytest.mark.parametrize("name", list(CARRY_INITS))
def test_carry_init_fn_equals_the_registry_initialiser(name):
    spec = CARRY_INITS[name]
    key = jax.random.PRNGKey(5)
    shape = (B, F)  # the carry shape the models above draw (so the eager samplers are compiled already)
    # the parameter as a traced float32, as the compiled programs pass it (one compilation for all p)
    traced = jax.jit(lambda v, k: carry_init_fn(name, v)(k, shape))
    compiled = jax.jit(lambda v, k: spec.build(v)(k, shape, jnp.float32))
    for p in (spec.default, 0.1, 0.37, 1.0, 2.5):
        want = np.asarray(spec.build(p)(key, shape, jnp.float32))
        got = np.asarray(carry_init_fn(name, p)(key, shape, jnp.float32))
        assert got.dtype == want.dtype == np.float32
        np.testing.assert_array_equal(got, want)
        # Compiled, compare with the registry initialiser compiled too: XLA may fold the stddev into the
        # normal sampler's arithmetic, so a compiled and an eager draw can differ in the last bit (jax's own
        # initialiser does the same).
        got = np.asarray(traced(np.float32(p), key))
        np.testing.assert_array_equal(got, np.asarray(compiled(np.float32(p), key)))
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=0)
    if spec.random:
        a = carry_init_fn(name, 1.0)(key, shape)
        b = carry_init_fn(name, 1.0)(jax.random.PRNGKey(6), shape)
        assert not np.array_equal(np.asarray(a), np.asarray(b))
    elif spec.param is None:
        assert np.array_equal(np.asarray(carry_init_fn(name, 7.0)(key, shape)), np.asarray(spec.build(1.0)(key, shape)))


# ---- weights shared over time --------------------------------------------------------------------


@pytest.mark.parametrize("cell", list(CELLS))
def test_parameter_count_does_not_depend_on_sequence_length(cell):
    shapes = []
    for length in (T, 50):
        program = get_program(config_for(cell, "learnable", seq_len=length))
        x, _ = program.batch_for(ROOT, BATCH, 0)
        assert x.shape[1] == length
        params = jax.eval_shape(program.model.init, stream(ROOT, PARAMS), x, program.carry_key(ROOT, 0),
                                np.float32(SCALE))
        shapes.append(jax.tree_util.tree_map(lambda a: a.shape, params))
    assert shapes[0] == shapes[1]
    n = sum(int(np.prod(s)) for s in jax.tree_util.tree_leaves(shapes[0], is_leaf=lambda s: isinstance(s, tuple)))
    # the same count as the hand-built cell + carry + readout
    spec = CELLS[cell]
    x1 = program.batch_for(ROOT, BATCH, 0)[0][:, 0]
    ref = reference_cell(cell).init(jax.random.PRNGKey(0), reference_cell(cell).initialize_carry(
        jax.random.PRNGKey(0), x1.shape), x1)
    n_cell = sum(int(np.prod(a.shape)) for a in jax.tree_util.tree_leaves(ref))
    carry_size = len(spec.leaves) * (36 * F if spec.spatial else F)
    readout = F + 1 if spec.spatial else F * program.task.out_features + program.task.out_features
    assert n == n_cell + carry_size + readout
