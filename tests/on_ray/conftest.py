"""The Ray tests: each module is skipped when ``ray`` is not installed (pip install -r requirements-ray.txt); those
that need the local cluster (:func:`cluster`) are skipped when this process cannot create a network namespace (root
needed) or a local cluster is already up."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from rnnlab.cluster import local

ROOT = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).with_name("driver.py")
DRIVER_TIMEOUT_S = 300


@pytest.fixture(scope="session")
def cluster():
    """A head and two 1-CPU worker nodes on loopback in the namespace ``rnnlab``; always torn down."""
    why = local.can_create_netns()
    if why:
        pytest.skip(f"the local Ray cluster needs a network namespace of its own: {why}")
    if local.State.load(local.STATE_DIR) is not None or local.netns_exists():
        pytest.skip("a local Ray cluster is already up on this machine (python -m rnnlab.cluster down stops it)")
    try:
        state = local.up(workers=2)
    except local.ClusterError as e:
        pytest.fail(str(e))
    try:
        yield state
    finally:
        local.down()


@pytest.fixture
def driver(cluster, tmp_path) -> Callable[[str, str], dict]:
    """``driver(MODE, PRESET)``: ``tests/on_ray/driver.py MODE PRESET`` run inside the cluster's namespace, as a web
    process would run there; what it wrote."""
    def run(mode: str, preset: str = "-") -> dict:
        out = tmp_path / f"{mode}.pickle"
        env = {**os.environ, "PYTHONPATH": str(ROOT), "RNNLAB_RAY_ADDRESS": cluster.address, **local.auth_env()}
        done = subprocess.run(local.in_netns([sys.executable, str(DRIVER), mode, preset, str(out)], cluster.netns),
                              env=env, cwd=ROOT, capture_output=True, text=True, timeout=DRIVER_TIMEOUT_S)
        assert done.returncode == 0, done.stderr[-4000:]
        return pickle.loads(out.read_bytes())

    return run
