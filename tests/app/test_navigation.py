"""Moving between pages keeps the experiment: every ordered pair of pages, with a shared link or without one in
turn (each page is left and reached both ways)."""

from __future__ import annotations

import itertools

import pytest

from tests.app.conftest import open_page
from tests.app_pages import PAGE_NAMES

# The experiment's pages. The class page shows a class, not the experiment: its address is the class's (its code),
# and going through it keeps the experiment (tests/app/test_class_page.py).
PAGES = [name for name in PAGE_NAMES if name != "classroom"]
LINK = {"cell": "lstm", "seq_len": "50", "lr": "0.003", "batch": "32"}


def shown(at) -> dict:
    """The experiment as the page holds it, and as its sidebar controls show it (pages that have them)."""
    config = at.session_state["url_state"].config
    held = {"cell": config.cell, "seq_len": config.seq_len, "lr": config.lr, "batch": config.batch}
    controls = {w.label: w.value for w in at.sidebar.number_input}
    if controls:
        held["controls"] = (controls["Sequence length T"], controls["Learning rate"], controls["Batch size"])
    return held


PAIRS = [(first, second, (PAGES.index(first) + PAGES.index(second)) % 2 == 0)
         for first, second in itertools.permutations(PAGES, 2)]


def test_each_page_is_left_and_reached_with_a_link_and_without():
    for page in PAGES:
        assert {link for first, _, link in PAIRS if first == page} == {True, False}
        assert {link for _, second, link in PAIRS if second == page} == {True, False}


@pytest.mark.parametrize("first, second, link", PAIRS,
                         ids=[f"{'shared link' if link else 'no link'}-{a}-{b}" for a, b, link in PAIRS])
def test_switching_pages_and_back_keeps_every_setting(first, second, link):
    at = open_page(first, **(LINK if link else {}))
    expected = shown(at)
    expected.pop("controls", None)
    want = {"cell": "lstm", "seq_len": 50, "lr": 0.003, "batch": 32} if link else expected
    assert expected == want
    for page in (second, first, second):
        at.switch_page(f"app_pages/{page}.py")
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        now = shown(at)
        controls = now.pop("controls", None)
        assert now == want, (page, now)
        if controls is not None:
            assert controls == (want["seq_len"], want["lr"], want["batch"]), (page, controls)
        if page != "api":  # the API page shows old code's real errors as part of its lesson
            assert not [e.value for e in at.error], (page, [e.value for e in at.error])
        if link:  # the address a student would copy carries the experiment on every page
            assert at.query_params.get("seq_len") in ("50", ["50"]), (page, dict(at.query_params))
