"""Page runs take turns (rnnlab.server.access.turns): in arrival order, at most ``limit`` at once, a waiting run steps
aside, and nobody waits past the patience, whatever a holder does."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from rnnlab.server.access import turns
from rnnlab.server.access.turns import Turns


@contextmanager
def held_elsewhere(line: Turns) -> Iterator[None]:
    """A page in another thread that holds its turn (stuck) for the ``with`` body, then ends."""
    held, release = threading.Event(), threading.Event()

    def stuck() -> None:
        with line.turn():
            held.set()
            release.wait(10)

    holder = threading.Thread(target=stuck)
    holder.start()
    assert held.wait(5)
    try:
        yield
    finally:
        release.set()
        holder.join(5)


def hold_briefly(line: Turns, hold_s: float) -> bool:
    with line.turn() as taken:
        time.sleep(hold_s)
        return taken


def run_class(line: Turns, n: int, hold_s: float, gap_s: float = 0.02, body=None):
    """``n`` threads arriving ``gap_s`` apart, each holding a turn ``hold_s``: the order they got their turns in, and
    the most that held one at once."""
    order, lock, most, holding = [], threading.Lock(), [0], [0]

    def page(i: int) -> None:
        with line.turn() as taken:
            assert taken
            with lock:
                order.append(i)
                holding[0] += 1
                most[0] = max(most[0], holding[0])
            (body or time.sleep)(hold_s)
            with lock:
                holding[0] -= 1

    threads = []
    for i in range(n):
        threads.append(threading.Thread(target=page, args=(i,)))
        threads[-1].start()
        time.sleep(gap_s)
    for thread in threads:
        thread.join(30)
    return order, most[0]


def test_one_at_a_time_in_the_order_they_came():
    line = Turns(1)
    order, most = run_class(line, 8, hold_s=0.05)
    assert order == list(range(8))
    assert most == 1
    assert line.holding == 0 and line.waiting == 0


def test_a_limit_of_two_lets_two_draw_at_once():
    order, most = run_class(Turns(2), 6, hold_s=0.1)
    assert sorted(order) == list(range(6)) and most == 2
    assert order[:2] == [0, 1]


def test_a_page_that_waits_for_a_job_lets_the_next_one_in():
    line, events = Turns(1), []
    first_waits, second_done = threading.Event(), threading.Event()

    def first() -> None:
        with line.turn():
            events.append("first drew")
            line.step_aside()  # now it waits for a job
            first_waits.set()
            assert second_done.wait(5), "the second page had to wait for the first one's job"
            events.append("first's job ended")

    def second() -> None:
        assert first_waits.wait(5)
        with line.turn():
            events.append("second drew")
        second_done.set()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert events == ["first drew", "second drew", "first's job ended"]
    line.step_aside()  # idempotent, and harmless in a thread that holds nothing
    assert line.holding == 0


def test_a_stuck_page_holds_the_others_up_for_the_patience_once():
    line = Turns(1, patience_s=0.3)
    with held_elsewhere(line):
        began = time.monotonic()
        with line.turn() as taken:
            waited = time.monotonic() - began
        assert taken and 0.25 <= waited < 3  # the stuck page's turn was taken back and handed on
        assert line.waiting == 0 and line.holding == 0
        began = time.monotonic()
        with line.turn() as taken:  # the next page does not wait for the stuck one again
            assert taken and time.monotonic() - began < 0.2
    assert line.holding == 0


def test_a_page_that_cannot_get_a_turn_in_time_goes_ahead_without_one():
    line = Turns(1, patience_s=0.3)
    waiters, results = [], []
    with held_elsewhere(line):
        for _ in range(2):  # the first in line gets the stuck page's turn at its patience; the second waits its own
            waiters.append(threading.Thread(target=lambda: results.append(hold_briefly(line, 0.5))))
            waiters[-1].start()
            time.sleep(0.05)
        for waiter in waiters:
            waiter.join(10)
    assert sorted(results) == [False, True]
    assert line.waiting == 0 and line.holding == 0


def test_a_waiting_page_is_told_its_place_and_a_failed_drawing_leaves_the_line(monkeypatch):
    monkeypatch.setattr(turns, "SAY_AFTER_S", 0.05)
    monkeypatch.setattr(turns, "SAY_EVERY_S", 0.02)
    line = Turns(1)
    told: list[tuple[int, float]] = []

    class TabClosed(Exception):
        pass

    def waiting(place: int, waited: float) -> None:
        told.append((place, waited))
        if len(told) == 3:
            raise TabClosed  # what Streamlit raises when the tab closes while it draws

    with held_elsewhere(line):
        with pytest.raises(TabClosed), line.turn(waiting):
            pytest.fail("the turn was taken while another page held it")
        assert [place for place, _ in told] == [1, 1, 1]
        assert told[0][1] >= 0.05
        assert line.waiting == 0  # it left the line: the next page is not held up behind it
    with line.turn() as taken:
        assert taken


def test_a_turn_inside_a_turn_of_the_same_thread_does_not_wait_for_itself():
    line = Turns(1, patience_s=5)
    began = time.monotonic()
    with line.turn() as outer, line.turn() as inner:
        assert outer and inner and line.holding == 1
    assert time.monotonic() - began < 1
    assert line.holding == 0


def test_an_exception_in_the_page_gives_the_turn_back():
    line = Turns(1)
    with pytest.raises(RuntimeError), line.turn():
        raise RuntimeError("the page failed")
    assert line.holding == 0
    order, _ = run_class(line, 3, hold_s=0.01)
    assert order == [0, 1, 2]


def test_the_waiting_note_gives_the_place_in_line_and_the_whole_seconds_waited_at_least_one():
    from rnnlab.i18n import using
    from ui.starting import waiting_words

    line, said = Turns(1, patience_s=30), []

    def page() -> None:
        with line.turn(lambda place, waited: said.append((place, waited, waiting_words(place, waited)))):
            pass

    with held_elsewhere(line):
        waiter = threading.Thread(target=page)
        waiter.start()
        time.sleep(1.8)  # it has said so twice: after half a second, then a second later
    waiter.join(5)
    assert len(said) >= 2
    (place, waited, words), (_, later, later_words) = said[0], said[1]
    assert place == 1 and 0.5 <= waited < 1.0 and "number 1 in line, 1 s so far." in words  # half a second: "1 s"
    assert 1.5 <= later < 2.0 and "in line, 2 s so far." in later_words
    with using("ru"):
        assert "ваша страница — 3-я в очереди, ожидание 1 с." in waiting_words(3, 0.6)
    with using("zh"):
        assert "你排在第 12 位，已等待 4 秒" in waiting_words(12, 4.4)
