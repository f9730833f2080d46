"""Identical runs computed once: sessions share the run of one configuration and seed."""

import threading
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from rnnlab.config import Config
from rnnlab.server.storage.run_files import forget_dumps, run_from_bytes, run_to_bytes
from rnnlab.server.work.gate import JobGate
from rnnlab.server.work.shared_runs import SharedRuns, max_bytes_from_env
from rnnlab.training.program import get_program
from rnnlab.training.train import Run

SMALL = Config(seq_len=20, batch=16, features=16, steps=60, chunk=10)


@pytest.fixture
def counted(monkeypatch):
    """The steps SMALL's compiled call computes, whoever calls it."""
    program = get_program(SMALL)
    real, steps = program.train_steps, []

    def counting(state, lr, clip, scale, n_active):
        steps.append(int(n_active))
        return real(state, lr, clip, scale, n_active)

    counting._cache_size = real._cache_size  # still compiled, as far as the run can tell
    monkeypatch.setattr(program, "train_steps", counting)
    return steps


def watch_until_done(registry: SharedRuns, run: Run, started: threading.Barrier | None = None) -> Run:
    """What a session's training loop does: join, take turns with the other watchers, leave with a run."""
    watch = registry.join(run)
    assert watch is not None
    if started is not None:
        started.wait()
    with watch:
        while not watch.lead.done:
            if watch.lead.run_call(0.05, wait=False) is None:
                watch.lead.settle(5.0)
    return watch.lead if watch.last else watch.lead.fork()


def test_sessions_training_one_configuration_compute_each_step_once(counted):
    whole = Run(SMALL).train()
    counted.clear()
    registry = SharedRuns()
    started = threading.Barrier(3)
    runs = [Run(SMALL) for _ in range(3)]
    kept: list[Run] = []
    threads = [threading.Thread(target=lambda r=r: kept.append(watch_until_done(registry, r, started)))
               for r in runs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert sum(counted) == SMALL.steps  # three sessions, every step computed once
    assert len(kept) == 3 and len({id(r) for r in kept}) == 3  # each session leaves with its own run
    for run in kept:
        assert run.done
        pd.testing.assert_frame_equal(run.history.steps_df(), whole.steps_df(), check_exact=True)
        pd.testing.assert_frame_equal(run.history.chunks_df(), whole.chunks_df(), check_exact=True)


def test_a_later_session_gets_the_finished_run_at_once_and_one_midway_the_history_so_far(counted):
    registry = SharedRuns()
    first = Run(SMALL)
    watch = registry.join(first)
    with watch:
        first.run_call()
        first.run_call()
        midway = registry.copy_of(SMALL)  # a session arriving now: the history so far, its own copy
        assert midway is not first and midway.step == 20 and midway.history.chunks == first.history.chunks
        joined = registry.join(midway)  # and then follows the run in flight
        assert joined.lead is first
        joined.leave()
        while not first.done:
            first.run_call()
    assert watch.last and registry.watchers(first) == 0
    counted.clear()
    later = registry.copy_of(SMALL)
    assert later is not None and later.done and later.step == SMALL.steps and counted == []
    later.fork()  # reading a copy never touches the lead
    assert registry.copy_of(SMALL, after_step=SMALL.steps) is None  # nothing further than what one has


def test_a_run_whose_settings_changed_or_that_started_from_parameters_is_not_shared():
    registry = SharedRuns()
    run = Run(SMALL)
    assert registry.join(run) is not None and registry.is_lead(run)
    registry.join(run).leave()
    run.update(steps=SMALL.steps)  # no change: still the same run
    assert run.pristine and registry.copy_of(SMALL) is not None
    run.update(lr=SMALL.lr / 2)  # its history now mixes two learning rates
    assert not run.pristine
    assert registry.copy_of(SMALL) is None and registry.join(run) is None and len(registry) == 0
    loaded = Run(SMALL, params=Run(SMALL).params, origin="a file")
    assert not loaded.pristine and registry.join(loaded) is None


def test_a_shared_run_holds_one_slot_until_its_last_watcher_leaves():
    registry, slots = SharedRuns(), JobGate(limit=1, budget=lambda: 2**40)
    run = Run(SMALL)
    a, b = registry.join(run), registry.join(Run(SMALL))
    assert a.lead is b.lead is run and registry.watchers(run) == 2
    assert a.needs_slot() and b.needs_slot()
    blocker = slots.ticket(0, "training", "someone else")
    assert blocker.wait(0)  # the only slot is busy: the run waits in the queue
    ticket = a.waiting_ticket(lambda: slots.ticket(0, "training", "client a"))
    assert b.waiting_ticket(lambda: slots.ticket(0, "training", "client b")) is ticket  # one place for the run
    assert slots.counts() == (1, 1) and ticket.position == 1
    blocker.release()
    assert ticket.wait(0) and b.hold(ticket) and a.hold(ticket)  # whoever sees it admitted first; then no-op
    assert not b.needs_slot()  # the second session starts without a slot of its own
    late = slots.ticket(0, "training", "client b")
    assert not late.wait(0) or not b.hold(late)  # a second ticket is never held for the same run
    late.release()
    assert not a.leave() and slots.counts() == (1, 0)  # the first leaves: the other still watches
    assert b.leave() and slots.counts() == (0, 0)  # the last one frees the slot


def test_unwatched_leads_are_forgotten_beyond_the_bounds_and_watched_ones_are_kept(monkeypatch):
    registry = SharedRuns(max_runs=2)
    configs = [Config(seq_len=20, batch=16, features=16, steps=10, chunk=10, seed=s) for s in range(4)]
    watched = registry.join(Run(configs[0]))
    for config in configs[1:]:
        registry.join(Run(config)).leave()
    assert len(registry) == 3 and registry.is_lead(watched.lead)  # two unwatched kept: the oldest went first
    assert registry.copy_of(configs[3]) is not None and registry.copy_of(configs[1]) is None
    watched.leave()
    monkeypatch.setenv("RNNLAB_SHARED_RUNS_MB", "1.5")
    assert max_bytes_from_env() == int(1.5 * 2**20)
    for bad in ("-1", "nan", "lots"):
        monkeypatch.setenv("RNNLAB_SHARED_RUNS_MB", bad)
        assert max_bytes_from_env() == 256 * 2**20
    tiny = SharedRuns(max_bytes=1)
    tiny.join(Run(configs[0])).leave()
    assert len(tiny) == 0  # too big for the bound once nobody watches it


def test_a_shared_run_can_be_saved_while_another_thread_trains_it():
    run = Run(Config(seq_len=200, batch=32, features=32, steps=40, chunk=40))
    thread = threading.Thread(target=run.train)
    thread.start()
    saved = [run_to_bytes(run) for _ in range(5)]  # waits for each call in progress, never reads a donated buffer
    thread.join(120)
    for data in saved:
        copy = run_from_bytes(data)
        assert copy.pristine and len(copy.history.steps) == copy.step
        np.testing.assert_array_equal(copy.history.steps_df()["loss"], run.history.steps_df()["loss"][:copy.step])
    run.update(lr=run.config.lr / 2)
    assert not run_from_bytes(run_to_bytes(run)).pristine


def test_the_tabs_copies_of_a_pristine_run_are_dumped_once_and_equal_a_run_trained_apart():
    forget_dumps()
    run = Run(SMALL)
    run.train()
    first, second = run.fork(), run.fork()
    assert run_to_bytes(first) is run_to_bytes(second)  # one dump for a class's copies
    forget_dumps()
    apart = Run(SMALL)
    while not apart.done:  # other calls: a step at a time
        apart.run_call(max_seconds=1e-4)
    assert run_to_bytes(apart) == run_to_bytes(run)  # what the kept bytes stand for: the configuration's run
    changed = run.fork()
    changed.update(lr=SMALL.lr / 2)
    assert run_to_bytes(changed) is not run_to_bytes(changed)  # not pristine: dumped each time
    assert not run_from_bytes(run_to_bytes(changed)).pristine


def test_a_view_is_consistent_while_another_thread_trains():
    run = Run(Config(seq_len=20, batch=16, features=16, steps=400, chunk=5))
    thread = threading.Thread(target=run.train)
    thread.start()
    while thread.is_alive():
        view = run.view()
        h = view.history
        assert len(h.chunks) == len(h.per_step_loss) == len(h.carry["h"])
        assert view.step == (h.steps[-1]["step"] if h.steps else 0)
    thread.join()
    assert run.run_call(wait=False).step == 400 and run.step == 400  # a finished run trains no further


def test_a_link_copied_by_a_class_outlasts_many_single_students_runs():
    registry = SharedRuns(max_runs=3)
    link = Run(SMALL)
    registry.offer(link)
    for _ in range(10):
        assert registry.copy_of(SMALL) is not None
    for seed in range(1, 8):  # students' own runs, each trained and left
        with registry.join(Run(replace(SMALL, seed=seed))) as watch:
            assert watch is not None
    assert registry.is_lead(link) and len(registry) == 3


def test_a_link_outlasts_a_queue_of_students_runs_longer_than_the_bound():
    registry = SharedRuns(max_runs=3)
    link = Run(SMALL)
    registry.offer(link)
    assert registry.copy_of(SMALL) is not None
    waiting = [registry.join(Run(replace(SMALL, seed=seed))) for seed in range(1, 8)]  # queued: watched, not trained
    assert registry.is_lead(link) and registry.copy_of(SMALL) is not None
    for watch in waiting:
        assert watch is not None
        watch.leave()
    assert registry.is_lead(link) and len(registry) == 3
