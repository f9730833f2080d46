"""A run as bytes and back: what the reload store writes to disk, so that kept runs survive a server crash.

The file holds the configuration, the training state (parameters, optimiser state, step, root key), the
history and the kept parameter snapshots, as msgpack (flax.serialization): data only, nothing that runs code
when read. Reading it builds a fresh :class:`~rnnlab.training.train.Run` of the configuration and puts the saved state
and history into it, so training it further gives what the uninterrupted run would have.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import asdict, fields
from pathlib import Path

import flax.serialization
import jax
import jax.numpy as jnp
import numpy as np

from rnnlab.config import Config
from rnnlab.training import parts
from rnnlab.training.history import History
from rnnlab.training.program import get_program
from rnnlab.training.train import Run

FORMAT = 1


def _plain(value):
    """Numbers as Python numbers and tuples as lists, so msgpack writes them."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def run_to_bytes(run: Run) -> bytes:
    """``run`` (its last finished call) as bytes for :func:`run_from_bytes`."""
    with run.between_calls():  # another thread may be training it (a run shared by sessions)
        state = jax.device_get(run.state)
        history = run.view().history
        snapshots = list(run.snapshots)
        pristine, config, origin = run.pristine, run.config, run.origin
    record = {
        "format": FORMAT,
        "config": _plain(asdict(config)),
        "origin": origin or "",
        "pristine": bool(pristine),
        "state": flax.serialization.to_state_dict(state),
        "history": {
            "steps": _plain(history.steps),
            "chunks": _plain(history.chunks),
            "carry": {name: [np.asarray(a) for a in snaps] for name, snaps in history.carry.items()},
            "per_step_loss": [np.asarray(a) for a in history.per_step_loss],
            "stop_reason": history.stop_reason or "",
            "diverged_at": -1 if history.diverged_at is None else int(history.diverged_at),
        },
        "snapshots": [{"step": int(step), "params": flax.serialization.to_state_dict(params)}
                      for step, params in snapshots],
    }
    return flax.serialization.msgpack_serialize(record)


def run_version(run: Run) -> tuple:
    """What changes when a run changes: the object, its step, evaluations, stop and configuration."""
    return (id(run), run.step, len(run.history.chunks), run.history.stop_reason, run.config)


def run_from_bytes(data: bytes) -> Run:
    """The :class:`~rnnlab.training.train.Run` saved by :func:`run_to_bytes`; ValueError when ``data`` is not one.
    Nothing is computed or compiled: the state takes the structure of the configuration's (traced, not run)."""
    record = flax.serialization.msgpack_restore(data)
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise ValueError("not a saved run of this version")
    names = {f.name for f in fields(Config)}
    config = Config(**{k: v for k, v in record["config"].items() if k in names})
    template = parts.state_template(config)
    state = jax.tree_util.tree_map(jnp.asarray, flax.serialization.from_state_dict(template, record["state"]))
    saved = record["history"]
    history = History(get_program(config).spec.leaves)
    history.steps = [dict(row) for row in _as_list(saved["steps"])]
    history.chunks = [dict(row) for row in _as_list(saved["chunks"])]
    history.carry = {name: [np.asarray(a) for a in _as_list(snaps)] for name, snaps in saved["carry"].items()}
    history.per_step_loss = [np.asarray(a) for a in _as_list(saved["per_step_loss"])]
    history.stop_reason = saved["stop_reason"] or None
    history.diverged_at = None if saved["diverged_at"] < 0 else int(saved["diverged_at"])
    snapshots = [(int(s["step"]), jax.tree_util.tree_map(np.asarray, flax.serialization.from_state_dict(
        template["params"], s["params"]))) for s in _as_list(record["snapshots"])]
    return Run.restored(config, state, history, snapshots, bool(record.get("pristine", False)),
                        record["origin"] or None)


def _as_list(value) -> list:
    """A list written by msgpack_serialize: flax restores lists as dicts keyed '0', '1', ..."""
    if isinstance(value, dict):
        return [value[str(i)] for i in range(len(value))]
    return list(value)


ENV_FOLDER = "RNNLAB_RUNS_DIR"
WRITE_EVERY_S = 10.0  # a run saved again and again while it trains is kept at most this often
DEFAULT_MAX_DISK_BYTES = 1 << 30
DEFAULT_TTL_S = 6 * 3600.0


class RunFolder:
    """Kept runs on disk, one file per tab token, written atomically (a crash leaves the last whole file).

    Bounded: files older than ``ttl_s`` and, beyond ``max_bytes`` in all, the oldest are deleted.
    """

    def __init__(self, folder: str | os.PathLike, ttl_s: float = DEFAULT_TTL_S,
                 max_bytes: int = DEFAULT_MAX_DISK_BYTES):
        self.folder = Path(folder)
        self.ttl_s, self.max_bytes = ttl_s, max_bytes
        self.folder.mkdir(parents=True, exist_ok=True)

    def path(self, token: str) -> Path:
        return self.folder / f"{token}.run"

    def write(self, token: str, data: bytes) -> bool:
        """Save ``data`` (:func:`run_to_bytes`) under ``token``; True when written. Errors (a full disk) are
        logged, never raised."""
        try:
            partial = self.folder / f".{token}.{os.getpid()}.{threading.get_ident()}.tmp"
            partial.write_bytes(data)
            os.replace(partial, self.path(token))
        except OSError as e:
            logging.getLogger(__name__).warning("could not save a kept run to %s: %s", self.folder, e)
            return False
        self.prune()
        return True

    def read(self, token: str) -> bytes | None:
        """The bytes saved under ``token`` if they hold a run, or None (none, expired, or unreadable: then the
        file is deleted)."""
        path = self.path(token)
        try:
            if time.time() - path.stat().st_mtime > self.ttl_s:
                path.unlink(missing_ok=True)
                return None
            data = path.read_bytes()
            record = flax.serialization.msgpack_restore(data)
            if not isinstance(record, dict) or record.get("format") != FORMAT:
                raise ValueError("not a saved run of this version")
            return data
        except FileNotFoundError:
            return None
        except Exception as e:  # noqa: BLE001 - a damaged or old file: forget it
            logging.getLogger(__name__).warning("dropping the unreadable kept run %s: %s", path.name, e)
            path.unlink(missing_ok=True)
            return None

    def delete(self, token: str) -> None:
        self.path(token).unlink(missing_ok=True)

    def prune(self) -> None:
        """Delete expired files, then the oldest until the folder is within ``max_bytes``."""
        files = []
        for path in self.folder.glob("*.run"):
            try:
                stat = path.stat()
            except FileNotFoundError:
                continue
            if time.time() - stat.st_mtime > self.ttl_s:
                path.unlink(missing_ok=True)
            else:
                files.append((stat.st_mtime, stat.st_size, path))
        total = sum(size for _, size, _ in files)
        for _, size, path in sorted(files):
            if total <= self.max_bytes:
                break
            path.unlink(missing_ok=True)
            total -= size


def default_folder() -> RunFolder | None:
    """``$RNNLAB_RUNS_DIR`` (default ``~/.cache/rnnlab/runs``; ``off``: none). An unusable folder means none,
    with one warning in the server's log."""
    folder = os.environ.get(ENV_FOLDER, "").strip() or str(Path.home() / ".cache" / "rnnlab" / "runs")
    if folder.lower() == "off":
        return None
    try:
        return RunFolder(folder)
    except OSError as e:
        logging.getLogger(__name__).warning("kept runs will not survive a restart: %s cannot be used (%s)",
                                            folder, e)
        return None
