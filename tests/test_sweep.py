"""Vmapped sweeps: equal to one-by-one runs, grouping into programs, validation, divergence, 4 devices.

One-by-one and vmapped results agree to float tolerance, not bit for bit: vmapping turns each run's matmuls
into batched ones, and XLA may then sum the products in another order (differences of ~1e-6 relative,
which a few optimiser steps carry along).
"""

import json
import os
import subprocess
import sys
import textwrap
from dataclasses import replace
from io import StringIO
from pathlib import Path

import jax
import numpy as np
import pandas as pd
import pytest

from rnnlab import grids, sweep
from rnnlab.config import Config
from rnnlab.probing import logscale, probes
from rnnlab.sweep import MAX_RUNS, SweepError, estimate_sweep, expand, group_configs, run_sweep
from rnnlab.training import estimate
from rnnlab.training.compiled import compile_count
from rnnlab.training.program import get_program, hyper_args
from rnnlab.training.train import Run
from rnnlab.true_sizes import F32_LOG10_FLOOR

ROOT = Path(__file__).resolve().parents[1]
BASE = Config(seq_len=12, batch=8, features=8, steps=15, chunk=5)
AXES = {"carry_mode": ["fixed", "learnable"], "lr": [0.01, 0.05], "seed": [0, 1]}
RTOL = 1e-4


@pytest.fixture(scope="module")
def configs() -> list[Config]:
    return expand(BASE, AXES)


@pytest.fixture(scope="module")
def result(configs):
    return run_sweep(configs)


def assert_trees_close(a, b, rtol=RTOL, atol=1e-6):
    assert jax.tree_util.tree_structure(a) == jax.tree_util.tree_structure(b)
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=rtol, atol=atol)


def test_sweep_equals_the_same_configurations_trained_one_by_one(configs, result):
    assert len(configs) == 8 and result.programs == 2 and result.devices == 1
    for i, config in enumerate(configs):
        run = Run(config)
        history = run.train()
        mine = result.histories[i]
        a, b = history.steps_df(), mine.steps_df()
        assert list(b["step"]) == list(range(1, 16))
        np.testing.assert_allclose(b.to_numpy(), a.to_numpy(), rtol=RTOL, atol=1e-7)
        np.testing.assert_allclose(mine.chunks_df().to_numpy(), history.chunks_df().to_numpy(), rtol=RTOL)
        np.testing.assert_allclose(np.stack(mine.per_step_loss), np.stack(history.per_step_loss), rtol=RTOL)
        assert_trees_close(result.params[i], jax.device_get(run.params))
        scale = hyper_args(config)[2]
        root = jax.random.PRNGKey(config.seed)
        sizes = logscale.carry_grad_log10(run.program, run.params, probes.probe_batch(run.program, root), scale)
        assert result.h0[i].log10 == pytest.approx(sizes.h0_log10(), abs=1e-4) and not result.h0[i].cause
        float32 = probes.h0_grad_norm(run.program, run.params, root, scale)  # float32 holds these: the same
        assert result.h0_grad_norms[i] == pytest.approx(float32, rel=RTOL)
        assert result.stop_reasons[i] is None


def test_tables_hold_the_histories(configs, result):
    assert result.varying == ("carry_mode", "lr", "seed")
    assert result.labels[:2] == ["fixed carry, lr 0.01"] * 2 and result.labels[-1] == "learnable carry, lr 0.05"
    summary = result.summary_df()
    assert list(summary.columns) == ["label", "carry_mode", "lr", "seed", "steps", "final_loss", "eval_loss",
                                     "eval_metric", "h0_grad_norm", "h0_log10", "h0_zero_cause", "h0_zero_at",
                                     "of_baseline", "verdict", "diverged"]
    assert len(summary) == 8 and (summary["steps"] == 15).all() and not summary["diverged"].any()
    for i, history in enumerate(result.histories):
        assert summary["final_loss"][i] == history.steps[-1]["loss"]
        assert summary["eval_loss"][i] == history.chunks[-1]["eval_loss"]
        assert summary["h0_log10"][i] == result.h0[i].log10 and summary["h0_zero_cause"][i] == ""
        assert summary["h0_grad_norm"][i] == pytest.approx(10 ** result.h0[i].log10, rel=1e-12)
        ratio = history.chunks[-1]["eval_loss"] / result.baseline
        assert summary["of_baseline"][i] == pytest.approx(ratio)
        assert summary["verdict"][i] == ("learned the task" if ratio <= 0.1 else "uses some memory, not solved"
                                         if ratio < 0.9 else "no better than memoryless" if ratio <= 1 / 0.9
                                         else "worse than memoryless")
    assert result.baseline == pytest.approx(1 / 6 - 1 / (12 * 6))  # T = 12: the last value is marked 1 time in 6
    curves = result.curves_df()
    assert len(curves) == 8 * 15
    assert list(curves.columns) == ["label", "carry_mode", "lr", "seed", "step", "loss", "metric"]
    spread = result.spread_df()
    assert len(spread) == 4 * 15 and (spread["seeds"] == 2).all()
    first = spread[spread["label"] == "learnable carry, lr 0.05"].iloc[-1]
    losses = [result.histories[i].steps[-1]["loss"] for i in (6, 7)]
    assert (first["step"], first["mean"], first["min"], first["max"]) == (15, pytest.approx(np.mean(losses)),
                                                                          min(losses), max(losses))
    assert first["std"] == pytest.approx(np.std(losses))
    csv = result.to_csv().splitlines()
    assert csv[0].startswith("label,carry_mode,lr,seed,steps,final_loss") and len(csv) == 9
    table = pd.read_csv(StringIO(result.to_csv()))
    np.testing.assert_allclose(table["h0_log10"], [size.log10 for size in result.h0], rtol=1e-12)


def test_grouping_into_compiled_programs():
    base = replace(BASE, carry_init="normal")
    configs = expand(base, {"cell": ["gru", "lstm"], "carry_mode": ["fixed", "learnable"], "lr": [0.01, 0.1],
                            "seed": [0, 1, 2]})
    assert len(configs) == 24
    groups = group_configs(configs)
    assert [len(g) for g in groups] == [6] * 4
    for group in groups:
        assert len({configs[i].static_key() for i in group}) == 1
    assert sweep.describe_plan(configs).startswith("24 runs in 4 compiled programs")
    seeds_only = expand(BASE, {"seed": [0, 1, 2]})
    assert len(group_configs(seeds_only)) == 1
    assert sweep.label_of(seeds_only[0], sweep.varying_fields(seeds_only)) == "GRU, learnable carry, init zeros"
    inits = expand(BASE, {"carry_init": ["zeros", "normal", "ones"]})
    assert len(group_configs(inits)) == 3  # the initialiser is compiled into the program


def test_changing_lr_and_seed_reuses_the_compiled_sweep(configs, result):
    built = sweep.cached_program_sets()
    learnable = [c for c in configs if c.carry_mode == "learnable"]
    other = [replace(c, lr=c.lr * 3, seed=c.seed + 10) for c in learnable]
    again = run_sweep(other)
    assert sweep.cached_program_sets() == built
    fns = sweep.vmapped(get_program(learnable[0]), 4, jax.devices())
    assert compile_count(fns.train_steps) == 1 and compile_count(fns.init) == 1
    assert again.histories[0].steps[-1]["loss"] != result.histories[4].steps[-1]["loss"]


def test_expand_refuses_bad_sweeps_with_messages():
    with pytest.raises(SweepError) as err:
        expand(BASE, {"lr": [0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0], "seed": list(range(7))})
    said = str(err.value)
    assert "7 values of learning rate x 7 values of seed make 49 runs" in said and f"at most {MAX_RUNS}" in said
    assert len(expand(BASE, {"lr": [0.001, 0.01, 0.1], "seed": list(range(16))})) == MAX_RUNS
    with pytest.raises(SweepError) as err:
        expand(BASE, {"cell": ["gru", "conv_lstm"]})
    assert err.value.messages == [m for m in replace(BASE, cell="conv_lstm").validate()]
    assert "ConvLSTM cannot run Adding problem" in err.value.messages[0]
    with pytest.raises(SweepError, match="cannot vary features"):
        expand(BASE, {"features": [8, 16]})
    with pytest.raises(SweepError, match="learning rate must be greater than 0"):
        expand(BASE, {"lr": [0.01, -1.0]})
    with pytest.raises(SweepError, match="share steps"):
        run_sweep([BASE, replace(BASE, steps=20)])
    with pytest.raises(SweepError, match="no configurations"):
        run_sweep([])


def test_parsing_sweep_values():
    fields = grids.FIELDS
    assert fields["lr"].parse("0.01, 0.1;0.01") == [0.01, 0.1]
    assert fields["seed"].parse("0,1, 2") == [0, 1, 2]
    assert fields["cell"].parse("gru, lstm") == ["gru", "lstm"]
    with pytest.raises(ValueError, match="'abc' is not a valid value"):
        fields["lr"].parse("0.1, abc")
    with pytest.raises(ValueError, match="not a valid value"):
        fields["seed"].parse("1.5")
    with pytest.raises(ValueError, match="unknown 'transformer'"):
        fields["cell"].parse("gru, transformer")
    assert [f.name for f in grids.SWEEP_FIELDS] == ["carry_mode", "carry_init", "cell", "lr", "seed"]


def test_a_divergent_run_stops_without_affecting_the_others(configs, result):
    learnable = replace(BASE, carry_mode="learnable")
    mixed = expand(learnable, {"lr": [0.01, 1e30], "seed": [0, 1]})  # the same program and size as above
    out = run_sweep(mixed)
    assert out.diverged == [False, False, True, True]
    for i in (2, 3):
        history = out.histories[i]
        assert history.last_step == 1 and history.diverged_at == 2  # Adam's first step is ~lr: then inf
        assert history.stop_reason.startswith("Stopped at step 2: the training loss became")
        assert all(np.isfinite(x).all() for x in jax.tree_util.tree_leaves(out.params[i]))
        assert [c["step"] for c in history.chunks] == [0, 1]  # no evaluations after it stopped
    summary = out.summary_df()
    assert list(summary["diverged"]) == [False, False, True, True]
    assert list(summary["steps"]) == [15, 15, 1, 1]
    for i, j in ((0, 4), (1, 5)):  # the same configurations in the first sweep, next to other learning rates
        assert out.configs[i] == configs[j]
        np.testing.assert_allclose(out.histories[i].steps_df().to_numpy(),
                                   result.histories[j].steps_df().to_numpy(), rtol=1e-6)
        assert_trees_close(out.params[i], result.params[j], rtol=1e-6, atol=1e-8)


def test_callback_reports_progress_and_can_stop(configs, result):
    seen = []

    def callback(fraction, text):
        seen.append((fraction, str(text)))
        return len(seen) < 2

    out = run_sweep(configs, callback=callback)
    assert out.stopped
    assert seen == [(1 / 6, "step 5 / 15 of program 1 of 2"), (2 / 6, "step 5 / 15 of program 2 of 2")]
    assert [h.last_step for h in out.histories] == [5] * 8
    np.testing.assert_allclose(out.histories[0].steps_df()["loss"],
                               result.histories[0].steps_df()["loss"][:5], rtol=1e-6)


FOUR_DEVICES = textwrap.dedent("""
    import json, sys
    import jax
    from rnnlab.config import Config
    from rnnlab.sweep import expand, run_sweep
    base = Config(seq_len=12, batch=8, features=8, steps=15, chunk=5, carry_mode="learnable")
    configs = expand(base, {"lr": [0.01, 0.05], "seed": [0, 1]})
    four = run_sweep(configs)              # 4 runs, one per device
    three = run_sweep(configs[:3])         # padded to 4 with a copy of the last; the copy is dropped
    dump = lambda r: {"devices": r.devices, "losses": [h.steps_df()["loss"].tolist() for h in r.histories],
                      "evals": [h.chunks_df()["eval_loss"].tolist() for h in r.histories],
                      "h0": r.h0_grad_norms, "configs": [c.to_dict() for c in r.configs]}
    json.dump({"device_count": jax.device_count(), "four": dump(four), "three": dump(three)}, sys.stdout)
""")


def test_four_simulated_devices_give_the_same_numbers(configs, result):
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=4", "JAX_PLATFORMS": "cpu",
           "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", FOUR_DEVICES], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads(proc.stdout)
    assert data["device_count"] == 4
    assert data["four"]["devices"] == 4 and data["three"]["devices"] == 4
    mine = [i for i, c in enumerate(configs) if c.carry_mode == "learnable"]  # the same 4, in the same order
    for k, i in enumerate(mine):
        assert data["four"]["configs"][k] == configs[i].to_dict()
        np.testing.assert_allclose(data["four"]["losses"][k], result.histories[i].steps_df()["loss"], rtol=RTOL)
        np.testing.assert_allclose(data["four"]["evals"][k], result.histories[i].chunks_df()["eval_loss"],
                                   rtol=RTOL)
        assert data["four"]["h0"][k] == pytest.approx(result.h0_grad_norms[i], rel=RTOL)
    assert len(data["three"]["losses"]) == 3
    for k in range(3):
        np.testing.assert_allclose(data["three"]["losses"][k], data["four"]["losses"][k], rtol=1e-6)
        assert data["three"]["h0"][k] == pytest.approx(data["four"]["h0"][k], rel=1e-6)


STACKED_INIT = """
import jax, numpy as np, os
from rnnlab.config import Config
from rnnlab.training.program import get_program
assert "xla_cpu_enable_concurrency_optimized_scheduler=false" in os.environ["XLA_FLAGS"]
p = get_program(Config(batch=8, seq_len=10, features=64))
def init(seed, scale, lr, clip):
    state = p.plain_init(seed, scale, lr, clip)
    return state, p.plain_evaluate(state["params"], state["root"], scale)
k = 8
out = jax.jit(jax.vmap(init))(np.arange(k, dtype=np.int32), *(np.full(k, v, np.float32) for v in (0.1, 1e-2, 1.0)))
print(float(jax.device_get(out[1]["loss"]).sum()))
"""


def test_a_stacked_init_and_evaluate_finishes_in_a_fresh_process():
    """XLA:CPU's concurrency-optimised scheduler hung this program (K >= 3) in most fresh processes; importing
    rnnlab turns that scheduler off."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("XLA_FLAGS", None)
    proc = subprocess.run([sys.executable, "-c", STACKED_INIT], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=240)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert float(proc.stdout.strip().splitlines()[-1]) > 0


def test_a_run_whose_loss_blows_up_is_marked_diverged_with_the_run_message():
    """lr = 10 keeps the loss finite but far above its start and the baseline: diverged, like a one-by-one Run."""
    from rnnlab.training.train import Run

    learnable = replace(BASE, carry_mode="learnable", steps=30)
    mixed = expand(learnable, {"lr": [0.01, 10.0]})
    out = run_sweep(mixed)
    assert out.diverged == [False, True]
    history = out.histories[1]
    evals = history.chunks_df()["eval_loss"].to_numpy()
    assert np.isfinite(evals).all() and evals[-1] > 10 * max(evals[0], 1 / 6)
    alone = Run(mixed[1]).train()
    assert history.diverged_at == alone.diverged_at  # the numbers differ by float rounding (vmapped)
    assert history.stop_reason.split(" The evaluation loss")[0] == alone.stop_reason.split(" The evaluation loss")[0]
    assert "press" not in history.stop_reason.lower()


def test_a_sweep_in_time_bounded_calls_equals_one_in_whole_chunks(configs, result):
    calls = []
    out = run_sweep(configs, callback=lambda fraction, text: calls.append(text), max_seconds=1e-9)
    assert len(calls) == 2 * BASE.steps + 1  # from the first call on, each program trains a step per call
    assert calls[-1] == sweep.MEASURING  # then the final probe
    for mine, whole in zip(out.histories, result.histories):
        assert mine.steps_df().equals(whole.steps_df())
        assert mine.chunks_df().equals(whole.chunks_df())  # evaluations only where a chunk ends


def test_the_sweep_estimate_counts_every_run_and_each_compile_once(configs, result):
    guess = estimate_sweep(configs)
    assert guess.compile_s == 0  # both programs of the fixture's sweep are compiled, and their final probe
    one = estimate.estimate(configs[0], steps=configs[0].steps)
    assert guess.steps == configs[0].steps and guess.step_s > one.step_s
    fresh = estimate_sweep([replace(c, features=12) for c in configs])
    assert fresh.compile_s == 2 * (estimate.DEFAULT_COMPILE_S + probes.PROBE_COMPILE_S)
    probe_s = sum(estimate.estimate(replace(c, features=12), 1).step_s for c in configs)  # one probe per run
    training = estimate.together([(replace(configs[i], features=12), len(g), False) for g in group_configs(configs)
                                  for i in g[:1]], configs[0].steps)
    assert fresh.total_s == pytest.approx(training.total_s + 2 * probes.PROBE_COMPILE_S + probe_s)


def test_the_vmapped_program_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(sweep, "MAX_VMAPPED", 2)
    devices = jax.devices()
    programs = [get_program(replace(BASE, features=f)) for f in (3, 4, 5)]
    kept = [sweep.vmapped(p, 1, devices) for p in programs]
    assert sweep.vmapped(programs[2], 1, devices) is kept[2]  # the most recent stay
    assert sweep.vmapped(programs[0], 1, devices) is not kept[0]  # the oldest was dropped, and is built again


def test_a_callback_that_says_stop_before_the_first_compile_trains_nothing():
    fresh = expand(replace(BASE, features=6, cell="mgu"), {"seed": [0, 1]})  # a program no other test compiles
    seen = []
    out = run_sweep(fresh, callback=lambda fraction, text: seen.append((fraction, str(text))) or False)
    assert out.stopped and seen == [(0.0, "Compiling program 1 of 1 (MGU, learnable carry, init zeros)…")]
    assert [h.chunks for h in out.histories] == [[], []] and out.params == [None, None] and out.devices == 0
    assert all(np.isnan(out.h0_grad_norms)) and all(np.isnan(size.log10) for size in out.h0)
    summary = out.summary_df()  # what Compare draws of a sweep stopped while compiling
    assert list(summary["verdict"]) == [sweep.NOT_EVALUATED] * 2 and list(summary["steps"]) == [0, 0]
    assert summary["eval_loss"].isna().all()


def test_a_gradient_below_float32s_range_is_given_at_its_true_size():
    """An LSTM at T = 500 after two steps: ||dL/dh_0|| far below 1e-38, where float32's probe says 0; the sweep
    gives the log-scaled probe's size, which float64 confirms."""
    from tests.test_log_probe import float64_carry_grads

    configs = expand(Config(cell="lstm", seq_len=500, features=8, batch=4, steps=2, chunk=2), {"seed": [0, 1]})
    out = run_sweep(configs)
    for i, config in enumerate(configs):
        program, params, scale = get_program(config), out.params[i], hyper_args(config)[2]
        batch = probes.probe_batch(program, jax.random.PRNGKey(config.seed))
        want = logscale.carry_grad_log10(program, params, batch, scale).h0_log10()
        assert out.h0[i].log10 == pytest.approx(want, abs=1e-9) and out.h0[i].log10 < F32_LOG10_FLOOR
        float64 = float64_carry_grads(program, params, batch, scale)[:, 0]
        assert out.h0[i].log10 == pytest.approx(np.log10(np.sqrt(np.sum(float64 ** 2))), rel=1e-4)
        assert probes.h0_grad_norm(program, params, jax.random.PRNGKey(config.seed), scale) == 0  # float32's
        assert out.h0_grad_norms[i] == pytest.approx(10 ** out.h0[i].log10, rel=1e-12) and out.h0_grad_norms[i] > 0
    summary = out.summary_df()
    assert (summary["h0_log10"] < F32_LOG10_FLOOR).all() and (summary["h0_zero_cause"] == "").all()


def test_an_exact_zero_is_named_by_its_cause():
    log10 = np.array([[-np.inf, -2.0], [-np.inf, -1.0]])
    grads = logscale.LogGrads(("c", "h"), log10, np.array([["gate", ""], ["gate", ""]]),
                              np.array([[1, -1], [1, -1]]))
    size = sweep.h0_size(grads)
    assert (size.log10, size.cause, size.at, size.value) == (-np.inf, "gate", 1, 0.0)
    none = sweep.h0_size(logscale.LogGrads(("h",), np.array([[-3.0, 0.0]]), np.array([["", ""]]),
                                           np.array([[-1, -1]])))
    assert (none.log10, none.cause, none.at) == (-3.0, "", -1)
