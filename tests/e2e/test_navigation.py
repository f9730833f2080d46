"""Moving between pages in a real browser keeps the experiment: every ordered pair of pages is walked by the
sidebar, with and without a shared link, and the controls and the address bar keep every setting."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import pytest

from tests.app_pages import PAGES as APP_PAGES
from tests.e2e.test_browser import NAV_LINKS, NAV_PAGES, Console, check_page, heading, wait_idle

LINK = "cell=lstm&seq_len=50&lr=0.003&batch=32"
EXPECTED_URL = {"cell": "lstm", "seq_len": "50", "lr": "0.003", "batch": "32"}
CONTROLLED = ("Explore a cell", "Compare")  # the pages with the experiment's controls in the sidebar
PATHS = {page.title: page.url_path for page in APP_PAGES}
CLASS_PAGE = next(page.title for page in APP_PAGES if page.url_path == "classroom")


def every_pair_walk(labels: list[str]) -> list[str]:
    """A walk that takes every ordered pair (a -> b, a != b) once: an Euler circuit of the complete digraph."""
    unused = {a: [b for b in labels if b != a] for a in labels}
    stack, walk = [labels[0]], []
    while stack:
        here = stack[-1]
        if unused[here]:
            stack.append(unused[here].pop())
        else:
            walk.append(stack.pop())
    return walk[::-1]


def controls(page) -> dict[str, str]:
    side = page.locator('[data-testid="stSidebar"]')
    return {name: side.get_by_label(name, exact=True).input_value()
            for name in ("Sequence length T", "Learning rate", "Batch size")}


def go(page, label: str) -> None:
    nav = page.locator(NAV_LINKS)
    nav.filter(has_text=re.compile(rf"{re.escape(label)}\s*$")).click()
    heading(page, dict(NAV_PAGES)[label]).wait_for()
    wait_idle(page)


@pytest.mark.e2e
@pytest.mark.parametrize("link", [True, False], ids=["shared link", "no link"])
def test_every_page_switch_keeps_the_settings(page, link: bool) -> None:
    console = Console(page)
    labels = [label for label, _ in NAV_PAGES]
    walk = every_pair_walk(labels)
    assert len(walk) == len(labels) * (len(labels) - 1) + 1
    page.goto(f"/{PATHS[walk[0]]}" + (f"?{LINK}" if link else ""))
    wait_idle(page)
    expected_controls = {"Sequence length T": "50", "Learning rate": "0.003", "Batch size": "32"} if link else \
        {"Sequence length T": "100", "Learning rate": "0.01", "Batch size": "64"}
    for label in walk[1:]:
        go(page, label)
        check_page(page, console, label)
        assert page.get_by_text(re.compile("needs a sequence length of at least")).count() == 0, label
        if label in CONTROLLED:
            assert controls(page) == expected_controls, label
        query = {k: v[-1] for k, v in parse_qs(urlparse(page.url).query).items()}
        if link and label == CLASS_PAGE:  # the class page's address is the class's code: the experiment comes back
            continue                      # on the next page (checked there)
        if link:  # the address a student would copy carries the experiment on every page
            assert {k: query.get(k) for k in EXPECTED_URL} == EXPECTED_URL, (label, page.url)
        else:
            assert not set(query) - {"sid"}, (label, page.url)
