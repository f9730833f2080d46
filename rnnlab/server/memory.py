"""Giving freed memory back to the system, so that a server's size follows what it holds."""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import threading

M_ARENA_MAX = -8  # glibc's mallopt parameter for the number of malloc arenas
MAX_ARENAS = 2
_lock = threading.Lock()
_trim = None


def _libc():
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None


def _malloc_trim():
    global _trim
    if _trim is None:
        _trim = getattr(_libc(), "malloc_trim", None) or False  # not glibc: nothing to trim
    return _trim


def limit_arenas(count: int = MAX_ARENAS) -> bool:
    """Let glibc's malloc use at most ``count`` arenas from now on (it makes up to 8 per core, one per busy thread,
    and a server's many threads then hold freed memory in many places). True when the C library took it."""
    mallopt = getattr(_libc(), "mallopt", None)
    return bool(mallopt and mallopt(M_ARENA_MAX, count))


def give_back_free_memory() -> None:
    """Free what nobody references any more and hand the C heap's free pages back to the system.

    A dropped compiled program is only freed by the cycle collector (a jitted method refers to its program), and
    glibc keeps the pages of freed blocks (compiling leaves hundreds of MB of them) unless asked to return them
    with ``malloc_trim``. Takes up to a few hundred ms; called when a new configuration is set up, before its
    compile, so it is never on a training step's path.
    """
    with _lock:
        gc.collect()
        trim = _malloc_trim()
        if trim:
            trim(0)
