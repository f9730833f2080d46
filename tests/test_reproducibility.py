"""Same configuration and seed, same history: across runs in one process and across restarted processes.

A restarted server is a new process that finds its compiled programs in the persistent compilation cache
instead of compiling them; both must give the history an uninterrupted in-process run gives, bit for bit.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rnnlab.config import Config
from rnnlab.training.train import train

ROOT = Path(__file__).resolve().parents[1]
CONFIG = Config(task="adding", cell="lstm", seq_len=12, batch=8, features=8, carry_mode="noisy",
                carry_init="normal", carry_scale=0.3, steps=12, chunk=5, seed=7)


def cli_args(config: Config, out: Path) -> list[str]:
    args = [sys.executable, "-m", "rnnlab", "train", "--quiet", "--out", str(out)]
    for key, value in config.to_dict().items():
        args += [f"--{key.replace('_', '-')}", str(value)]
    return args


def history_in_a_new_process(tmp_path: Path, name: str, cache: Path) -> list[dict]:
    out = tmp_path / f"{name}.json"
    env = {**os.environ, "RNNLAB_JAX_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    subprocess.run(cli_args(CONFIG, out), env=env, check=True, timeout=300, cwd=tmp_path)
    return json.loads(out.read_text())["steps"]


def test_same_seed_same_history_in_one_process():
    first, second = train(CONFIG).history, train(CONFIG).history
    assert first.steps == second.steps and first.chunks == second.chunks


@pytest.mark.slow
def test_same_history_after_a_restart_with_and_without_the_compilation_cache(tmp_path):
    here = train(CONFIG).history.steps
    cache = tmp_path / "cache"
    cold = history_in_a_new_process(tmp_path, "cold", cache)  # compiles, fills the cache
    assert any(cache.iterdir())
    restarted = history_in_a_new_process(tmp_path, "restarted", cache)  # loads the compiled programs
    keys = ["step", "loss", "metric", "grad_norm", "h0_grad_norm"]
    pick = lambda rows: [[row[k] for k in keys] for row in rows]  # noqa: E731
    assert len(here) == CONFIG.steps
    assert pick(cold) == pick(here)
    assert pick(restarted) == pick(here)
