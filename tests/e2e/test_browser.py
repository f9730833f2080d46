"""The app in a real browser: a preset trains and beats the baseline, and every page renders without errors.

Needs Debian's chromium (skipped without it unless RNNLAB_REQUIRE_BROWSER=1). Screenshots and the server's log
go to test-artifacts/. Timings are printed (run with -s to see them) and written to test-artifacts/, never
asserted.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from tests.app_pages import PAGES as APP_PAGES

PRESET = "A GRU solves the adding problem (T = 100)"
PRESET_STEPS = 300
ADDING_BASELINE = 1 / 6
LOSS_TITLE = "Loss"
COMPARE_TITLE = "Final evaluation loss per configuration"
SWEEP_TITLE = "Gradient reaching the initial carry against sequence length"
HEADINGS = {"home": "rnnlab: how recurrent cells remember", "explore": "Explore a cell", "gradients": "Gradient flow",
            "compare": "Compare configurations", "api": "Old vs new initialize_carry", "classroom": "Join a class"}
NAV_PAGES = [(page.title, HEADINGS[page.name]) for page in APP_PAGES]  # a page app.py adds needs its heading here

# The sidebar's page links (app.py draws them: ui.navigation.page_links).
NAV_LINKS = '[data-testid="stSidebar"] a[data-testid="stPageLink-NavLink"]'
RENDER_TIMEOUT_MS = 60_000  # a page's script: includes JIT compiles on a slow CPU
FIRST_CHART_TIMEOUT_MS = 90_000
TRAIN_TIMEOUT_MS = 150_000
SWEEP_TIMEOUT_MS = 150_000
IDLE_STABLE_S = 0.75

# JavaScript helpers, defined once per page load: Plotly figures by title and their traces' values (Streamlit
# sends arrays as base64 typed arrays; Plotly keeps the decoded array in ``_inputArray`` and ``_fullData``).
HELPERS = r"""
window.__rnnlab = {
  title(gd) {
    const t = gd.layout && gd.layout.title;
    const text = typeof t === 'string' ? t : (t && t.text) || '';
    return text.replace(/<br>/g, ' ').replace(/<[^>]*>/g, '').trim();
  },
  figures(title) {
    return [...document.querySelectorAll('.js-plotly-plot')]
      .filter(gd => !gd.closest('[data-stale="true"]') && this.title(gd) === title);
  },
  values(v) {
    if (v == null) return [];
    if (Array.isArray(v) || ArrayBuffer.isView(v)) return Array.from(v, Number);
    if (v._inputArray) return Array.from(v._inputArray, Number);
    return [];
  },
  trace(gd, name) {
    const i = (gd.data || []).findIndex(t => t.name === name);
    if (i < 0) return null;
    const full = (gd._fullData || []).find(t => t.index === i) || {};
    const pick = axis => {
      const own = this.values(gd.data[i][axis]);
      return own.length ? own : this.values(full[axis]);
    };
    return {x: pick('x'), y: pick('y')};
  },
  points(title, name) {
    return Math.max(0, ...this.figures(title).map(gd => (this.trace(gd, name) || {x: []}).x.length));
  },
};
"""


class Console:
    """Console messages and uncaught page errors, collected from the page's start."""

    # Streamlit opened at a deep path (/explore) first probes /explore/_stcore/health and .../host-config,
    # which answer 404 before it falls back to the root: those two, and nothing broader, are expected.
    EXPECTED_404 = re.compile(r"/_stcore/(health|host-config)(\?.*)?$")

    def __init__(self, page) -> None:
        self.messages: list[str] = []
        self.errors: list[str] = []
        page.on("console", self._on_console)
        page.on("pageerror", lambda error: self.errors.append(f"page error: {error}"))

    def _on_console(self, message) -> None:
        url = (message.location or {}).get("url", "")
        line = f"console.{message.type}: {message.text} (at {url or '?'})"
        self.messages.append(line)
        if message.type != "error":
            return
        if ("Failed to load resource" in message.text and "404" in message.text and "/_stcore/" in url
                and self.EXPECTED_404.search(url)):
            return
        self.errors.append(line)

    def check(self, where: str) -> None:
        assert not self.errors, f"errors in the browser ({where}):\n" + "\n".join(self.errors)


def wait_idle(page, timeout_ms: int = RENDER_TIMEOUT_MS) -> None:
    """Wait until the script is not running, the app is connected and nothing is stale, for IDLE_STABLE_S."""
    idle = """() => {
      const app = document.querySelector('[data-testid="stApp"]');
      return !!app && app.getAttribute('data-test-connection-state') === 'CONNECTED'
        && app.getAttribute('data-test-script-state') === 'notRunning'
        && !document.querySelector('[data-testid="stStatusWidget"]')
        && !document.querySelector('[data-stale="true"]');
    }"""
    deadline = time.monotonic() + timeout_ms / 1000
    while True:
        page.wait_for_function(idle, timeout=max(1, int((deadline - time.monotonic()) * 1000)), polling=100)
        stable_until = time.monotonic() + IDLE_STABLE_S
        while time.monotonic() < stable_until and page.evaluate(idle):
            page.wait_for_timeout(100)
        if page.evaluate(idle):
            return
        assert time.monotonic() < deadline, "the app did not finish running its script"


def check_page(page, console: Console, where: str) -> None:
    exceptions = page.locator('[data-testid="stException"]')
    assert exceptions.count() == 0, f"exception shown on {where}:\n" + "\n---\n".join(exceptions.all_inner_texts())
    console.check(where)


def confirm_if_asked(page, timeout_ms: int = 5000) -> None:
    """Work estimated over a minute asks "Start anyway" before it starts: these tests want the long run."""
    confirm = page.get_by_test_id("stMainBlockContainer").get_by_role("button", name="Start anyway")
    try:
        confirm.wait_for(timeout=timeout_ms)
    except Exception:  # noqa: BLE001 - it started at once
        return
    confirm.click(timeout=FIRST_CHART_TIMEOUT_MS)


def heading(page, text: str):
    return page.locator("h1").filter(has_text=re.compile(rf"^\s*{re.escape(text)}\s*$")).first


def screenshot(page, folder: Path, name: str) -> None:
    page.screenshot(path=str(folder / f"{name}.png"), full_page=True)


@pytest.mark.e2e
def test_preset_trains_and_every_page_renders(page, artifacts: Path) -> None:
    shots = artifacts / "screenshots"
    console = Console(page)
    page.add_init_script(HELPERS)

    # Home: the presets are listed.
    page.goto("/")
    heading(page, NAV_PAGES[0][1]).wait_for(timeout=RENDER_TIMEOUT_MS)
    wait_idle(page)
    screenshot(page, shots, "01-home")
    check_page(page, console, "the home page")

    # The first preset opens the Explore page and trains at once.
    start = time.monotonic()
    page.get_by_role("link", name=PRESET).click()
    page.wait_for_function("(t) => window.__rnnlab.points(t, 'training loss') > 0", arg=LOSS_TITLE,
                           timeout=FIRST_CHART_TIMEOUT_MS, polling=100)
    first_chart_s = time.monotonic() - start
    page.get_by_text(f"Finished {PRESET_STEPS} steps.").wait_for(timeout=TRAIN_TIMEOUT_MS)
    finished_s = time.monotonic() - start
    wait_idle(page)
    print(f"\n[e2e] preset '{PRESET}': first loss-chart update {first_chart_s:.1f} s after the click, "
          f"'Finished {PRESET_STEPS} steps.' after {finished_s:.1f} s")
    (artifacts / "e2e-timings.json").write_text(json.dumps(
        {"preset": PRESET, "first_chart_update_s": round(first_chart_s, 2), "finished_s": round(finished_s, 2)},
        indent=2) + "\n")
    screenshot(page, shots, "02-explore-preset-trained")
    check_page(page, console, "the Explore page after training the preset")

    loss = page.evaluate("""(title) => {
      const figs = window.__rnnlab.figures(title);
      return {count: figs.length, eval: figs.length ? window.__rnnlab.trace(figs[0], 'evaluation loss') : null,
              train: figs.length ? window.__rnnlab.trace(figs[0], 'training loss') : null};
    }""", LOSS_TITLE)
    assert loss["count"] == 1, f"expected one '{LOSS_TITLE}' chart, found {loss['count']}"
    assert loss["eval"] and loss["eval"]["y"], "the loss chart has no evaluation-loss points"
    assert max(loss["train"]["x"]) == PRESET_STEPS, loss["train"]["x"][-5:]
    last_eval = loss["eval"]["y"][-1]
    print(f"[e2e] evaluation loss: first {loss['eval']['y'][0]:.4g}, last {last_eval:.4g} "
          f"(baseline {ADDING_BASELINE:.4g})")
    assert last_eval < ADDING_BASELINE, f"the last evaluation loss {last_eval} is not below the 1/6 baseline"

    # Every page through the sidebar.
    for number, (label, title) in enumerate(NAV_PAGES, start=3):
        link = page.locator(NAV_LINKS)
        link.filter(has_text=re.compile(rf"{re.escape(label)}\s*$")).click()  # not "compare_arrows" for Compare
        heading(page, title).wait_for(timeout=RENDER_TIMEOUT_MS)
        wait_idle(page)
        where = f"the '{label}' page (sidebar)"
        check_page(page, console, where)
        if label == "Gradient flow":
            start = time.monotonic()
            page.get_by_role("button", name=re.compile("Run sweep")).click()
            page.wait_for_function("(t) => window.__rnnlab.figures(t).length > 0", arg=SWEEP_TITLE,
                                   timeout=SWEEP_TIMEOUT_MS, polling=100)
            wait_idle(page, SWEEP_TIMEOUT_MS)
            print(f"[e2e] gradient sweep: chart after {time.monotonic() - start:.1f} s")
            cells = page.evaluate("(t) => window.__rnnlab.figures(t)[0].data.map(d => d.name)", SWEEP_TITLE)
            lines = [name for name in cells if not name.endswith(": fitted line")]
            assert len(lines) == 3, cells  # the default sweep: GRU, LSTM, simple, each beside its fitted line
            assert len(cells) - len(lines) == 3, cells
            check_page(page, console, f"{where} after Run sweep")
        if label == "Compare":  # the default grid, trained at once
            start = time.monotonic()
            page.get_by_test_id("stMainBlockContainer").get_by_role("button", name=re.compile("Run sweep")).click()
            page.wait_for_function("(t) => window.__rnnlab.figures(t).length > 0", arg=COMPARE_TITLE,
                                   timeout=SWEEP_TIMEOUT_MS, polling=100)
            wait_idle(page, SWEEP_TIMEOUT_MS)
            print(f"[e2e] compare: default sweep charted after {time.monotonic() - start:.1f} s")
            bars = page.evaluate("(t) => window.__rnnlab.figures(t)[0].data.length", COMPARE_TITLE)
            assert bars >= 1
            check_page(page, console, f"{where} after Run sweep")
        screenshot(page, shots, f"{number:02d}-{label.lower().replace(' ', '-')}")


def nav_labels(page) -> list[str]:
    """The sidebar's page links, as shown (without their icons' ligature names)."""
    texts = page.locator(NAV_LINKS).all_inner_texts()
    return [text.strip().splitlines()[-1].strip() for text in texts if text.strip()]


@pytest.mark.e2e
def test_shared_link_on_a_fresh_server_opens_the_app(fresh_page, artifacts: Path) -> None:
    """A shared link (a preset's URL) opened before anyone visited the home page gets the real app."""
    console = Console(fresh_page)
    fresh_page.add_init_script(HELPERS)
    fresh_page.goto("/gradients?cell=lstm&seq_len=50")
    heading(fresh_page, "Gradient flow").wait_for(timeout=RENDER_TIMEOUT_MS)
    wait_idle(fresh_page)
    screenshot(fresh_page, artifacts / "screenshots", "10-fresh-server-deep-link-gradients")
    check_page(fresh_page, console, "a deep link to the Gradient flow page on a fresh server")
    assert nav_labels(fresh_page) == [label for label, _ in NAV_PAGES]


def shown_step(page) -> int:
    """The step the progress bar reports ("step N / total")."""
    text = page.get_by_text(re.compile(r"^step \d+ / \d+")).first.inner_text()
    return int(re.match(r"step (\d+)", text).group(1))


@pytest.mark.e2e
def test_stop_keeps_the_run_and_train_resumes_it(page, artifacts: Path) -> None:
    console = Console(page)
    page.add_init_script(HELPERS)
    main = page.get_by_test_id("stMainBlockContainer")
    page.goto("/explore?steps=20000&run=1")
    confirm_if_asked(page, RENDER_TIMEOUT_MS)
    page.wait_for_function(f"() => window.__rnnlab.points({json.dumps(LOSS_TITLE)}, 'training loss') >= 50",
                           timeout=FIRST_CHART_TIMEOUT_MS, polling=100)
    main.get_by_role("button", name="Stop").click(timeout=FIRST_CHART_TIMEOUT_MS)
    wait_idle(page)
    stopped = shown_step(page)
    assert 50 <= stopped < 20000
    page.wait_for_timeout(1000)
    assert shown_step(page) == stopped  # stopped means stopped
    points = page.evaluate(f"() => window.__rnnlab.points({json.dumps(LOSS_TITLE)}, 'training loss')")
    assert points == stopped  # every finished step is still on the chart
    main.get_by_role("button", name="Train").click(timeout=FIRST_CHART_TIMEOUT_MS)
    confirm_if_asked(page)
    page.wait_for_function(f"() => window.__rnnlab.points({json.dumps(LOSS_TITLE)}, 'training loss') > {stopped}",
                           timeout=FIRST_CHART_TIMEOUT_MS, polling=100)
    main.get_by_role("button", name="Stop").click(timeout=FIRST_CHART_TIMEOUT_MS)
    wait_idle(page)
    assert shown_step(page) > stopped
    screenshot(page, artifacts / "screenshots", "20-explore-stopped-and-resumed")
    check_page(page, console, "Explore after Stop and Train")


def stale_texts(page) -> list[str]:
    """The text of every element the browser shows faded: left over from the previous script run."""
    return page.evaluate("() => Array.from(document.querySelectorAll('[data-stale=\"true\"]'))"
                         ".map(e => e.innerText.trim()).filter(t => t)")


@pytest.mark.e2e
def test_stop_acts_inside_a_long_chunk_and_no_stale_text_shows_during_work(page) -> None:
    """A chunk of 400 steps is trained in compiled calls of about a second: Stop ends the run inside it. While work
    runs, nothing of the previous page (the "press Train" or "press Run sweep" hints) stays faded on screen."""
    console = Console(page)
    page.add_init_script(HELPERS)
    main = page.get_by_test_id("stMainBlockContainer")
    page.goto("/explore?seq_len=200&chunk=400&steps=800")
    wait_idle(page)
    assert main.get_by_text("press Train", exact=False).count() == 1
    main.get_by_role("button", name="Train").click()
    confirm_if_asked(page)
    page.get_by_text(re.compile(r"^step [1-9]\d* / 800")).first.wait_for(timeout=FIRST_CHART_TIMEOUT_MS)
    assert not [t for t in stale_texts(page) if "press" in t.lower()]
    main.get_by_role("button", name="Stop").click(timeout=FIRST_CHART_TIMEOUT_MS)
    wait_idle(page)
    assert 0 < shown_step(page) < 400  # stopped inside the first chunk, not at its end
    check_page(page, console, "Explore after Stop inside a chunk")

    page.goto("/compare?seq_len=200&steps=400&chunk=400")
    wait_idle(page)
    assert main.get_by_text("Press Run sweep", exact=False).count() == 1
    main.get_by_role("button", name="Run sweep").click()
    confirm_if_asked(page)
    page.get_by_text(re.compile(r"^step [1-9]\d* / 400 of program")).first.wait_for(timeout=FIRST_CHART_TIMEOUT_MS)
    assert not [t for t in stale_texts(page) if "press" in t.lower()]
    main.get_by_role("button", name="Stop").click(timeout=FIRST_CHART_TIMEOUT_MS)
    wait_idle(page)
    stopped = main.get_by_text(re.compile(r"^Stopped (at step [1-9]\d*|with \d+ to [1-9]\d* steps trained .*) of 400"))
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:  # drawn by the rerun the Stop starts, which may begin after an idle moment
        stopped.first.wait_for(timeout=30_000)
    except PlaywrightTimeout as timeout:
        shown = main.inner_text()[:2000]
        raise AssertionError(f"no 'Stopped ...' message 30 s after Stop; the page shows: {shown}") from timeout
    wait_idle(page)
    assert stopped.count() == 1
    assert page.evaluate("(t) => window.__rnnlab.figures(t).length", COMPARE_TITLE) == 1  # drawn up to Stop
    check_page(page, console, "Compare after Stop")
