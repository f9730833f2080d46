"""Text from a link is shown as text: no link, image, HTML, LaTeX, colour or icon from it reaches the screen."""

from __future__ import annotations

from urllib.parse import urlencode, urlsplit

import pytest

from tests.app_pages import PAGES as APP_PAGES
from tests.e2e.test_browser import Console, check_page, wait_idle

TRACKER = "http://127.0.0.1:9/track.png"
PAYLOADS = {
    "cell": "[click me](http://evil.example/)",
    "lr": f"![x]({TRACKER})",
    "hide": "<img src=x onerror=alert(1)>",
    "sweep_lengths": "[a](javascript:alert(1))",
    ":red[big] :material/home: $x^2$ **bold** <b>tag</b>": "1",
    f"![y]({TRACKER})": "1",
}
PAGES = [p.url_path for p in APP_PAGES if p.url_path != "classroom"]  # the class page reads its code only


@pytest.mark.e2e
@pytest.mark.parametrize("path", PAGES)
def test_a_crafted_link_shows_its_values_as_plain_text(page, path: str) -> None:
    console = Console(page)
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(f"/{path}?" + urlencode(PAYLOADS))
    wait_idle(page)
    warning = page.get_by_test_id("stMainBlockContainer").get_by_test_id("stAlertContentWarning").first
    text = warning.inner_text().replace("\u2060", "")  # the invisible joiners that break links and shortcodes
    assert "[click me](http://evil.example/)" in text and "<img src=x onerror=alert(1)>" in text
    assert ":red[big] :material/home: $x^2$ **bol" in text and f"![y]({TRACKER})" in text
    rendered = warning.evaluate("""w => ({links: w.querySelectorAll('a').length,
        images: w.querySelectorAll('img').length, bold: w.querySelectorAll('strong, b').length,
        math: w.querySelectorAll('.katex').length,
        icons: w.querySelectorAll('[data-testid="stMarkdownContainer"] [role="img"]').length})""")
    assert rendered == {"links": 0, "images": 0, "bold": 0, "math": 0, "icons": 0}
    assert not [url for url in requests if urlsplit(url).netloc in ("127.0.0.1:9", "evil.example")]
    check_page(page, console, f"/{path} with a crafted link")


@pytest.mark.e2e
def test_the_class_page_shows_nothing_of_a_crafted_link(page) -> None:
    """The class page reads only its code from a link: crafted settings show as nothing (no link, image, markup or
    request of theirs), and the page asks for a code."""
    console = Console(page)
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto("/classroom?" + urlencode(PAYLOADS))
    wait_idle(page)
    main = page.get_by_test_id("stMainBlockContainer")
    assert main.get_by_text("Join a class").first.is_visible()
    shown = main.inner_text()
    assert "click me" not in shown and "evil.example" not in shown and "onerror" not in shown
    rendered = main.evaluate("""m => ({
        evil: [...m.querySelectorAll('a')].filter(a => new URL(a.href).host.includes('evil')).length,
        images: [...m.querySelectorAll('img')].filter(i => i.src.includes('127.0.0.1:9')).length,
        math: m.querySelectorAll('.katex').length})""")
    assert rendered == {"evil": 0, "images": 0, "math": 0}
    assert not [url for url in requests if urlsplit(url).netloc in ("127.0.0.1:9", "evil.example")]
    check_page(page, console, "/classroom with a crafted link")
