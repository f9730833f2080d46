"""Faults on the local Ray cluster, with nothing lost, and Stop: the gate actor SIGKILLed is restarted with its
tickets (the admitted one still the only one running, the queued one admitted only after release); a worker node
removed mid-call has its call retried on the other and the run ends with embedded mode's history; with no worker
node left a run's call fails within seconds with one readable message, the run kept at its last step and its slot
released; no call starts more than 1.5 s after Stop, and a probe's task stopped gently is killed soon after; a
keyed probe two web processes ask for at once is computed once, and so is each step of a preset's run two web
processes train at once (a third then starts it finished)."""

from __future__ import annotations

import os
import signal
import time

import pandas as pd
import pytest

pytest.importorskip("ray", reason="Ray is not installed: pip install -r requirements-ray.txt")

from rnnlab.cluster import local
from rnnlab.sharing.presets import PRESETS_BY_KEY
from rnnlab.training.train import Run
from tests.on_ray.test_ray_executor import PRESET, assert_same_history

STOP_LIMIT_S = 1.5


@pytest.fixture(scope="module")
def embedded_history():
    run = Run(PRESETS_BY_KEY[PRESET].config)
    run.train()
    return run.history


@pytest.fixture
def workers_back(cluster):
    """After the test, the worker nodes it stopped are started again (and the cluster's state says so)."""
    yield
    state = local.State.load(local.STATE_DIR)
    if state is None:
        return
    deadline = time.monotonic() + local.START_TIMEOUT_S
    for i, node in enumerate(state.nodes):
        if node.role == "head" or local.alive(node.pid):
            continue
        local.signal_group(node.pid, signal.SIGKILL)
        try:
            os.waitpid(node.pid, os.WNOHANG)  # the cluster fixture started it: reap it
        except ChildProcessError:
            pass
        state.nodes[i] = local.start_node(node.role, local.STATE_DIR, local.OBJECT_STORE_BYTES, state.netns)
        state.save(local.STATE_DIR)
        local.wait_started(state.nodes[i], deadline)


def test_the_gate_actor_killed_is_restarted_and_admits_none_twice(driver):
    got = driver("restart")
    before, after = got["before"], got["after"]
    assert before["running_admitted"] and not before["queued_admitted"], got
    assert after["back_s"] < 30 and after["gate"]["restarted"], got
    assert after["running_admitted"] and not after["queued_admitted_before_release"], got
    assert (after["gate"]["running"], after["gate"]["waiting"]) == (1, 1), got
    assert after["queued_admitted_after_release"] and after["admitted_after_release_s"] < 2.0, got
    assert (after["gate_after_release"]["running"], after["gate_after_release"]["waiting"]) == (1, 0), got


def test_no_call_starts_more_than_a_moment_after_stop(driver):
    got = driver("stop", PRESET)
    assert got["stopped"] and not got["done"], got
    assert all(t <= 0 for t in got["submitted_after_s"]), got
    assert all(t <= STOP_LIMIT_S for t in got["starts_after_s"]), got
    assert got["loop_ended_s"] < STOP_LIMIT_S, got


def test_a_probe_stopped_gently_has_its_task_killed_soon_after(driver):
    got = driver("probestop", PRESET)
    assert got["status"] == "cancelled" and got["ended_s"] < STOP_LIMIT_S, got
    assert not got["task_running"] and got["task_left_s"] < 2 * STOP_LIMIT_S, got


def test_a_node_removed_mid_call_has_its_call_finished_on_the_other(driver, workers_back, embedded_history):
    got = driver("node", PRESET)
    assert len(got["killed"]) == 1, got["killed"]
    assert_same_history(embedded_history, got["history"])


def test_no_worker_left_fails_the_call_readably_and_keeps_the_run(driver, workers_back, embedded_history):
    got = driver("noworker", PRESET)
    assert got["failed"] and got["error"].startswith("NoWorker: No Ray worker is available"), got["error"]
    assert got["failed_after_s"] is not None and got["failed_after_s"] < 30, got["failed_after_s"]
    assert got["step"] == got["step_before"] > 0
    steps = got["history"]["steps"]
    expected = embedded_history.steps_df()
    pd.testing.assert_frame_equal(expected[expected["step"] <= got["step"]].reset_index(drop=True),
                                  steps.reset_index(drop=True), check_exact=True)
    assert (got["gate"]["running"], got["gate"]["waiting"]) == (0, 0), got["gate"]


def test_a_keyed_probe_asked_by_two_web_processes_is_computed_once(driver):
    got = driver("once", PRESET)
    assert got["computed"] == 1, got["computed"]
    pd.testing.assert_frame_equal(got["mine"], got["theirs"], check_exact=True)


def test_two_web_processes_training_one_preset_compute_each_step_once(driver, embedded_history):
    got = driver("callsonce", PRESET)
    steps = sorted(got["computed"])
    assert sum(n for _, n in steps) == embedded_history.last_step, steps  # each step computed once ...
    assert [first for first, _ in steps] == [sum(n for _, n in steps[:i]) for i in range(len(steps))]  # ... in order
    for history in (got["mine"], got["theirs"], got["started"]):
        assert_same_history(embedded_history, history)
    assert got["started_done"]  # a third process's session gets the finished run
