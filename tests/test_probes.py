"""Gradient probes against brute force: ||dL/dh_t|| for every t, connectivity ||dy_T/dx_t||, dL/dh_0, the
decay sweep and its exponential fit, and the h0 gradient recorded during training."""

from __future__ import annotations

import math
from dataclasses import replace
from functools import cache

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from rnnlab.config import Config
from rnnlab.model.cells import CARRY_INITS, CELLS
from rnnlab.probing import probes
from rnnlab.training.program import BATCH, EVAL_BATCH, get_program, hyper_args, stream
from rnnlab.training.train import Run

F, T, B = 4, 6, 2  # features, sequence length, batch
SCALE = 0.5
SEED = 3
RTOL, ATOL = 1e-5, 1e-7
BASE = Config(task="adding", cell="gru", features=F, seq_len=T, batch=B, carry_mode="learnable",
              carry_init="normal", carry_scale=SCALE, seed=SEED, chunk=2, steps=2)


def config_for(cell: str, task: str, mode: str = "learnable") -> Config:
    return replace(BASE, cell=cell, task=task, carry_mode=mode)


@cache
def setup(cell: str, task: str, mode: str = "learnable"):
    """(program, params, root, scale) for one configuration, initialised once per module."""
    config = config_for(cell, task, mode)
    program = get_program(config)
    lr, clip, scale = hyper_args(config)
    state = program.init(np.int32(config.seed), scale, lr, clip)
    params = jax.tree_util.tree_map(np.array, state["params"])  # a copy: the state may be donated
    return program, params, state["root"], scale


def initial_carry_leaves(program, params, carry_key, scale, step_shape) -> tuple[jax.Array, ...]:
    """The carry at t = 0, built without rnnlab's model: a broadcast parameter or ``initialize_carry``."""
    spec = program.spec
    p = params["params"]
    if program.static.carry_mode == "learnable":
        return tuple(jnp.broadcast_to(p[f"{n}0"], step_shape[:1] + p[f"{n}0"].shape) for n in spec.leaves)
    init = CARRY_INITS[program.static.carry_init].build(float(scale))
    cell = spec.cls(features=program.static.features, carry_init=init)
    return spec.carry_as_tuple(cell.initialize_carry(carry_key, step_shape))


def brute_force_carry_grads(program, params, x, y, carry_key, scale, direct_path=True) -> dict[str, np.ndarray]:
    """||dL/dh_t||_F for t = 0..steps: a Python loop over the cell, one ``jax.grad`` per t.

    At step t a perturbation delta is added to the new carry; the perturbed h is both the carry passed on and
    the output read at step t (``direct_path=False`` reads the unperturbed h instead: the classic mistake).
    """
    spec = program.spec
    cell = spec.cls(features=program.static.features)
    weights = {"params": params["params"][spec.cls.__name__ + "_0"]}
    readout = params["params"]["readout"]
    carry0 = initial_carry_leaves(program, params, carry_key, scale, x.shape[:1] + x.shape[2:])
    steps = x.shape[1]

    def loss(delta, at):
        carry = tuple(c + d for c, d in zip(carry0, delta)) if at == 0 else carry0
        outputs = []
        for t in range(1, steps + 1):
            new, out = cell.apply(weights, spec.carry_from_tuple(carry), x[:, t - 1])
            carry = spec.carry_as_tuple(new)
            if t == at:
                carry = tuple(c + d for c, d in zip(carry, delta))
                if direct_path:
                    out = carry[spec.output_leaf]
            outputs.append(out)
        preds = jnp.stack(outputs, axis=1) @ readout["kernel"] + readout["bias"]
        return program.task.loss(preds, y)

    zeros = tuple(jnp.zeros_like(c) for c in carry0)
    norms = {name: [] for name in spec.leaves}
    for at in range(steps + 1):
        grads = jax.grad(lambda d, at=at: loss(d, at))(zeros)
        for name, g in zip(spec.leaves, grads):
            norms[name].append(float(jnp.sqrt(jnp.sum(g**2))))
    return {name: np.array(v) for name, v in norms.items()}


def step_batch(program, root, mode_step: int = 0):
    """A training batch and its carry key (step ``mode_step``: the noisy carry differs per step)."""
    x, y = program.batch_for(root, BATCH, mode_step)
    return x, y, program.carry_key(root, mode_step)


# ---- ||dL/dh_t|| in one backward pass -------------------------------------------------------------

CARRY_GRAD_CASES = [
    ("gru", "adding", "learnable"),
    ("gru", "sine", "learnable"),
    ("lstm", "adding", "learnable"),
    ("lstm", "sine", "learnable"),
    ("simple", "adding", "learnable"),
    ("simple", "sine", "learnable"),
    ("gru", "sine", "noisy"),
    ("lstm", "sine", "noisy"),
    ("simple", "adding", "fixed"),
]


@pytest.mark.parametrize("cell,task,mode", CARRY_GRAD_CASES)
def test_carry_grad_norms_match_brute_force(cell, task, mode):
    program, params, root, scale = setup(cell, task, mode)
    batch = step_batch(program, root, 2)
    got = probes.carry_grad_norms(program, params, root, scale, batch=batch)
    want = brute_force_carry_grads(program, params, *batch, scale)
    assert list(got) == list(CELLS[cell].leaves)
    for leaf in CELLS[cell].leaves:
        assert got[leaf].shape == (T + 1,)
        if leaf == "c":  # the last cell state is read by nothing (the output is h)
            assert want[leaf][-1] == 0 and got[leaf][-1] == 0
            assert (want[leaf][:-1] > 1e-6).all()
        else:
            assert (want[leaf] > 1e-6).all()  # every step gets a gradient: the comparison is not 0 == 0
        np.testing.assert_allclose(got[leaf], want[leaf], rtol=RTOL, atol=ATOL, err_msg=leaf)


@pytest.mark.parametrize("cell,task", [("gru", "sine"), ("lstm", "adding")])
def test_brute_force_tells_the_direct_path_apart(cell, task):
    """The reference must be sharp: dropping the path from h_t to the output at step t changes the norms
    (at every step for a per-step loss, at the last step when only the last step has a loss)."""
    program, params, root, scale = setup(cell, task)
    batch = step_batch(program, root, 2)
    right = brute_force_carry_grads(program, params, *batch, scale)["h"]
    wrong = brute_force_carry_grads(program, params, *batch, scale, direct_path=False)["h"]
    np.testing.assert_allclose(right[0], wrong[0], rtol=RTOL)  # nothing is read off the initial carry
    assert wrong[-1] == 0 and right[-1] > 1e-4
    if task == "sine":
        assert (np.abs(right[1:] - wrong[1:]) > 1e-3 * right[1:]).all()
    else:
        np.testing.assert_allclose(right[:-1], wrong[:-1], rtol=RTOL)


def test_carry_grad_norms_default_to_the_evaluation_batch():
    program, params, root, scale = setup("lstm", "sine")
    x, y = program.batch_for(root, EVAL_BATCH)
    got = probes.carry_grad_norms(program, params, root, scale)
    want = brute_force_carry_grads(program, params, x, y, program.carry_key(root, 0), scale)
    for leaf in ("c", "h"):
        np.testing.assert_allclose(got[leaf], want[leaf], rtol=RTOL, atol=ATOL)
    df = probes.carry_grad_df(program, params, root, scale, step=5)
    assert len(df) == 2 * (T + 1) and (df["step"] == 5).all()
    np.testing.assert_allclose(df[df["leaf"] == "c"]["grad_norm"], got["c"], rtol=1e-5)
    assert list(df[df["leaf"] == "h"]["t"]) == list(range(T + 1))


# ---- connectivity ----------------------------------------------------------------------------------


@pytest.mark.parametrize("cell,task,mode", [("gru", "adding", "learnable"), ("lstm", "sine", "noisy")])
def test_connectivity_matches_brute_force(cell, task, mode):
    program, params, root, scale = setup(cell, task, mode)
    got = probes.connectivity(program, params, root, scale)
    x, _, carry_key = probes.probe_batch(program, root)
    if mode == "noisy":  # the probes look at the evaluation carry, not a training step's
        assert not np.array_equal(np.asarray(carry_key), np.asarray(program.carry_key(root, 0)))

    @jax.jit
    def jac(xt, t):
        def last_output(xt):
            return program.model.apply(params, x.at[:, t].set(xt), carry_key, scale)[:, -1]
        return jax.jacrev(last_output)(xt)  # (batch, out, batch, in)

    want = []
    for t in range(x.shape[1]):
        j = np.asarray(jac(x[:, t], t))
        per_example = [np.linalg.norm(j[b, :, b, :]) for b in range(B)]
        off_diagonal = [np.abs(j[b, :, c, :]).max() for b in range(B) for c in range(B) if b != c]
        assert max(off_diagonal) == 0  # examples are independent
        want.append(np.mean(per_example))
    want = np.array(want)
    assert got.shape == (T,)
    assert want[-1] > 1e-4 and (want > 0).all()
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


# ---- dL/dh_0 ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("cell,task,mode", [("gru", "adding", "learnable"), ("lstm", "sine", "learnable"),
                                            ("lstm", "sine", "noisy")])
def test_h0_grad_norm_is_the_first_entry_of_carry_grad_norms(cell, task, mode):
    program, params, root, scale = setup(cell, task, mode)
    h0 = probes.h0_grad_norm(program, params, root, scale)
    norms = probes.carry_grad_norms(program, params, root, scale)
    first = math.sqrt(sum(float(v[0]) ** 2 for v in norms.values()))
    assert h0 > 1e-6
    assert h0 == pytest.approx(first, rel=RTOL)
    if len(norms) == 2:  # both leaves count: neither alone is the total
        assert all(float(v[0]) < h0 * (1 - 1e-3) for v in norms.values())


def test_training_records_the_h0_gradient_probes_compute():
    config = config_for("lstm", "sine", "noisy")
    run = Run(config)
    program = run.program
    params0 = jax.tree_util.tree_map(np.array, run.params)  # copied before the call donates the state
    root = np.asarray(run.state["root"])
    _, _, scale = hyper_args(config)
    run.run_call()
    row = run.history.steps_df().iloc[0]
    assert row["step"] == 1

    # step 1 trains on batch 0 with the carry drawn from key carry_key(root, 0)
    batch = step_batch(program, root, 0)
    norms = probes.carry_grad_norms(program, params0, root, scale, batch=batch)
    grad = jax.grad(lambda e: program.loss_fn(params0, e, *batch, scale)[0])(program.zero_carry())
    for leaf, g in zip(("c", "h"), grad):
        assert row[f"h0_grad_{leaf}"] == pytest.approx(float(jnp.linalg.norm(g)), rel=RTOL)
        assert row[f"h0_grad_{leaf}"] == pytest.approx(float(norms[leaf][0]), rel=RTOL)
    total = math.sqrt(sum(float(v[0]) ** 2 for v in norms.values()))
    assert row["h0_grad_norm"] == pytest.approx(total, rel=RTOL)
    # and another batch (step 2's) gives a different number, so the match above is not a coincidence
    other = probes.carry_grad_norms(program, params0, root, scale, batch=step_batch(program, root, 1))
    assert abs(math.sqrt(sum(float(v[0]) ** 2 for v in other.values())) - total) > 1e-4 * total


# ---- decay with T ----------------------------------------------------------------------------------


def test_decay_sweep():
    cells, lengths = ["simple", "gru"], [5, 40]
    sweep = probes.decay_sweep(BASE, cells, lengths)
    assert list(sweep.columns) == ["cell", "T", "h0_grad_norm", "log10", "zero_cause", "zero_at"]
    np.testing.assert_allclose(sweep["log10"], np.log10(sweep["h0_grad_norm"]), rtol=1e-12)
    assert list(zip(sweep["cell"], sweep["T"])) == [(c, t) for c in cells for t in lengths]
    norms = sweep.set_index(["cell", "T"])["h0_grad_norm"]
    for cell in cells:
        assert np.isfinite(norms[cell, 5]) and norms[cell, 5] > 1e-6
    assert norms["simple", 40] < 1e-2 * norms["simple", 5]  # the textbook vanishing gradient (~1e-5 here)
    # each row is h0_grad_norm of the cell's weights (initialised once, at the first T) at that T
    for cell in cells:
        first = get_program(replace(BASE, cell=cell, seq_len=lengths[0]))
        lr, clip, scale = hyper_args(BASE)
        params = first.init(np.int32(BASE.seed), scale, lr, clip)["params"]
        for length in lengths:
            program = get_program(replace(BASE, cell=cell, seq_len=length))
            want = probes.h0_grad_norm(program, params, jax.random.PRNGKey(BASE.seed), scale)
            assert norms[cell, length] == pytest.approx(want, rel=1e-5)
    fit = probes.fit_decay(sweep)
    assert list(fit["cell"]) == cells and (fit["points"] == 2).all()
    simple = fit.set_index("cell").loc["simple"]
    assert simple["rate_per_step"] == pytest.approx((norms["simple", 40] / norms["simple", 5]) ** (1 / 35), rel=1e-6)


def test_fit_exponential_recovers_the_halving():
    x = np.arange(0, 50, 3.0)
    y = 3 * 0.5 ** (x / 7)
    fit = probes.fit_exponential(x, y)
    assert fit["halving"] == pytest.approx(7, rel=1e-9)
    assert fit["rate"] == pytest.approx(0.5 ** (1 / 7), rel=1e-9)
    assert fit["points"] == len(x)
    # zeros, infinities and nans are skipped, not fitted
    bad = y.copy()
    bad[[1, 4, 7]] = [0.0, np.inf, np.nan]
    skipped = probes.fit_exponential(x, bad)
    assert skipped["points"] == len(x) - 3
    assert skipped["halving"] == pytest.approx(7, rel=1e-9)
    # fewer than two usable points: no fit
    for xs, ys in [([1.0], [2.0]), ([1.0, 2.0], [0.0, 5.0]), ([], [])]:
        few = probes.fit_exponential(np.array(xs), np.array(ys))
        assert math.isnan(few["rate"]) and math.isnan(few["halving"])
    # growth does not halve
    assert probes.fit_exponential(x, 1 / y)["halving"] == math.inf
    assert probes.describe_halving(7.0) == "the gradient halves every 7 steps"


def test_stream_keys_differ_per_purpose():  # the probe batch is not a training batch
    root = jax.random.PRNGKey(SEED)
    assert not np.array_equal(np.asarray(stream(root, EVAL_BATCH)), np.asarray(stream(root, BATCH, 0)))


def test_tiny_gradients_keep_their_size_and_exact_zeros_are_the_gradients_own():
    """Default LSTM at T = 200, untrained: the gradient reaching the first steps is ~1e-23, far below where its
    square underflows. Every norm equals the float64 norm of the float32 gradient; 0 only where it is all 0."""
    config = Config(cell="lstm", seq_len=200)
    program = get_program(config)
    lr, clip, scale = hyper_args(config)
    state = program.init(np.int32(config.seed), scale, lr, clip)
    params, root = state["params"], state["root"]
    got = probes.carry_grad_norms(program, params, root, scale)
    x, y, carry_key = probes.probe_batch(program, root)
    n = len(program.spec.leaves)

    def loss(eps0, eps):
        preds = program.probe_model.apply(params, x, carry_key, scale, eps0=eps0, eps=eps)
        return program.task.loss(preds, y)

    eps = jnp.zeros(x.shape[:-1] + (n * config.features,), x.dtype)
    g0, g = jax.grad(loss, argnums=(0, 1))(program.zero_carry(), eps)
    g0, g = [np.asarray(leaf, np.float64) for leaf in program.spec.carry_as_tuple(g0)], np.asarray(g, np.float64)
    for k, leaf in enumerate(program.spec.leaves):
        per_t = np.sqrt((np.split(g, n, axis=-1)[k] ** 2).sum(axis=(0, 2)))
        want = np.concatenate([[np.sqrt((g0[k] ** 2).sum())], per_t])
        assert (want[:20] > 0).all() and want[:20].max() < 1e-15  # tiny, not zero: the case the plain norm lost
        np.testing.assert_allclose(got[leaf], want, rtol=1e-5, atol=0)
        assert ((got[leaf] == 0) == (want == 0)).all()


def test_sweep_weights_are_trained_once_and_equal_a_run():
    config = probes.sweep_training_config(replace(BASE, steps=7), "gru")
    assert (config.seq_len, config.steps, config.cell) == (40, 300, "gru")
    small = replace(config, seq_len=8, steps=6)
    first = probes.trained_params(small)
    assert probes.trained_params(small) is first  # kept: the same configuration is not trained again
    alone = Run(small)
    alone.train()
    for a, b in zip(jax.tree_util.tree_leaves(first), jax.tree_util.tree_leaves(alone.params)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_a_zero_in_float32_below_its_smallest_normal_number_is_what_float64_finds():
    """The LSTM preset's lesson: untrained, the gradient reaching h_0 at T = 500 is exactly 0 in float32 because
    it is below float32's smallest normal number; the same computation in float64, on the same batch, finds it."""
    from rnnlab.config import static_part
    from rnnlab.sharing.presets import PRESETS_BY_KEY
    from rnnlab.training.program import Program

    base = PRESETS_BY_KEY["lstm_h0_50_vs_500"].config
    config = replace(base, seq_len=500)
    program = get_program(config)
    lr, clip, scale = hyper_args(config)
    params = program.init(np.int32(config.seed), scale, lr, clip)["params"]
    root = jax.random.PRNGKey(config.seed)
    assert probes.h0_grad_norm(program, params, root, scale) == 0
    x, y, carry_key = probes.probe_batch(program, root)
    as64 = lambda tree: jax.tree_util.tree_map(lambda a: np.asarray(a, np.float64), tree)  # noqa: E731
    with jax.enable_x64(True):
        wide = Program(static_part(config))
        grad = jax.jit(jax.grad(lambda e: wide.loss_fn(as64(params), e, as64(x), as64(y), carry_key,
                                                       np.float64(scale))[0]))(as64(program.zero_carry()))
        norm = math.sqrt(sum(float(np.sum(np.asarray(g) ** 2)) for g in jax.tree_util.tree_leaves(grad)))
        assert all(np.asarray(g).dtype == np.float64 for g in jax.tree_util.tree_leaves(grad))
    assert 0 < norm < np.finfo(np.float32).tiny / 1e6  # far below 1.2e-38, not a structural 0


def test_xla_flushes_results_below_float32s_smallest_normal_number_to_zero():
    tiny = float(np.finfo(np.float32).tiny)  # about 1.2e-38
    values = np.array([4 * tiny, 1.5 * tiny, 1e-39, 1e-44], np.float32)  # the last two are float32 subnormals
    assert (values > 0).all()
    halved = np.asarray(jax.jit(lambda a: a * np.float32(0.5))(values))
    assert halved[0] == np.float32(2 * tiny)
    assert (halved[1:] == 0).all()  # 0.75 * tiny is a float32 (subnormal) number, but comes out 0


def test_saturated_units_cut_the_gradient_to_zero_long_before_it_is_small():
    """The other way a gradient becomes 0 in float32: a simple cell whose recurrent weights are large saturates,
    its tanh rounds to 1 and its derivative to 0, so the gradient drops to 0 from a norm far above 1e-38."""
    config = Config(cell="simple", seq_len=30, features=16, batch=8)
    program = get_program(config)
    lr, clip, scale = hyper_args(config)
    state = program.init(np.int32(config.seed), scale, lr, clip)
    params = jax.tree_util.tree_map(np.array, state["params"])
    cell = params["params"][f"{program.spec.cls.__name__}_0"]
    cell["h"]["kernel"] = cell["h"]["kernel"] * 200.0
    norms = probes.carry_grad_norms(program, params, state["root"], scale)["h"]
    zero = np.flatnonzero(norms == 0)
    assert zero.size, norms
    after = norms[zero.max() + 1]  # the step after the last zero, nearer the loss
    assert after > 1e-10, norms
