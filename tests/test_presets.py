"""Each preset teaches what its lesson says (trained for real, so these are the slowest tests)."""

from dataclasses import replace

import pytest

from rnnlab.probing import analysis
from rnnlab.sharing.presets import PRESETS, PRESETS_BY_KEY
from rnnlab.training.train import Run


def trained(key: str) -> Run:
    run = Run(PRESETS_BY_KEY[key].config)
    run.train()
    assert run.history.stop_reason is None
    return run


def final_eval(run: Run) -> tuple[float, float]:
    last = run.history.chunks_df().iloc[-1]
    return last["eval_loss"], last["eval_metric"]


def test_presets_are_unique_and_valid():
    assert len(PRESETS) >= 5 and len(PRESETS_BY_KEY) == len(PRESETS)
    assert all(p.config.validate() == [] for p in PRESETS)


@pytest.mark.slow
def test_simple_cell_stays_at_the_adding_baseline():
    loss, _ = final_eval(trained("simple_adding"))
    assert loss > 0.5 / 6


@pytest.mark.slow
def test_learned_carry_beats_zero_carry_at_the_first_steps_of_the_sine():
    run = trained("sine_zero_vs_learned")
    zero = Run(replace(run.config, carry_mode="fixed", carry_init="zeros"))
    zero.train()
    gap = analysis.first_steps_gap(run.history, zero.history)  # the number the page shows
    assert gap["ratio"] > 2  # the zero carry's loss over the first steps is more than twice as large
    assert gap["run"] == pytest.approx(run.history.per_step_loss[-1][:3].mean())
    # and the model continues the curve from memory: far below the memoryless baseline (the verdict's 10%)
    assert final_eval(run)[0] < 0.1 * run.program.task.baseline(run.config.seq_len)


@pytest.mark.slow
def test_gru_goes_below_the_copy_baseline():
    run = trained("copy_gru")
    loss, accuracy = final_eval(run)
    assert loss < 0.8 * run.program.task.baseline(run.config.seq_len)
    assert accuracy > 0.3  # chance is 1/8 on the recalled symbols


@pytest.mark.slow
def test_noisy_carry_is_robust_to_other_starts_where_a_zero_trained_twin_is_not():
    from rnnlab.probing import probes

    run = trained("noisy_carry_adding")
    twin = Run(replace(run.config, carry_mode="fixed", carry_init="zeros"))
    twin.train()
    mine, theirs = (probes.start_robustness(r).set_index("start")["loss"] for r in (run, twin))
    assert list(mine.index) == ["zero carry", "fresh N(0, 0.5) carries", "fresh N(0, 2) carries"]
    assert theirs.iloc[1] > 5 * mine.iloc[1]  # "about ten times lower" from fresh N(0, 0.5) starts
    assert theirs.iloc[2] > 2 * mine.iloc[2] and mine.iloc[0] < 0.1 * run.program.task.baseline(10)
