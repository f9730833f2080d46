"""Heavy work on a local Ray cluster (a head with no CPUs and two 1-CPU worker nodes, on loopback in a network
namespace of its own): a preset's run trained call by call on the cluster has embedded mode's history bit for
bit, also when a worker is SIGKILLed mid-call (Ray retries the call); a cancelled call (gently or with force)
stops its task; a probe computed on a worker gives the same table; a configuration's calls go to the node that
compiled it while that node has a free CPU, and to the other when it is busy; work on a worker reports its progress
to the job that waits for it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("ray", reason="Ray is not installed: pip install -r requirements-ray.txt")

from rnnlab.server.work import jobs
from rnnlab.sharing.presets import PRESETS_BY_KEY
from rnnlab.training.train import Run

PRESET = "noisy_carry_adding"  # 300 steps of T = 10: a few seconds of training on one CPU


@pytest.fixture(scope="module")
def embedded_history():
    run = Run(PRESETS_BY_KEY[PRESET].config)
    run.train()
    return run.history


def assert_same_history(history, got: dict) -> None:
    pd.testing.assert_frame_equal(history.steps_df(), got["steps"], check_exact=True)
    pd.testing.assert_frame_equal(history.chunks_df(), got["chunks"], check_exact=True)
    assert set(history.carry) == set(got["carry"])
    for leaf, snapshots in history.carry.items():
        assert len(snapshots) == len(got["carry"][leaf])
        assert all(np.array_equal(a, b) for a, b in zip(snapshots, got["carry"][leaf]))
    assert len(history.per_step_loss) == len(got["per_step_loss"])
    assert all(np.array_equal(a, b) for a, b in zip(history.per_step_loss, got["per_step_loss"]))
    assert history.stop_reason == got["stop_reason"]


def test_a_preset_trained_call_by_call_on_the_cluster_matches_embedded_mode(driver, embedded_history):
    got = driver("train", PRESET)
    assert got["calls"] == 300 // 25 and not got["killed"]  # unbounded calls: one a chunk
    assert_same_history(embedded_history, got["history"])


def test_a_worker_killed_mid_call_is_retried_and_the_history_is_the_same(driver, embedded_history):
    got = driver("kill", PRESET)
    assert len(got["killed"]) == 1
    assert_same_history(embedded_history, got["history"])


@pytest.mark.parametrize("mode", ["cancel", "force"])
def test_a_cancelled_call_ends_its_job_at_once_and_stops_its_task(driver, mode):
    got = driver(mode, PRESET)
    assert got["cancelled"], got
    assert got["ended_s"] < 1.5 and got["step"] == 0, got
    assert not got["task_running"], got


def test_a_probe_runs_on_a_worker_with_the_same_table(driver):
    got = driver("probe", PRESET)
    expected = jobs.robustness(jobs.Model.of(Run(PRESETS_BY_KEY[PRESET].config)))
    pd.testing.assert_frame_equal(expected, got["table"], check_exact=True)


def test_a_configurations_calls_go_to_the_node_that_compiled_it_while_it_is_free(driver):
    got = driver("affinity", PRESET)
    assert len(got["alone"]) == 100 // 25  # the driver's AFFINITY_STEPS in calls of the preset's 25 steps
    assert len(set(got["alone"])) == 1, got["alone"]  # both nodes free: every call where the first one ran
    together = [node for nodes in got["together"].values() for node in nodes]
    assert set(together) == set(got["workers"]), got  # that node busy: calls spill to the other


def test_work_on_a_worker_reports_its_progress_to_the_page_that_waits(driver):
    got = driver("progress", PRESET)
    assert got["status"] == "done" and got["rows"] == 6
    between = [(p, note) for p, note in got["seen"] if p is not None and 0 < p < 1]
    assert between and all(note for _, note in between), got["seen"][-10:]
    fractions = [p for p, _ in between]
    assert fractions == sorted(fractions) and len(set(fractions)) >= 2  # it moves, forwards
