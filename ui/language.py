"""The reader's language for this script run: the link's ``lang`` first, then the browser's languages, then English;
the page's document language and fonts for it; and the sidebar's selector, which writes ``lang`` into the URL."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import TYPE_CHECKING

import streamlit as st

from rnnlab.i18n import (
    LANGUAGES,
    css_font_family,
    document_language,
    negotiate,
    parse_language,
    selectable_language,
    set_language,
)
from rnnlab.server.storage import TOKEN_PARAM  # light: app.py reads the language before JAX is imported

if TYPE_CHECKING:
    from rnnlab.sharing.urlstate import UrlState

SELECTOR_KEY = "w_lang"
# The selector's label stays in all three languages, so that a reader who cannot read the current one finds it.
SELECTOR_LABEL = "Language · 语言 · Язык"


def browser_language() -> str:
    """The language the browser asks for (Accept-Language, then its locale), else English."""
    try:
        headers = st.context.headers
        accept = headers.get("Accept-Language") if headers is not None else None
    except Exception:  # noqa: BLE001 - no request (a test, a bare script run): nothing asked
        accept = None
    try:
        locale = st.context.locale
    except Exception:  # noqa: BLE001 - as above
        locale = None
    return negotiate(accept, locale)


def chosen_language() -> str | None:
    """The language the reader chose: the URL's valid ``lang``, or the one kept for this session when the URL lost it
    (a page switch) and is not a new link."""
    ss = st.session_state
    url = st.query_params.to_dict()
    url.pop(TOKEN_PARAM, None)
    if "lang" in url:
        return parse_language(url["lang"])
    state = ss.get("url_state")
    fresh_link = bool(url) and url != ss.get("url_written")
    return None if fresh_link or state is None else state.lang


def use_language() -> str:
    """Set and return this script run's language (call first thing in app.py)."""
    lang = chosen_language() or browser_language()
    set_language(lang)
    return lang


# Every element that names a font (Streamlit's own styles name "Source Sans" on headings, widgets and tables); text
# inside them inherits it, while icons (Material Symbols) and code keep the fonts their own elements name.
FONT_SELECTORS = ("html, body, .stApp, .stApp h1, .stApp h2, .stApp h3, .stApp h4, .stApp h5, .stApp h6, .stApp p, "
                  ".stApp li, .stApp label, .stApp div, button, input, textarea, select")
# A multiselect's chips wrap onto more lines instead of scrolling out of sight (Streamlit keeps them on one line);
# a table in a narrow column keeps its short cells on one line and wraps the last, long one.
FIT_TEXT = (" [data-testid='stMultiSelectTagsContainer'] {flex-wrap: wrap; overflow: visible; height: auto;"
            " padding-top: 2px; padding-bottom: 2px;}"
            " div:has(> [data-testid='stMultiSelectTagsContainer']) {height: auto; max-height: none;}"
            " [data-testid='stTable'] :is(th, td):not(:last-child) :is(p, div) {white-space: nowrap;}")


def page_style(lang: str) -> str:
    """The app's CSS for ``lang``: where the language names its fonts (Chinese: a Simplified Chinese face first, so
    that no Japanese glyph forms are drawn), every element uses them; code keeps its monospace font."""
    css = "[data-testid='stMainBlockContainer'] {padding-top: 2.5rem;}" + FIT_TEXT
    family = css_font_family(lang)
    if family:
        css += f" {FONT_SELECTORS} {{font-family: {family};}}"
    return f"<style>{css}</style>"


def document_language_script(lang: str) -> str:
    """A script that sets the page's language (``<html lang="zh-Hans">``): the browser then picks each language's
    glyph forms and fonts (Simplified Chinese, not Japanese), hyphenation and quotes, and a screen reader its voice.
    Streamlit's page says ``lang="en"`` whatever the reader reads, and no public setting changes it."""
    return f"<script>document.documentElement.lang = {json.dumps(document_language(lang))};</script>"


def _language_chosen() -> None:
    """The selector's callback: the new language goes into the session's experiment and the URL."""
    ss = st.session_state
    lang = ss[SELECTOR_KEY]
    from ui.session import write_url  # here, not at import: app.py reads the language before JAX is imported

    state: UrlState | None = ss.get("url_state")
    if state is None:
        st.query_params["lang"] = lang
        return
    ss.url_state = replace(state, lang=lang)
    write_url(ss.url_state)


def language_selector() -> None:
    """The sidebar's language selector (English · 中文 · Русский), showing the language in use, and the page's
    document language (:func:`document_language_script`)."""
    st.session_state[SELECTOR_KEY] = selectable_language()
    st.sidebar.selectbox(SELECTOR_LABEL, list(LANGUAGES), key=SELECTOR_KEY, format_func=LANGUAGES.__getitem__,
                         on_change=_language_chosen)
    # Below the selector, where an empty element costs no room: our own constant script, never a reader's text.
    # It runs whenever its text changes (another language) and on every page, as every run draws the sidebar.
    st.sidebar.html(document_language_script(st.session_state[SELECTOR_KEY]), unsafe_allow_javascript=True)
