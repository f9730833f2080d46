"""Giving freed memory back to the system, so that a server's size follows what it holds."""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import threading
from collections.abc import Callable
from typing import Literal

_lock = threading.Lock()
_trim: Callable[[int], int] | Literal[False] | None = None  # libc's malloc_trim; False: none


def _malloc_trim():
    global _trim
    if _trim is None:
        try:
            _trim = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
        except (OSError, AttributeError):  # not glibc: nothing to trim
            _trim = False
    return _trim


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
