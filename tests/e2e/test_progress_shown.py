"""From the moment a class link opens to its first trained chart, the main area always says something: never empty,
never the page's title alone, for more than a second. Watched in a real browser, every 250 ms, on a fresh server
(cold: empty disk cache, the pages' imports, the first compiles) and then on the same server for another student
(warm), on the first preset's link.

The samples are recorded by the page itself (a timer in the browser, from navigation on), and written with what the
main area said to test-artifacts/progress-shown-*.json.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rnnlab.sharing.presets import PRESETS
from tests.e2e.conftest import streamlit_server
from tests.e2e.test_browser import HELPERS, LOSS_TITLE, NAV_LINKS, Console, check_page

SAMPLE_MS = 250
LONGEST_BLANK_S = 1.0
FIRST_CHART_TIMEOUT_MS = 240_000  # cold: imports and compiles on a loaded 2-core machine
# What the main area shows, every SAMPLE_MS: its visible text without the title, or that Streamlit's own loading
# skeleton is up (before the app has connected), and whether the loss chart has trained points.
RECORDER = f"const EVERY = {SAMPLE_MS};" + r"""
window.__samples = [];
setInterval(() => {
  const main = document.querySelector('[data-testid="stMain"]');
  let said = '';
  if (main) {
    const clone = main.cloneNode(true);
    clone.querySelectorAll('h1, style, script').forEach(e => e.remove());
    said = (clone.innerText || '').replace(/\s+/g, ' ').trim();
  }
  const skeleton = !!document.querySelector('[data-testid="stAppSkeleton"], [data-testid="stSkeleton"]');
  const chart = window.__rnnlab ? window.__rnnlab.points(%s, 'training loss') : 0;
  const app = !!document.querySelector('[data-testid="stApp"]');
  const answered = !!document.querySelector(%s) || said.length > 0;  // app.py's sidebar links, or the page's text
  window.__samples.push({t: performance.now() / 1000, app, answered, said: said.slice(0, 300), skeleton, chart});
}, EVERY);
"""


def longest_blank(samples: list[dict]) -> tuple[float, float]:
    """The longest stretch (seconds, and when it began) during which the main area said nothing beyond its title
    (Streamlit's own loading skeleton counts as saying it loads): from a blank sample to the next sample that says
    something. It counts from the server's first answer (app.py's sidebar links, or any text of the page, whichever
    the browser draws first: on a busy server the sidebar can come seconds after the page): before it the browser
    fetches Streamlit's scripts and opens the connection, where no app can draw (how long that took is printed)."""
    longest, began_at, blank_since = 0.0, 0.0, None
    for sample in samples[next((i for i, s in enumerate(samples) if s["answered"]), len(samples)):]:
        blank = not sample["said"] and not sample["skeleton"]
        if blank and blank_since is None:
            blank_since = sample["t"]
        elif not blank and blank_since is not None:
            if sample["t"] - blank_since > longest:
                longest, began_at = sample["t"] - blank_since, blank_since
            blank_since = None
    if blank_since is not None and samples and samples[-1]["t"] - blank_since > longest:
        longest, began_at = samples[-1]["t"] - blank_since, blank_since
    return longest, began_at


def watch_until_first_chart(browser, base: str, query: dict[str, str], name: str, artifacts: Path) -> list[dict]:
    """Open the preset's Explore link with ``query`` in a new tab; the samples up to its first trained chart."""
    context = browser.new_context(viewport={"width": 1280, "height": 720}, base_url=base)
    try:
        page = context.new_page()
        console = Console(page)
        page.add_init_script(HELPERS)
        page.add_init_script(RECORDER % (json.dumps(LOSS_TITLE), json.dumps(NAV_LINKS)))
        page.goto("/explore?" + "&".join(f"{k}={v}" for k, v in query.items()))
        page.wait_for_function("window.__samples.some(s => s.chart > 0)", timeout=FIRST_CHART_TIMEOUT_MS,
                               polling=SAMPLE_MS)
        check_page(page, console, name)
        samples = page.evaluate("window.__samples")
    finally:
        context.close()
    (artifacts / f"progress-shown-{name}.json").write_text(json.dumps(samples, indent=1, ensure_ascii=False) + "\n")
    return samples


@pytest.mark.e2e
def test_the_main_area_says_what_it_does_from_the_link_to_the_first_chart(browser, artifacts: Path, tmp_path: Path,
                                                                         monkeypatch) -> None:
    monkeypatch.setenv("RNNLAB_JAX_CACHE_DIR", str(tmp_path / "jax"))  # cold: nothing compiled on disk
    monkeypatch.setenv("RNNLAB_WARM", "presets")  # as a real server starts
    link = PRESETS[0].query()
    with streamlit_server(artifacts / "streamlit-server-progress-shown.log") as base:
        for name, query in (("cold", link), ("warm", {**link, "seed": "7"})):
            samples = watch_until_first_chart(browser, base, query, name, artifacts)
            longest, began_at = longest_blank(samples)
            first_chart = next(s["t"] for s in samples if s["chart"] > 0)
            mounted = next(s["t"] for s in samples if s["app"])
            answered = next(s["t"] for s in samples if s["answered"])
            print(f"\n{name}: after navigation, Streamlit's page at {mounted:.1f} s, the server's first answer at "
                  f"{answered:.1f} s, the first chart at {first_chart:.1f} s; longest blank after that answer "
                  f"{longest:.2f} s")
            assert longest <= LONGEST_BLANK_S, (
                f"{name}: the main area said nothing beyond its title for {longest:.2f} s from {began_at:.2f} s "
                f"(samples in test-artifacts/progress-shown-{name}.json)")
