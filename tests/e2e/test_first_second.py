"""A fresh server's sidebar, watched from the browser's first frame: it lists the app's five pages and never the
raw file names of app.py and the page scripts (Streamlit's folder-based multipage mode, for a folder named pages/,
during a server's first script run)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.e2e.test_browser import (
    NAV_LINKS,
    NAV_PAGES,
    RENDER_TIMEOUT_MS,
    Console,
    check_page,
    heading,
    screenshot,
    wait_idle,
)

ROOT = Path(__file__).resolve().parents[2]
# Every sidebar link the page ever shows, with the time since navigation began, recorded on each DOM change.
# Streamlit's own sidebar list or app.py's links, whichever the page shows.
ANY_LINKS = f'[data-testid="stSidebarNav"] a, {NAV_LINKS}'
RECORDER = f"const LINKS = {json.dumps(ANY_LINKS)};" + r"""
window.__sidebarSeen = [];
const record = () => {
  const links = [...document.querySelectorAll(LINKS)];
  if (!links.length) return;
  const labels = links.map(a => a.innerText.trim().split('\n').pop().trim());
  const last = window.__sidebarSeen[window.__sidebarSeen.length - 1];
  if (!last || last.labels.join('|') !== labels.join('|'))
    window.__sidebarSeen.push({t: performance.now(), labels});
};
new MutationObserver(record).observe(document, {subtree: true, childList: true, characterData: true});
"""


def raw_names() -> set[str]:
    """The names Streamlit gives the files when it lists them itself: the main script and each page file."""
    return {"app", *(path.stem for path in (ROOT / "app_pages").glob("*.py"))}


@pytest.mark.e2e
def test_a_fresh_server_lists_only_the_app_pages_from_its_first_second(browser, fresh_server: str,
                                                                       artifacts: Path) -> None:
    context = browser.new_context(viewport={"width": 1400, "height": 900}, base_url=fresh_server)
    try:
        page = context.new_page()
        console = Console(page)
        page.add_init_script(RECORDER)
        started = time.monotonic()
        page.goto("/")
        page.locator(ANY_LINKS).first.wait_for(timeout=RENDER_TIMEOUT_MS)
        page.wait_for_timeout(max(0, int((1.0 - (time.monotonic() - started)) * 1000)))
        screenshot(page, artifacts / "screenshots", "11-fresh-server-first-second")
        heading(page, NAV_PAGES[0][1]).wait_for(timeout=RENDER_TIMEOUT_MS)
        wait_idle(page)
        check_page(page, console, "a fresh server's home page")
        seen = page.evaluate("window.__sidebarSeen")
    finally:
        context.close()
    expected = [label for label, _ in NAV_PAGES]
    raw = [entry for entry in seen if set(entry["labels"]) & raw_names()]
    assert not raw, f"the sidebar listed raw file names: {seen}"
    assert seen and all(entry["labels"] == expected for entry in seen), seen
