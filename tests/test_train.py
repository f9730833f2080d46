"""Training in chunks, one compiled call at a time: learning, reproducibility, divergence, resuming and no
recompilation."""

import numpy as np
import pytest

from rnnlab.config import Config, ConfigError
from rnnlab.training.compiled import compile_count
from rnnlab.training.divergence import divergence_reason
from rnnlab.training.program import get_program
from rnnlab.training.train import Run

SMALL = Config(seq_len=20, batch=16, features=16, steps=40, chunk=10)


@pytest.mark.slow
def test_gru_solves_the_adding_problem_at_T50():
    run = Run(Config(seq_len=50, steps=300, chunk=50, seed=1))
    history = run.train()
    baseline = run.program.task.baseline(50)
    assert run.step == 300 and history.stop_reason is None
    evals = history.chunks_df()
    assert evals["eval_loss"].iloc[0] > 0.5 * baseline  # it starts near or above the baseline
    assert evals["eval_loss"].iloc[-1] < 0.1 * baseline  # and ends well below it
    assert history.steps_df()["loss"].tail(20).mean() < 0.2 * baseline


def test_history_records_every_step_and_evaluation():
    run = Run(SMALL)
    history = run.train()
    df = history.steps_df()
    assert list(df["step"]) == list(range(1, 41))
    assert list(history.chunks_df()["step"]) == [0, 10, 20, 30, 40]
    assert np.isfinite(df[["loss", "metric", "grad_norm", "h0_grad_norm"]].to_numpy()).all()
    assert (df["h0_grad_norm"] == df["h0_grad_h"]).all()
    assert history.carry_snapshots("h").shape == (5, 16)
    assert history.per_step_loss_df().shape == (5 * 20, 3)


def test_lstm_records_both_carry_leaves():
    run = Run(Config(cell="lstm", seq_len=10, batch=8, features=8, steps=10, chunk=10))
    df = run.train().steps_df()
    np.testing.assert_allclose(df["h0_grad_norm"], np.hypot(df["h0_grad_c"], df["h0_grad_h"]), rtol=1e-6)
    assert run.history.carry_snapshots("c").shape == run.history.carry_snapshots("h").shape == (2, 8)


def test_same_seed_same_history_bit_for_bit():
    a, b = Run(SMALL).train(), Run(SMALL).train()
    assert a.steps_df().equals(b.steps_df())
    assert all((x == y).all() for x, y in zip(a.carry["h"], b.carry["h"]))
    c = Run(Config(**{**SMALL.__dict__, "seed": 1})).train()
    assert not a.steps_df()["loss"].equals(c.steps_df()["loss"])


def test_learnable_carry_moves_fixed_does_not():
    learn = Run(Config(**{**SMALL.__dict__, "carry_init": "normal"})).train()
    moved = np.linalg.norm(learn.carry_snapshots("h")[-1] - learn.carry_snapshots("h")[0])
    assert moved > 1e-2
    fixed = Run(Config(**{**SMALL.__dict__, "carry_mode": "fixed", "carry_init": "normal"}))
    snaps = fixed.train().carry_snapshots("h")
    assert (snaps == snaps[0]).all() and np.abs(snaps[0]).max() > 0
    assert "h0" not in fixed.params["params"]


def test_zeros_fixed_carry_is_zero_and_scale_sets_the_spread():
    zeros = Run(Config(**{**SMALL.__dict__, "carry_mode": "fixed", "steps": 10}))
    assert (zeros.history.carry_snapshots("h") == 0).all()
    wide = Run(Config(**{**SMALL.__dict__, "carry_mode": "fixed", "carry_init": "normal", "carry_scale": 2.0,
                         "features": 512, "steps": 10}))
    assert 1.7 < wide.history.carry_snapshots("h")[0].std() < 2.3


def test_resume_after_stop_equals_one_uninterrupted_run():
    whole = Run(SMALL).train()
    run = Run(SMALL)
    run.train(callback=lambda progress: False)  # stop after the first chunk
    assert run.step == 10 and not run.done
    run.train()
    assert run.history.steps_df().equals(whole.steps_df())


def test_a_run_trained_in_time_bounded_calls_equals_one_in_whole_chunks():
    whole = Run(SMALL).train()
    run = Run(SMALL)
    calls = []
    run.train(callback=calls.append, max_seconds=1e-9)  # at least one step per call: here, exactly one
    assert len(calls) == SMALL.steps and [c.step for c in calls] == list(range(1, SMALL.steps + 1))
    assert run.history.steps_df().equals(whole.steps_df())
    assert run.history.chunks_df().equals(whole.chunks_df())  # evaluations only where a chunk ends
    assert all((x == y).all() for x, y in zip(run.history.carry["h"], whole.carry["h"]))
    assert [s for s, _ in run.snapshots] == [0, 10, 20, 30, 40]


def test_stopping_inside_a_chunk_keeps_its_steps_and_resumes_exactly():
    whole = Run(SMALL).train()
    run = Run(SMALL)
    run.train(callback=lambda p: p.step < 13, max_seconds=1e-9)  # stop after step 13, inside the second chunk
    assert run.step == 13 and list(run.history.chunks_df()["step"]) == [0, 10]
    run.train()
    assert run.history.steps_df().equals(whole.steps_df()) and run.history.chunks_df().equals(whole.chunks_df())


@pytest.mark.parametrize("step, expected", [(0, 10), (3, 7), (10, 10), (35, 5)])
def test_call_steps_run_to_the_chunk_end_or_what_fits_in_the_time(step, expected):
    from rnnlab.training.train import call_steps

    assert call_steps(step, 10, 40, 0.01, None) == expected
    assert call_steps(step, 10, 40, 0.01, 0.035) == min(expected, 3)
    assert call_steps(step, 10, 40, 5.0, 1.0) == 1  # a step longer than the time still runs


def test_a_compiled_call_runs_only_its_active_steps():
    run = Run(SMALL)
    program = run.program
    lr, clip, scale = (np.float32(v) for v in (SMALL.lr, SMALL.clip, SMALL.carry_scale))
    state, records, _ = program.train_steps(run.state, lr, clip, scale, np.int32(3))
    assert int(state["step"]) == 3
    assert list(records["applied"]) == [True] * 3 + [False] * 7 and (records["loss"][3:] == 0).all()


def test_steps_not_a_multiple_of_the_chunk():
    run = Run(Config(**{**SMALL.__dict__, "steps": 25}))
    assert run.train().steps_df()["step"].iloc[-1] == 25
    run.update(steps=31)
    assert not run.done
    run.train()
    whole = Run(Config(**{**SMALL.__dict__, "steps": 31})).train()
    assert run.history.steps_df().equals(whole.steps_df())


def test_divergence_stops_cleanly_and_keeps_finite_params():
    run = Run(Config(**{**SMALL.__dict__, "lr": 1e6, "clip": 0.0, "optimizer": "sgd", "steps": 100}))
    history = run.train()
    assert history.stop_reason is not None
    df = history.steps_df()
    assert len(df) < 100 and np.isfinite(df["loss"]).all()
    assert history.diverged_at == len(df) + 1
    reason = history.stop_reason
    assert reason.startswith(f"Stopped at step {len(df) + 1}: ")
    assert "lower the learning rate (try lr=100000; now 1e+06)" in reason and "(try clip=1; now 0, off)" in reason
    if len(df):
        assert f"Steps 1 to {len(df)} are kept" in reason
    params = run.params["params"]
    assert all(np.isfinite(np.asarray(leaf)).all() for leaf in __import__("jax").tree_util.tree_leaves(params))
    assert run.done
    before = len(df)
    run.train()  # a diverged run does not continue
    assert len(run.history.steps_df()) == before


def test_changing_lr_seed_steps_scale_does_not_recompile():
    config = Config(**{**SMALL.__dict__, "task": "sine", "carry_init": "normal", "chunk": 7})
    program = get_program(config)
    Run(config).train()
    compiled = (compile_count(program.init), compile_count(program.train_steps), compile_count(program.evaluate))
    for change in ({"lr": 0.5}, {"seed": 9}, {"steps": 13}, {"carry_scale": 3.0}, {"clip": 0.0}):
        run = Run(Config(**{**config.__dict__, **change}))
        assert run.program is program
        run.train()
    run.update(lr=1e-4, carry_scale=0.01)
    run.update(steps=20)
    run.train()
    assert (compile_count(program.init), compile_count(program.train_steps),
            compile_count(program.evaluate)) == compiled == (1, 1, 1)


def test_learning_rate_change_mid_run_takes_effect():
    run = Run(SMALL)
    run.run_call()
    run.update(lr=1e-12)
    before = run.params["params"]["h0"].copy()
    run.run_call()
    np.testing.assert_allclose(run.params["params"]["h0"], before, atol=1e-9)


def test_bad_configuration_raises_with_messages():
    with pytest.raises(ConfigError) as e:
        Run(Config(cell="conv_lstm"))
    assert "needs a spatial task" in e.value.messages[0]
    run = Run(SMALL)
    with pytest.raises(ValueError, match="start a new run"):
        run.update(features=3)
    with pytest.raises(ConfigError):
        run.update(lr=-1.0)
    assert run.config.lr == SMALL.lr


def test_parameter_snapshots_are_thinned_and_span_the_run():
    run = Run(Config(**{**SMALL.__dict__, "steps": 150, "chunk": 10}))
    run.train()
    steps = [s for s, _ in run.snapshots]
    assert steps[0] == 0 and steps[-1] == 150 and len(steps) <= 9
    assert steps == sorted(steps)
    picked = [s for s, _ in run.snapshots_at(3)]
    assert picked[0] == 0 and picked[-1] == 150 and 0 < picked[1] < 150
    np.testing.assert_array_equal(run.snapshots[-1][1]["params"]["h0"], run.params["params"]["h0"])


@pytest.mark.parametrize("loss, grad_norm, clip, says", [
    (np.nan, np.nan, 0.0, ["the training loss became nan",
                           "turn on gradient clipping, which caps the size of each update (try clip=1; now 0, off)"]),
    (2.5, np.inf, 5.0, ["the gradient norm became inf (the loss was 2.5)",
                        "clip the gradient harder (try clip=1; now 5)"]),
    (2.5, 3.0, 1.0, ["the update made the parameters non-finite (the gradient norm was 3)"]),
])
def test_divergence_message_names_the_cause_and_fitting_advice(loss, grad_norm, clip, says):
    run = Run(Config(**{**SMALL.__dict__, "clip": clip, "lr": 0.5}))
    records = {"bad": np.array([False, False, True]), "loss": np.array([1.0, 1.0, loss]),
               "grad_norm": np.array([1.0, 1.0, grad_norm])}
    reason = divergence_reason(run.config, 20, records)
    assert reason.startswith("Stopped at step 23: ") and "Steps 1 to 22 are kept" in reason
    assert "To fix it, lower the learning rate (try lr=0.05; now 0.5)" in reason
    assert reason.endswith(".") and "press" not in reason.lower()  # each page says how to start again
    for text in says:
        assert text in reason
    assert ("clip=" in reason) == (clip != 1.0)
    first = divergence_reason(run.config, 0, {"bad": np.array([True]), "loss": np.array([np.inf]),
                                       "grad_norm": np.array([np.nan])})
    assert "It diverged on the first step, so nothing was trained." in first


def test_fork_is_independent_and_resumes_like_one_run():
    whole = Run(SMALL).train()
    run = Run(SMALL)
    run.run_call()
    copy = run.fork()
    run.run_call()  # the original goes on; the copy still sits at step 10
    assert copy.step == 10 and run.step == 20 and len(copy.history.chunks) == 2
    copy.train()
    run.train()
    assert copy.history.steps_df().equals(whole.steps_df())
    assert run.history.steps_df().equals(whole.steps_df())
    assert copy.nbytes() > 0


def test_a_run_can_start_from_given_parameters():
    trained = Run(SMALL)
    trained.train()
    run = Run(SMALL, params=trained.params, origin="a file")
    assert run.step == 0 and run.origin == "a file"
    # the first evaluation is the trained parameters' evaluation, not the seed's initial one
    assert run.history.chunks[0]["eval_loss"] == trained.history.chunks[-1]["eval_loss"]
    run.run_call()
    assert run.step == 10 and np.isfinite(run.history.steps_df()["loss"]).all()
    with pytest.raises(ValueError, match="structure"):
        Run(SMALL, params={"params": {}})


@pytest.mark.parametrize("lr, clip", [(10.0, 1.0), (1000.0, 0.0)])
def test_a_loss_that_blows_up_is_a_divergence_not_a_finish(lr, clip):
    """Adam at lr=10 (clip 1) or lr=1000 (no clip) drives the adding loss to ~1e6 and more without ever
    becoming inf: the run must stop there, with the step marked, not report 'finished'."""
    run = Run(Config(seq_len=30, batch=32, features=16, steps=100, chunk=10, lr=lr, clip=clip))
    history = run.train()
    evals = history.chunks_df()["eval_loss"].to_numpy()
    start, last = evals[0], evals[-1]
    assert np.isfinite(evals).all()
    baseline = run.program.task.baseline(30)
    assert last > 10 * max(start, 1 / 6)  # far above where it started and the adding problem's ~1/6
    assert history.stop_reason.startswith(f"Stopped at step {history.diverged_at}: the loss blew up.")
    assert f"{last / baseline:,.0f} times the memoryless baseline" in history.stop_reason
    assert run.step < 100 and run.done


def test_a_run_that_learns_is_not_called_diverged():
    run = Run(Config(seq_len=30, batch=32, features=16, steps=100, chunk=10))
    history = run.train()
    assert history.stop_reason is None and history.diverged_at is None and run.step == 100


def test_the_compiled_program_cache_is_bounded_and_runs_do_not_pin_programs():
    import gc
    import weakref

    from rnnlab.training import program as programs

    config = Config(seq_len=5, batch=2, features=3, steps=4, chunk=2)
    first = weakref.ref(get_program(config))
    run = Run(config)
    run.run_call()
    whole = Run(config).train()
    for n in range(programs.MAX_PROGRAMS + 5):
        get_program(Config(seq_len=6 + n, batch=2, features=3))
    gc.collect()
    assert len(programs._PROGRAMS) <= programs.MAX_PROGRAMS
    assert first() is None  # dropped although a run of it is alive (e.g. in a session that has gone)
    run.train()  # the run gets its program back (compiled again, or read from the disk cache)
    assert run.history.steps_df().equals(whole.steps_df())


@pytest.mark.parametrize("cell", ["gru", "lstm"])
def test_calls_computed_through_bytes_give_the_same_run_bit_for_bit(cell):
    from rnnlab.training import calls

    config = Config(cell=cell, seq_len=12, batch=8, features=8, steps=25, chunk=10)
    in_memory, through = Run(config), Run(config)
    while not in_memory.done:
        in_memory.run_call(max_seconds=None)
    while not through.done:
        through.run_call(max_seconds=None, compute=calls.through_bytes)
    a, b = in_memory.history, through.history
    assert a.steps == b.steps and a.chunks == b.chunks
    for name in a.carry:
        for x, y in zip(a.carry[name], b.carry[name], strict=True):
            np.testing.assert_array_equal(x, y)
    for x, y in zip(a.per_step_loss, b.per_step_loss, strict=True):
        np.testing.assert_array_equal(x, y)
    import jax

    for x, y in zip(jax.tree_util.tree_leaves(in_memory.state), jax.tree_util.tree_leaves(through.state), strict=True):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    assert jax.tree_util.tree_structure(in_memory.state) == jax.tree_util.tree_structure(through.state)


def test_a_call_is_a_pure_function_of_config_state_and_steps():
    from rnnlab.training import calls

    config = Config(seq_len=12, batch=8, features=8, steps=10, chunk=10)
    run = Run(config)
    data = calls.state_to_bytes(run.state)
    first = calls.result_from_bytes(config, calls.compute_call_bytes(config, data, 4))
    again = calls.result_from_bytes(config, calls.compute_call_bytes(config, data, 4))
    assert calls.result_to_bytes(first) == calls.result_to_bytes(again)
    assert int(first[0]["step"]) == 4 and int(first[1]["applied"].sum()) == 4
