"""An optional record of the heavy work done, for load measurements: ``RNNLAB_LEDGER=PATH`` appends one JSON line
per compiled training call computed and per server slot admitted.

Every process of a setup (its web processes, the Ray workers and the gate actor, which inherit ``RNNLAB_*``) may
append to one file: each line is one ``O_APPEND`` write, so lines from different processes never interleave. Unset
(the default), nothing is written and nothing is computed for it. :func:`read` gives the lines back, for
:mod:`tests.load.tier_curve` to count how many times each step was computed and how many slots a client held.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

ENV_LEDGER = "RNNLAB_LEDGER"


def enabled() -> bool:
    """Whether ``$RNNLAB_LEDGER`` names a file to append to."""
    return bool(os.environ.get(ENV_LEDGER, "").strip())


def digest(value: object) -> str:
    """A short name for ``value`` (a configuration) that is the same in every process: its ``repr`` hashed."""
    return hashlib.sha1(repr(value).encode()).hexdigest()[:12]


def record(kind: str, **fields: Any) -> None:
    """Append one line ``{"kind": kind, "pid": ..., "t": ..., **fields}`` when the ledger is on; a file that cannot
    be written is skipped (a measurement never stops the work it measures)."""
    path = os.environ.get(ENV_LEDGER, "").strip()
    if not path:
        return
    line = json.dumps({"kind": kind, "pid": os.getpid(), "t": time.time(), **fields}, separators=(",", ":"))
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, (line + "\n").encode())
        finally:
            os.close(fd)
    except OSError:
        pass


def read(path: str | Path) -> list[dict[str, Any]]:
    """The ledger's lines as dicts (an unfinished last line, or a missing file, gives nothing)."""
    try:
        text = Path(path).read_text()
    except OSError:
        return []
    lines = []
    for raw in text.splitlines():
        try:
            lines.append(json.loads(raw))
        except json.JSONDecodeError:
            continue
    return lines
