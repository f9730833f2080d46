"""Pristine runs trained once for all web processes: a compiled call computed by one process is applied by the
others, and a finished run is served whole. Two "processes" here are two runs of one configuration sharing one
results store, as two web processes share the cluster's results actor."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from rnnlab import ledger
from rnnlab.config import Config
from rnnlab.server.on_ray import cluster_runs
from rnnlab.server.storage import run_files
from rnnlab.server.work import jobs
from rnnlab.server.work.results import Results
from rnnlab.server.work.shared_runs import RUNS
from rnnlab.training import calls
from rnnlab.training.train import Run

ROOT = Path(__file__).resolve().parents[2]
SMALL = Config(seq_len=20, batch=16, features=16, steps=60, chunk=10)


@pytest.fixture
def computed():
    """A call function that counts the steps it computes, and the count."""
    steps: list[int] = []

    def compute(config: Config, state: dict, n_active: int) -> calls.CallResult:
        steps.append(n_active)
        return calls.compute_call(config, state, n_active)

    return compute, steps


def assert_same_history(a: Run, b: Run) -> None:
    assert a.history.steps == b.history.steps
    assert a.history.chunks == b.history.chunks
    for x, y in zip(a.history.per_step_loss, b.history.per_step_loss):
        np.testing.assert_array_equal(x, y)
    for leaf in a.history.carry:
        np.testing.assert_array_equal(a.history.carry_snapshots(leaf), b.history.carry_snapshots(leaf))
    assert [s for s, _ in a.snapshots] == [s for s, _ in b.snapshots]


def test_two_processes_training_one_run_compute_each_step_once_and_see_the_same_history(computed):
    compute, steps = computed
    whole = Run(SMALL)
    whole.train()
    store = Results()
    first, second = Run(SMALL), Run(SMALL)
    turns = 0
    while not (first.done and second.done):  # the two take turns, each a call at a time
        for run in (first, second):
            if not run.done:
                cluster_runs.shared_call_job(run, 0.02, store, compute)
        turns += 1
        assert turns < 500
    assert sum(steps) == SMALL.steps  # every step computed once, by one of the two
    assert_same_history(first, whole)
    assert_same_history(second, whole)
    kept = store.get(cluster_runs.run_key(SMALL))
    assert isinstance(kept, bytes)


def test_a_call_claimed_by_a_process_that_gave_up_is_computed_by_the_next(computed):
    compute, steps = computed
    store = Results()
    run = Run(SMALL)
    key = cluster_runs.call_key(SMALL, 0)
    assert store.claim(key)  # another process claims the first call ...
    assert cluster_runs.shared_call_job(run, None, store, compute) is None  # ... so this one waits for it
    assert run.step == 0 and steps == []
    store.drop(key)  # ... and dies (its lease lapses): the claim is gone
    assert cluster_runs.shared_call_job(run, None, store, compute) is not None
    assert run.step > 0 and sum(steps) == run.step


def test_a_finished_run_kept_by_another_process_starts_finished_and_trains_nothing(computed):
    compute, steps = computed
    store = Results()
    other = Run(SMALL)
    while not other.done:
        cluster_runs.shared_call_job(other, None, store, compute)
    computed_once = sum(steps)
    RUNS.clear()
    started = cluster_runs.start_run(SMALL, store)
    assert started.done and started.pristine
    assert_same_history(started, other)
    assert cluster_runs.shared_call_job(started, None, store, compute) is not None
    assert sum(steps) == computed_once == SMALL.steps
    again = cluster_runs.start_run(SMALL, store)  # the next student of this process: its own copy, kept here
    assert again is not started and again.done and RUNS.is_lead(again) is False
    RUNS.clear()


def test_without_a_shared_store_or_for_a_changed_run_nothing_is_shared(computed):
    compute, steps = computed
    store = Results()
    changed = Run(SMALL)
    changed.update(lr=SMALL.lr * 2)
    cluster_runs.shared_call_job(changed, None, store, compute)
    assert len(store) == 0 and not store.computing(cluster_runs.call_key(changed.config, 0))
    alone = Run(SMALL)
    cluster_runs.shared_call_job(alone, None, None, compute)
    assert alone.step > 0 and len(store) == 0


def test_processes_at_once_compute_each_step_once(computed):
    compute, steps = computed
    store = Results()
    runs = [Run(SMALL) for _ in range(3)]

    def train(run: Run) -> None:
        while not run.done:
            cluster_runs.shared_call_job(run, 0.02, store, compute)

    threads = [threading.Thread(target=train, args=(run,)) for run in runs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sum(steps) == SMALL.steps
    for run in runs[1:]:
        assert_same_history(run, runs[0])


def test_the_ledger_counts_each_call_computed_and_each_slot_admitted(tmp_path, monkeypatch):
    from rnnlab.server.work.gate import JobGate

    path = tmp_path / "ledger.jsonl"
    monkeypatch.setenv(ledger.ENV_LEDGER, str(path))
    run = Run(SMALL)
    run.train()
    gate = JobGate(2, budget=lambda: 2**40, per_client=1)
    a, b, c = gate.ticket(client="x"), gate.ticket(client="x"), gate.ticket(client="y")
    a.release()
    lines = ledger.read(path)
    trained = [line for line in lines if line["kind"] == "call"]
    assert {line["run"] for line in trained} == {ledger.digest(SMALL)}
    assert sum(line["steps"] for line in trained) == SMALL.steps
    assert [line["first"] for line in trained] == sorted(line["first"] for line in trained)
    admitted = [(line["client"], line["held"]) for line in lines if line["kind"] == "admit"]
    assert admitted == [("x", 1), ("y", 1), ("x", 1)]
    for t in (b, c):
        t.release()


def test_a_run_made_elsewhere_is_read_back_as_made_and_trains_on_as_a_new_one(computed):
    compute, steps = computed
    made: list[Config] = []

    def make(config: Config) -> bytes:
        made.append(config)
        return jobs.untrained_run_bytes(config)

    fresh = cluster_runs.untrained_run(SMALL, make)
    assert made == [SMALL] and fresh.step == 0 and fresh.pristine
    assert_same_history(fresh, Run(SMALL))
    fresh.train()
    whole = Run(SMALL)
    whole.train()
    assert_same_history(fresh, whole)
    RUNS.clear()
    started = cluster_runs.start_run(SMALL, Results(), make)
    assert len(made) == 2 and started.step == 0


READ_BACK = """
import sys
from pathlib import Path
from rnnlab.server.storage.run_files import run_from_bytes
from rnnlab.training.compiled import compile_count
run = run_from_bytes(Path(sys.argv[1]).read_bytes())
program = run.program
print(run.step, [compile_count(f) for f in (program.init, program.train_steps, program.evaluate)])
"""


def test_reading_a_run_back_computes_and_compiles_nothing(tmp_path):
    run = Run(SMALL)
    run.run_call()
    (tmp_path / "run.msgpack").write_bytes(run_files.run_to_bytes(run))
    out = subprocess.run([sys.executable, "-c", READ_BACK, str(tmp_path / "run.msgpack")], capture_output=True,
                         text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True)
    assert out.stdout.split(None, 1) == [str(run.step), "[0, 0, 0]\n"]
