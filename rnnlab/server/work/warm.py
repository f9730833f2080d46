"""What a class needs, made ready before it arrives: the heavy imports, and every preset link's first chart's compiled
programs, first on disk (JAX's persistent cache) and then loaded in the server.

:func:`fill_cache` (``python -m rnnlab warm``) compiles every preset's programs into the disk cache: what a preset
link computes before its first chart (its run's initialisation, evaluation and training step; on Gradient flow the
untrained model's probes). A restarted server, or one on the same machine later, then only loads them.

:func:`warm_server` does it for a running server, in the background of its first script run: it imports what the
pages need, fills the disk cache in a worker process at a low priority (so that the pages come first, and stopping
the server kills it at once), then loads each preset's programs from there. The first visitor's page is drawn
meanwhile (:func:`imported` says when the imports are done); nothing waits for the compiling.
"""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rnnlab.config import Config

WORKER_NICE = 10  # the disk cache's worker yields the cores to the server's pages
ENV_WARM = "RNNLAB_WARM"
WARM_MODES = ("presets", "default", "off")  # every preset (the default), the default preset here, imports only
POLL_S = 0.1

_imported = threading.Event()
_started = threading.Lock()
_begun = False
ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Warmed:
    """What this process's warm-up has done so far."""

    imports_s: float | None = None  # how long the imports took
    filled: bool | None = None  # whether the worker filled the disk cache (None: not yet, or no cache)
    loaded: int = 0  # presets whose programs are loaded here


WARMED = Warmed()


def preset_work() -> Iterator[tuple[str, Config, Callable[[], object]]]:
    """Each preset's work before its first chart, in the order of the presets: (its key, its configuration, a
    function doing it)."""
    from rnnlab.server.work import jobs
    from rnnlab.sharing.presets import PRESETS

    for preset in PRESETS:
        config = preset.config
        if preset.page == "gradients":
            yield preset.key, config, partial(_probe_untrained, jobs, config)
        else:
            yield preset.key, config, partial(compile_training, config)


def compile_training(config: Config) -> None:
    """``config``'s initialisation, evaluation and training step compiled (loaded from disk when there), training
    no step."""
    import jax
    import numpy as np

    from rnnlab.training import estimate
    from rnnlab.training.program import hyper_args
    from rnnlab.training.train import Run

    run = Run(config)
    lr, clip, scale = hyper_args(config)
    jax.block_until_ready(run.program.train_steps(run.state, lr, clip, scale, np.int32(0)))
    estimate.record_compiled(config)


def _probe_untrained(jobs, config: Config) -> None:
    """Gradient flow's first charts of ``config``: the untrained model and its two probes."""
    model = jobs.Model.of(jobs.untrained_run(config))
    jobs.grad_through_time(model)
    jobs.connectivity(model)


def fill_cache(say: Callable[[str], None] = lambda text: print(text, flush=True),
               keep_going: Callable[[], bool] = lambda: True) -> bool:
    """Compile every preset's programs into JAX's persistent cache (``$RNNLAB_JAX_CACHE_DIR``); False when the
    cache is off or unusable, or ``keep_going()`` turned False."""
    from rnnlab.i18n import t
    from rnnlab.training.compiled import enable_persistent_cache
    from rnnlab.training.estimate import format_seconds

    folder = enable_persistent_cache()
    if folder is None:
        say(t("The disk cache of compiled programs is off (RNNLAB_JAX_CACHE_DIR): nothing to fill."))
        return False
    for key, _config, work in preset_work():
        if not keep_going():
            return False
        began = time.monotonic()
        work()
        # TRANSLATORS: {preset} is a preset's id (gru_adding); {time} a duration such as "3.2 s"
        say(t("{preset}: ready in {time}", preset=key, time=format_seconds(time.monotonic() - began)))
    # TRANSLATORS: {folder} is a folder on disk
    say(t("Every preset's programs are in {folder}.", folder=folder))
    return True


def imported() -> bool:
    """Whether the pages' heavy modules are imported in this process."""
    return _imported.is_set()


def wait_imported(timeout_s: float) -> bool:
    """Wait up to ``timeout_s`` for :func:`imported`."""
    return _imported.wait(timeout_s)


def server_running() -> bool:
    """False once the interpreter is shutting down (the server was stopped: its main thread has ended)."""
    return threading.main_thread().is_alive()


def warm_mode() -> str:
    """``$RNNLAB_WARM``: what a server warms at its start (:data:`WARM_MODES`; anything else means the default)."""
    mode = os.environ.get(ENV_WARM, "").strip().lower()
    return mode if mode in WARM_MODES else WARM_MODES[0]


def warm_server(more_imports: Callable[[], None] | None = None) -> None:
    """Start, once per process, the background warm-up (see the module's doc), with ``more_imports()`` after the
    pages' own (the app's helpers, which this layer cannot name); returns at once."""
    global _begun
    with _started:
        if _begun:
            return
        _begun = True
    threading.Thread(target=_warm, args=(more_imports,), name="rnnlab-warm-up", daemon=False).start()


def import_page_modules() -> None:
    """What the pages import beyond app.py, heaviest first: imported once, in the background, at the server's
    start."""
    import flax.linen  # noqa: F401
    import optax  # noqa: F401
    import pandas  # noqa: F401
    import plotly.graph_objects  # noqa: F401

    import rnnlab.figures.compare_views
    import rnnlab.figures.gradient_views
    import rnnlab.figures.run_views
    import rnnlab.flaxapi.migrate
    import rnnlab.server.work.jobs  # noqa: F401


def _warm(more_imports: Callable[[], None] | None = None) -> None:
    """The imports, in this one thread before any page's (two script threads importing a package and one of its
    modules at once can deadlock on Python's import locks); the disk cache; then, unless the warm-up is off, the
    presets."""
    began = time.monotonic()
    try:
        import_page_modules()
        if more_imports is not None:
            more_imports()
    finally:
        WARMED.imports_s = round(time.monotonic() - began, 2)
        _imported.set()
    from rnnlab.training.compiled import enable_persistent_cache

    enable_persistent_cache()  # ($RNNLAB_JAX_CACHE_DIR) long first compiles then run in a worker that Stop kills
    if warm_mode() == "off":
        return
    loads = _preset_loads()
    if warm_mode() == "default" or enable_persistent_cache() is None:
        loads[next(iter(loads))]()  # the default preset only, compiled here
        return
    WARMED.filled = _fill_in_worker(lambda key: loads.pop(key, lambda: None)())


def _preset_loads() -> dict[str, Callable[[], None]]:
    """What this process loads of each preset once it is in the disk cache, by preset: as many configurations as
    the server keeps programs for, less one (a student's own), the first presets first."""
    from rnnlab.training.program import MAX_PROGRAMS

    loads: dict[str, Callable[[], None]] = {}
    kept: set[tuple] = set()
    for key, config, work in preset_work():
        kept.add(config.static_key())
        if len(kept) > max(1, MAX_PROGRAMS - 1):
            break
        loads[key] = partial(_load, work)
    return loads


def _load(work: Callable[[], object]) -> None:
    work()
    WARMED.loaded += 1


def _fill_in_worker(ready: Callable[[str], None]) -> bool:
    """:func:`fill_cache` in a worker process at a low priority, killed when the server stops; ``ready(key)`` as each
    preset is in the disk cache; True when the worker filled it."""
    env = dict(os.environ, XLA_PYTHON_CLIENT_PREALLOCATE="false")
    nice = shutil.which("nice")
    command = [sys.executable, "-m", "rnnlab", "--lang", "en", "warm"]
    worker = subprocess.Popen([nice, "-n", str(WORKER_NICE), *command] if nice else command, env=env, cwd=ROOT,
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert worker.stdout is not None
    try:
        while server_running():
            if not select.select([worker.stdout], [], [], POLL_S)[0]:
                continue
            line = worker.stdout.readline()  # the worker writes whole lines: "KEY: ready in ..."
            if not line:
                return worker.wait() == 0
            ready(line.partition(":")[0].strip())
        return False
    finally:
        if worker.poll() is None:
            worker.kill()
        worker.wait()
        worker.stdout.close()
