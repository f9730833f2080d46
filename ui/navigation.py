"""Running every page through app.py's ``st.navigation``, even for a shared link on a fresh server."""

from __future__ import annotations

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager


def use_app_navigation() -> None:
    """Run through app.py's ``st.navigation`` even when a shared link is the server's first request.

    Streamlit treats a folder named ``pages/`` next to the main script as an old-style multipage app until
    ``st.navigation`` has run once, so a deep link (``/explore?...``) on a fresh server would run the page
    file alone, without app.py. Clearing that flag and rerunning hands the request to app.py. (AppTest
    starts every run in that mode, so buttons act through ``on_click`` callbacks, which run before it.)
    """
    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()
