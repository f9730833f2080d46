"""No text cut off or running out of its place, in any language, at a projector's (1280x720), a laptop's (1400x900)
and a phone's (390x844) size: every page in English, Chinese and Russian (Explore and Compare after a run too),
measured in a real browser, not looked at.

tests/e2e/overflow.js measures each label, value, chip, button, heading, table cell and column (an ellipsis, a box
that hides what its line does not hold, a select's value wider than its box, a multiselect that scrolls sideways, a
table or a line wider than its column, a data grid's cell wider than any column grows or its first columns wider than
its box, a chart's axis title over its legend or its title wider than the chart); at 1280x720, where the menus
are narrowest (a phone stacks the columns at full width), each menu is opened and its options measured too. The three
languages load side by side in three tabs, so the whole sweep stays within a few minutes. What was found is written
to test-artifacts/overflow.json.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.app_pages import PAGES as APP_PAGES
from tests.e2e.test_browser import RENDER_TIMEOUT_MS, Console, check_page, wait_idle

SIZES = ((1400, 900), (1280, 720), (390, 844))
LANGS = {"en": "en-US", "zh": "zh-CN", "ru": "ru-RU"}
MENUS_AT = (1280, 720)
SMALL = "seq_len=20&batch=16&features=16&steps=20&chunk=10"
# Every page as first opened, then Explore and Compare with what a run draws (its charts' legends, the results table).
PAGE_ADDRESSES = [(page.name, f"/{page.url_path}") for page in APP_PAGES] + [
    ("explore trained", f"/explore?task=copy&run=1&{SMALL}"),
    ("compare trained", f"/compare?run=1&cmp_cell=gru,simple&{SMALL}")]
TRAINED = {"explore trained": ".js-plotly-plot .legend", "compare trained": "[data-testid='stDataFrame']"}
LOOKED_AT = (1400, 900)
MEASURE = (Path(__file__).with_name("overflow.js")).read_text(encoding="utf-8")
MENUS = ("[data-testid='stSelectbox'] [data-baseweb='select'], "
         "[data-testid='stMultiSelect'] [data-baseweb='select']")
OPTIONS = """() => [...document.querySelectorAll("[role='option'], [role='option'] *")].filter((el) => {
  const style = getComputedStyle(el), box = el.getBoundingClientRect();
  return box.width > 3 && el.scrollWidth > el.clientWidth + 1 &&
    (style.textOverflow === "ellipsis" || ["hidden", "clip"].includes(style.overflowX));
}).map((el) => ({where: "option", why: "cut", text: el.innerText.trim().slice(0, 120), need: el.scrollWidth,
                 have: el.clientWidth}))"""


def cut_options(tab) -> list[dict]:
    """Open every menu on the page in turn and measure its options."""
    found = []
    for menu in tab.locator(MENUS).all():
        if not menu.is_visible():
            continue
        menu.click()
        tab.locator("[role='option']").first.wait_for(timeout=5000)
        found += tab.evaluate(OPTIONS)
        tab.keyboard.press("Escape")
        tab.locator("[role='listbox']").first.wait_for(state="hidden", timeout=5000)
    return found


@pytest.mark.e2e
def test_no_text_is_cut_off_or_overflows_in_any_language_at_any_size(browser, server, artifacts):
    found: list[dict] = []
    started = time.monotonic()
    shots = artifacts / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    for width, height in SIZES:
        contexts = {lang: browser.new_context(viewport={"width": width, "height": height}, base_url=server,
                                              locale=locale) for lang, locale in LANGS.items()}
        try:
            tabs = {lang: context.new_page() for lang, context in contexts.items()}
            consoles = {lang: Console(tab) for lang, tab in tabs.items()}
            for name, address in PAGE_ADDRESSES:
                for lang, tab in tabs.items():  # the three load at once
                    tab.goto(f"{address}{'&' if '?' in address else '?'}lang={lang}", wait_until="commit")
                for lang, tab in tabs.items():
                    where = f"{name} in {lang} at {width}x{height}"
                    tab.locator("[data-testid='stMainBlockContainer'] h1").first.wait_for(timeout=RENDER_TIMEOUT_MS)
                    wait_idle(tab)
                    check_page(tab, consoles[lang], where)
                    if name in TRAINED:  # its charts and table drawn
                        tab.locator(TRAINED[name]).first.wait_for(timeout=4 * RENDER_TIMEOUT_MS)
                        wait_idle(tab)
                    if (width, height) == LOOKED_AT:  # to be looked at (the other sizes: tests/e2e/test_languages.py)
                        tab.screenshot(path=str(shots / f"lang-{lang}-{name}-{width}x{height}.png"), full_page=True)
                    issues = tab.evaluate(MEASURE) + (cut_options(tab) if (width, height) == MENUS_AT else [])
                    found += [{"page": name, "lang": lang, "size": f"{width}x{height}", **issue}
                              for issue in issues]
        finally:
            for context in contexts.values():
                context.close()
    (artifacts / "overflow.json").write_text(json.dumps(
        {"seconds": round(time.monotonic() - started), "found": found}, ensure_ascii=False, indent=1),
        encoding="utf-8")
    assert not found, f"{len(found)} pieces of text do not fit:\n" + "\n".join(
        f"{f['page']} {f['lang']} {f['size']}: {f['where']} {f['why']} ({f['need']} > {f['have']} px): "
        f"{f['text']!r}" for f in found)
