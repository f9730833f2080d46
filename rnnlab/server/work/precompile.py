"""Long compiles in a worker process that can be killed, so that Stop, a closed tab or a time limit end them.

A compile inside the server process cannot be interrupted: XLA holds the thread until it is done, however long.
The worker builds the configuration's program and compiles its training steps (``train_steps``) into JAX's
persistent cache on disk; the server then loads the compiled program from there in well under a second. Killing
the worker frees its CPU at once. Used only where the compile is expected to be long and the disk cache is on.

Run as ``python -m rnnlab.server.work.precompile CONFIG_JSON`` (the worker side).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable

import numpy as np

from rnnlab.config import Config
from rnnlab.training import estimate
from rnnlab.training.compiled import cache_folder, enable_persistent_cache
from rnnlab.training.program import hyper_args
from rnnlab.training.train import Run

WORKER_COMPILE_S = float(os.environ.get("RNNLAB_WORKER_COMPILE_S", "8"))
"""Compiles expected to take at least this long (seconds) go to a worker process."""

DONE, STOPPED, FAILED = "done", "stopped", "failed"  # what compile_in_worker returns
POLL_S = 0.25
MAX_REMEMBERED = 1000  # configurations remembered as compiled by a worker
_on_disk: set[tuple] = set()  # static keys a worker has compiled into the disk cache in this server's life


def use_worker(config) -> bool:
    """Whether ``config``'s first compile should run in a worker: long enough, and the disk cache is on."""
    if cache_folder() is None or config.static_key() in _on_disk:
        return False
    return estimate.estimate(config, 1).compile_s >= WORKER_COMPILE_S


def worker_command(config) -> list[str]:
    """The command line of the worker that compiles ``config``."""
    return [sys.executable, "-m", "rnnlab.server.work.precompile", json.dumps(config.to_dict())]


def compile_in_worker(config, should_stop: Callable[[], bool], timeout_s: float | None = None,
                      started: Callable[[subprocess.Popen], None] | None = None) -> str:
    """Compile ``config``'s training program in a worker process: DONE once it is in the disk cache.

    ``should_stop`` is asked about four times a second; when it returns True, or ``timeout_s`` passes, the
    worker is killed and STOPPED returned (an exception raised by ``should_stop`` kills it too, and goes on).
    ``started(worker)`` is called once the worker runs (e.g. to kill it from elsewhere: :func:`stop_worker`).
    FAILED: the worker could not compile it (or was killed from elsewhere); the caller then compiles in its own
    process as before.
    """
    folder = cache_folder()
    if folder is None:
        return FAILED
    env = dict(os.environ, RNNLAB_JAX_CACHE_DIR=folder, XLA_PYTHON_CLIENT_PREALLOCATE="false")
    worker = subprocess.Popen(worker_command(config), env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    began = time.monotonic()
    try:
        if started is not None:
            started(worker)
        while worker.poll() is None:
            if should_stop() or (timeout_s is not None and time.monotonic() - began > timeout_s):
                return STOPPED
            time.sleep(POLL_S)
        if worker.returncode != 0:
            return FAILED
        if len(_on_disk) >= MAX_REMEMBERED:
            _on_disk.clear()  # forgetting only means a worker is started again, and it finds the disk cache
        _on_disk.add(config.static_key())
        return DONE
    finally:
        stop_worker(worker)


def stop_worker(worker: subprocess.Popen) -> None:
    """Kill a worker (and anything it started) if it still runs, and reap it."""
    if worker.poll() is None:
        try:
            os.killpg(worker.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    worker.wait()


def main(argv: list[str]) -> int:
    """The worker: compile the training steps of the configuration given as JSON into the persistent cache."""
    if enable_persistent_cache() is None:
        return 2
    config, errors = Config.from_dict(json.loads(argv[1]))
    if errors:
        return 3
    run = Run(config)
    lr, clip, scale = hyper_args(config)
    run.program.train_steps.lower(run.state, lr, clip, scale, np.int32(1)).compile()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
