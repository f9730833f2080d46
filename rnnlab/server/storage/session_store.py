"""A session's run kept on the server, so that a browser reload (a new Streamlit session) gets it back.

A reload starts a new Streamlit session with an empty ``st.session_state``. The app therefore gives each
browser tab a random token, kept in the page's URL (``?sid=...``), and saves the tab's run here under it.
A new session that arrives with a token takes the run over only when the session that saved it is no longer
connected (a reload closes the old page's connection first); a copy of the address opened elsewhere while
the owner is still connected gets a new token and an empty page, and never sees or changes the owner's run.

Several web processes sharing one runs folder: each lists the tokens of its connected tabs there every few seconds
(:meth:`~rnnlab.server.storage.run_files.RunFolder.publish_live`), and a token held by a connected tab of another
process is not taken over either (a dead process's list goes stale within seconds, and its tabs' runs are then taken
over by the process their reconnection reaches). A copy of the address opened while the owner is connected, here or
elsewhere, gets its own copy of the run under a new token (:meth:`SessionStore.copy`): it never writes the owner's file.

Residual case: the token is a bearer secret. Someone who has a copy of the address *with* the token and opens
it after the owner closed the tab (or while the owner's connection is down) gets a copy of the owner's last
finished run. The links the app builds for sharing never contain the token; only a raw copy of the address
bar does. The store is bounded: at most ``max_entries`` runs and about ``max_bytes`` of memory, each kept
``ttl_s`` seconds after its last save or take-over. When it is full, the machine holding the most memory
loses first, and of its clients (a person, :func:`rnnlab.server.access.clients.client_key`) the one holding the most,
its least recently used run: one machine making up browser ids evicts its own runs, not everyone else's.
"""

from __future__ import annotations

import atexit
import logging
import math
import os
import re
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeGuard

from rnnlab.server.access.clients import address_of
from rnnlab.server.storage.run_files import (
    LIVE_EVERY_S,
    LIVE_FRESH_S,
    WRITE_EVERY_S,
    default_folder,
    greediest,
    run_from_bytes,
    run_to_bytes,
    run_version,
)
from rnnlab.server.storage.tab_token import (
    TOKEN_PARAM as TOKEN_PARAM,  # the token's name in the URL, kept under it here
)

_TOKEN = re.compile(r"^[A-Za-z0-9_-]{16,64}$")
DEFAULT_MAX_ENTRIES = 200
DEFAULT_TTL_S = 6 * 3600.0


def _max_bytes_from_env(default_mb: float = 512.0) -> int:
    """``$RNNLAB_SESSION_STORE_MB`` in bytes; a malformed or non-positive value means the default."""
    try:
        mb = float(os.environ.get("RNNLAB_SESSION_STORE_MB", default_mb))
    except ValueError:
        mb = default_mb
    return int((mb if math.isfinite(mb) and mb > 0 else default_mb) * 2**20)


DEFAULT_MAX_BYTES = _max_bytes_from_env()


def new_token() -> str:
    """A fresh random token (22 URL-safe characters, 128 bits)."""
    return secrets.token_urlsafe(16)


def valid_token(token: Any) -> TypeGuard[str]:
    """Whether ``token`` has the form :func:`new_token` gives (anything else in a URL is ignored)."""
    return isinstance(token, str) and bool(_TOKEN.match(token))


def _size(value: Any) -> int:
    nbytes = getattr(value, "nbytes", None)
    return int(nbytes() if callable(nbytes) else nbytes or 0)


@dataclass
class Entry:
    owner: str  # the Streamlit session that saved or took over the value
    value: Any  # the value itself while its owner is connected, else dump(value) (see ``frozen``)
    nbytes: int
    touched: float  # clock() of the last save or take-over
    client: str = ""  # the person it belongs to (the owner's session when not given)
    frozen: bool = False  # value is dump(value): no live object (for a run: no compiled program) is held
    version: Any = None  # version(value) when it was last written to disk
    dumped: float = -math.inf  # clock() when it was last written to disk


def _same(value: Any) -> Any:
    return value


class SessionStore:
    """Values (runs) by token, each owned by one session; bounded in count, memory and age. Thread-safe."""

    def __init__(self, max_entries: int = DEFAULT_MAX_ENTRIES, max_bytes: int = DEFAULT_MAX_BYTES,
                 ttl_s: float = DEFAULT_TTL_S, clock: Callable[[], float] = time.monotonic,
                 size: Callable[[Any], int] = _size, disk=None, dump: Callable[[Any], Any] = _same,
                 load: Callable[[Any], Any] = _same, version: Callable[[Any], Any] = id,
                 every_s: float = 0.0, is_connected: Callable[[str], bool] = lambda session: True,
                 background: bool = False):
        self.max_entries, self.max_bytes, self.ttl_s = max_entries, max_bytes, ttl_s
        self.disk = disk  # a RunFolder (write, read, delete by token): kept values survive a crash
        # A value whose owner has gone is kept as dump(value) and given back as load(kept): for runs, bytes, so
        # that a run kept for a reload holds no compiled program. A value saved again and again while it changes
        # (``throttle``) is written to disk at most every ``every_s`` seconds.
        self._dump, self._load_value, self._version, self.every_s = dump, load, version, every_s
        self.is_connected = is_connected
        self._clock, self._size = clock, size
        self._entries: OrderedDict[str, Entry] = OrderedDict()  # least recently used first
        self._lock = threading.Lock()
        self._publisher: threading.Thread | None = None
        # With ``background``, dumping and writing (and keeping gone owners' values as bytes) happen in a thread of
        # their own, so that a page saving its run does not wait for them; flush() does what is pending at once.
        self.background = background
        self._pending: set[str] = set()
        self._wake = threading.Event()
        self._writer: threading.Thread | None = None

    def save(self, token: str, owner: str, value: Any, client: str = "", throttle: bool = False) -> bool:
        """Keep ``value`` under ``token`` for session ``owner`` of ``client`` (a person; default: the session).

        With ``throttle`` (a value saved again and again while it changes, e.g. during training), a changed
        value is kept again only ``every_s`` seconds after the last time.

        Returns False, storing nothing, when another session owns the token (it took the run over while this
        one was disconnected): the caller should continue under a new token.
        """
        if not valid_token(token):
            raise ValueError("not a session token")
        with self._lock:
            self._expire()
            entry = self._entries.get(token)
            if entry is not None and entry.owner != owner:
                return False
            nbytes = self._size(value)
            if nbytes > self.max_bytes:  # too big to keep at all; the others stay
                self._entries.pop(token, None)
                return True
            new = entry is None
            if entry is None or entry.value is not value:
                entry = Entry(owner, value, nbytes, self._clock(), client or owner)
            entry.value, entry.nbytes, entry.frozen, entry.touched = value, nbytes, False, self._clock()
            self._entries[token] = entry
            self._entries.move_to_end(token)
            self._evict()
            version = self._version(value)
            write = self.disk is not None and entry.version != version and not (
                throttle and self._clock() - entry.dumped < self.every_s)
            if write:
                entry.version, entry.dumped = version, self._clock()
            client = entry.client
        if self.background:
            self._write_later(token if write else None)
        else:
            if write:
                self.disk.write(token, self._dump(value), client)
            self._freeze_gone()
        self._publish_live(now=new)
        return True

    def claim(self, token: str | None, session: str, is_connected: Callable[[str], bool],
              grace_s: float = 0.0, poll_s: float = 0.1) -> Any | None:
        """The value under ``token`` for a new ``session``, which becomes its owner; else None.

        Given only when the owner is ``session`` itself or is no longer connected. A reload's old connection
        may close a moment after the new session starts: a connected owner is given ``grace_s`` seconds to go.
        """
        if not valid_token(token):
            return None
        self._load(token)
        self._publish_live()
        deadline = self._clock() + grace_s
        elsewhere_until = time.monotonic() + LIVE_FRESH_S + LIVE_EVERY_S  # a dead process's list is stale by then
        while True:
            with self._lock:
                self._expire()
                entry = self._entries.get(token)
                if entry is None:
                    return None
            if self.disk is not None and self.disk.held_elsewhere(token):
                if time.monotonic() >= elsewhere_until:
                    return None
                time.sleep(poll_s)
                continue
            with self._lock:
                entry = self._entries.get(token)
                if entry is None:
                    return None
                if entry.owner in (session, "") or not is_connected(entry.owner):  # "": read from disk
                    entry.owner, entry.touched = session, self._clock()
                    self._entries.move_to_end(token)
                    kept, frozen = entry.value, entry.frozen
                    break
            if self._clock() >= deadline:
                return None
            time.sleep(poll_s)
        self._publish_live(now=True)
        if not frozen:
            return kept
        try:
            value = self._load_value(kept)
        except Exception:  # noqa: BLE001 - a value that cannot be rebuilt is forgotten
            self.discard(token, session)
            return None
        with self._lock:  # its new owner holds it live again
            entry = self._entries.get(token)
            if entry is not None and entry.value is kept:
                entry.value, entry.frozen, entry.nbytes = value, False, self._size(value)
        return value

    def copy(self, token: str | None) -> Any | None:
        """A copy of the value under ``token`` for a tab that may not take it over (its owner is connected, here
        or in another process): the value itself (the caller forks it) or one rebuilt from what is kept; None
        when there is none."""
        if not valid_token(token):
            return None
        self._load(token)
        with self._lock:
            entry = self._entries.get(token)
            if entry is None:
                return None
            kept, frozen = entry.value, entry.frozen
        if not frozen:
            return kept
        try:
            return self._load_value(kept)
        except Exception:  # noqa: BLE001 - a value that cannot be rebuilt: no copy
            return None

    def discard(self, token: str | None, owner: str) -> None:
        """Forget the value under ``token`` if ``owner`` owns it."""
        with self._lock:
            entry = self._entries.get(token) if token else None
            if token is not None and entry is not None and entry.owner == owner:
                del self._entries[token]
            else:
                return
        if self.disk is not None:
            self.disk.delete(token)

    def owner(self, token: str) -> str | None:
        with self._lock:
            entry = self._entries.get(token)
            return entry.owner if entry else None

    def __contains__(self, token: str) -> bool:
        with self._lock:
            self._expire()
            return token in self._entries

    def __len__(self) -> int:
        with self._lock:
            self._expire()
            return len(self._entries)

    @property
    def nbytes(self) -> int:
        """Memory of the values kept, as measured when each was saved."""
        with self._lock:
            return sum(e.nbytes for e in self._entries.values())

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def _freeze_gone(self) -> None:
        """Keep the values of owners that are gone as dump(value), so that no live object stays pinned."""
        with self._lock:  # each value read with the lock held: another thread may be freezing it too
            gone = [(t, e, e.value) for t, e in self._entries.items()
                    if not e.frozen and e.owner and not self.is_connected(e.owner)]
        for token, entry, value in gone:
            kept, version = self._dump(value), self._version(value)
            with self._lock:
                if self._entries.get(token) is entry and entry.value is value:
                    entry.value, entry.frozen = kept, True
                    entry.nbytes = len(kept) if isinstance(kept, bytes) else self._size(kept)
                    write = self.disk is not None and entry.version != version  # its last state, not yet written
                    if write:
                        entry.version, entry.dumped = version, self._clock()
                else:
                    write = False
            if write:
                self.disk.write(token, kept, entry.client)

    def flush(self) -> int:
        """Write every kept value that changed since it was last written (a value saved while it trains is written
        at most every ``every_s`` seconds), so that stopping the server loses nothing; how many were written."""
        if self.disk is None:
            return 0
        written = self._write_pending()
        self._freeze_gone()
        with self._lock:
            live = [(t, e, e.value) for t, e in self._entries.items() if not e.frozen]
        for token, entry, value in live:
            version = self._version(value)
            with self._lock:
                if entry.version == version or self._entries.get(token) is not entry:
                    continue
                entry.version, entry.dumped = version, self._clock()
            written += self.disk.write(token, self._dump(value), entry.client)
        return written

    def _write_later(self, token: str | None) -> None:
        """Have the writer thread write ``token``'s value (when given) and keep gone owners' values as bytes."""
        with self._lock:
            if token is not None:
                self._pending.add(token)
            if self._writer is None:
                self._writer = threading.Thread(target=self._write_forever, name="rnnlab-kept-runs", daemon=True)
                self._writer.start()
        self._wake.set()

    def _write_forever(self) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()
            try:
                self._write_pending()
                self._freeze_gone()
            except Exception:  # a value that cannot be dumped must not end the writer
                logging.getLogger(__name__).exception("could not keep a run")

    def _write_pending(self) -> int:
        """Write the values saved since the writer's last turn; how many were written."""
        with self._lock:
            tokens, self._pending = self._pending, set()
        written = 0
        for token in tokens:
            with self._lock:
                entry = self._entries.get(token)
                if entry is None or self.disk is None:
                    continue
                value, frozen, client = entry.value, entry.frozen, entry.client
            written += self.disk.write(token, value if frozen else self._dump(value), client)
        return written

    def live_tokens(self) -> list[str]:
        """The tokens whose owners are connected now."""
        with self._lock:
            owned = [(t, e.owner) for t, e in self._entries.items() if e.owner]
        return [t for t, owner in owned if self.is_connected(owner)]

    def _publish_live(self, now: bool = False) -> None:
        """Start, once, the thread that lists this process's connected tokens in the runs folder every
        :data:`LIVE_EVERY_S` seconds, for the other processes sharing it; with ``now`` (a token newly held here),
        list them at once too, so that no other process takes the token in the moment before the thread's next
        turn."""
        if self.disk is None:
            return
        if now:
            self.disk.publish_live(self.live_tokens())
        if self._publisher is not None:
            return
        with self._lock:
            if self._publisher is not None:
                return
            self._publisher = threading.Thread(target=self._publish_forever, name="rnnlab-live-tabs", daemon=True)
        self._publisher.start()

    def _publish_forever(self) -> None:
        while self.disk.folder.is_dir():  # a folder removed (a test's): nothing to tell anyone
            self.disk.publish_live(self.live_tokens())
            time.sleep(LIVE_EVERY_S)

    def _load(self, token: str) -> None:
        """A value saved on disk by an earlier server process, taken into memory (nobody owns it yet)."""
        if self.disk is None:
            return
        with self._lock:
            if token in self._entries:
                return
        kept = self.disk.read(token)
        if kept is None:
            return
        with self._lock:
            if token not in self._entries:
                self._entries[token] = Entry("", kept, len(kept), self._clock(), frozen=True)
                self._evict()

    # ---- internals (with the lock held) --------------------------------------------------------------
    def _expire(self) -> None:
        cutoff = self._clock() - self.ttl_s
        for token in [t for t, e in self._entries.items() if e.touched < cutoff]:
            del self._entries[token]

    def _evict(self) -> None:
        total = sum(e.nbytes for e in self._entries.values())
        while self._entries and (len(self._entries) > self.max_entries or total > self.max_bytes):
            machine = greediest([(address_of(e.client), e.nbytes) for e in self._entries.values()])
            client = greediest([(e.client, e.nbytes) for e in self._entries.values()
                                if address_of(e.client) == machine])
            token = next(t for t, e in self._entries.items() if e.client == client)  # its least recently used
            total -= self._entries.pop(token).nbytes


# The server's, shared by every session in this process: runs kept as bytes (no compiled program pinned),
# dumped at most every 10 s while they train, and written to disk too, by a thread of its own (a page never waits).
STORE = SessionStore(disk=default_folder(), dump=run_to_bytes, load=run_from_bytes, version=run_version,
                     every_s=WRITE_EVERY_S, background=True)
# At exit (SIGTERM included: Streamlit stops its sessions, the training threads end their call, then this runs),
# every run is written as far as it was trained.
atexit.register(STORE.flush)
