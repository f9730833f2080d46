"""The seam heavy work goes through: jobs queue, run, report, finish, fail and are cancelled; results are computed
once; a forced cancel kills a compile worker; the executor is chosen by RNNLAB_EXECUTOR."""

from __future__ import annotations

import os
import sys
import threading
import time

import pytest

from rnnlab.config import Config
from rnnlab.server.work import embedded as embedded_executor
from rnnlab.server.work import executors, jobs, precompile, reporting
from rnnlab.server.work.embedded import EmbeddedExecutor
from rnnlab.server.work.executor import CANCELLED, DONE, FAILED, QUEUED, RUNNING, Cancelled, Work
from rnnlab.server.work.gate import JobGate
from rnnlab.server.work.results import Results
from rnnlab.server.work.shared_runs import SharedRuns

GB = 2**30
RELEASE = threading.Event()
CALLS: list[str] = []


def blocked(value: str = "done") -> str:
    """Waits until the test lets it go (RELEASE), reporting; then returns ``value``."""
    CALLS.append(value)
    while not RELEASE.wait(0.01):
        reporting.report(0.5, "waiting")
    return value


def pieces(count: int, done: list) -> list:
    """``count`` pieces of 20 ms each, reporting between them; what was computed goes into ``done``."""
    for i in range(count):
        time.sleep(0.02)
        done.append(i)
        reporting.report((i + 1) / count)
    return done


def pieces_kept(count: int, done: list) -> list:
    """As :func:`pieces`, but a stop request ends it early with what it computed (like a sweep)."""
    for i in range(count):
        time.sleep(0.02)
        done.append(i)
        if not reporting.keep_going((i + 1) / count):
            break
    return done


def fails() -> None:
    raise ZeroDivisionError("no")


def finish(job, timeout: float = 120.0) -> None:  # a deadline against hangs; a busy CI machine compiles slowly
    deadline = time.monotonic() + timeout
    while not job.poll(0.05):
        assert time.monotonic() < deadline, job.status


@pytest.fixture
def embedded():
    RELEASE.clear()
    CALLS.clear()
    gate = JobGate(limit=1, budget=lambda: 4 * GB, per_client=1)
    yield EmbeddedExecutor(gate=gate, runs=SharedRuns(), results=Results())
    RELEASE.set()


def test_a_job_is_queued_then_runs_then_is_done(embedded):
    first = embedded.submit(Work(blocked, ("first",), client="a"))
    assert first.status == QUEUED and not first.poll(0.2)
    assert first.status == RUNNING and first.progress == 0.5 and first.note == "waiting"
    second = embedded.submit(Work(blocked, ("second",), label="probe", client="b"))
    assert not second.poll(0.1) and second.status == QUEUED
    assert second.queue.position == 1 and second.queue.reason == "slots"
    assert str(second.queue.message).startswith("All 1 slots of this server are busy (1 running, 1 waiting)")
    RELEASE.set()
    finish(first)
    assert first.status == DONE and first.result() == "first" and first.queue is None
    finish(second)
    assert second.result() == "second" and embedded.gate().counts() == (0, 0)


def test_fair_shares_and_memory_are_the_reasons_given():
    gate = JobGate(limit=3, budget=lambda: 4 * GB, per_client=1)
    ex = EmbeddedExecutor(gate=gate, runs=SharedRuns(), results=Results())
    RELEASE.clear()
    try:
        mine = ex.submit(Work(blocked, client="me", memory_bytes=GB))
        big = ex.submit(Work(blocked, client="other", memory_bytes=3 * GB))
        assert not mine.poll(0.05) and not big.poll(0.05)
        again = ex.submit(Work(blocked, client="me"))
        assert not again.poll(0.05) and again.queue.reason == "share"
        assert "You already have 1 job running on this server" in str(again.queue.message)
        huge = ex.submit(Work(blocked, client="third", memory_bytes=2 * GB))
        assert not huge.poll(0.05) and huge.queue.reason == "memory"
        assert str(huge.queue.message).startswith("Waiting for memory: this needs about 2")
        for job in (mine, big, again, huge):
            job.cancel()
    finally:
        RELEASE.set()


def test_cancel_while_queued_leaves_the_queue(embedded):
    running = embedded.submit(Work(blocked))
    waiting = embedded.submit(Work(blocked, ("never",)))
    running.poll(0.05)
    waiting.poll(0.05)
    assert embedded.gate().counts() == (1, 1)
    waiting.cancel()
    assert waiting.status == CANCELLED and waiting.poll(0) and embedded.gate().counts() == (1, 0)
    with pytest.raises(Cancelled):
        waiting.result()
    RELEASE.set()
    finish(running)
    assert "never" not in CALLS


def test_gentle_cancel_stops_between_pieces_and_keeps_what_was_computed(embedded):
    done: list = []
    job = embedded.submit(Work(pieces_kept, (1000, done)))
    job.poll(0.2)
    job.cancel()
    finish(job)
    assert job.status == CANCELLED and job.result() is done and 0 < len(done) < 1000
    assert done == list(range(len(done))) and embedded.gate().counts() == (0, 0)
    raised: list = []
    other = embedded.submit(Work(pieces, (1000, raised)))
    other.poll(0.2)
    other.cancel()
    finish(other)
    with pytest.raises(Cancelled):
        other.result()
    assert 0 < len(raised) < 1000  # stopped at a report: what it computed is where it put it


def test_force_cancel_kills_a_compile_worker_at_once(embedded, monkeypatch, tmp_path):
    monkeypatch.setattr(precompile, "cache_folder", lambda: str(tmp_path))
    monkeypatch.setattr(precompile, "worker_command", lambda config: [sys.executable, "-c", "import time; "
                                                                      "time.sleep(120)"])
    started: list = []
    real = precompile.compile_in_worker

    def spying(config, should_stop, timeout_s=None, began=None):
        def seen(worker):
            started.append(worker)
            began(worker)
        return real(config, lambda: False, timeout_s, seen)  # it would never stop by itself

    monkeypatch.setattr(precompile, "compile_in_worker", spying)
    job = embedded.submit(Work(jobs.compile_program, (Config(),), kind="compile"))
    deadline = time.monotonic() + 20
    while not started and time.monotonic() < deadline:
        job.poll(0.05)
    worker = started[0]
    assert worker.poll() is None
    job.cancel(force=True)
    assert job.poll(0) and job.status == CANCELLED
    assert worker.wait(2) is not None and worker.returncode != 0
    with pytest.raises(ProcessLookupError):
        os.kill(worker.pid, 0)


def test_a_key_is_computed_once_and_the_second_session_waits_without_a_slot(embedded):
    first = embedded.submit(Work(blocked, ("shared",), key="k", client="a"))
    first.poll(0.1)
    assert first.status == RUNNING
    second = embedded.submit(Work(blocked, ("shared",), key="k", client="b"))
    assert not second.poll(0.1) and second.queue.reason == "result" and second.queue.position == 0
    assert embedded.gate().counts() == (1, 0)  # the one computing holds the only slot; the other waits without one
    RELEASE.set()
    finish(first)
    finish(second)
    assert second.result() == first.result() == "shared" and CALLS == ["shared"]
    third = embedded.submit(Work(blocked, ("shared",), key="k"))
    assert third.poll(0) and third.result() == "shared" and CALLS == ["shared"]


def test_an_exception_in_work_surfaces_and_frees_the_slot(embedded):
    job = embedded.submit(Work(fails, key="bad"))
    finish(job)
    assert job.status == FAILED and embedded.gate().counts() == (0, 0)
    with pytest.raises(ZeroDivisionError):
        job.result()
    assert not embedded.results().computing("bad") and embedded.results().get("bad") is None


def test_poll_never_blocks_past_its_timeout(embedded):
    running = embedded.submit(Work(blocked))
    waiting = embedded.submit(Work(blocked))
    keyed = embedded.submit(Work(blocked, key="slow"))
    for job in (running, waiting, keyed, running):
        for timeout in (0.0, 0.1):
            began = time.monotonic()
            assert not job.poll(timeout)
            assert time.monotonic() - began < timeout + 0.05


def test_work_must_be_a_module_level_function():
    with pytest.raises(ValueError, match="module-level"):
        Work(lambda: 1)


def test_an_unknown_executor_is_named_with_the_allowed_values(monkeypatch):
    monkeypatch.setenv("RNNLAB_EXECUTOR", "dask")
    with pytest.raises(ValueError, match=r"RNNLAB_EXECUTOR must be one of embedded, ray; got 'dask'"):
        executors.current_executor()
    monkeypatch.setenv("RNNLAB_EXECUTOR", "embedded")
    assert isinstance(executors.current_executor(), EmbeddedExecutor)
    monkeypatch.delenv("RNNLAB_EXECUTOR")
    assert isinstance(executors.current_executor(), EmbeddedExecutor)


def test_a_job_nobody_polls_is_cancelled(embedded, monkeypatch):
    done: list = []
    job = embedded.submit(Work(pieces, (1000, done)))
    job.poll(0.05)
    monkeypatch.setattr(embedded_executor, "LEFT_ALONE_S", 0.1)
    time.sleep(0.3)  # nobody polls: the work stops at its next report
    assert job.status == CANCELLED and len(done) < 1000
    assert embedded.gate().counts() == (0, 0)


def test_watchers_of_one_run_share_one_slot_and_its_training_calls():
    from rnnlab.training.train import Run

    gate = JobGate(limit=2, budget=lambda: 4 * GB, per_client=2)
    ex = EmbeddedExecutor(gate=gate, runs=SharedRuns(), results=Results())
    config = Config(seq_len=12, batch=8, features=8, steps=20, chunk=10)
    a = ex.run_lease(Run(config), "training", "a")
    b = ex.run_lease(Run(config), "training", "b")
    assert a.run is b.run and a.poll(1) and b.poll(1) and gate.counts() == (1, 0)
    lease = ex.lease(0, "solo", "c")
    assert lease.poll(1)  # the second slot is still free: the watchers hold one
    lease.release()
    while not a.run.done:
        finish(ex.submit(Work(jobs.call_job, (a.run, None), kind="train call"), lease=a))
    assert b.run.step == 20
    mine = b.release()
    assert mine is not a.run and mine.step == 20 and gate.counts() == (1, 0)  # a copy; a still trains it
    assert a.release() is a.run and gate.counts() == (0, 0)
