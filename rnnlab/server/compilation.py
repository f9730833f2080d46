"""Compilation outside the user's wait: JAX's persistent cache on disk, and warming up a configuration."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path

import jax

_enabled: str | None = None


def compile_count(jitted: Callable) -> int:
    """How many programs a ``jax.jit`` function has compiled in this process (its cache size).

    The one place that reads JAX's counter, which has no public name.
    """
    return jitted._cache_size()  # noqa: SLF001


def enable_persistent_cache(path: str | os.PathLike | None = None) -> str | None:
    """Keep compiled programs on disk so a restarted server or CLI does not compile them again.

    The folder is ``path``, else ``$RNNLAB_JAX_CACHE_DIR``, else ``~/.cache/rnnlab/jax``; setting the variable
    to ``off`` disables it. Returns the folder in use (or None). A folder that cannot be made or written (a
    file in the way, no permission) disables the cache with one warning in the server's log: the app works on,
    compiling each program once per process.
    """
    global _enabled
    if _enabled is not None:
        return _enabled or None
    folder = str(path or os.environ.get("RNNLAB_JAX_CACHE_DIR") or Path.home() / ".cache" / "rnnlab" / "jax")
    if folder.lower() == "off":
        return None
    try:
        Path(folder).mkdir(parents=True, exist_ok=True)
        probe = Path(folder) / f".write-test-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as e:
        logging.getLogger(__name__).warning(
            "The JAX compilation cache folder %r cannot be used (%s); continuing without a persistent cache. "
            "Set RNNLAB_JAX_CACHE_DIR to a writable folder, or to 'off'.", folder, e)
        _enabled = ""
        return None
    jax.config.update("jax_compilation_cache_dir", folder)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    _enabled = folder
    return folder


def cache_folder() -> str | None:
    """The persistent cache folder in use, or None (not enabled, disabled, or unusable)."""
    return _enabled or None


def warm_up(config=None) -> threading.Thread:
    """Compile ``config``'s program (default: the default preset) in a background thread.

    The jitted functions are shared by every session, so the first user who presses Train finds them
    compiled. Returns the started thread.
    """
    from rnnlab.config import Config
    from rnnlab.train import Run

    def work() -> None:
        run = Run(config or Config())
        run.run_chunk()

    # Not a daemon (a thread started by a daemon, such as a Streamlit script thread, would inherit that): exit
    # waits for the compile instead of killing a thread inside XLA, which aborts the process.
    thread = threading.Thread(target=work, name="rnnlab-warm-up", daemon=False)
    thread.start()
    return thread
