"""A run as bytes and back: what the reload store writes to disk, so that kept runs survive a server crash.

The file holds the configuration, the training state (parameters, optimiser state, step, root key), the
history and the kept parameter snapshots, as msgpack (flax.serialization): data only, nothing that runs code
when read. Reading it builds a fresh :class:`~rnnlab.training.train.Run` of the configuration and puts the saved state
and history into it, so training it further gives what the uninterrupted run would have.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import secrets
import socket
import threading
import time
from collections import OrderedDict
from dataclasses import asdict, fields
from pathlib import Path

import flax.serialization
import jax
import jax.numpy as jnp
import numpy as np

from rnnlab.config import Config
from rnnlab.server.access.clients import address_of
from rnnlab.server.storage.folders import ownership_problem
from rnnlab.training import calls
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


MAX_KEPT_DUMPS = 8  # pristine runs' bytes kept: a class's tabs hold copies of one run, each saved for a reload
MAX_KEPT_DUMP_BYTES = 64 << 20  # and at most this much of them
_dumps: OrderedDict[tuple, bytes] = OrderedDict()
_dumps_lock = threading.Lock()


def _content_key(run: Run) -> tuple | None:
    """What a pristine run's bytes are a function of (its configuration's run at its step); None for other runs."""
    if not run.pristine or run.origin:
        return None
    history = run.history
    return (run.config, run.step, len(history.chunks), history.stop_reason, history.diverged_at, len(run.snapshots))


def run_to_bytes(run: Run) -> bytes:
    """``run`` (its last finished call) as bytes for :func:`run_from_bytes`. The copies of one pristine run that a
    class's tabs hold are dumped once (the last :data:`MAX_KEPT_DUMPS` kept) and share the bytes."""
    with run.between_calls():  # another thread may be training it (a run shared by sessions)
        key = _content_key(run)
        if key is not None:
            with _dumps_lock:
                kept = _dumps.get(key)
                if kept is not None:
                    _dumps.move_to_end(key)
                    return kept
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
    data = flax.serialization.msgpack_serialize(record)
    if key is not None:
        with _dumps_lock:
            _dumps[key] = data
            while _dumps and (len(_dumps) > MAX_KEPT_DUMPS or sum(map(len, _dumps.values())) > MAX_KEPT_DUMP_BYTES):
                _dumps.popitem(last=False)
    return data


def forget_dumps() -> None:
    """Dump every run anew: forget the pristine runs' bytes kept by :func:`run_to_bytes`."""
    with _dumps_lock:
        _dumps.clear()


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
    template = calls.state_template(config)
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


FILE_MODE, FOLDER_MODE = 0o600, 0o700  # kept runs are named by their tab's token: nobody else may list or read them
STALE_PARTIAL_S = 3600.0  # a partial file this old was left by a process that died while writing it
LIVE_EVERY_S = 2.0  # each process lists the tokens of its connected tabs this often ...
LIVE_FRESH_S = 6.0  # ... and a list older than this is a dead process's
LIVE_PREFIX = ".live."
PRUNE_EVERY_S = 10.0  # the folder's bounds are checked after a write at least this often (and by bytes written)


def client_tag(client: str) -> str:
    """A short name for ``client`` (a person) in a file name: a hash, so that no address or id is written."""
    return hashlib.sha256(client.encode()).hexdigest()[:12] if client else "anyone"


def address_tag(client: str) -> str:
    """A short name for the machine of ``client`` (:func:`rnnlab.server.access.clients.address_of`) in a file name."""
    address = address_of(client)
    return hashlib.sha256(address.encode()).hexdigest()[:12] if address else "here"


class RunFolder:
    """Kept runs on disk, one file per tab token (``TOKEN.ADDRESS.CLIENT.run``, :func:`address_tag`,
    :func:`client_tag`), written whole and synced before they replace the last one (a crash leaves the last whole
    file), private to this user (a real folder owned by this user, 0700; files 0600; OSError otherwise). Partial
    files have names no other process or machine sharing the folder uses, and those left by a process that died
    are removed at start. A file that cannot be read now stays (the error may pass); age removes it.

    Bounded: files older than ``ttl_s`` are deleted, and beyond ``max_bytes`` in all, the machine holding the most
    loses first, and of its clients the one holding the most, its oldest file: one machine making up browser ids
    pushes out its own runs, not everyone's. The folder is checked after a write once :data:`PRUNE_EVERY_S` seconds
    have passed or a sixteenth of ``max_bytes`` was written since the last check (a class's thirty writes do not
    each list every file kept).
    """

    def __init__(self, folder: str | os.PathLike, ttl_s: float = DEFAULT_TTL_S,
                 max_bytes: int = DEFAULT_MAX_DISK_BYTES, process: str | None = None):
        self.folder = Path(folder)
        self.process = process or f"{socket.gethostname()}.{os.getpid()}"  # this process, among those sharing it
        self.ttl_s, self.max_bytes = ttl_s, max_bytes
        self._pruned_at, self._written_since = -math.inf, 0  # the last check of the folder's bounds, and since then
        self.folder.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
        problem = ownership_problem(self.folder)
        if problem:
            raise PermissionError(problem)
        info = self.folder.stat()
        if info.st_mode & 0o077:
            logging.getLogger(__name__).warning("%s was open to other users; made private (%o)", self.folder,
                                                FOLDER_MODE)
            self.folder.chmod(FOLDER_MODE)
        self.remove_stale_partials()

    def path(self, token: str, client: str = "") -> Path:
        """Where ``client``'s run under ``token`` is written."""
        return self.folder / f"{token}.{address_tag(client)}.{client_tag(client)}.run"

    def files(self, token: str) -> list[Path]:
        """The files kept under ``token``, newest first."""
        prefix, dated = f"{token}.", []
        try:
            with os.scandir(self.folder) as entries:  # one listing, no pattern matching: a folder of a day's runs
                for entry in entries:
                    if entry.name.startswith(prefix) and entry.name.endswith(".run"):
                        try:
                            dated.append((entry.stat().st_mtime, Path(entry.path)))
                        except FileNotFoundError:
                            continue
        except FileNotFoundError:
            pass
        return [path for _, path in sorted(dated, reverse=True)]

    def write(self, token: str, data: bytes, client: str = "") -> bool:
        """Save ``data`` (:func:`run_to_bytes`) under ``token`` for ``client``; True when written. Errors (a full
        disk) are logged, never raised."""
        path = self.path(token, client)
        partial = self.folder / f".{token}.{socket.gethostname()}.{os.getpid()}.{secrets.token_hex(6)}.tmp"
        try:
            fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
            with os.fdopen(fd, "wb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            os.replace(partial, path)
            sync_folder(self.folder)
        except OSError as e:
            logging.getLogger(__name__).warning("could not save a kept run to %s: %s", self.folder, e)
            partial.unlink(missing_ok=True)
            return False
        for older in self.files(token):
            if older != path:
                older.unlink(missing_ok=True)
        self._written_since += len(data)
        if self._written_since * 16 >= self.max_bytes or time.monotonic() - self._pruned_at >= PRUNE_EVERY_S:
            self.prune()
        return True

    def read(self, token: str) -> bytes | None:
        """The bytes saved under ``token`` if they hold a run, or None (none, expired: then the file is deleted, or
        unreadable now: then it stays)."""
        found = self.files(token)
        if not found:
            return None
        path = found[0]
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
        except Exception as e:  # noqa: BLE001 - damaged, old, or not readable now: kept, until its age removes it
            logging.getLogger(__name__).warning("could not read the kept run %s (left in place): %s", path.name, e)
            return None

    def delete(self, token: str) -> None:
        for path in self.files(token):
            path.unlink(missing_ok=True)

    def live_path(self) -> Path:
        """This process's list of the tokens its connected tabs hold."""
        return self.folder / f"{LIVE_PREFIX}{self.process}"

    def publish_live(self, tokens: list[str]) -> None:
        """Tell the other processes sharing the folder which tokens this process's connected tabs hold (written
        whole; errors logged)."""
        partial = self.folder / f".{self.live_path().name}.{secrets.token_hex(6)}.tmp"
        try:
            fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
            with os.fdopen(fd, "w") as out:
                out.write("\n".join(tokens))
            os.replace(partial, self.live_path())
        except OSError as e:
            logging.getLogger(__name__).warning("could not list the live tabs in %s: %s", self.folder, e)
            partial.unlink(missing_ok=True)

    def held_elsewhere(self, token: str) -> bool:
        """Whether another live process (its list fresher than :data:`LIVE_FRESH_S`) has a connected tab on
        ``token``."""
        mine = self.live_path()
        for path in self.folder.glob(f"{LIVE_PREFIX}*"):
            try:
                if path == mine or time.time() - path.stat().st_mtime > LIVE_FRESH_S:
                    continue
                if token in path.read_text().split():
                    return True
            except OSError:
                continue
        return False

    def remove_stale_partials(self) -> None:
        """Delete partial files older than :data:`STALE_PARTIAL_S` (their writer died mid-write), and the live
        lists of processes gone as long."""
        for partial in [*self.folder.glob(".*.tmp"), *self.folder.glob(f"{LIVE_PREFIX}*")]:
            try:
                if time.time() - partial.stat().st_mtime > STALE_PARTIAL_S:
                    partial.unlink(missing_ok=True)
            except FileNotFoundError:
                continue

    def prune(self) -> None:
        """Delete expired files, then, while the folder is over ``max_bytes``, the oldest file of the client holding
        the most bytes (then files) on the machine holding the most (:class:`RunFolder`)."""
        self._pruned_at, self._written_since = time.monotonic(), 0
        files: list[tuple[float, int, str, str, Path]] = []
        for path in self.folder.glob("*.run"):
            try:
                info = path.stat()
            except FileNotFoundError:
                continue
            if time.time() - info.st_mtime > self.ttl_s:
                path.unlink(missing_ok=True)
                continue
            parts = path.name.split(".")  # TOKEN.ADDRESS.CLIENT.run (TOKEN.CLIENT.run: written before addresses)
            client = parts[-2] if len(parts) >= 3 else ""
            files.append((info.st_mtime, info.st_size, parts[1] if len(parts) == 4 else client, client, path))
        total = sum(f[1] for f in files)
        files.sort()
        while files and total > self.max_bytes:
            machine = greediest([(f[2], f[1]) for f in files])
            client = greediest([(f[3], f[1]) for f in files if f[2] == machine])
            oldest = next(f for f in files if f[2] == machine and f[3] == client)
            files.remove(oldest)
            oldest[4].unlink(missing_ok=True)
            total -= oldest[1]


def greediest(held: list[tuple[str, int]]) -> str:
    """Of ``(who, bytes)`` pairs (one per kept run), who holds the most bytes, then the most runs."""
    totals: dict[str, list[int]] = {}
    for who, size in held:
        mine = totals.setdefault(who, [0, 0])
        mine[0], mine[1] = mine[0] + size, mine[1] + 1
    return max(totals, key=lambda who: tuple(totals[who]))


def sync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable (where the system allows it)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


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
