"""A gate that restarted learns its tickets again from their holders (JobGate.restore), admitting nothing while
paused: admitted ones run at once, waiting ones keep their order, and none is admitted twice."""

from __future__ import annotations

from rnnlab.server.gate import JobGate


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


def test_an_admitted_ticket_restored_beyond_the_limit_is_counted_and_nothing_more_is_admitted():
    g = gate()
    g.restore(1, "a", "a", admitted=True, number=1)
    g.restore(1, "b", "b", admitted=True, number=2)
    waiting = g.ticket(1, "c", "c")
    assert g.counts() == (2, 1) and not waiting.admitted
