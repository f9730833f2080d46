"""Probes in time segments equal the one-pass probes: every cell, carry mode and task, a padded last segment."""

from __future__ import annotations

from dataclasses import replace

import jax
import numpy as np
import pytest

from rnnlab.config import Config
from rnnlab.model.cells import CELLS
from rnnlab.model.tasks import TASKS
from rnnlab.probing import probe_segments, probes
from rnnlab.training import estimate
from rnnlab.training.program import get_program, hyper_args

BASE = Config(task="adding", cell="gru", features=4, seq_len=11, batch=3, carry_mode="learnable",
              carry_init="normal", carry_scale=0.5, seed=5, chunk=2, steps=2)
VECTOR_TASKS = [name for name, task in TASKS.items() if name != "moving_dot"]
VECTOR_CELLS = [cell for cell in CELLS if not CELLS[cell].spatial]
# Every vector cell on the adding problem with the carry modes in turn, every other task with the cells taking turns
# (a task changes the inputs and the loss, not the segments), and the ConvLSTM on its own task.
MODES = ("learnable", "fixed", "noisy")
CASES = ([(cell, "adding", MODES[i % len(MODES)]) for i, cell in enumerate(VECTOR_CELLS)]
         + [(VECTOR_CELLS[i % len(VECTOR_CELLS)], task, "learnable")
            for i, task in enumerate(t for t in VECTOR_TASKS if t != "adding")]
         + [("conv_lstm", "moving_dot", mode) for mode in ("learnable", "noisy")])
RTOL, ATOL = 2e-5, 1e-8


def setup(cell: str, task: str, mode: str):
    config = replace(BASE, cell=cell, task=task, carry_mode=mode,
                     **({"features": 3, "seq_len": 7} if CELLS[cell].spatial else {}))
    program = get_program(config)
    lr, clip, scale = hyper_args(config)
    state = program.init(np.int32(config.seed), scale, lr, clip)
    params = jax.tree_util.tree_map(np.array, state["params"])
    return program, params, state["root"], scale


@pytest.mark.parametrize("cell,task,mode,length", [case + (4,) for case in CASES]
                         + [("lstm", "adding", "learnable", 3), ("gru", "copy", "noisy", 11)])
def test_segmented_carry_gradients_equal_one_pass(cell, task, mode, length):
    program, params, root, scale = setup(cell, task, mode)
    whole = probes.carry_grad_norms(program, params, root, scale)
    seen = []
    pieces = probes.carry_grad_norms(program, params, root, scale, segment=length, progress=seen.append)
    assert list(pieces) == list(whole)
    for leaf in whole:
        assert pieces[leaf].shape == whole[leaf].shape == (program.steps + 1,)
        assert (whole[leaf][:-1] > 0).all()
        np.testing.assert_allclose(pieces[leaf], whole[leaf], rtol=RTOL, atol=ATOL, err_msg=leaf)
    count = -(-program.steps // length)
    assert len(seen) == 2 * count and seen == sorted(seen) and seen[-1] == pytest.approx(1.0)


@pytest.mark.parametrize("cell,task,mode", [c for c in CASES if c[1] in ("adding", "copy", "moving_dot")
                                             and (c[2] == "learnable" or c[0] in ("gru", "conv_lstm"))])
def test_segmented_connectivity_equals_one_pass(cell, task, mode):
    program, params, root, scale = setup(cell, task, mode)
    whole = probes.connectivity(program, params, root, scale)
    pieces = probes.connectivity(program, params, root, scale, segment=4)
    assert pieces.shape == whole.shape == (program.steps,)
    assert whole[-1] > 0
    np.testing.assert_allclose(pieces, whole, rtol=RTOL, atol=ATOL)


def test_raising_in_progress_stops_between_segments():
    program, params, root, scale = setup("gru", "adding", "learnable")
    calls = []

    def stop(fraction):
        calls.append(fraction)
        if len(calls) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        probes.carry_grad_norms(program, params, root, scale, segment=3, progress=stop)
    assert len(calls) == 2


def test_only_long_probes_are_segmented_and_lengths_are_powers_of_two():
    estimate.forget_measurements()  # as on a fresh server: earlier tests' measured speeds do not count
    short = replace(BASE, seq_len=100, features=64, batch=64)
    assert probe_segments.segment_length(short, 100) is None
    long = replace(short, seq_len=13_000)
    length = probe_segments.segment_length(long, 13_000)
    assert length is not None and length & (length - 1) == 0 and probe_segments.MIN_SEGMENT <= length < 13_000


def test_a_sweep_and_a_runs_probes_in_segments_equal_one_pass(monkeypatch):
    from rnnlab.training.train import Run

    base = replace(BASE, seq_len=9)
    whole_sweep = probes.decay_sweep(base, ["gru", "lstm"], [9, 13])
    run = Run(replace(base, steps=4))
    run.train()
    whole_grads, whole_conn = probes.run_grad_through_time(run), probes.run_connectivity(run)
    monkeypatch.setattr(probe_segments, "segment_length", lambda config, steps: 4)
    seen = []
    sweep = probes.decay_sweep(base, ["gru", "lstm"], [9, 13], callback=lambda done, total, text: seen.append(done))
    np.testing.assert_allclose(sweep["h0_grad_norm"], whole_sweep["h0_grad_norm"], rtol=RTOL)
    assert seen == sorted(seen) and len(seen) > 4 and any(d != int(d) for d in seen)
    fractions = []
    grads = probes.run_grad_through_time(run, progress=fractions.append)
    np.testing.assert_allclose(grads["grad_norm"], whole_grads["grad_norm"], rtol=RTOL, atol=ATOL)
    assert fractions == sorted(fractions) and fractions[-1] == pytest.approx(1.0)
    conn = probes.run_connectivity(run, progress=lambda f: None)
    np.testing.assert_allclose(conn["connectivity"], whole_conn["connectivity"], rtol=RTOL, atol=ATOL)
