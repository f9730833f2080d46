"""The server-side store that gives a tab its run back after a browser reload."""

import threading
import time
from pathlib import Path

import pytest

from rnnlab.server.storage.session_store import STORE, TOKEN_PARAM, SessionStore, new_token, valid_token


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Value:
    def __init__(self, nbytes: int = 10) -> None:
        self._nbytes = nbytes

    def nbytes(self) -> int:
        return self._nbytes


def nobody(session: str) -> bool:
    return False


def everybody(session: str) -> bool:
    return True


def test_tokens_are_random_and_checked():
    tokens = {new_token() for _ in range(100)}
    assert len(tokens) == 100 and all(valid_token(t) for t in tokens)
    for bad in (None, "", "short", "a" * 65, "has space in it!!!!!", "../../etc/passwd0000", 123, ["x" * 20]):
        assert not valid_token(bad)
    assert TOKEN_PARAM == "sid" and isinstance(STORE, SessionStore)
    store = SessionStore()
    with pytest.raises(ValueError):
        store.save("bad token", "s1", Value())
    assert store.claim("bad token", "s2", nobody) is None and store.claim(None, "s2", nobody) is None


def test_a_reload_takes_the_run_over_once_the_owner_is_gone():
    store, token, run = SessionStore(), new_token(), Value()
    assert store.save(token, "old", run)
    assert store.claim(token, "new", is_connected={"old"}.__contains__) is None  # the owner is still there
    assert store.owner(token) == "old"
    assert store.claim(token, "new", is_connected=nobody) is run  # the old page's connection closed
    assert store.owner(token) == "new"
    # the old session, should it reconnect, no longer owns the token and must continue under a new one
    assert not store.save(token, "old", Value())
    assert store.claim(token, "new", everybody) is run  # the owner itself may always take it again
    assert store.claim(new_token(), "new", nobody) is None  # an unknown token gives nothing


def test_a_copied_address_never_reaches_a_connected_owner():
    store, token, run = SessionStore(), new_token(), Value()
    store.save(token, "owner", run)
    for _ in range(3):
        assert store.claim(token, "someone else", is_connected=everybody) is None
    assert store.owner(token) == "owner"
    assert store.save(token, "owner", run)  # and the owner goes on saving


def test_grace_period_waits_for_the_old_connection_to_close():
    store, token, run = SessionStore(), new_token(), Value()
    store.save(token, "old", run)
    connected = {"old"}
    threading.Timer(0.3, connected.clear).start()
    assert store.claim(token, "new", is_connected=connected.__contains__, grace_s=5.0, poll_s=0.05) is run
    store.save(token, "new", run)
    assert store.claim(token, "third", is_connected=everybody, grace_s=0.2, poll_s=0.05) is None


def test_entries_expire_after_the_ttl():
    clock = Clock()
    store, token = SessionStore(ttl_s=100.0, clock=clock), new_token()
    store.save(token, "a", Value())
    clock.now = 99.0
    assert token in store and store.claim(token, "a", nobody) is not None  # a take-over renews the time
    clock.now = 198.0
    assert token in store
    clock.now = 200.0
    assert token not in store and len(store) == 0 and store.claim(token, "b", nobody) is None


def test_bounded_by_count_and_memory_least_recently_used_first():
    store = SessionStore(max_entries=3, max_bytes=1000)
    tokens = [new_token() for _ in range(5)]
    for token in tokens[:3]:
        store.save(token, "s", Value(100))
    store.claim(tokens[0], "s", nobody)  # used: now the most recent
    store.save(tokens[3], "s", Value(100))
    assert [t in store for t in tokens[:4]] == [True, False, True, True]
    store.save(tokens[4], "s", Value(900))  # over the memory bound: the oldest go first
    assert [t in store for t in tokens] == [False, False, False, True, True] and store.nbytes == 1000
    store.save(tokens[0], "s", Value(5000))  # larger than the whole bound: not kept at all
    assert tokens[0] not in store and tokens[4] in store


def test_discard_only_by_the_owner():
    store, token = SessionStore(), new_token()
    store.save(token, "a", Value())
    store.discard(token, "b")
    assert token in store
    store.discard(token, "a")
    assert token not in store
    store.discard(None, "a")  # nothing to do


def test_a_real_run_is_sized_by_what_it_holds():
    from rnnlab.config import Config
    from rnnlab.training.train import Run

    run = Run(Config(seq_len=10, batch=4, features=8, steps=10, chunk=5))
    before = run.nbytes()
    run.train()
    store, token = SessionStore(), new_token()
    store.save(token, "s", run)
    assert store.nbytes == run.nbytes() > before > 0


@pytest.mark.parametrize("env, mb", [("64", 64), ("abc", 512), ("-1", 512), ("nan", 512), ("inf", 512)])
def test_store_size_from_the_environment(monkeypatch, env, mb):
    from rnnlab.server.storage.session_store import _max_bytes_from_env

    monkeypatch.setenv("RNNLAB_SESSION_STORE_MB", env)
    assert _max_bytes_from_env() == mb * 2**20


def test_one_client_filling_the_store_evicts_its_own_runs_not_a_students():
    store = SessionStore(max_entries=10, max_bytes=1000)
    student = new_token()
    store.save(student, "student-tab", Value(100), client="ip:10.0.0.7")
    for _ in range(24):  # another client keeps run after run
        store.save(new_token(), f"tab-{_}", Value(100), client="ip:10.0.0.9")
    assert student in store and store.nbytes <= 1000 and len(store) == 10


def run_store(folder, **kwargs) -> SessionStore:
    from rnnlab.server.storage.run_files import RunFolder, run_from_bytes, run_to_bytes, run_version

    return SessionStore(disk=RunFolder(folder), dump=run_to_bytes, load=run_from_bytes, version=run_version,
                        **kwargs)


def test_a_kept_run_survives_a_crash_and_a_new_server_gives_it_back(tmp_path):
    """Written atomically to disk as it trains; a new process's store reads it for the tab's token."""
    from rnnlab.config import Config
    from rnnlab.server.storage.run_files import address_tag, client_tag
    from rnnlab.training.train import Run

    config = Config(seq_len=12, batch=8, features=8, steps=40, chunk=10)
    whole = Run(config)
    whole.train()
    run, token = Run(config), new_token()
    run.train(callback=lambda p: p.step < 20)
    before = run_store(tmp_path)
    assert before.save(token, "tab", run)
    live = before.disk.live_path().name  # the live tabs' list, and its partial while it is rewritten, aside
    kept = [p.name for p in tmp_path.iterdir() if not p.name.lstrip(".").startswith(live.lstrip("."))]
    assert kept == [f"{token}.{address_tag('tab')}.{client_tag('tab')}.run"]  # no partial file left
    after = run_store(tmp_path)  # the server after kill -9: nothing in memory
    back = after.claim(token, "reloaded-tab", everybody)  # the old owner is unknown to the new server
    assert back is not None and back.step == 20 and back.history.steps_df().equals(run.history.steps_df())
    back.train()
    assert back.history.steps_df().equals(whole.history.steps_df())  # it goes on as if nothing happened
    after.discard(token, "reloaded-tab")
    assert not list(tmp_path.glob("*.run"))
    assert not [p for p in tmp_path.glob("*.tmp") if not p.name.lstrip(".").startswith(live.lstrip("."))]


def test_a_gone_tabs_run_is_kept_as_bytes_and_written_to_disk_at_most_every_10_s(tmp_path):
    from rnnlab.config import Config
    from rnnlab.server.storage.run_files import RunFolder
    from rnnlab.training.train import Run

    clock, connected = Clock(), {"tab"}
    store = run_store(tmp_path, clock=clock, every_s=10, is_connected=lambda s: s in connected)
    run, token = Run(Config(seq_len=12, batch=8, features=8, steps=40, chunk=10)), new_token()
    store.save(token, "tab", run, throttle=True)
    kept = RunFolder(tmp_path).path(token, "tab")
    written = folder_time = kept.stat().st_mtime_ns
    run.run_call()
    store.save(token, "tab", run, throttle=True)  # changed, but within 10 s of the last write
    assert kept.stat().st_mtime_ns == written
    store.save(token, "tab", run)  # not throttled (the training ended): written
    assert kept.stat().st_mtime_ns != folder_time
    assert store._entries[token].value is run
    connected.clear()  # the tab closed
    store.save(new_token(), "other", Run(Config(seq_len=12, batch=8, features=8, steps=40, chunk=10)))
    entry = store._entries[token]
    assert entry.frozen and isinstance(entry.value, bytes)  # no compiled program is pinned by it
    back = store.claim(token, "reloaded", lambda s: False)
    assert back.step == run.step and back is not run
    kept.write_bytes(b"not a run")
    assert RunFolder(tmp_path).read(token) is None and kept.exists()  # unreadable: left in place
    small = RunFolder(tmp_path, max_bytes=1)  # over the bound: the oldest files go
    small.write(new_token(), b"x" * 10)
    assert len(list(tmp_path.glob("*.run"))) <= 1


def test_values_left_by_closed_tabs_are_frozen_safely_while_sessions_save_at_once():
    import threading
    import time

    dumped, connected = [], {}

    def slow_dump(value):
        dumped.append(value)  # a value dumped already would be bytes here
        time.sleep(0.2 if value == "the run 0" else 0.01)  # a dump may wait (for a call on a shared run)
        return b"bytes of " + value.encode()

    store = SessionStore(dump=slow_dump, load=bytes.decode, size=len,
                         is_connected=lambda session: connected.get(session, True))
    connected.update({f"owner {i}": True for i in range(3)})
    for i in range(3):
        store.save(new_token(), f"owner {i}", f"the run {i}")
    for i in range(3):
        connected[f"owner {i}"] = False  # the tabs closed; every later save freezes what their owners left
    threads = [threading.Thread(target=store.save, args=(new_token(), f"s{i}", f"run {i}")) for i in range(8)]
    for t in threads:
        t.start()
        time.sleep(0.02)  # staggered: one session reads a value while another is freezing it
    for t in threads:
        t.join()
    assert all(isinstance(v, str) for v in dumped) and {f"the run {i}" for i in range(3)} <= set(dumped)


def test_kept_runs_are_private_synced_and_partials_never_collide(tmp_path, monkeypatch):
    import os
    import stat

    from rnnlab.server.storage import run_files
    from rnnlab.server.storage.run_files import RunFolder

    folder = tmp_path / "runs"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)  # made open by someone before the server started
    partials, synced = [], []
    real_open, real_fsync = os.open, os.fsync

    def recording_open(path, flags, mode=0o777, **kw):
        if str(path).endswith(".tmp"):
            partials.append((Path(path).name, flags, mode))
        return real_open(path, flags, mode, **kw)

    monkeypatch.setattr(run_files.os, "open", recording_open)
    monkeypatch.setattr(run_files.os, "fsync", lambda fd: synced.append(fd) or real_fsync(fd))
    runs, token = RunFolder(folder), new_token()
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert runs.write(token, b"first", "client a") and runs.write(token, b"second", "client a")
    (path,) = runs.files(token)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and path.read_bytes() == b"second"
    assert len(synced) >= 4  # each file before its rename, and the folder after it
    names = [name for name, _, _ in partials]
    assert len(set(names)) == 2 and all(flags & os.O_EXCL and mode == 0o600 for _, flags, mode in partials)
    assert all(os.uname().nodename in name and str(os.getpid()) in name for name in names)  # unique per machine


def test_stale_partials_are_removed_at_start_and_fresh_ones_kept(tmp_path):
    import os
    import time

    from rnnlab.server.storage.run_files import STALE_PARTIAL_S, RunFolder

    stale, fresh = tmp_path / ".tok.host.1.aa.tmp", tmp_path / ".tok.host.2.bb.tmp"
    for path in (stale, fresh):
        path.write_bytes(b"half a run")
    old = time.time() - STALE_PARTIAL_S - 60
    os.utime(stale, (old, old))
    RunFolder(tmp_path)
    assert not stale.exists() and fresh.exists()  # another process may be writing the fresh one now


def test_a_full_folder_prunes_the_client_holding_most_first(tmp_path):

    from rnnlab.server.storage.run_files import RunFolder

    runs = RunFolder(tmp_path, max_bytes=10_000)
    students = [new_token() for _ in range(3)]
    for i, token in enumerate(students):  # the oldest files
        runs.write(token, b"s" * 1000, f"student {i}")
    minted = [new_token() for _ in range(12)]
    for token in minted:  # one client with many tokens fills the folder
        runs.write(token, b"m" * 1000, "one client")
    assert all(runs.files(token) for token in students)  # the others' runs stay
    kept = [token for token in minted if runs.files(token)]
    assert len(kept) == 7 and kept == minted[-7:]  # its own oldest went
    assert sum(p.stat().st_size for p in tmp_path.glob("*.run")) <= 10_000


def test_a_copied_address_opened_in_another_process_gets_a_copy_never_the_owners_file(tmp_path, monkeypatch):
    """Two web processes sharing a runs folder: the owner's tab is connected in the first; the second, reached with
    the same token, waits for the first's list of live tabs to go stale, and since it does not, makes a copy."""
    from rnnlab.config import Config
    from rnnlab.server.storage import run_files, session_store
    from rnnlab.server.storage.run_files import RunFolder, run_from_bytes, run_to_bytes, run_version
    from rnnlab.training.train import Run

    monkeypatch.setattr(run_files, "LIVE_FRESH_S", 1.0)
    monkeypatch.setattr(session_store, "LIVE_FRESH_S", 1.0)
    monkeypatch.setattr(session_store, "LIVE_EVERY_S", 0.2)
    owner_connected = {"on": True}

    def store(name, connected):
        return SessionStore(disk=RunFolder(tmp_path, process=name), dump=run_to_bytes, load=run_from_bytes,
                            version=run_version, is_connected=connected)

    first = store("web1", lambda s: owner_connected["on"])
    second = store("web2", lambda s: True)
    run, token = Run(Config(seq_len=12, batch=8, features=8, steps=40, chunk=10)), new_token()
    run.train(callback=lambda p: p.step < 20)
    assert first.save(token, "owner", run)
    owners_file = first.disk.files(token)
    assert second.claim(token, "copier", lambda s: False) is None  # held by a connected tab of web1
    copied = second.copy(token)
    assert copied is not None and copied.step == 20 and copied is not run
    mine = new_token()
    assert second.save(mine, "copier", copied.fork())
    assert first.disk.files(token) == owners_file and second.disk.files(mine) != owners_file
    owner_connected["on"] = False  # the owner's tab closed: web1's list no longer names the token
    back = second.claim(token, "reconnected", lambda s: False)
    assert back is not None and back.step == 20


def test_a_dead_processs_live_list_goes_stale(tmp_path):
    import os
    import time

    from rnnlab.server.storage.run_files import LIVE_FRESH_S, RunFolder

    dead, alive = RunFolder(tmp_path, process="dead"), RunFolder(tmp_path, process="alive")
    dead.publish_live(["tok-one", "tok-two"])
    assert alive.held_elsewhere("tok-one") and not alive.held_elsewhere("tok-three")
    assert not dead.held_elsewhere("tok-one")  # its own list
    old = time.time() - LIVE_FRESH_S - 1
    os.utime(dead.live_path(), (old, old))
    assert not alive.held_elsewhere("tok-one")


def test_kept_runs_are_fair_per_address_then_per_browser(tmp_path):
    """One machine making up browser ids (40 of them, each keeping a 206 KB run) and a student's 696 KB trained run:
    when the folder and the store are full, the machine's runs go first, however many ids it made."""
    from rnnlab.server.access.clients import at_address
    from rnnlab.server.storage.run_files import RunFolder

    student = at_address("browser:1796000000-student-0000-0000-000000000000", "10.0.0.7")
    minted = [at_address(f"browser:1796000000-minted-{i:04d}-0000-000000000000", "10.0.0.66") for i in range(40)]
    runs = RunFolder(tmp_path, max_bytes=5_000_000)
    store = SessionStore(max_entries=200, max_bytes=5_000_000)
    mine = new_token()
    runs.write(mine, b"s" * 696_000, student)  # the oldest file, and the largest of any one browser
    store.save(mine, "student-tab", Value(696_000), client=student)
    tokens = [new_token() for _ in minted]
    for token, client in zip(tokens, minted):
        runs.write(token, b"m" * 206_000, client)
        store.save(token, f"tab-{token}", Value(206_000), client=client)
    assert runs.files(mine) and mine in store  # the student's run stays
    assert sum(p.stat().st_size for p in tmp_path.glob("*.run")) <= 5_000_000 and store.nbytes <= 5_000_000
    kept = [token for token in tokens if runs.files(token)]
    assert kept == tokens[-len(kept):] and len(kept) < 40  # the machine's own oldest went


def test_a_kept_run_that_cannot_be_read_now_stays_in_place(tmp_path, monkeypatch):
    from rnnlab.server.storage.run_files import RunFolder

    runs, token = RunFolder(tmp_path), new_token()
    runs.write(token, b"not a run", "ip:10.0.0.7")
    (path,) = runs.files(token)
    assert runs.read(token) is None and path.exists()  # not a run of this version: left, age removes it
    real_read = Path.read_bytes

    def failing(self):
        if self == path:
            raise OSError(5, "Input/output error")  # a transient error (a network file system's hiccup)
        return real_read(self)

    monkeypatch.setattr(Path, "read_bytes", failing)
    assert runs.read(token) is None and path.exists()


def test_a_runs_folder_of_another_user_or_a_link_is_not_used(tmp_path, monkeypatch, caplog):
    import os

    from rnnlab.server.storage.run_files import RunFolder, default_folder

    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o700)
    link = tmp_path / "runs-link"
    link.symlink_to(target)
    with pytest.raises(PermissionError, match="not a folder"):
        RunFolder(link)
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o700)
    if os.geteuid() == 0:
        os.chown(theirs, 12345, 12345)  # made by another user
        with pytest.raises(PermissionError, match="belongs to user 12345"):
            RunFolder(theirs)
    monkeypatch.setenv("RNNLAB_RUNS_DIR", str(link))
    assert default_folder() is None and "cannot be used" in caplog.text  # one warning; nothing written there
    assert not any(target.iterdir())


def test_flush_writes_what_trained_since_the_last_throttled_write_and_a_closed_tabs_last_state(tmp_path):
    """What the server does at exit (SIGTERM included): every run on disk as far as it was trained."""
    from rnnlab.config import Config
    from rnnlab.server.storage.run_files import RunFolder, run_from_bytes
    from rnnlab.training.train import Run

    clock, connected = Clock(), {"open", "closing"}
    store = run_store(tmp_path, clock=clock, every_s=10, is_connected=lambda s: s in connected)
    config = Config(seq_len=12, batch=8, features=8, steps=40, chunk=10)
    tokens = {"open": new_token(), "closing": new_token()}
    runs = {tab: Run(config) for tab in tokens}
    for tab, run in runs.items():
        store.save(tokens[tab], tab, run, throttle=True)
        run.run_call()
        store.save(tokens[tab], tab, run, throttle=True)  # within 10 s of the last write: not written
    folder = RunFolder(tmp_path)
    assert {run_from_bytes(folder.read(t)).step for t in tokens.values()} == {0}
    connected.discard("closing")  # this tab closed while its run was ahead of its file
    assert store.flush() == 1  # the open tab's run; the closed one's is written as it is kept as bytes
    assert {tab: run_from_bytes(folder.read(t)).step for tab, t in tokens.items()} == \
        {tab: run.step for tab, run in runs.items()}
    assert store.flush() == 0  # nothing changed since


def test_a_background_store_writes_in_its_own_thread_and_flush_writes_what_is_pending(tmp_path):
    """The server's store: a page saving its run waits for no dump and no disk; flush (at exit) writes at once."""
    from rnnlab.config import Config
    from rnnlab.server.storage.run_files import RunFolder, run_from_bytes, run_to_bytes
    from rnnlab.training.train import Run

    dumped_in: list[str] = []
    store = run_store(tmp_path, every_s=10, background=True)
    store._dump = lambda run: dumped_in.append(threading.current_thread().name) or run_to_bytes(run)
    run, token = Run(Config(seq_len=12, batch=8, features=8, steps=40, chunk=10)), new_token()
    folder = RunFolder(tmp_path)
    store.save(token, "tab", run)
    for _ in range(400):
        if folder.read(token) is not None:
            break
        time.sleep(0.05)
    assert run_from_bytes(folder.read(token)).step == 0 and dumped_in == ["rnnlab-kept-runs"]
    run.run_call()
    store.save(token, "tab", run)  # not throttled: written by the writer thread, or by flush if it comes first
    store.flush()
    assert run_from_bytes(folder.read(token)).step == run.step == 10
