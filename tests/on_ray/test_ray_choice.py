"""Choosing the Ray executor: embedded mode never imports Ray; RNNLAB_EXECUTOR=ray without a reachable
RNNLAB_RAY_ADDRESS is one ConfigError that says what to do."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("ray", reason="Ray is not installed: pip install -r requirements-ray.txt")

from rnnlab.config import ConfigError
from rnnlab.server.work import executors

ROOT = Path(__file__).resolve().parents[2]
IMPORTS_THE_APP = """
import sys
import rnnlab.server.work.executors as executors, rnnlab.server.work.jobs, ui.work, ui.queue, ui.compiling
assert type(executors.current_executor()).__name__ == "EmbeddedExecutor"
assert "ray" not in sys.modules, sorted(m for m in sys.modules if m.split(".")[0] == "ray")
print("no ray")
"""


def test_embedded_mode_never_imports_ray():
    env = {k: v for k, v in os.environ.items() if k != "RNNLAB_EXECUTOR"}
    done = subprocess.run([sys.executable, "-c", IMPORTS_THE_APP], cwd=ROOT, env={**env, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "no ray" in done.stdout, done.stderr[-3000:]


def test_ray_mode_without_an_address_says_which_variable_to_set(monkeypatch):
    monkeypatch.setenv("RNNLAB_EXECUTOR", "ray")
    monkeypatch.delenv("RNNLAB_RAY_ADDRESS", raising=False)
    with pytest.raises(ConfigError, match=r"RNNLAB_EXECUTOR=ray needs RNNLAB_RAY_ADDRESS=HOST:PORT"):
        executors.current_executor()


@pytest.mark.parametrize("address, message", [
    ("127.0.0.1:1", r"no Ray cluster answers at RNNLAB_RAY_ADDRESS=127.0.0.1:1 \(.*\): start its head there"),
    ("nonsense", r"RNNLAB_RAY_ADDRESS must be the Ray head's HOST:PORT"),
])
def test_an_unreachable_or_malformed_address_is_one_clear_error(monkeypatch, address, message):
    monkeypatch.setenv("RNNLAB_EXECUTOR", "ray")
    monkeypatch.setenv("RNNLAB_RAY_ADDRESS", address)
    start = time.monotonic()
    with pytest.raises(ConfigError, match=message) as caught:
        executors.current_executor()
    assert time.monotonic() - start < 10 and len(caught.value.messages) == 1


def test_each_kind_of_work_takes_its_cluster_form_from_the_work_s_own_table():
    """The Ray executor shapes a job by the row of jobs.CLUSTER_FORMS its function has (a form it knows), and runs
    work the table does not name whole on a worker; no function is singled out by the executor itself."""
    from rnnlab.server.on_ray import cluster_runs
    from rnnlab.server.on_ray import executor as ray_executor
    from rnnlab.server.work import jobs
    from rnnlab.server.work.executor import Work

    assert set(jobs.CLUSTER_FORMS.values()) <= set(ray_executor.FORMS)
    shaped = {fn: ray_executor.on_ray(Work(fn, ("a",)), results="kept").fn for fn in jobs.CLUSTER_FORMS}
    assert shaped == {jobs.call_job: cluster_runs.shared_call_job, jobs.start_run: cluster_runs.start_run,
                      jobs.untrained_run: cluster_runs.untrained_run, jobs.load_run: jobs.load_run}
    probe = ray_executor.on_ray(Work(jobs.compare_sweep, ([], 1.0)))
    assert probe.fn is ray_executor.remote and probe.args == (jobs.compare_sweep, ([], 1.0), {})
