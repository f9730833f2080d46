"""Every page as a reader first opens it, in the pseudo-language: no word on it escapes the catalog (the areas'
own tests also open their pages after a run, with notes and errors)."""

from __future__ import annotations

import pytest

from tests.app_pages import PAGE_NAMES
from tests.i18n.pseudo import open_pseudo, unmarked

SMALL = {"seq_len": "20", "batch": "16", "features": "16", "steps": "20", "chunk": "10"}


@pytest.mark.parametrize("page", PAGE_NAMES)
def test_every_word_on_every_page_goes_through_the_catalog(page, monkeypatch):
    at = open_pseudo(page, monkeypatch, **SMALL)
    assert unmarked(at) == []
