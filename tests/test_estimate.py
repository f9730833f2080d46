"""Estimates before a run starts: from the sizes at first, then from what this process measured."""

from __future__ import annotations

from dataclasses import replace

import pytest

from rnnlab.config import Config
from rnnlab.training import estimate
from rnnlab.training.train import Run


def test_estimate_grows_with_the_work_and_reads_in_words():
    small, long = Config(seq_len=50), Config(seq_len=500)
    a, b = estimate.estimate(small), estimate.estimate(long)
    assert b.step_s == pytest.approx(10 * a.step_s, rel=1e-6) and a.compile_s > 0
    assert a.total_s == pytest.approx(a.compile_s + 300 * a.step_s)
    assert a.describe().startswith("about ") and "300 steps at about" in a.describe()
    assert estimate.format_seconds(0.0123) == "12 ms" and estimate.format_seconds(150) == "2.5 min"


def test_measured_calls_replace_the_size_guess():
    """A call's measured time becomes the configuration's step time; others of its kind use the measured speed."""
    config = Config(seq_len=33, batch=8, features=24, chunk=10, seed=5)
    estimate.record_compiled(config)
    estimate.record_call(config, 10, 1.0)
    guess = estimate.estimate(replace(config, seed=6), steps=40)  # the seed does not change the program
    assert guess.measured and guess.compile_s == 0 and guess.step_s == pytest.approx(0.1)
    estimate.record_call(config, 10, 2.0)
    assert estimate.estimate(config).step_s == pytest.approx(0.7 * 0.1 + 0.3 * 0.2)


def test_a_run_reports_its_calls():
    config = Config(seq_len=12, batch=4, features=8, steps=20, chunk=10, seed=21, cell="mgu")
    run = Run(config)
    run.train()
    guess = estimate.estimate(config)
    assert guess.measured and guess.compile_s == 0 and guess.step_s > 0


def test_a_run_measures_steps_on_the_callers_clock_while_it_trains_continuously():
    """Time spent between calls (a page drawing its charts) counts when the next call follows at once."""
    import time

    config = Config(seq_len=10, batch=4, features=6, steps=40, chunk=10, seed=22, cell="simple")
    run = Run(config)
    run.run_call()  # compiles
    run.run_call()
    quick = estimate.estimate(config).step_s
    time.sleep(0.5)  # drawing, within the pause that still counts as continuous training
    run.run_call()
    assert estimate.estimate(config).step_s > quick + 0.3 * 0.5 / 10 * 0.9  # the pause, averaged in at 0.3


def test_rates_read_as_steps_per_second_or_seconds_per_step():
    from rnnlab.training.estimate import format_rate

    assert format_rate(1234.4) == "1,234 steps/s"
    assert format_rate(3.42) == "3.4 steps/s"
    assert format_rate(1 / 26) == "26 s per step"  # not "0 steps/s"


def test_a_step_longer_than_the_servers_step_limit_is_refused_with_the_numbers(monkeypatch):
    estimate.forget_measurements()  # from sizes alone, as a fresh server: earlier tests' runs taught it this machine
    big = Config(cell="conv_lstm", task="moving_dot")  # 64 features, batch 64, T = 100: about half a minute a step
    guess = estimate.estimate(big)
    assert guess.step_s > estimate.DEFAULT_MAX_STEP_S
    refusal = estimate.over_limit(guess)
    assert refusal.startswith(f"This run would take {estimate.format_seconds(guess.step_s)} per training step, "
                              "more than this server's limit of 10 s per step")
    assert "RNNLAB_MAX_STEP_SECONDS" in refusal
    monkeypatch.setenv("RNNLAB_MAX_STEP_SECONDS", "60")
    monkeypatch.setenv("RNNLAB_MAX_JOB_MINUTES", "10000")
    assert estimate.over_limit(guess) is None  # a teacher who wants it raises both limits
    quick = Config(cell="conv_lstm", task="moving_dot", features=16, batch=16, seq_len=20)
    assert estimate.estimate(quick).step_s < 1.0 and estimate.estimate(quick).compile_s <= 6.0
