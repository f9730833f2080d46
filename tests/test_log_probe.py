"""The log-scaled gradient probe against float64, a closed form, 60-digit arithmetic and an independent rule
for saturation zeros; its cells against Flax's; in segments against one pass."""

from __future__ import annotations

import math
from dataclasses import replace
from functools import cache, partial

import jax
import jax.numpy as jnp
import mpmath
import numpy as np
import pytest

from rnnlab import true_sizes
from rnnlab.bench.probe import saturating
from rnnlab.config import Config
from rnnlab.figures import log10_scale, size_words
from rnnlab.model import probe_step
from rnnlab.model.cells import CELLS
from rnnlab.probing import logscale, probes
from rnnlab.training.program import Program, get_program, hyper_args
from rnnlab.true_sizes import F32_LOG10_FLOOR, F64_LOG10_FLOOR

BASE = Config(task="adding", cell="gru", features=4, seq_len=9, batch=3, carry_mode="learnable",
              carry_init="normal", carry_scale=0.5, seed=4, chunk=2, steps=2)


def config_for(cell: str, **changes) -> Config:
    spatial = CELLS[cell].spatial
    return replace(BASE, cell=cell, **({"task": "moving_dot", "features": 3, "seq_len": 6} if spatial else {}),
                   **changes)


@cache
def setup(cell: str):
    config = config_for(cell)
    program = get_program(config)
    lr, clip, scale = hyper_args(config)
    state = program.init(np.int32(config.seed), scale, lr, clip)
    return program, jax.tree_util.tree_map(np.array, state["params"]), state["root"], scale


@pytest.mark.parametrize("cell", list(CELLS))
def test_the_probe_steps_forward_equals_flaxs_cell(cell):
    program, params, _, _ = setup(cell)
    spec = CELLS[cell]
    probe, p = spec.probe, spec.params_in(params)
    shapes = program.carry_shapes()
    x = program.example_inputs
    keys = jax.random.split(jax.random.PRNGKey(0), 3)
    for spread in (1.0, 60.0):  # ordinary and saturated pre-activations
        carry = tuple(spread * jax.random.normal(k, s) for k, s in zip(keys, shapes))
        x_t = spread * jax.random.normal(keys[2], x.shape[:1] + x.shape[2:])
        flax_cell = spec.build(program.static.features, kernel_size=program.static.kernel_size)
        want, _ = flax_cell.apply({"params": p}, spec.carry_from_tuple(carry), x_t)
        w = probe.prepare(p)
        got, flags = probe.step(w, carry, probe.project(w, x_t))
        for a, b in zip(got, spec.carry_as_tuple(want)):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-6, atol=2e-6)
        assert flags.shape == (2,)


def unshifted(factor) -> np.ndarray:
    """A backward output ``(value, shift)`` as the number it stands for, ``value * e^shift``, in float64."""
    value, shift = (np.asarray(0.0 if a is None else a, np.float64) for a in factor)
    return value * np.exp(shift).reshape(shift.shape + (1,) * (value.ndim - 1))


@pytest.mark.parametrize("cell", list(CELLS))
def test_the_hand_written_backward_equals_automatic_differentiation_of_the_probe_step(cell):
    """The backward pass multiplies by derivatives the forward pass kept; automatic differentiation of the forward
    pass (whose tanh and sigmoid have the non-cancelling derivatives) gives the same, saturated units included; the
    backward pass keeps tiny derivatives scaled (value * e^shift), so its products are not lost below float32."""
    program, _, _, _ = setup(cell)
    probe = CELLS[cell].probe
    shapes = program.carry_shapes()
    width = {"lstm": 4, "optimized_lstm": 4, "conv_lstm": 4, "gru": 3, "mgu": 2, "simple": 1}[cell]
    wide = shapes[0][:-1] + (width * shapes[0][-1],)
    keys = jax.random.split(jax.random.PRNGKey(1), 5)
    for spread in (1.0, 30.0):
        carry = tuple(spread * jax.random.normal(k, s) for k, s in zip(keys, shapes))
        xp, hp = (spread * jax.random.normal(k, wide) for k in keys[2:4])
        d_new = tuple(jax.random.normal(keys[4], s) for s in shapes)
        with jax.enable_x64(True):  # the reference in float64: float32's 1 - z is inexact where z is near 1
            as64 = partial(jax.tree_util.tree_map, lambda a: jnp.asarray(a, jnp.float64))
            _, vjp = jax.vjp(lambda c, a, b: probe.forward(c, a, b)[0], *as64((carry, xp, hp)))
            want_c, want_xp, want_hp = vjp(as64(d_new))
        _, derivatives = probe.forward(carry, xp, hp)
        (direct, s_c), d_xp, d_hp = probe.backward(probe_step.scaled(derivatives.forms, 1), carry, d_new)
        if spread == 1:  # no factor tiny: the factors as they are give the same numbers, with no shift at all
            assert not probe_step.needs_scaling(derivatives.forms, 1)
            (p_direct, p_s), p_xp, p_hp = probe.backward(probe_step.plain(derivatives.forms), carry, d_new)
            assert p_s is None and p_xp[1] is None and p_hp[1] is None
            for a, b in [*((a, unshifted((b, s_c))) for a, b in zip(p_direct, direct)), (p_xp[0], unshifted(d_xp)),
                         (p_hp[0], unshifted(d_hp))]:
                np.testing.assert_allclose(np.asarray(a), b, rtol=1e-5, atol=1e-7)
        for got, want in [*((unshifted((leaf, s_c)), w) for leaf, w in zip(direct, want_c)),
                          (unshifted(d_xp), want_xp), (unshifted(d_hp), want_hp)]:
            want = np.asarray(want)  # to float32's precision relative to each example's largest element
            largest = np.max(np.abs(want).reshape(len(want), -1), axis=1).reshape((-1,) + (1,) * (want.ndim - 1))
            bad = np.abs(got - want) > 2e-5 * np.abs(want) + 1e-6 * largest  # a product of two small factors may
            # lose what is a millionth of the largest
            assert not bad.any(), (got[bad], want[bad], np.argwhere(bad))
        if spread > 1:  # saturated: 1 - tanh^2 would be 0 here, the kept derivatives are not
            assert np.any((np.asarray(want_xp) != 0) & (np.abs(np.asarray(want_xp)) < 1e-8))


def float64_carry_grads(program, params, batch, scale) -> np.ndarray:
    """(leaves, steps + 1): ||dL/dh_t|| by automatic differentiation of rnnlab's own (Flax) model in float64."""
    x, y, carry_key = batch
    def as64(tree):  # floating leaves to float64; integer labels stay as they are
        return jax.tree_util.tree_map(
            lambda a: np.asarray(a, np.float64) if np.issubdtype(np.asarray(a).dtype, np.floating) else np.asarray(a),
            tree)

    n = len(program.spec.leaves)
    with jax.enable_x64(True):
        wide = Program(program.static, fused=False)

        def loss(eps0, eps):
            preds = wide.probe_model.apply(as64(params), as64(x), carry_key, np.float64(scale), eps0=eps0, eps=eps)
            return wide.task.loss(preds, as64(y))

        eps = jnp.zeros(x.shape[:-1] + (n * program.static.features,), jnp.float64)
        g0, g = jax.jit(jax.grad(loss, argnums=(0, 1)))(as64(program.zero_carry()), eps)
        g0 = [np.asarray(a) for a in program.spec.carry_as_tuple(g0)]
        g = np.split(np.asarray(g), n, axis=-1)
    axes = tuple(a for a in range(g[0].ndim) if a != 1)
    return np.stack([np.concatenate([[np.sqrt(np.sum(g0[k] ** 2))], np.sqrt(np.sum(g[k] ** 2, axis=axes))])
                     for k in range(n)])


@pytest.mark.parametrize("cell", list(CELLS))
def test_against_float64_for_every_cell(cell):
    program, params, root, scale = setup(cell)
    batch = probes.probe_batch(program, root)
    got = logscale.carry_grad_log10(program, params, batch, scale)
    want = float64_carry_grads(program, params, batch, scale)
    for k, leaf in enumerate(program.spec.leaves):
        finite = want[k] > 0
        np.testing.assert_allclose(got.log10[k][finite], np.log10(want[k][finite]), rtol=1e-4, atol=1e-5)
        assert (np.isneginf(got.log10[k]) == ~finite).all(), leaf
    if "c" in program.spec.leaves:  # the cell state after the last step is not read by the loss
        c = program.spec.leaves.index("c")
        assert got.zero_cause[c, -1] == "unread" and want[c, -1] == 0
        assert "nothing the loss reads depends on it" in size_words.describe_zero("unread", -1, "c", program.steps)
    conn = logscale.connectivity_log10(program, params, batch, scale)
    np.testing.assert_allclose(conn, np.log10(probes.connectivity(program, params, root, scale)), atol=1e-5)


def test_the_lstm_presets_vanished_gradient_at_its_true_size():
    """Untrained, T = 500: exactly 0 in float32, about 1e-54 in float64; the log-scaled probe finds float64's."""
    from rnnlab.sharing.presets import PRESETS_BY_KEY

    config = replace(PRESETS_BY_KEY["lstm_h0_50_vs_500"].config, seq_len=500)
    program = get_program(config)
    lr, clip, scale = hyper_args(config)
    params = program.init(np.int32(config.seed), scale, lr, clip)["params"]
    root = jax.random.PRNGKey(config.seed)
    batch = probes.probe_batch(program, root)
    got = logscale.carry_grad_log10(program, params, batch, scale)
    want = float64_carry_grads(program, params, batch, scale)
    total = math.log10(math.sqrt(float(np.sum(want[:, 0] ** 2))))
    assert total < F32_LOG10_FLOOR - 6
    assert got.h0_log10() == pytest.approx(total, rel=1e-4)
    assert probes.h0_grad_norm(program, params, root, scale) == 0  # what the float32 probe says
    ok = want > 0
    np.testing.assert_allclose(got.log10[ok], np.log10(want[ok]), rtol=1e-4)


def orthogonal_simple_program(rho: float, steps: int, features: int = 8):
    """A simple cell with W = rho * Q (Q orthogonal), inputs scaled by 1e-7 and a zero initial carry: tanh' is 1 in
    float32 at every step, so ||dL/dh_t|| = rho^(T - t) ||dL/dh_T|| exactly."""
    config = Config(cell="simple", task="adding", features=features, seq_len=steps, batch=2, carry_mode="fixed",
                    carry_init="zeros", seed=1, chunk=2, steps=2)
    program = get_program(config)
    lr, clip, scale = hyper_args(config)
    params = jax.tree_util.tree_map(np.array, program.init(np.int32(1), scale, lr, clip)["params"])
    p = CELLS["simple"].params_in(params)
    q, _ = np.linalg.qr(np.random.default_rng(0).normal(size=(features, features)))
    p["h"]["kernel"] = (rho * q).astype(np.float32)
    p["i"]["kernel"] = (1e-7 * p["i"]["kernel"]).astype(np.float32)
    p["i"]["bias"] = np.zeros_like(p["i"]["bias"])
    return program, params, scale


def test_a_near_linear_simple_cell_follows_rho_to_the_power_of_the_distance_down_to_1e_minus_500():
    rho, steps = 0.1, 520
    program, params, scale = orthogonal_simple_program(rho, steps)
    batch = probes.probe_batch(program, jax.random.PRNGKey(1))
    got = logscale.carry_grad_log10(program, params, batch, scale).log10[0]
    want = got[-1] + (steps - np.arange(steps + 1)) * math.log10(rho)
    assert want[0] < -500 and np.isfinite(got).all()
    np.testing.assert_allclose(got, want, rtol=1e-4)
    segmented = logscale.carry_grad_log10(program, params, batch, scale, segment=64).log10[0]
    np.testing.assert_allclose(segmented, got, rtol=1e-6)


def _mp_tanh_slope(x):
    return 1 / mpmath.cosh(x) ** 2


@pytest.mark.parametrize("gain", [1.0, 5.0])
def test_against_60_digit_arithmetic_on_a_tiny_saturated_cell(gain):
    """H = 2, four steps, weights that saturate tanh (pre-activations of 20 to 40): tanh' is 1e-17 to 1e-35 at every
    step and the gradient falls far below float32's range; mpmath at 60 digits agrees to 1e-4 in log10. Five times
    those weights (pre-activations of 100 to 200): tanh' is 1e-87 and less, 0 in float32, and the probe still gives
    the true size."""
    mpmath.mp.dps = 60
    config = Config(cell="simple", task="adding", features=2, seq_len=4, batch=1, carry_mode="fixed",
                    carry_init="zeros", seed=2, chunk=2, steps=2)
    program = get_program(config)
    lr, clip, scale = hyper_args(config)
    params = jax.tree_util.tree_map(np.array, program.init(np.int32(2), scale, lr, clip)["params"])
    p = CELLS["simple"].params_in(params)
    p["h"]["kernel"] = np.float32(gain) * np.array([[14.0, -9.0], [11.0, 13.0]], np.float32)
    p["i"]["kernel"] = np.float32(gain) * np.array([[6.0, 5.0], [3.0, -4.0]], np.float32)
    p["i"]["bias"] = np.float32(gain) * np.array([17.0, -19.0], np.float32)
    batch = probes.probe_batch(program, jax.random.PRNGKey(2))
    got = logscale.carry_grad_log10(program, params, batch, scale).log10[0]

    x, y = np.asarray(batch[0], np.float64)[0], float(np.asarray(batch[1])[0, 0])
    W, U, b = (mpmath.matrix(np.asarray(a, np.float64).tolist()) for a in (p["h"]["kernel"], p["i"]["kernel"],
                                                                           p["i"]["bias"][None]))
    K = [mpmath.mpf(float(v)) for v in np.asarray(params["params"]["readout"]["kernel"])[:, 0]]
    kb = mpmath.mpf(float(np.asarray(params["params"]["readout"]["bias"])[0]))
    h, pres = mpmath.matrix(1, 2), []
    for t in range(4):
        pre = mpmath.matrix([[float(v) for v in x[t]]]) * U + h * W + b
        pres.append(pre)
        h = pre.apply(mpmath.tanh)
    pred = sum(K[j] * h[0, j] for j in range(2)) + kb
    g = [2 * (pred - y) * K[j] for j in range(2)]  # dL/dh_4 (MSE of one example)
    want = [mpmath.log10(mpmath.sqrt(sum(v ** 2 for v in g)))]
    for t in range(3, -1, -1):
        d = [g[j] * _mp_tanh_slope(pres[t][0, j]) for j in range(2)]
        g = [sum(W[i, j] * d[j] for j in range(2)) for i in range(2)]
        want.append(mpmath.log10(mpmath.sqrt(sum(v ** 2 for v in g))))
    want = np.array([float(v) for v in reversed(want)])
    assert want[0] < F32_LOG10_FLOOR and (want[0] > F64_LOG10_FLOOR or gain > 1)  # float32 loses it
    assert np.all(np.diff(want) > 10)  # saturated: every step loses more than ten orders of magnitude
    np.testing.assert_allclose(got, want, rtol=1e-4)


def test_saturation_zeros_found_by_an_independent_rule_are_named():
    """A trained simple cell made to saturate: where numpy (float32, flushing below the smallest normal number as
    XLA does) finds every unit's tanh' exactly 0, float32 loses the gradient before that step: the probe gives its true
    size there and names why float32 gives 0 (saturated units at that step)."""
    from rnnlab.training.train import Run

    config = Config(cell="simple", task="adding", seq_len=30, features=16, batch=8, steps=20, chunk=10, seed=3)
    run = Run(config)
    run.train()
    program, scale = run.program, run.scale
    params = jax.tree_util.tree_map(np.array, run.params)
    p = CELLS["simple"].params_in(params)
    p["h"]["kernel"] = p["h"]["kernel"] * np.float32(300.0)
    batch = probes.probe_batch(program, run.root)
    sizes = logscale.carry_grad_log10(program, params, batch, scale)

    x = np.asarray(batch[0], np.float32)
    wi, bi, wh = (np.asarray(a, np.float32) for a in (p["i"]["kernel"], p["i"]["bias"], p["h"]["kernel"]))
    h = np.zeros((x.shape[0], config.features), np.float32)  # the learnable initial carry of a run
    h = h + np.asarray(params["params"]["h0"], np.float32)
    all_dead = []
    for t in range(x.shape[1]):
        pre = x[:, t] @ wi + bi + h @ wh
        with np.errstate(under="ignore"):
            e = np.exp(np.float32(-2) * np.abs(pre))
            e = np.where(e < np.finfo(np.float32).tiny, np.float32(0), e)
            slope = np.float32(4) * e / (np.float32(1) + e) ** 2
        all_dead.append(bool((slope == 0).all()))
        h = np.tanh(pre)
    dead_steps = [t + 1 for t, dead in enumerate(all_dead) if dead]
    assert dead_steps, "the cell should saturate"
    last = max(dead_steps)  # the step nearest the loss whose every unit has tanh' exactly 0
    log10 = sizes.log10[0]
    assert np.isfinite(log10).all()  # the true size, however small: float32 gives 0 before ``last``, not the probe
    assert log10[:last].max() < F32_LOG10_FLOOR
    assert (sizes.zero_cause[0, :last] == "saturated").all() and (sizes.zero_at[0, :last] == last).all()
    assert (sizes.zero_cause[0, last:] == "").all()
    sentence = size_words.describe_zero("saturated", last, "h", last - 1)
    assert f"step {last}" in sentence and "derivative is 0 in float32" in sentence


@pytest.mark.parametrize("cell", ["lstm", "gru", "mgu", "simple"])
def test_the_factors_as_they_are_and_their_exact_logs_give_the_same_sizes(cell, monkeypatch):
    """Where no example's factor is tiny, the probe multiplies by the factors as they are (the fast branch); with
    every factor counted as tiny (kept scaled with its exact log) the sizes are the same. On weights that saturate
    every unit and shut the gates the probe takes the exact branch and finds float64's sizes (keeping only the
    factors' tiny values scaled lost the LSTM's: 1e-9.6 for 1e-4.5)."""
    program, params, root, scale = setup(cell)
    batch = probes.probe_batch(program, root)
    assert not logscale.needs_exact_logs(program, params, batch, scale)
    fast = logscale.carry_grad_log10(program, params, batch, scale)
    fast_conn = logscale.connectivity_log10(program, params, batch, scale)
    monkeypatch.setattr(probe_step, "LOG_TINY", 80.0)  # every factor below e^80: the exact branch
    exact_program = Program(program.static)  # compiled anew, with that threshold
    assert logscale.needs_exact_logs(exact_program, params, batch, scale)
    exact = logscale.carry_grad_log10(exact_program, params, batch, scale)
    exact_conn = logscale.connectivity_log10(exact_program, params, batch, scale)
    monkeypatch.undo()
    np.testing.assert_allclose(fast.log10, exact.log10, rtol=1e-5, atol=1e-5)
    assert (fast.zero_cause == exact.zero_cause).all() and (fast.zero_at == exact.zero_at).all()
    np.testing.assert_allclose(fast_conn, exact_conn, rtol=1e-5, atol=1e-5)

    weights = saturating(params, cell)
    assert logscale.needs_exact_logs(program, weights, batch, scale)
    got = logscale.carry_grad_log10(program, weights, batch, scale)
    want = float64_carry_grads(program, weights, batch, scale)
    finite = want > 0
    np.testing.assert_allclose(got.log10[finite], np.log10(want[finite]), rtol=1e-4, atol=1e-4)
    assert np.isfinite(got.log10[finite]).all()


@pytest.mark.parametrize("cell", ["lstm", "gru", "conv_lstm"])
def test_segments_equal_one_pass(cell):
    program, params, root, scale = setup(cell)
    batch = probes.probe_batch(program, root)
    whole = logscale.carry_grad_log10(program, params, batch, scale)
    seen: list[float] = []
    pieces = logscale.carry_grad_log10(program, params, batch, scale, segment=4, progress=seen.append)
    np.testing.assert_allclose(pieces.log10, whole.log10, rtol=1e-6, atol=1e-6)
    assert (pieces.zero_cause == whole.zero_cause).all() and (pieces.zero_at == whole.zero_at).all()
    assert seen == sorted(seen) and seen[-1] == pytest.approx(1.0)
    conn = logscale.connectivity_log10(program, params, batch, scale)
    np.testing.assert_allclose(logscale.connectivity_log10(program, params, batch, scale, segment=4), conn,
                               rtol=1e-6, atol=1e-6)


def test_zero_causes_inherit_and_name_the_cutting_step():
    log10 = np.array([[-np.inf, -np.inf, -3.0, -2.0, -np.inf], [-np.inf, -np.inf, -4.0, -1.0, 0.0]])
    flags = np.array([[0, 0], [0, 0], [0, 1], [0, 0], [0, 0]], bool)
    cause, at = logscale.zero_causes(log10, flags)
    assert list(cause[0]) == ["gate", "gate", "", "", "unread"] and list(at[0]) == [2, 2, -1, -1, -1]
    assert list(cause[1]) == ["gate", "gate", "", "", ""]


def test_sizes_and_tables():
    assert logscale.log10_hypot(np.array([-600.0, -600.0]), axis=0) == pytest.approx(-600 + 0.5 * math.log10(2))
    assert np.isneginf(logscale.log10_hypot(np.array([-np.inf, -np.inf]), axis=0))
    assert true_sizes.format_log10(math.log10(4.7e-54)) == "4.700e-54"
    assert true_sizes.format_log10(-600.0) == "1.000e-600"
    assert true_sizes.format_log10(-math.inf) == true_sizes.EXACT_ZERO
    program, params, root, scale = setup("lstm")
    df = probes.carry_grad_df(program, params, root, scale, step=3)
    assert list(df.columns) == probes.GRAD_COLUMNS
    np.testing.assert_allclose(df["grad_norm"], logscale.to_float(df["log10"]))
    assert set(df["zero_cause"]) <= {"", *log10_scale.ZERO_CAUSES}
    fit = probes.fit_log10(np.array([10, 20, 30, 40]), np.array([-1.0, -2.0, -3.0, -np.inf]))
    assert fit["points"] == 3 and fit["rate"] == pytest.approx(10 ** -0.1)
    assert fit["halving"] == pytest.approx(math.log10(2) / 0.1)
