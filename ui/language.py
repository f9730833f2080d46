"""The reader's language for this script run: the link's ``lang`` first, then the browser's languages, then English;
and the sidebar's selector, which writes ``lang`` into the URL."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import streamlit as st

from rnnlab.i18n import ENGLISH, LANGUAGES, language, negotiate, parse_language, set_language
from rnnlab.server.tab_token import TOKEN_PARAM  # light: app.py reads the language before JAX is imported

if TYPE_CHECKING:
    from rnnlab.sharing.urlstate import UrlState

SELECTOR_KEY = "w_lang"
# The selector's label stays in all three languages, so that a reader who cannot read the current one finds it.
SELECTOR_LABEL = "Language · 语言 · Язык"
ZH_FONTS = '"Source Sans", "Source Sans Pro", "Noto Sans CJK SC", "Noto Sans SC", "PingFang SC", ' \
           '"Microsoft YaHei", "WenQuanYi Micro Hei", sans-serif'


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


# A multiselect's chips wrap onto more lines instead of scrolling out of sight (Streamlit keeps them on one line);
# a table in a narrow column keeps its short cells on one line and wraps the last, long one.
FIT_TEXT = (" [data-testid='stMultiSelectTagsContainer'] {flex-wrap: wrap; overflow: visible; height: auto;"
            " padding-top: 2px; padding-bottom: 2px;}"
            " div:has(> [data-testid='stMultiSelectTagsContainer']) {height: auto; max-height: none;}"
            " [data-testid='stTable'] :is(th, td):not(:last-child) :is(p, div) {white-space: nowrap;}")


def page_style(lang: str) -> str:
    """The app's CSS for ``lang`` (Chinese glyphs from a Simplified Chinese font)."""
    css = "[data-testid='stMainBlockContainer'] {padding-top: 2.5rem;}" + FIT_TEXT
    if lang == "zh":
        css += f" html, body, .stApp, .stMarkdown, button, input, textarea, select {{font-family: {ZH_FONTS};}}"
    return f"<style>{css}</style>"


def _language_chosen() -> None:
    """The selector's callback: the new language goes into the session's experiment and the URL."""
    ss = st.session_state
    lang = ss[SELECTOR_KEY]
    from rnnlab.sharing.urlstate import to_query

    state: UrlState | None = ss.get("url_state")
    if state is None:
        st.query_params["lang"] = lang
        return
    state = replace(state, lang=lang)
    ss.url_state = state
    query = to_query(replace(state, autorun=False))
    full = {**query, TOKEN_PARAM: ss.sid} if "sid" in ss else query
    st.query_params.from_dict(full)
    ss.url_written = query


def language_selector() -> None:
    """The sidebar's language selector (English · 中文 · Русский), showing the language in use."""
    st.session_state[SELECTOR_KEY] = language() if language() in LANGUAGES else ENGLISH
    st.sidebar.selectbox(SELECTOR_LABEL, list(LANGUAGES), key=SELECTOR_KEY, format_func=LANGUAGES.__getitem__,
                         on_change=_language_chosen)
