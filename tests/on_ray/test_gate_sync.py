"""The gate actor's protocol without a cluster: RemoteGate over a GateActor called in this process. One sync per
poll interval serves every ticket and every reader of a web process; an actor that restarts learns the live
tickets again (admitted ones as admitted) and admits nothing before its owners have told it, so none is admitted
twice, even when the owner of the admitted ticket is late."""

from __future__ import annotations

import threading
import time
from collections import Counter

import pytest

pytest.importorskip("ray", reason="Ray is not installed: pip install -r requirements-ray.txt")

from rnnlab.server.on_ray import gate_actor as ray_actors
from rnnlab.server.work.embedded import EmbeddedExecutor
from rnnlab.server.work.executor import Work
from rnnlab.server.work.gate import queue_message

POLL_S = 0.05


class Box:
    """The one gate actor of a test (replaced by a new one to restart it), and the calls it was sent."""

    def __init__(self, actor: ray_actors.GateActor):
        self.actor, self.calls, self.away = actor, Counter(), set()


class LocalGate(ray_actors.RemoteGate):
    """A RemoteGate whose calls reach a GateActor in this process (an owner in ``box.away`` is unreachable)."""

    def __init__(self, box: Box):
        self.box = box
        super().__init__(None, poll_s=POLL_S, idle_poll_s=POLL_S)

    def call(self, method, *args):
        if self.owner in self.box.away:
            raise TimeoutError("the gate does not answer")
        self.box.calls[method] += 1
        return getattr(self.box.actor, method)(*args)


def new_actor(limit: int = 1, recover_s: float = 0.5) -> ray_actors.GateActor:
    return ray_actors.GateActor(limit, 2**40, per_client=1, lease_s=5.0, recover_s=recover_s)


def until(condition, timeout_s: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_one_sync_per_poll_interval_serves_all_tickets_and_readers():
    box = Box(new_actor(limit=1))
    gate = LocalGate(box)
    tickets = [gate.ticket(1, "training", client=f"c{i}") for i in range(6)]
    assert tickets[0].wait(1.0) and [t.position for t in tickets[1:]] == [1, 2, 3, 4, 5]
    assert str(queue_message(tickets[3], gate)).startswith("All 1 slots of this server are busy (1 running, 5 waiting)")
    box.calls.clear()
    stop, reads = time.monotonic() + 1.0, Counter()

    def reader(ticket) -> None:
        while time.monotonic() < stop:
            ticket.wait(0.001)
            queue_message(ticket, gate)
            reads[ticket.key] += 1

    threads = [threading.Thread(target=reader, args=(t,)) for t in tickets[1:]]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(reads.values()) > 100
    assert set(box.calls) == {"sync"} and box.calls["sync"] <= 1.0 / POLL_S + 5, box.calls


def test_a_released_slot_goes_to_the_next_ticket_within_a_poll():
    box = Box(new_actor(limit=1))
    gate = LocalGate(box)
    first, second = gate.ticket(1, "a", "a"), gate.ticket(1, "b", "b")
    assert first.wait(1.0) and not second.wait(0.2)
    first.release()
    started = time.monotonic()
    assert second.wait(2.0) and time.monotonic() - started < 1.0
    assert until(lambda: gate.counts() == (1, 0))


def test_the_executor_runs_work_under_the_remote_gate():
    gate = LocalGate(Box(new_actor(limit=1)))
    job = EmbeddedExecutor(gate=gate).submit(Work(sum, ([1, 2, 3],), kind="sum"))  # type: ignore[arg-type]
    assert until(lambda: job.poll(0.05)) and job.result() == 6
    assert until(lambda: gate.counts() == (0, 0))


@pytest.mark.parametrize("late", [False, True])
def test_a_restarted_gate_keeps_the_admitted_ticket_and_admits_the_queued_one_only_after_release(late):
    box = Box(new_actor(limit=1, recover_s=0.5))
    holder, waiter = LocalGate(box), LocalGate(box)
    running, queued = holder.ticket(1, "a", "a"), waiter.ticket(1, "b", "b")
    assert running.wait(1.0) and not queued.wait(0.2)
    if late:  # the holder's web process does not reach the new actor for a while: the waiter syncs first
        box.away.add(holder.owner)
    box.actor = new_actor(limit=1, recover_s=0.5)
    box.actor.begin_recovery()
    if late:
        time.sleep(0.3)
        box.away.clear()
    watched, admitted_early = time.monotonic() + 1.5, False
    while time.monotonic() < watched:
        admitted_early |= queued.admitted
        time.sleep(0.01)
    assert not admitted_early and running.admitted
    assert box.actor.summary()["running"] == 1 and box.actor.summary()["waiting"] == 1
    running.release()
    assert queued.wait(2.0)
    assert until(lambda: box.actor.summary()["running"] == 1 and box.actor.summary()["waiting"] == 0)


def test_a_holder_back_after_losing_its_lease_gets_no_slot_beyond_the_limit():
    """The holder's web process is unreachable past the lease: its ticket is released and the waiter runs. When it
    comes back it claims its ticket as admitted; the gate keeps one running, and the holder hears it waits (and work
    inside its lease waits too) until the slot is free."""
    box = Box(ray_actors.GateActor(1, 2**40, per_client=1, lease_s=0.5, recover_s=0.2))
    holder, waiter = LocalGate(box), LocalGate(box)
    running, queued = holder.ticket(1, "a", "a"), waiter.ticket(1, "b", "b")
    assert running.wait(1.0) and not queued.wait(0.2)
    box.away.add(holder.owner)
    assert queued.wait(3.0)  # the holder's lease ran out: the waiter has the slot
    box.away.clear()
    assert until(lambda: not running.admitted and running.position >= 1)  # back, beyond the limit: it waits
    assert box.actor.summary()["running"] == 1
    job = EmbeddedExecutor(gate=holder).submit(Work(sum, ([1, 2],), kind="sum"),  # type: ignore[arg-type]
                                               lease=type("Lease", (), {"poll": lambda self, t: running.wait(t)})())
    assert not job.poll(0.3)  # work inside its lease waits for the slot
    queued.release()
    assert until(lambda: running.admitted) and until(lambda: job.poll(0.05)) and job.result() == 3
    running.release()
