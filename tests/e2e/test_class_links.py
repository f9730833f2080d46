"""A class on a Gradient flow link and a Compare link, in a real browser: the first student's tab computes the result,
the next one is served the shared charts, and both draw the same charts, with the library's numbers.

Needs Debian's chromium (skipped without it unless RNNLAB_REQUIRE_BROWSER=1); screenshots go to test-artifacts/.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rnnlab.config import Config
from rnnlab.probing import probes
from tests.e2e.test_browser import (
    HELPERS,
    RENDER_TIMEOUT_MS,
    SWEEP_TIMEOUT_MS,
    Console,
    check_page,
    screenshot,
    wait_idle,
)

SMALL = {"seq_len": "20", "batch": "16", "features": "16", "steps": "30", "chunk": "10"}
GRADIENT_LINK = "/gradients?" + "&".join(f"{k}={v}" for k, v in {
    **SMALL, "sweep_cells": "simple,gru", "sweep_lengths": "5,10", "sweep_weights": "untrained", "run": "1"}.items())
COMPARE_LINK = "/compare?" + "&".join(f"{k}={v}" for k, v in {**SMALL, "run": "1"}.items())
GRADIENT_CHARTS = ("Gradient of the loss with respect to the carry at each time step",
                   "Gradient reaching the initial carry against sequence length",
                   "Connectivity: how much the last output depends on each input step")
COMPARE_CHARTS = ("Training loss: mean and spread over seeds", "Final evaluation loss per configuration",
                  "Gradient reaching the initial carry per configuration")
# Every chart on the page as Plotly holds it: title -> [trace name, x, y] (typed arrays decoded).
DRAWN = r"""() => [...document.querySelectorAll('.js-plotly-plot')]
  .filter(gd => !gd.closest('[data-stale="true"]'))
  .map(gd => [window.__rnnlab.title(gd), (gd.data || []).map((t, i) => {
    const full = (gd._fullData || []).find(f => f.index === i) || {};
    const pick = axis => { const own = window.__rnnlab.values(t[axis]);
                           return own.length ? own : window.__rnnlab.values(full[axis]); };
    return [t.name || '', pick('x'), pick('y')];
  })])"""


def drawn_charts(browser, base: str, link: str, titles: tuple[str, ...], shot: Path) -> dict:
    """The charts a new tab draws from ``link``, once all of ``titles`` are drawn."""
    context = browser.new_context(viewport={"width": 1400, "height": 3000}, base_url=base)
    try:
        page = context.new_page()
        console = Console(page)
        page.add_init_script(HELPERS)
        page.goto(link)
        for title in titles:
            page.wait_for_function("(t) => window.__rnnlab.figures(t).length > 0", arg=title,
                                   timeout=SWEEP_TIMEOUT_MS, polling=100)
        wait_idle(page, RENDER_TIMEOUT_MS)
        check_page(page, console, link)
        screenshot(page, shot.parent, shot.name)
        return dict(page.evaluate(DRAWN))
    finally:
        context.close()


@pytest.mark.e2e
def test_a_class_on_a_gradient_flow_and_a_compare_link_draws_the_same_charts(browser, server: str,
                                                                             artifacts: Path) -> None:
    shots = artifacts / "screenshots"
    first = drawn_charts(browser, server, GRADIENT_LINK, GRADIENT_CHARTS, shots / "40-class-gradients-first")
    second = drawn_charts(browser, server, GRADIENT_LINK, GRADIENT_CHARTS, shots / "41-class-gradients-next")
    assert set(GRADIENT_CHARTS) <= set(first) and first == second
    expected = probes.decay_sweep(Config.from_dict(SMALL)[0], ["simple", "gru"], [5, 10])  # untrained weights
    lines = {name.split(" (")[0]: (x, y) for name, x, y in first[GRADIENT_CHARTS[1]] if " (halves" in name}
    assert set(lines) == {"Simple RNN", "GRU"}, first[GRADIENT_CHARTS[1]]
    for label, cell in (("Simple RNN", "simple"), ("GRU", "gru")):
        x, y = lines[label]
        assert x == [5, 10]
        np.testing.assert_allclose(y, expected[expected.cell == cell]["log10"], rtol=1e-9)

    first = drawn_charts(browser, server, COMPARE_LINK, COMPARE_CHARTS, shots / "42-class-compare-first")
    second = drawn_charts(browser, server, COMPARE_LINK, COMPARE_CHARTS, shots / "43-class-compare-next")
    assert set(COMPARE_CHARTS) <= set(first) and first == second
    means = [name for name, _, _ in first[COMPARE_CHARTS[0]] if "(mean of 3 seeds)" in name]
    assert len(means) == 2, first[COMPARE_CHARTS[0]]  # the default grid: a GRU and a simple RNN, three seeds each
