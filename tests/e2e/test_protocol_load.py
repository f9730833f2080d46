"""Four tabs on a preset's link against a real server, through Streamlit's websocket protocol and no browser.

The protocol client (:mod:`tests.load.protocol_client`) opens the first preset's class link (``run=1``: it trains
at once) in four sessions at the same time. Asserted: every session connects, trains to "Finished 300 steps."
without an error or a warning, and its final page holds what the browser test (tests/e2e/test_browser.py) finds
in a browser: one "Loss" chart whose training loss has every step and whose evaluation loss ends below the
adding problem's 1/6 baseline; the four sessions end on the same charts and the same evaluation loss (one run,
computed once). The summary is printed (run with -s) and written to test-artifacts/protocol-load.json.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rnnlab.sharing.presets import PRESETS
from tests.e2e.conftest import streamlit_server
from tests.e2e.test_browser import ADDING_BASELINE, LOSS_TITLE, PRESET, PRESET_STEPS
from tests.load import protocol_client

SESSIONS = 4
TIMEOUT_S = 75.0  # each session; a fresh server compiles the preset's program first (about 15 s on 2 cores)


@pytest.fixture(scope="module")
def protocol_server(artifacts: Path):
    """A server of its own (log: test-artifacts/streamlit-server-protocol.log)."""
    with streamlit_server(artifacts / "streamlit-server-protocol.log") as base:
        yield base


@pytest.mark.e2e
def test_four_protocol_sessions_on_a_preset_link_finish_with_the_browsers_charts(protocol_server: str,
                                                                                 artifacts: Path) -> None:
    assert PRESETS[0].title == PRESET and PRESETS[0].config.steps == PRESET_STEPS
    urls, groups = protocol_client.session_urls(protocol_server, SESSIONS, "same")
    results = protocol_client.run_apart(protocol_client.run_class(protocol_server, urls, SESSIONS, TIMEOUT_S, groups))
    summary = protocol_client.summarise(results)
    (artifacts / "protocol-load.json").write_text(json.dumps(summary, indent=2) + "\n")
    print("\n" + json.dumps(summary, indent=2))

    for i, r in enumerate(results):
        where = f"session {i} ({r.url})"
        assert r.ok, f"{where}: {r.errors}"
        assert not r.warnings, f"{where} showed warnings: {r.warnings}"
        assert r.finished_steps == PRESET_STEPS, f"{where}: finished {r.finished_steps} steps"
        assert r.connected_s <= r.first_chart_s <= r.completed_s and r.finished_s <= r.completed_s, where
        losses = [c for c in r.final_charts if c.title == LOSS_TITLE]
        assert len(losses) == 1, f"{where}: expected one '{LOSS_TITLE}' chart, got {[c.title for c in r.final_charts]}"
        loss = losses[0]
        assert loss.points.get("training loss") == PRESET_STEPS, f"{where}: {loss.points}"
        assert loss.points.get("evaluation loss", 0) > 0, f"{where}: no evaluation-loss points"
        assert loss.last["evaluation loss"] < ADDING_BASELINE, f"{where}: {loss.last}"
    assert len({tuple(c.title for c in r.final_charts) for r in results}) == 1, "sessions ended on different charts"
    assert len({r.chart(LOSS_TITLE).last["evaluation loss"] for r in results}) == 1, "one run, different results"
