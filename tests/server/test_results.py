"""Deterministic heavy work computed once per server."""

import threading
import time

import pandas as pd
import pytest

from rnnlab.server.work.results import Results, result_bytes


def test_callers_asking_at_once_get_one_computation():
    results, calls = Results(), []

    def slow() -> pd.DataFrame:
        calls.append(1)
        time.sleep(0.3)
        return pd.DataFrame({"t": range(5)})

    got = []
    threads = [threading.Thread(target=lambda: got.append(results.compute("k", slow))) for _ in range(5)]
    for t in threads:
        t.start()
    time.sleep(0.1)
    assert results.computing("k") and results.get("k") is None  # not waiting: nothing yet
    assert results.get("k", wait_s=5) is not None  # waiting: the result of the computation in flight
    for t in threads:
        t.join()
    assert len(calls) == 1 and all(g is got[0] for g in got) and not results.computing("k")


def test_a_failed_computation_is_not_kept_and_the_next_caller_computes():
    results = Results()
    with pytest.raises(ZeroDivisionError):
        results.compute("k", lambda: 1 / 0)
    assert not results.computing("k") and results.get("k") is None
    assert results.compute("k", lambda: "ok") == "ok" and results.get("k") == "ok"


def test_results_are_bounded_least_recently_used_first():
    results = Results(max_entries=2)
    for key in "abc":
        results.compute(key, lambda key=key: key)
    assert results.get("a") is None and results.get("c") == "c" and len(results) == 2
    table = pd.DataFrame({"x": range(1000)})
    small = Results(max_bytes=result_bytes(table) + 10)
    small.compute("one", lambda: table)
    small.compute("two", lambda: table)
    assert len(small) == 1 and small.get("two") is table and small.nbytes == result_bytes(table)


def test_a_result_many_ask_for_outlasts_many_that_nobody_asked_for_again():
    results = Results(max_entries=5)
    assert results.claim("the class's probe")
    results.put("the class's probe", 1)
    for _ in range(30):
        assert results.get("the class's probe") == 1
    for i in range(50):
        assert results.claim(("one student's", i))
        results.put(("one student's", i), i)
        assert results.get(("one student's", i)) == i  # the one just kept is never the one dropped
    assert results.get("the class's probe") == 1
    assert len(results) == 5


def test_a_kept_run_or_sweep_counts_its_own_memory():
    from rnnlab.config import Config
    from rnnlab.server.work.results import result_bytes
    from rnnlab.training.train import Run

    run = Run(Config(seq_len=12, batch=8, features=8, steps=20, chunk=10))
    assert result_bytes(run) == run.nbytes() > 1024
    assert result_bytes((run, b"abc")) == run.nbytes() + 3
