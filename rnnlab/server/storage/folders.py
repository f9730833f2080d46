"""Folders that hold private files (kept runs, the local cluster's state): checked before each use."""

from __future__ import annotations

import os
import stat
from pathlib import Path


def ownership_problem(folder: Path) -> str | None:
    """Why ``folder`` may not hold private files: not a real folder (a link, a file), or owned by another user;
    None when it may (whether it is open to others is each caller's to judge)."""
    try:
        info = folder.lstat()
    except FileNotFoundError:
        return f"{folder} does not exist"
    if not stat.S_ISDIR(info.st_mode):
        return f"{folder} is not a folder (a link or a file): remove it and try again"
    if info.st_uid != os.geteuid():
        return (f"{folder} belongs to user {info.st_uid}, not to this user ({os.geteuid()}): someone else made it; "
                "remove it and try again")
    return None
