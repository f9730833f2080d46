"""A browser reload keeps the tab's run; a copy of the address opened elsewhere does not reach it.

A reload starts a new Streamlit session (``st.session_state`` is empty again: checked here too, through the
token-less control case). The app keeps each tab's run on the server under a token in the URL (``sid``) and
gives it back to a reload once the old page's connection is gone (rnnlab/session_store.py).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlparse

import numpy as np
import pytest

from rnnlab.config import Config
from rnnlab.training.train import Run
from tests.e2e.conftest import _new_tab
from tests.e2e.proxy import SECRET as PROXY_SECRET
from tests.e2e.proxy import forwarding_proxy
from tests.e2e.test_browser import (
    FIRST_CHART_TIMEOUT_MS,
    HELPERS,
    LOSS_TITLE,
    RENDER_TIMEOUT_MS,
    TRAIN_TIMEOUT_MS,
    Console,
    check_page,
    confirm_if_asked,
    screenshot,
    shown_step,
    wait_idle,
)

SMALL = {"seq_len": "20", "batch": "16", "features": "16", "chunk": "10"}
BACK = re.compile(r"Your run is back after the page was reloaded, at step (\d+)")
NO_RUN = "Choose settings in the sidebar and press"
FORKED = "This address belongs to a tab that is still open, so this tab has a copy of its run, at step 30."


def token(page) -> str:
    return parse_qs(urlparse(page.url).query)["sid"][0]


def loss_points(page) -> int:
    return page.evaluate(f"() => window.__rnnlab.points({json.dumps(LOSS_TITLE)}, 'training loss')")


def read_until(page, read, expected, timeout_s: float = 30):
    """``read(page)`` once it returns ``expected`` (or the timeout passes): a page that looks idle may still be
    between a rerun and drawing its chart."""
    deadline = time.monotonic() + timeout_s
    while (value := read(page)) != expected and time.monotonic() < deadline:
        page.wait_for_timeout(250)
    return value


def last_step_drawn(page) -> int:
    """The last training step on the loss chart (long runs are thinned, the last step always kept)."""
    xs = page.evaluate("(t) => window.__rnnlab.trace(window.__rnnlab.figures(t)[0], 'training loss').x",
                       LOSS_TITLE)
    return int(max(xs))


def training_loss(page) -> list[float]:
    return page.evaluate("(t) => window.__rnnlab.trace(window.__rnnlab.figures(t)[0], 'training loss').y",
                         LOSS_TITLE)


def open_tab(browser, server):
    context, tab = _new_tab(browser, server)
    console = Console(tab)
    tab.add_init_script(HELPERS)
    return context, tab, console


@pytest.mark.e2e
def test_reload_keeps_the_finished_run_and_train_continues_it(browser, server, artifacts) -> None:
    context, page, console = open_tab(browser, server)
    try:
        page.goto("/explore?" + urlencode({**SMALL, "steps": "60", "run": "1"}))
        page.get_by_text("Finished 60 steps.").wait_for(timeout=TRAIN_TIMEOUT_MS)
        wait_idle(page)
        sid = token(page)
        assert "run=" not in page.url  # the one-shot autorun is gone, so a reload does not train again
        share = page.get_by_role("link", name="Link to this experiment").get_attribute("href")
        assert "sid" not in share and "seq_len=20" in share

        page.reload()
        page.get_by_text(BACK).wait_for(timeout=RENDER_TIMEOUT_MS)
        wait_idle(page)
        notice = page.get_by_text(BACK).inner_text()
        assert BACK.search(notice).group(1) == "60" and "raise the training steps and press Train" in notice
        assert page.get_by_text("Finished 60 steps.").count() == 1
        assert read_until(page, loss_points, 60) == 60  # the text may come a moment before its chart
        assert token(page) == sid
        screenshot(page, artifacts / "screenshots", "30-explore-after-reload")
        check_page(page, console, "Explore after a reload")

        # Continue it: more steps (no new run), then Train; the result is that of one uninterrupted run.
        steps = page.get_by_role("spinbutton", name="Training steps")
        steps.fill("90")
        steps.press("Enter")
        wait_idle(page)
        page.get_by_test_id("stMainBlockContainer").get_by_role("button", name="Train").click(
            timeout=FIRST_CHART_TIMEOUT_MS)
        page.get_by_text("Finished 90 steps.").wait_for(timeout=TRAIN_TIMEOUT_MS)
        wait_idle(page)
        assert read_until(page, loss_points, 90) == 90
        whole = Run(Config.from_dict({**SMALL, "steps": "90"})[0]).train().steps_df()
        np.testing.assert_allclose(training_loss(page), whole["loss"], rtol=1e-6)
        check_page(page, console, "Explore after continuing the reloaded run")
    finally:
        context.close()


@pytest.mark.e2e
def test_reload_mid_training_keeps_the_finished_chunks(browser, server) -> None:
    context, page, console = open_tab(browser, server)
    try:
        page.goto("/explore?" + urlencode({**SMALL, "steps": "100000", "run": "1"}))  # far from done when Stop comes
        confirm_if_asked(page, 15_000)  # long on purpose: it may ask first
        page.wait_for_function(f"() => window.__rnnlab.points({json.dumps(LOSS_TITLE)}, 'training loss') >= 30",
                               timeout=FIRST_CHART_TIMEOUT_MS, polling=100)
        page.reload()  # while it trains
        page.get_by_text(BACK).wait_for(timeout=RENDER_TIMEOUT_MS)
        wait_idle(page)
        back = int(BACK.search(page.get_by_text(BACK).inner_text()).group(1))
        assert back >= 30  # every step finished before the reload
        assert shown_step(page) == back and read_until(page, last_step_drawn, back) == back
        page.wait_for_timeout(1000)
        assert shown_step(page) == back  # nothing trains until asked
        press(page, "Train")
        page.wait_for_function(
            "([t, back]) => window.__rnnlab.figures(t).some(gd => "
            "Math.max(0, ...(window.__rnnlab.trace(gd, 'training loss') || {x: []}).x) > back)",
            arg=[LOSS_TITLE, back], timeout=FIRST_CHART_TIMEOUT_MS, polling=100)
        press(page, "Stop")
        wait_idle(page)
        assert shown_step(page) > back
        check_page(page, console, "Explore after a reload mid-training and Train")
    finally:
        context.close()


@pytest.mark.e2e
def test_a_copied_address_opened_while_the_owner_is_connected_gets_a_copy_of_its_own(browser, server) -> None:
    owner_context, owner, owner_console = open_tab(browser, server)
    other_context, other, other_console = open_tab(browser, server)
    try:
        owner.goto("/explore?" + urlencode({**SMALL, "steps": "30", "run": "1"}))
        owner.get_by_text("Finished 30 steps.").wait_for(timeout=TRAIN_TIMEOUT_MS)
        wait_idle(owner)
        address, sid = owner.url, token(owner)

        other.goto(address)  # the whole address, token included, in another browser
        other.get_by_text(FORKED).wait_for(timeout=RENDER_TIMEOUT_MS)
        wait_idle(other)
        assert token(other) != sid and other.get_by_text(BACK).count() == 0  # a token and a run of its own
        assert other.get_by_text("Finished 30 steps.").count() == 1  # a copy of the owner's finished run
        assert parse_qs(urlparse(other.url).query)["seq_len"] == ["20"]  # the settings do come along
        check_page(other, other_console, "a copied address while its owner is connected")

        # The owner's run is untouched, and a reload of the owner's tab still finds it.
        owner.reload()
        owner.get_by_text(BACK).wait_for(timeout=RENDER_TIMEOUT_MS)
        wait_idle(owner)
        assert owner.get_by_text("Finished 30 steps.").count() == 1 and token(owner) == sid
        check_page(owner, owner_console, "the owner's tab after the copy was opened")
    finally:
        other_context.close()
        owner_context.close()


@pytest.mark.e2e
def test_without_the_token_a_reload_starts_empty(browser, server) -> None:
    """The control: what a reload would lose without the token (a new Streamlit session, empty state)."""
    context, page, _ = open_tab(browser, server)
    try:
        page.goto("/explore?" + urlencode({**SMALL, "steps": "20", "run": "1"}))
        page.get_by_text("Finished 20 steps.").wait_for(timeout=TRAIN_TIMEOUT_MS)
        wait_idle(page)
        query = {k: v[0] for k, v in parse_qs(urlparse(page.url).query).items() if k != "sid"}
        page.goto("/explore?" + urlencode(query))
        page.get_by_text(NO_RUN).wait_for(timeout=RENDER_TIMEOUT_MS)
    finally:
        context.close()


QUEUED = re.compile(r"You are number (\d+) in the queue; your job starts by itself\.")


@pytest.fixture
def one_slot_server(artifacts, monkeypatch):
    """A server of its own that allows one training at a time (RNNLAB_MAX_TRAININGS=1)."""
    from tests.e2e.conftest import streamlit_server

    monkeypatch.setenv("RNNLAB_MAX_TRAININGS", "1")
    monkeypatch.setenv("RNNLAB_MAX_JOB_MINUTES", "600")  # the runs here are long on purpose
    with streamlit_server(artifacts / "streamlit-server-one-slot.log") as base:
        yield base


def last_step(page) -> int:
    """The last training step on the loss chart, 0 before any."""
    return page.evaluate("""(t) => Math.max(0, ...window.__rnnlab.figures(t).flatMap(
        gd => (window.__rnnlab.trace(gd, 'training loss') || {x: []}).x))""", LOSS_TITLE)


def wait_for_progress(page, beyond: int) -> None:
    page.wait_for_function(f"""(t) => Math.max(0, ...window.__rnnlab.figures(t).flatMap(
        gd => (window.__rnnlab.trace(gd, 'training loss') || {{x: []}}).x)) > {beyond}""",
                           arg=LOSS_TITLE, timeout=FIRST_CHART_TIMEOUT_MS, polling=100)


WORK_STARTED = """() => {
  const fresh = (el) => !!el && !el.closest('[data-stale="true"]');
  const main = document.querySelector('[data-testid="stMainBlockContainer"]');
  const buttons = main ? [...main.querySelectorAll('button')] : [];
  const confirm = buttons.find(b => b.innerText.includes('Start anyway'));
  const stop = buttons.find(b => b.innerText.trim().endsWith('Stop'));
  if (fresh(confirm)) return 'confirm';
  if (fresh(stop) || document.body.innerText.includes('Stop ends it at once')) return 'started';
  return '';
}"""


def press(page, name: str) -> None:
    """Click the button ``name``. After Train, wait for this click's rerun to either start the work or ask
    "Start anyway" (work estimated over a minute asks first, and on a busy machine the estimate can pass a
    minute): a long run is what these tests want, so it is confirmed."""
    main = page.get_by_test_id("stMainBlockContainer")
    main.get_by_role("button", name=name).click(timeout=FIRST_CHART_TIMEOUT_MS)
    if name != "Train":
        return
    page.wait_for_timeout(300)  # the click's rerun marks the previous run's elements stale first
    outcome = page.wait_for_function(WORK_STARTED, timeout=FIRST_CHART_TIMEOUT_MS, polling=100).json_value()
    confirm = main.get_by_role("button", name="Start anyway")
    if outcome != "confirm":  # a Stop still on screen from before the click may have answered: look a while longer
        try:
            confirm.wait_for(timeout=3000)
        except Exception:  # noqa: BLE001 - short enough to start at once
            return
    confirm.click(timeout=FIRST_CHART_TIMEOUT_MS)


@pytest.mark.e2e
def test_over_the_limit_a_tab_waits_in_the_queue_and_starts_by_itself(browser, one_slot_server) -> None:
    """Two tabs, one slot: the second sees its place, leaving the queue frees it, and it starts by itself."""
    (a_context, a, a_console), (b_context, b, b_console) = (open_tab(browser, one_slot_server) for _ in "ab")
    long_run = "/explore?" + urlencode({"steps": "100000"})  # the default preset's configuration, long
    try:
        a.goto(long_run + "&run=1")
        confirm_if_asked(a, RENDER_TIMEOUT_MS)
        wait_for_progress(a, 0)  # A holds the only slot
        b.goto(long_run + "&seed=1")  # a run of its own (the same run would be A's, computed once)
        wait_idle(b)
        press(b, "Train")
        b.get_by_text(QUEUED).wait_for(timeout=RENDER_TIMEOUT_MS)
        assert QUEUED.search(b.get_by_text(QUEUED).inner_text()).group(1) == "1"
        assert last_step(b) == 0  # B waits, untrained

        press(b, "Stop")  # B leaves the queue
        wait_idle(b)
        assert b.get_by_text(QUEUED).count() == 0
        press(a, "Stop")
        wait_idle(a)
        stopped = last_step(a)
        press(a, "Train")  # nobody is ahead of A: B's place was freed
        wait_for_progress(a, stopped)

        press(b, "Train")
        b.get_by_text(QUEUED).wait_for(timeout=RENDER_TIMEOUT_MS)
        press(a, "Stop")  # A's slot is freed, and B starts by itself
        wait_for_progress(b, 0)
        assert b.get_by_text(QUEUED).count() == 0
        press(b, "Stop")
        wait_idle(b)
        wait_idle(a)
        check_page(a, a_console, "the first tab after the queue")
        check_page(b, b_console, "the queued tab")
    finally:
        b_context.close()
        a_context.close()


@pytest.mark.e2e
def test_a_kept_run_survives_kill_9_of_the_server(browser, artifacts, monkeypatch, tmp_path) -> None:
    """The server is killed without warning; a restarted one gives the tab its run back from disk."""
    import os
    import signal

    from tests.e2e.conftest import streamlit_server

    monkeypatch.setenv("RNNLAB_RUNS_DIR", str(tmp_path / "runs"))
    started: list = []
    with streamlit_server(artifacts / "streamlit-server-killed.log", started) as first:
        context, page, console = open_tab(browser, first)
        try:
            page.goto("/explore?" + urlencode({**SMALL, "steps": "40", "run": "1"}))
            page.get_by_text("Finished 40 steps.").wait_for(timeout=TRAIN_TIMEOUT_MS)
            wait_idle(page)
            address = page.url.split("/", 3)[3]
            os.killpg(started[0].pid, signal.SIGKILL)
            started[0].wait(timeout=10)
        finally:
            context.close()
    with streamlit_server(artifacts / "streamlit-server-restarted.log") as second:
        context, page, console = open_tab(browser, second)
        try:
            page.goto("/" + address)
            page.get_by_text(BACK).wait_for(timeout=FIRST_CHART_TIMEOUT_MS)  # a new server compiles the run first
            wait_idle(page)
            assert BACK.search(page.get_by_text(BACK).inner_text()).group(1) == "40"
            assert read_until(page, loss_points, 40) == 40 and page.get_by_text("Finished 40 steps.").count() == 1
            check_page(page, console, "Explore after the server was killed and restarted")
        finally:
            context.close()


def process_cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_until_idle(pid: int, timeout_s: float = 120) -> None:
    """Until the process uses under 0.2 CPU-seconds in a second (a fresh server warms up its default first)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        before = process_cpu_seconds(pid)
        time.sleep(1)
        if process_cpu_seconds(pid) - before < 0.2:
            return
    pytest.fail(f"the server did not become idle within {timeout_s:.0f} s")


def precompile_workers() -> list[str]:
    out = subprocess.run(["pgrep", "-f", "rnnlab.server.work.precompile"], capture_output=True, text=True)
    return out.stdout.split()


@pytest.mark.e2e
def test_a_closed_tab_ends_a_long_compile_and_the_server_idles(browser, artifacts, monkeypatch, tmp_path) -> None:
    """A first compile counted as long runs in a worker process: closing the tab kills it, and the server's CPU
    stops."""
    from tests.e2e.conftest import streamlit_server

    monkeypatch.setenv("RNNLAB_JAX_CACHE_DIR", str(tmp_path / "jax"))  # nothing compiled yet
    monkeypatch.setenv("RNNLAB_WORKER_COMPILE_S", "1")  # every first compile counts as long
    started: list = []
    with streamlit_server(artifacts / "streamlit-server-compile.log", started) as base:
        context, page, console = open_tab(browser, base)
        page.goto("/explore?" + urlencode({"cell": "conv_lstm", "task": "moving_dot", "features": "16", "batch": "16",
                                           "seq_len": "20", "steps": "10"}))
        wait_idle(page)
        wait_until_idle(started[0].pid)
        press(page, "Train")
        page.get_by_text("Stop ends it at once").wait_for(timeout=FIRST_CHART_TIMEOUT_MS)
        seen_until = time.monotonic() + 3
        while not precompile_workers() and time.monotonic() < seen_until:
            time.sleep(0.1)
        assert precompile_workers(), "the compile runs in a worker process"
        time.sleep(1)  # into the worker's import of JAX, well before its compile ends (about 5 s here)
        context.close()  # the tab is gone
        deadline = time.monotonic() + 10
        while precompile_workers() and time.monotonic() < deadline:
            time.sleep(0.25)
        assert precompile_workers() == [], "the worker outlived the tab"
        deadline = time.monotonic() + 10  # the server idle within 10 s (a second using under 0.2 CPU-seconds)
        while time.monotonic() < deadline:
            before = process_cpu_seconds(started[0].pid)
            time.sleep(1)
            if process_cpu_seconds(started[0].pid) - before < 0.2:
                break
        else:
            pytest.fail("the server kept computing for more than 10 s after the worker was gone")


@pytest.mark.e2e
def test_one_machine_with_five_long_runs_leaves_a_slot_for_the_next(browser, artifacts, monkeypatch) -> None:
    """Two slots; behind a proxy (RNNLAB_CLIENT_HEADER; tests.e2e.proxy writes the header) one machine opens five
    tabs of long runs. It runs one at a time (its share) and its other tabs say why they wait; a second
    machine's default run starts at once."""
    from tests.e2e.conftest import streamlit_server

    monkeypatch.setenv("RNNLAB_MAX_TRAININGS", "2")
    monkeypatch.setenv("RNNLAB_MAX_JOB_MINUTES", "600")  # the runs here are long on purpose
    monkeypatch.setenv("RNNLAB_CLIENT_HEADER", "X-Forwarded-For")
    monkeypatch.setenv("RNNLAB_PROXY_SECRET", PROXY_SECRET)  # the headers count only with the proxy's secret
    with (streamlit_server(artifacts / "streamlit-server-share.log") as base,
          forwarding_proxy(base, "10.0.0.1") as first_machine, forwarding_proxy(base, "10.0.0.2") as second_machine):
        greedy = browser.new_context(viewport={"width": 1400, "height": 3000}, base_url=first_machine)
        other = browser.new_context(viewport={"width": 1400, "height": 3000}, base_url=second_machine)
        try:
            tabs = []
            for seed in range(5):  # five distinct long runs
                tab = greedy.new_page()
                tab.add_init_script(HELPERS)
                tab.goto("/explore?" + urlencode({"steps": "100000", "seed": str(seed), "run": "1"}))
                confirm_if_asked(tab, RENDER_TIMEOUT_MS)
                tabs.append(tab)
            share = re.compile(r"You already have 1 job running on this server, your share")
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and sum(t.get_by_text(share).count() for t in tabs) < 4:
                time.sleep(0.5)
            assert sum(t.get_by_text(share).count() for t in tabs) == 4, "four tabs wait for the machine's share"
            student = other.new_page()
            student.add_init_script(HELPERS)
            opened = time.monotonic()
            student.goto("/explore?run=1")  # the default preset
            wait_for_progress(student, 0)
            first_chart_s = time.monotonic() - opened
            assert student.get_by_text(QUEUED).count() == 0
            print(f"\nthe second machine's first chart after {first_chart_s:.1f} s")
            (artifacts / "fair-share.json").write_text(json.dumps({"first_chart_s": round(first_chart_s, 1)}))
        finally:
            other.close()
            greedy.close()


@pytest.mark.e2e
def test_a_shared_run_goes_on_while_anyone_watches_and_stops_when_the_last_tab_closes(
        browser, artifacts, monkeypatch) -> None:
    """Two tabs on one link follow one run in long chunks. Closing the first leaves it training for the second;
    closing the second stops it: the server is idle within 10 s."""
    from tests.e2e.conftest import streamlit_server

    monkeypatch.setenv("RNNLAB_MAX_JOB_MINUTES", "600")  # the run here is long on purpose
    started: list = []
    with streamlit_server(artifacts / "streamlit-server-shared-run.log", started) as base:
        pid = started[0].pid
        wait_until_idle(pid)
        link = "/explore?" + urlencode({"steps": "100000", "chunk": "1000", "run": "1"})  # ~15 s a chunk here
        (a_context, a, _), (b_context, b, b_console) = (open_tab(browser, base) for _ in "ab")
        try:
            a.goto(link)
            confirm_if_asked(a, RENDER_TIMEOUT_MS)
            wait_for_progress(a, 0)
            b.goto(link)
            confirm_if_asked(b, RENDER_TIMEOUT_MS)
            wait_for_progress(b, 0)
            a_context.close()  # one watcher left: the run goes on for the other
            time.sleep(2)
            seen = last_step(b)
            wait_for_progress(b, seen)
            assert b.get_by_text(QUEUED).count() == 0
            check_page(b, b_console, "the tab still watching")
        finally:
            b_context.close()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # the last watcher is gone: within 10 s nothing runs
            before = process_cpu_seconds(pid)
            time.sleep(1)
            if process_cpu_seconds(pid) - before < 0.1:
                break
        else:
            pytest.fail("the server kept computing for more than 10 s after the last tab closed")


@pytest.mark.e2e
def test_a_closed_tab_ends_a_long_gradient_probe_and_the_server_idles(browser, artifacts) -> None:
    """The gradient page at T = 13,000 probes in segments with a progress bar; closing the tab mid-probe stops it
    between two segments: the server is idle within 10 s (one probe there takes about 4 s, three of them 11 s)."""
    from tests.e2e.conftest import streamlit_server

    started: list = []
    with streamlit_server(artifacts / "streamlit-server-probe.log", started) as base:
        pid = started[0].pid
        wait_until_idle(pid)
        context, page, console = open_tab(browser, base)
        page.goto("/gradients?" + urlencode({"seq_len": "13000"}))
        page.get_by_text(re.compile(r"Probing the gradient at every time step: \d+% done")).wait_for(
            timeout=FIRST_CHART_TIMEOUT_MS)
        check_page(page, console, "the gradient page while probing")
        time.sleep(1)
        context.close()
        closed = time.monotonic()
        while time.monotonic() - closed < 10:
            before = process_cpu_seconds(pid)
            time.sleep(1)
            if process_cpu_seconds(pid) - before < 0.2:
                break
        else:
            pytest.fail("the server kept probing for more than 10 s after the tab closed")
        print(f"\nidle {time.monotonic() - closed:.1f} s after the tab closed")
