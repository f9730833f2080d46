"""A gate that restarted learns its tickets again from their holders (JobGate.restore), admitting nothing while
paused: admitted ones run at once, waiting ones keep their order, and none is admitted twice."""

from __future__ import annotations

from rnnlab.server.work.gate import JobGate


def gate(limit: int = 1) -> JobGate:
    return JobGate(limit, budget=lambda: 2**40, per_client=limit)


def test_a_paused_gate_admits_nothing_until_resumed():
    g = gate()
    g.pause()
    ticket = g.ticket(1, "a", "a")
    assert not ticket.wait(0.05) and ticket.position == 1 and g.waiting_reason(ticket) == "slots"
    g.resume()
    assert ticket.admitted and ticket.position == 0


def test_restored_admitted_tickets_run_and_waiting_ones_wait_behind_them():
    g = gate()
    g.pause()
    queued = g.restore(1, "b", "b", admitted=False, number=7)
    running = g.restore(1, "a", "a", admitted=True, number=3)
    g.resume()
    assert running.admitted and not queued.admitted and g.counts() == (1, 1)
    running.release()
    assert queued.admitted and g.counts() == (1, 0)


def test_restored_waiting_tickets_keep_their_order_and_new_ones_come_after():
    g = gate()
    g.pause()
    later = g.restore(1, "c", "c", admitted=False, number=9)
    earlier = g.restore(1, "b", "b", admitted=False, number=4)
    fresh = g.ticket(1, "d", "d")
    assert (earlier.position, later.position, fresh.position) == (1, 2, 3)
    assert fresh.number > later.number
    g.resume()
    assert earlier.admitted and not later.admitted and not fresh.admitted


def test_an_admitted_ticket_restored_beyond_the_limit_waits_and_nothing_runs_beyond_the_slots():
    g = gate()
    first = g.restore(1, "a", "a", admitted=True, number=1)
    beyond = g.restore(1, "b", "b", admitted=True, number=2)  # its holder claims a slot the gate no longer has
    waiting = g.ticket(1, "c", "c")
    assert first.admitted and not beyond.admitted and g.counts() == (1, 2)
    assert (beyond.position, waiting.position) == (1, 2) and g.waiting_reason(beyond) == "slots"
    first.release()
    assert beyond.admitted and not waiting.admitted and g.counts() == (1, 1)  # in its number's order


def test_work_inside_a_lease_runs_only_while_the_lease_holds_its_slot():
    from rnnlab.server.work.embedded import EmbeddedExecutor
    from rnnlab.server.work.executor import Work

    g = gate()
    holder = g.restore(1, "a", "a", admitted=True, number=1)
    lease = EmbeddedExecutor(gate=g).lease(1, "b", "b")  # waits behind the restored ticket (as one taken back)
    job = EmbeddedExecutor(gate=g).submit(Work(sum, ([1, 2],), kind="sum"), lease=lease)
    assert not job.poll(0.05) and job.status == "queued"
    holder.release()
    assert job.poll(2.0) and job.result() == 3
    lease.release()
