"""Compilation happens before the user waits: warm-up and the persistent cache on disk."""

import os
import subprocess
import sys
from pathlib import Path

from rnnlab.config import Config
from rnnlab.server.work.warm import compile_training
from rnnlab.training.compiled import compile_count
from rnnlab.training.program import get_program

ROOT = Path(__file__).resolve().parents[2]


def test_warm_up_compiles_the_shared_program():
    config = Config(task="sine", seq_len=7, batch=3, features=5, chunk=4)
    program = get_program(config)
    assert compile_count(program.train_steps) == 0
    compile_training(config)
    counts = [compile_count(fn) for fn in (program.init, program.train_steps, program.evaluate)]
    assert counts == [1, 1, 1]


def test_persistent_cache_writes_compiled_programs(tmp_path):
    env = {**os.environ, "RNNLAB_JAX_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT)}
    args = [sys.executable, "-m", "rnnlab", "train", "--seq-len", "6", "--batch", "4", "--features", "4",
            "--steps", "3", "--chunk", "3", "--quiet", "--out", str(tmp_path / "h.csv")]
    subprocess.run(args, env=env, check=True, timeout=300, cwd=tmp_path)
    entries = list((tmp_path / "cache").iterdir())
    assert entries  # the second process finds these instead of compiling
    subprocess.run(args, env=env, check=True, timeout=300, cwd=tmp_path)
    assert len(list((tmp_path / "cache").iterdir())) == len(entries)  # nothing new was compiled


def test_an_unusable_cache_folder_means_no_cache_and_one_warning_not_a_crash(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("in the way")
    for bad in (blocker, blocker / "under-it"):
        env = {**os.environ, "RNNLAB_JAX_CACHE_DIR": str(bad), "PYTHONPATH": str(ROOT)}
        args = [sys.executable, "-m", "rnnlab", "train", "--seq-len", "6", "--batch", "4", "--features", "4",
                "--steps", "3", "--chunk", "3", "--quiet", "--out", str(tmp_path / "h.csv")]
        done = subprocess.run(args, env=env, timeout=300, cwd=tmp_path, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        assert "cannot be used" in done.stderr and "Traceback" not in done.stderr
        assert (tmp_path / "h.csv").exists()


def test_ten_sessions_asking_at_once_compile_each_function_once():
    """Sessions share compiled programs safely: ten threads start the same new configuration at once."""
    import random
    import threading
    from collections import Counter

    from jax import monitoring

    from rnnlab.training.train import Run

    # Sizes not seen before, so a persistent cache enabled by another test (app.py) cannot serve them.
    rng = random.Random()
    config = Config(task="sine", seq_len=rng.randrange(10, 200), batch=3, features=rng.randrange(3, 40), chunk=2,
                    steps=4)
    compiles: Counter = Counter()

    def listen(name: str, secs: float, **kwargs) -> None:
        if name.endswith("backend_compile_duration"):
            compiles.update([name])

    monitoring.register_event_duration_secs_listener(listen)
    barrier = threading.Barrier(10)
    histories, errors = [], []

    def session() -> None:
        try:
            barrier.wait()
            run = Run(config)
            run.train()
            histories.append(run.history.steps_df())
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=session) for _ in range(10)]
    for t in threads:
        t.start()
    try:
        for t in threads:
            t.join(300)
    finally:
        monitoring.unregister_event_duration_listener(listen)
    assert not errors
    assert sum(compiles.values()) == 3  # init, train_steps, evaluate: once each, not once per session
    assert len(histories) == 10 and all(h.equals(histories[0]) for h in histories)  # nothing crossed sessions


def test_warm_up_thread_is_not_a_daemon_even_when_started_from_one(monkeypatch):
    """Streamlit starts it from a daemon script thread; a daemon killed inside XLA at exit aborts the process."""
    import threading

    from rnnlab.server.work import warm

    seen = []
    monkeypatch.setattr(warm, "_warm", lambda *_: seen.append(threading.current_thread().daemon))
    monkeypatch.setattr(warm, "_begun", False)
    monkeypatch.setenv(warm.ENV_WARM, "default")
    starter = threading.Thread(target=warm.warm_server, daemon=True)
    starter.start()
    starter.join(30)
    for _ in range(100):
        if seen:
            break
        threading.Event().wait(0.05)
    assert seen == [False]


def test_warm_up_trains_no_step(tmp_path, monkeypatch):
    from rnnlab import ledger

    monkeypatch.setenv(ledger.ENV_LEDGER, str(tmp_path / "ledger.jsonl"))
    config = Config(task="sine", seq_len=7, batch=3, features=5, chunk=4, seed=11)
    compile_training(config)
    assert [line for line in ledger.read(tmp_path / "ledger.jsonl") if line["kind"] == "call"] == []
    assert compile_count(get_program(config).train_steps) >= 1


def test_the_warm_up_imports_the_pages_helpers_before_any_page_runs(monkeypatch):
    """Every page waits for the warm-up's imports, the app's helpers included, even with the warm-up off: pages
    importing a package and one of its modules at once can deadlock on the import locks."""
    import threading

    from rnnlab.server.work import warm

    calls = []
    monkeypatch.setattr(warm, "_begun", False)
    monkeypatch.setattr(warm, "_imported", threading.Event())
    monkeypatch.setattr(warm, "import_page_modules", lambda: calls.append("pages"))
    monkeypatch.setenv(warm.ENV_WARM, "off")
    warm.warm_server(lambda: calls.append("helpers"))
    assert warm.wait_imported(30)
    assert calls == ["pages", "helpers"]


def test_the_helpers_import_is_every_ui_module():
    import inspect
    import pkgutil
    import re

    import ui
    from ui.starting import import_helpers

    listed = set(re.findall(r"import ui\.(\w+)", inspect.getsource(import_helpers)))
    assert listed | {"starting"} == {m.name for m in pkgutil.iter_modules(ui.__path__)}  # and itself, imported
    import_helpers()
