"""Server-wide training slots: the limit, first-come order, queue positions, memory and release on any exit."""

import threading
import time

import pytest

from rnnlab.server.work import gate as gates
from rnnlab.server.work.gate import JobGate

GB = 2**30


def test_limit_admits_that_many_and_queues_the_rest_in_order():
    s = JobGate(limit=2, budget=lambda: 100 * GB)
    tickets = [s.ticket() for _ in range(5)]
    assert [t.position for t in tickets] == [0, 0, 1, 2, 3]
    assert s.counts() == (2, 3)
    tickets[0].release()
    assert [t.position for t in tickets] == [-1, 0, 0, 1, 2]
    tickets[4].release()  # leaving the queue moves nobody ahead of it
    assert [t.position for t in tickets[1:4]] == [0, 0, 1]
    tickets[1].release()
    tickets[2].release()
    assert tickets[3].position == 0 and s.counts() == (1, 0)


def test_release_is_idempotent_and_a_released_ticket_cannot_wait():
    s = JobGate(limit=1, budget=lambda: GB)
    t = s.ticket()
    t.release()
    t.release()
    assert s.counts() == (0, 0)
    with pytest.raises(RuntimeError):
        t.wait(0)


def test_waiting_ticket_starts_by_itself_when_a_slot_frees():
    s = JobGate(limit=1, budget=lambda: GB)
    first = s.ticket()
    second = s.ticket()
    assert not second.wait(0.05)
    threading.Timer(0.1, first.release).start()
    assert second.wait(5.0)
    assert second.position == 0


def test_memory_of_runs_in_flight_counts_against_the_budget():
    s = JobGate(limit=4, budget=lambda: 10 * GB)
    big = s.ticket(6 * GB)
    assert big.position == 0 and s.in_flight_bytes() == 6 * GB and s.available_bytes() == 4 * GB
    too_big = s.ticket(5 * GB)  # a slot is free, the memory is not
    assert too_big.position == 1 and s.waiting_reason(too_big) == "memory"
    small = s.ticket(1 * GB)  # it fits: a job waiting for memory does not hold up the ones behind it
    assert small.position == 0
    big.release()
    assert too_big.position == 0


def test_one_training_is_admitted_when_nothing_runs_whatever_its_estimate():
    s = JobGate(limit=2, budget=lambda: GB)
    assert s.ticket(5 * GB).position == 0


def test_context_manager_releases_on_exception():
    s = JobGate(limit=1, budget=lambda: GB)
    with pytest.raises(KeyError):
        with s.ticket() as t:
            assert t.position == 0
            raise KeyError("interrupted")
    assert s.counts() == (0, 0)


def test_never_more_than_limit_run_at_once_under_contention():
    s = JobGate(limit=3, budget=lambda: GB)
    running, peak, done = [0], [0], []
    lock = threading.Lock()

    def work(i: int) -> None:
        with s.ticket(label=str(i)) as t:
            assert t.wait(30)
            with lock:
                running[0] += 1
                peak[0] = max(peak[0], running[0])
            time.sleep(0.02)
            with lock:
                running[0] -= 1
        done.append(i)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(12)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
    assert sorted(done) == list(range(12))
    assert peak[0] == 3 and s.counts() == (0, 0)


@pytest.mark.parametrize("value, ok", [("3", 3), ("1", 1), (" 2 ", 2), ("0", None), ("-2", None), ("two", None),
                                       ("1.5", None)])
def test_limit_from_the_environment(monkeypatch, caplog, value, ok):
    monkeypatch.setenv(gates.ENV_LIMIT, value)
    monkeypatch.setattr(gates.os, "cpu_count", lambda: 5)
    if ok is None:
        with pytest.raises(ValueError, match=gates.ENV_LIMIT):
            gates.parse_limit(value)
        assert gates.default_limit() == 5  # a bad variable falls back to the default, logged
        assert gates.ENV_LIMIT in caplog.text
    else:
        assert gates.default_limit() == ok


def test_default_limit_is_the_cpu_count_on_cpu(monkeypatch):
    monkeypatch.delenv(gates.ENV_LIMIT, raising=False)
    monkeypatch.setattr(gates.os, "cpu_count", lambda: 6)
    assert gates.default_limit() == 6



def test_a_client_with_many_tabs_gets_its_share_and_the_next_person_a_slot():
    s = JobGate(limit=3, budget=lambda: 100 * GB)
    assert s.per_client == 2  # all slots but one
    mine = [s.ticket(client="ip:10.0.0.5") for _ in range(5)]  # five tabs of one student
    assert [t.position for t in mine[:2]] == [0, 0] and all(t.position > 0 for t in mine[2:])
    assert s.waiting_reason(mine[2]) == "share"
    theirs = s.ticket(client="ip:10.0.0.6")  # the next student starts at once, on the slot kept free
    assert theirs.position == 0
    mine[0].release()
    assert mine[2].position == 0 and mine[3].position > 0  # one of the first student's waiting tabs moves up


def test_the_share_per_client_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("RNNLAB_MAX_JOBS_PER_CLIENT", "1")
    assert JobGate(limit=4).per_client == 1
    monkeypatch.setenv("RNNLAB_MAX_JOBS_PER_CLIENT", "lots")
    assert JobGate(limit=4).per_client == 3


def test_one_address_minting_browser_ids_is_held_to_the_per_address_share():
    from rnnlab.server.access.clients import address_of, at_address

    gate = JobGate(limit=3, budget=lambda: 1 << 40, per_client=1, per_address=2)
    minted = [gate.ticket(label=f"run {i}", client=at_address(f"browser:made-up-{i}", "10.0.0.66")) for i in range(4)]
    other = gate.ticket(label="a student", client=at_address("browser:student", "10.0.0.7"))
    assert [t.position == 0 for t in minted] == [True, True, False, False]  # two browser ids of one machine
    assert other.position == 0  # the third slot is another machine's at once
    assert gate.waiting_reason(minted[2]) == "address" and "Your machine" in str(gates.queue_message(minted[2], gate))
    minted[0].release()
    assert minted[2].position == 0 and minted[3].position == 1  # the machine's share, not more
    assert address_of(at_address("browser:x", "10.0.0.66")) == address_of("ip:10.0.0.66") == "10.0.0.66"
    assert address_of("session:tab-1") == ""
    direct = gate.ticket(label="around the proxy", client="ip:10.0.0.66")  # the same machine, without an id
    assert gate.waiting_reason(direct) == "address"


def test_the_share_per_address_comes_from_the_environment(monkeypatch):
    monkeypatch.delenv("RNNLAB_MAX_JOBS_PER_ADDRESS", raising=False)
    assert JobGate(limit=4, per_client=1).per_address == 3  # all slots but one
    assert JobGate(limit=1, per_client=1).per_address == 1
    monkeypatch.setenv("RNNLAB_MAX_JOBS_PER_ADDRESS", "40")  # a class behind one NAT address
    assert JobGate(limit=64, per_client=1).per_address == 40
