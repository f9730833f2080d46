"""Load test: N browser sessions open the same preset on one real server at once.

Each session is its own headless-Chromium context (its own Streamlit session) opening the first preset's link,
which trains at once. The server runs at most ``RNNLAB_MAX_TRAININGS`` trainings together (2 here), so with
N > 2 the others wait in the queue and must start by themselves.

Asserted: every session finishes all its steps, none shows an error, and all reach the same final evaluation
loss (same configuration and seed; nothing crossed sessions). Reported, never asserted: time to the first
loss-chart update and to completion, p50/p95, in test-artifacts/load-test.md and .json.

CI runs the small size (N = 2). The full report: ``RNNLAB_LOAD_SESSIONS=1,5,10 python -m pytest
tests/e2e/test_load.py -s``.
"""

from __future__ import annotations

import json
import os
import platform
import time
import urllib.parse
from pathlib import Path

import numpy as np
import pytest

from rnnlab.presets import PRESETS
from tests.e2e.conftest import streamlit_server
from tests.e2e.test_browser import HELPERS, LOSS_TITLE

SESSIONS = [int(n) for n in os.environ.get("RNNLAB_LOAD_SESSIONS", "2").split(",") if n.strip()]
SLOTS = 2
PRESET = PRESETS[0]
POLL_S = 0.25
TIMEOUT_S = 120 + 30 * max(SESSIONS)  # generous: a 2-core machine also runs N browsers

STATE = """(title) => {
  const figs = window.__rnnlab.figures(title);
  const eval_ = figs.length ? window.__rnnlab.trace(figs[0], 'evaluation loss') : null;
  const text = document.body ? document.body.innerText : '';
  return {points: window.__rnnlab.points(title, 'training loss'),
          finished: /Finished \\d+ steps\\./.test(text),
          queued: /in the queue/.test(text),
          exceptions: document.querySelectorAll('[data-testid="stException"]').length,
          errors: [...document.querySelectorAll('[data-testid="stAlertContentError"]')].map(e => e.innerText),
          last_eval: eval_ && eval_.y.length ? eval_.y[eval_.y.length - 1] : null};
}"""


@pytest.fixture(scope="module")
def load_server(artifacts: Path):
    """A server of its own with a known training limit (2)."""
    old = os.environ.get("RNNLAB_MAX_TRAININGS")
    os.environ["RNNLAB_MAX_TRAININGS"] = str(SLOTS)
    try:
        with streamlit_server(artifacts / "streamlit-server-load.log") as base:
            yield base
    finally:
        if old is None:
            os.environ.pop("RNNLAB_MAX_TRAININGS", None)
        else:
            os.environ["RNNLAB_MAX_TRAININGS"] = old


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def run_sessions(browser, base: str, n: int) -> dict:
    """Open ``n`` sessions at once on the preset's link; poll them all until each finished or timed out."""
    url = f"{base}/{PRESET.page}?{urllib.parse.urlencode(PRESET.query())}"
    contexts, pages = [], []
    for _ in range(n):
        context = browser.new_context(viewport={"width": 1400, "height": 2400})
        page = context.new_page()
        page.add_init_script(HELPERS)
        contexts.append(context)
        pages.append(page)
    start = time.monotonic()
    for page in pages:
        page.goto(url, wait_until="commit")
    first = [None] * n
    done = [None] * n  # when "Finished" (or an error) appeared
    settled = [False] * n  # and the chart shows every step
    seen_queue = [False] * n
    states: list[dict] = [{}] * n
    try:
        while time.monotonic() - start < TIMEOUT_S and not all(settled):
            for i, page in enumerate(pages):
                if settled[i]:
                    continue
                state = page.evaluate(STATE, LOSS_TITLE)
                states[i] = state
                now = time.monotonic() - start
                seen_queue[i] |= state["queued"]
                if first[i] is None and state["points"] > 0:
                    first[i] = now
                failed = state["exceptions"] or state["errors"]
                if done[i] is None and (state["finished"] or failed):
                    done[i] = now
                # The browser may draw the last chart a little after the text appears (a loaded CPU).
                settled[i] = failed or (state["finished"] and state["points"] >= PRESET.config.steps)
            time.sleep(POLL_S)
    finally:
        for context in contexts:
            context.close()
    return {"n": n, "first_chart_s": first, "completed_s": done, "states": states, "queued": seen_queue}


def summarise(result: dict) -> dict:
    first = [t for t in result["first_chart_s"] if t is not None]
    done = [t for t, s in zip(result["completed_s"], result["states"]) if t is not None and s.get("finished")]
    return {"sessions": result["n"], "completed": len(done), "queued_at_some_point": sum(result["queued"]),
            "first_chart_p50_s": round(percentile(first, 50), 2), "first_chart_p95_s": round(percentile(first, 95), 2),
            "completion_p50_s": round(percentile(done, 50), 2), "completion_p95_s": round(percentile(done, 95), 2)}


def write_report(artifacts: Path, rows: list[dict]) -> None:
    lines = [f"# Load test: N sessions open the preset '{PRESET.title}' at once", "",
             f"Machine: {cpu_model()}, {os.cpu_count()} cores; server limit "
             f"RNNLAB_MAX_TRAININGS={SLOTS}; {PRESET.config.steps} steps per session; the browsers run on the same "
             "machine. Times from opening the link, in seconds.", "",
             "| N | completed | queued at some point | first chart p50 | p95 | completion p50 | p95 |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['sessions']} | {r['completed']}/{r['sessions']} | {r['queued_at_some_point']} | "
                     f"{r['first_chart_p50_s']} | {r['first_chart_p95_s']} | {r['completion_p50_s']} | "
                     f"{r['completion_p95_s']} |")
    (artifacts / "load-test.md").write_text("\n".join(lines) + "\n")
    (artifacts / "load-test.json").write_text(json.dumps(rows, indent=2) + "\n")
    print("\n" + "\n".join(lines))


@pytest.mark.e2e
def test_sessions_at_once_all_complete_with_the_same_result(browser, load_server, artifacts: Path) -> None:
    rows = []
    for n in SESSIONS:
        result = run_sessions(browser, load_server, n)
        rows.append(summarise(result))
        write_report(artifacts, rows)
        for i, state in enumerate(result["states"]):
            assert state.get("exceptions") == 0 and not state.get("errors"), f"N={n}, session {i}: {state}"
            assert state.get("finished"), f"N={n}, session {i} did not finish within {TIMEOUT_S} s: {state}"
            assert state["points"] == PRESET.config.steps, f"N={n}, session {i} lost steps: {state}"
        finals = {s["last_eval"] for s in result["states"]}
        assert len(finals) == 1, f"N={n}: sessions with one configuration and seed ended differently: {finals}"
        if n > SLOTS:
            assert any(result["queued"]), f"N={n} > {SLOTS} slots, but no session showed a queue position"
