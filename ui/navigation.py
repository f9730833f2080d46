"""The app's pages in the sidebar, drawn by app.py."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st
from streamlit.navigation.page import StreamlitPage


def page_links(pages: Sequence[StreamlitPage]) -> None:
    """The sidebar's links to ``pages``, above everything else in it (the current page highlighted).

    Streamlit's own sidebar navigation is off (``client.showSidebarNavigation`` in ``.streamlit/config.toml``), so
    that the links and the language selector below them are drawn in one place, in the reader's language.
    """
    for page in pages:
        st.sidebar.page_link(page)
