"""Helpers for driving the app with Streamlit's AppTest and reading the Plotly figures it draws."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from tests.plotly_figures import decoded

APP = str(Path(__file__).resolve().parents[2] / "app.py")
SMALL = {"seq_len": "20", "batch": "16", "features": "16", "steps": "50", "chunk": "10"}


def open_page(page: str, timeout: float = 900, **query: str) -> AppTest:
    """Run the app at ``page`` ('home', 'explore', 'gradients') with the given URL query parameters. ``timeout``
    (seconds a script run may take) only catches a hang: a busy machine must never fail a test by being slow."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    for key, value in query.items():
        at.query_params[key] = value
    at.switch_page(f"app_pages/{page}.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def figures(at: AppTest) -> dict[str, dict]:
    """Every Plotly figure on the page by title: the spec the browser receives."""
    out = {}
    for chart in at.get("plotly_chart"):
        spec = json.loads(chart.proto.spec)
        out[spec["layout"]["title"]["text"].replace("<br>", " ")] = spec  # a long title is wrapped
    return out


def values(trace: dict, axis: str) -> np.ndarray:
    """A trace's x / y / z values, decoding Plotly's typed-array encoding."""
    return decoded(trace[axis])


def trace(figure: dict, name_start: str) -> dict:
    matches = [t for t in figure["data"] if str(t.get("name", "")).startswith(name_start)]
    assert len(matches) == 1, [t.get("name") for t in figure["data"]]
    return matches[0]


def button(at: AppTest, label: str):
    return next(b for b in at.button if b.label == label)


@pytest.fixture
def small() -> dict[str, str]:
    return dict(SMALL)


def unescaped(markdown: str) -> str:
    """What a reader sees of Markdown text the app escaped (rnnlab.text.escape_markdown): the characters."""
    return re.sub(r"\\(.)", r"\1", markdown.replace("\u2060", ""))
