"""Views of a pristine run built once for every session: the cache's behaviour, and that what it shares is what a
session would have built for itself."""

from __future__ import annotations

import threading
import time

import plotly.graph_objects as go
import plotly.io as pio
import pytest

from rnnlab.config import Config
from rnnlab.figures import run_views
from rnnlab.figures.shared import SharedViews, view_bytes, view_key
from rnnlab.training.train import Run

SMALL = Config(cell="gru", task="adding", seq_len=12, batch=8, features=8, steps=20, chunk=10)


def test_one_build_for_many_sessions_asking_at_once():
    views, built = SharedViews(), []

    def build():
        built.append(1)
        time.sleep(0.2)
        return go.Figure(go.Scatter(x=[1, 2], y=[3, 4]))

    got: list = []
    threads = [threading.Thread(target=lambda: got.append(views.get(("k", 1), build))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(built) == 1 and len(got) == 8 and all(g is got[0] for g in got)
    assert views.stats()["builds"] == 1 and views.stats()["hits"] == 7


def test_no_key_builds_every_time_and_keeps_nothing():
    views = SharedViews()
    assert views.get(None, lambda: [1]) is not views.get(None, lambda: [1])
    assert views.stats()["entries"] == 0


def test_bounded_by_entries_and_bytes_least_recently_used_first():
    views = SharedViews(max_entries=2)
    for k in "abc":
        views.get(k, lambda k=k: k)
    views.get("b", lambda: "rebuilt")
    assert views.get("b", lambda: "rebuilt") == "b" and views.get("a", lambda: "again") == "again"
    assert views.stats()["entries"] == 2
    big = go.Figure(go.Scatter(x=list(range(10_000)), y=list(range(10_000))))
    small = SharedViews(max_bytes=view_bytes(big) - 1)
    small.get("big", lambda: big)
    assert small.stats()["entries"] == 0  # too big to keep: built, shown, not kept


def test_a_failed_build_is_not_kept_and_the_next_caller_builds():
    views = SharedViews()

    def fail():
        raise RuntimeError("no")

    with pytest.raises(RuntimeError):
        views.get("k", fail)
    assert views.get("k", lambda: 5) == 5


def test_only_a_pristine_run_is_shared_and_its_view_says_so():
    run = Run(SMALL)
    run.run_call()
    view = run.view()
    assert view.pristine and view_key(view, "loss") == (SMALL, 10, "en", "loss") == view_key(run, "loss")
    run.update(lr=SMALL.lr * 2)
    assert view_key(run, "loss") is None and view_key(run.view(), "loss") is None


def spec(figure: go.Figure) -> str:
    return pio.to_json(figure, validate=False)


def test_a_shared_view_equals_a_fresh_one_and_serving_it_changes_nothing():
    run = Run(SMALL)
    run.run_call()
    view = run.view()
    views = SharedViews()
    first = views.get(view_key(view, "per_step", 3), lambda: run_views.per_step_view(view, 3, None, None))
    before = spec(first.figure)
    first.figure.to_dict()  # what Streamlit does with it for every session
    again = views.get(view_key(view, "per_step", 3), lambda: pytest.fail("built twice"))
    assert again is first and spec(again.figure) == before
    fresh = run_views.per_step_view(view, 3, None, None)
    assert spec(fresh.figure) == before
    assert "t = 3" in before  # the mark is part of the shared view
    loss, metric = run_views.loss_view(view)
    assert spec(loss) == spec(run_views.loss_view(run.view())[0]) and metric is None


def test_a_view_of_figures_a_table_and_words_counts_each_part():
    import pandas as pd

    from rnnlab.figures.gradient_views import SweepView

    figure = go.Figure(go.Scatter(x=list(range(1000)), y=list(range(1000))))
    table = pd.DataFrame({"GRU": ["1e-3"] * 100})
    view = SweepView(figure, ("- **GRU**: x",), table, (), "", "words")
    assert view_bytes(view) > view_bytes(figure) + int(table.memory_usage(deep=True).sum())


def test_charts_are_written_by_plotlys_own_json_writer_whatever_is_installed():
    """Where orjson is installed Plotly would write with it, and it refuses integers past 64 bits (a diverged run's
    loss chart holds one): rnnlab names Plotly's own writer."""
    import rnnlab.figures.plots  # noqa: F401 - names the writer
    assert pio.json.config.default_engine == "json"
    figure = go.Figure(go.Scatter(x=[1, 2], y=[1.0, 2.0], customdata=[2**70, 3]))
    assert "1180591620717411303424" in pio.to_json(figure, validate=False)
