"""Compiled programs beyond one process: JAX's persistent cache on disk, and how many programs a jitted function
has compiled."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import jax

_enabled: str | None = None


def compile_count(jitted: Any) -> int:
    """How many programs a ``jax.jit`` function has compiled in this process (its cache size).

    The one place that reads JAX's counter, which has no public name.
    """
    return jitted._cache_size()


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
