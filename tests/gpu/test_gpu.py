"""The GPU tier: what must hold where JAX runs on an accelerator (skipped on a CPU-only machine; tests/gpu/check.sh
runs it on a GPU). The CPU-side guards of the same settings are tested at the end, everywhere."""

from __future__ import annotations

import os
import subprocess
import sys

import jax
import numpy as np
import pytest

from rnnlab.config import Config
from rnnlab.device import describe_devices, device_free_bytes, memory_budget_bytes

SMALL = Config(seq_len=20, batch=16, features=16, steps=20, chunk=10)


@pytest.mark.gpu
def test_jax_runs_on_the_gpu_and_the_home_page_says_so():
    assert jax.default_backend() == "gpu"
    info = describe_devices()
    assert info["backend"] == "GPU" and int(info["count"]) == len(jax.devices()) >= 1
    assert all(d.platform == "gpu" for d in jax.devices())


@pytest.mark.gpu
def test_the_memory_budget_is_the_devices_not_the_hosts(monkeypatch):
    monkeypatch.delenv("RNNLAB_MEMORY_BUDGET_GB", raising=False)
    free = device_free_bytes()
    assert free is not None and free > 0
    stats = jax.devices()[0].memory_stats()
    assert memory_budget_bytes() == free // 2 <= int(stats["bytes_limit"])


@pytest.mark.gpu
def test_the_server_does_not_take_the_whole_gpu_for_itself():
    """Worker processes of long compiles share the GPU: JAX must not preallocate 75% of it in each process."""
    assert os.environ.get("XLA_PYTHON_CLIENT_PREALLOCATE") == "false"
    stats = jax.devices()[0].memory_stats()
    assert int(stats.get("bytes_reserved", 0)) < int(stats["bytes_limit"]) // 2


@pytest.mark.gpu
def test_training_on_the_gpu_matches_the_cpu():
    from rnnlab.training.train import Run

    def losses(device) -> np.ndarray:
        with jax.default_device(device):
            run = Run(SMALL)
            while not run.done:
                run.run_call()
            return np.array([row["loss"] for row in run.history.steps])

    gpu, cpu = losses(jax.devices("gpu")[0]), losses(jax.devices("cpu")[0])
    np.testing.assert_allclose(gpu, cpu, rtol=2e-2)


@pytest.mark.gpu
def test_a_long_compile_runs_in_a_worker_process_beside_the_server_on_the_gpu():
    from rnnlab.server.work.precompile import DONE, compile_in_worker
    from rnnlab.training.compiled import enable_persistent_cache

    enable_persistent_cache()
    jax.numpy.zeros(1024).block_until_ready()  # this process holds the GPU too
    assert compile_in_worker(SMALL, lambda: False, timeout_s=240) == DONE


@pytest.mark.gpu
def test_the_sweep_uses_every_device():
    from rnnlab.sweep import estimate_sweep

    configs = [SMALL] * (2 * len(jax.devices()))
    assert estimate_sweep(configs).total_s > 0


def test_importing_rnnlab_lets_each_process_take_only_the_gpu_memory_it_uses():
    code = "import os, rnnlab; print(os.environ['XLA_PYTHON_CLIENT_PREALLOCATE'])"
    env = {k: v for k, v in os.environ.items() if k != "XLA_PYTHON_CLIENT_PREALLOCATE"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "false"
    env["XLA_PYTHON_CLIENT_PREALLOCATE"] = "true"  # an operator's own choice wins
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "true"


def test_on_the_cpu_the_memory_budget_is_the_hosts(monkeypatch):
    if jax.default_backend() != "cpu":
        pytest.skip("JAX runs on an accelerator here")
    monkeypatch.delenv("RNNLAB_MEMORY_BUDGET_GB", raising=False)
    assert device_free_bytes() is None and memory_budget_bytes() > 0


def test_the_gpu_check_script_is_bounded_and_writes_one_folder():
    from pathlib import Path

    script = (Path(__file__).parent / "check.sh").read_text()
    assert 'LIMIT="${RNNLAB_GPU_CHECK_S:-480}"' in script  # 8 minutes at most
    for step in ("gpu_tier", "presets", "bench", "class"):
        assert f"step {step} " in script
    subprocess.run(["bash", "-n", str(Path(__file__).parent / "check.sh")], check=True)
    subprocess.run(["bash", "-n", str(Path(__file__).parent / "class.sh")], check=True)
