"""Long compiles in a worker process: the server then loads the program from disk, and Stop kills the worker."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from dataclasses import replace
from pathlib import Path

import pytest

from rnnlab.config import Config
from rnnlab.model.cells import CELLS
from rnnlab.server.work import precompile

ROOT = Path(__file__).resolve().parents[2]
SMALL = Config(cell="gru", seq_len=12, batch=8, features=8, steps=40, chunk=10)
LONG = Config(cell="conv_lstm", task="moving_dot")  # a compile of several seconds: long enough to stop midway


def workers() -> list[int]:
    """Process ids of precompile workers started by this process that are still alive."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == os.getpid() and b"rnnlab.server.work.precompile" in cmdline:
            found.append(int(entry.name))
    return found


def test_a_program_compiled_in_a_worker_is_loaded_from_disk(tmp_path):
    """In a fresh process (the persistent cache is process-wide): worker first, then the first call hits."""
    script = textwrap.dedent(f"""
        import jax
        from rnnlab.config import Config
        from rnnlab.training import compiled as compilation
        from rnnlab.server.work import precompile
        from rnnlab.training.train import Run
        compilation.enable_persistent_cache({str(tmp_path)!r})
        events = []
        jax.monitoring.register_event_listener(lambda name, **kw: events.append(name))
        config = Config(cell="gru", seq_len=12, batch=8, features=8, steps=40, chunk=10)
        print(precompile.compile_in_worker(config, lambda: False))
        Run(config).run_call()
        print(sorted({{e.rsplit("/", 1)[1] for e in events if "compilation_cache/cache_" in e}}))
    """)
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=600,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)))
    lines = out.stdout.strip().splitlines()
    assert lines[0] == precompile.DONE, out.stderr[-2000:]
    assert lines[1] == "['cache_hits']"  # every compile of the first call came from the worker's disk cache


@pytest.fixture(autouse=True)
def nothing_compiled_yet(monkeypatch):
    monkeypatch.setattr(precompile, "_on_disk", set())


def test_stop_kills_the_worker_at_once(tmp_path, monkeypatch):
    monkeypatch.setattr(precompile, "cache_folder", lambda: str(tmp_path))
    seen: list[float] = []

    def should_stop() -> bool:
        if workers():
            seen.append(time.monotonic())
        return bool(seen) and time.monotonic() - seen[0] > 1.0  # a second after the worker is there

    assert precompile.compile_in_worker(LONG, should_stop) == precompile.STOPPED
    assert time.monotonic() - seen[0] < 3
    assert workers() == []  # it ran, and it is gone


def test_an_exception_while_waiting_kills_the_worker(tmp_path, monkeypatch):
    """A click or a closed tab interrupts the page's script with an exception: the worker must not outlive it."""
    monkeypatch.setattr(precompile, "cache_folder", lambda: str(tmp_path))
    started = time.monotonic()

    def should_stop() -> bool:
        if time.monotonic() - started > 2:
            raise KeyboardInterrupt
        return False

    with pytest.raises(KeyboardInterrupt):
        precompile.compile_in_worker(LONG, should_stop)
    assert workers() == []


def test_the_time_limit_kills_the_worker(tmp_path, monkeypatch):
    monkeypatch.setattr(precompile, "cache_folder", lambda: str(tmp_path))
    assert precompile.compile_in_worker(LONG, lambda: False, timeout_s=1.0) == precompile.STOPPED
    assert workers() == []


def test_only_long_compiles_with_a_disk_cache_use_a_worker(tmp_path, monkeypatch):
    slow = replace(CELLS["conv_lstm"], compile_s=30.0)  # as if a ConvLSTM took half a minute to compile
    monkeypatch.setitem(CELLS, "conv_lstm", slow)
    monkeypatch.setattr(precompile, "cache_folder", lambda: None)
    assert not precompile.use_worker(LONG)
    monkeypatch.setattr(precompile, "cache_folder", lambda: str(tmp_path))
    assert precompile.use_worker(LONG) and not precompile.use_worker(SMALL)
