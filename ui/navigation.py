"""The app's pages in the sidebar, and every page run through app.py's ``st.navigation``, even for a shared link on
a fresh server."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st
from streamlit.navigation.page import StreamlitPage
from streamlit.runtime.pages_manager import PagesManager


def page_links(pages: Sequence[StreamlitPage]) -> None:
    """The sidebar's links to ``pages``, above everything else in it (the current page highlighted).

    Streamlit's own sidebar navigation is off (``client.showSidebarNavigation`` in ``.streamlit/config.toml``):
    on a server's first script run it lists the files of a folder named ``pages/`` by their file names, until
    app.py's ``st.navigation`` has run. These links are drawn by app.py itself, so they only ever name the app's pages.
    """
    for page in pages:
        st.sidebar.page_link(page)


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
