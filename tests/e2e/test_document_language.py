"""The page's document language and the fonts a browser really draws with: ``<html lang>`` follows the reader (zh-Hans,
ru, en) on every page, after a rerun, a page switch, a reload and the language selector; Chinese text, in the page and
in a chart's title, is drawn with the Simplified Chinese face of Noto Sans CJK (not its Japanese one, the system's
default CJK face here), as Chromium reports through CDP's CSS.getPlatformFontsForNode, while icons keep theirs."""

from __future__ import annotations

import os
import re
import subprocess

import pytest

from tests.e2e.test_browser import RENDER_TIMEOUT_MS, wait_idle
from tests.e2e.test_languages import go, translated

SC_FACE = "Noto Sans CJK SC"
SELECTOR_LABEL = "Language · 语言 · Язык"


def simplified_chinese_installed() -> bool:
    if not os.path.exists("/usr/bin/fc-list"):
        return False
    listed = subprocess.run(["fc-list", ":lang=zh"], capture_output=True, text=True).stdout
    return SC_FACE in listed


def document_language(page) -> str:
    return page.evaluate("document.documentElement.lang")


def wait_for_language(page, tag: str) -> None:
    page.wait_for_function(f"document.documentElement.lang === {tag!r}", timeout=RENDER_TIMEOUT_MS)


def fonts_drawing(page, selector: str, text: str | None = None) -> set[str]:
    """The font families Chromium draws the first element matching ``selector`` (holding ``text``) with."""
    cdp = page.context.new_cdp_session(page)
    try:
        cdp.send("DOM.enable")
        cdp.send("CSS.enable")
        root = cdp.send("DOM.getDocument", {"depth": -1, "pierce": True})["root"]["nodeId"]
        nodes = cdp.send("DOM.querySelectorAll", {"nodeId": root, "selector": selector})["nodeIds"]
        for node in nodes:
            outer = cdp.send("DOM.getOuterHTML", {"nodeId": node})["outerHTML"]
            if text is None or text in outer:
                return {f["familyName"] for f in cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]}
        return set()
    finally:
        cdp.detach()


def choose_language(page, name: str) -> None:
    """Pick ``name`` (English, 中文, Русский) in the sidebar's language selector."""
    page.get_by_label(SELECTOR_LABEL).click()
    page.get_by_role("option", name=name, exact=True).click()


@pytest.mark.e2e
def test_the_document_language_and_the_chinese_face_follow_the_reader(browser, server):
    if not simplified_chinese_installed():
        pytest.skip(f"{SC_FACE} is not installed (apt-get install fonts-noto-cjk)")
    context = browser.new_context(viewport={"width": 1280, "height": 720}, base_url=server, locale="en-US")
    page = context.new_page()
    try:
        page.goto("/gradients?lang=zh")
        title = "text.gtitle tspan"
        page.wait_for_selector(title, timeout=4 * RENDER_TIMEOUT_MS)
        wait_idle(page)
        assert document_language(page) == "zh-Hans"
        heading = translated("zh", "Gradient flow")
        assert fonts_drawing(page, "h1", heading) == {SC_FACE}  # a Chinese heading
        assert fonts_drawing(page, "[data-testid='stMarkdownContainer'] p", "，") >= {SC_FACE}  # a paragraph
        assert SC_FACE in fonts_drawing(page, title)  # a Plotly chart's title (SVG text)
        assert not {f for f in fonts_drawing(page, title) if re.search(r"CJK (JP|KR|TC)", f)}
        family = page.evaluate("getComputedStyle(document.querySelector('text.gtitle')).fontFamily")
        assert family.startswith(f'"{SC_FACE}"')  # named first wherever a font is named
        assert fonts_drawing(page, "[data-testid='stIconMaterial']") == {"Material Symbols Rounded"}  # icons stay

        go(page, "zh", "Home")  # a page switch keeps it, as does a reload
        assert document_language(page) == "zh-Hans"
        page.reload()
        page.get_by_role("heading", name=re.compile("rnnlab")).first.wait_for(timeout=RENDER_TIMEOUT_MS)
        wait_for_language(page, "zh-Hans")
        choose_language(page, "Русский")  # the selector: the same page in Russian
        wait_for_language(page, "ru")
        go(page, "ru", "Old vs new API")
        assert document_language(page) == "ru"
        choose_language(page, "English")
        wait_for_language(page, "en")
    finally:
        context.close()
