"""rnnlab: the Streamlit entry point (language, page config, navigation, warm-up; each page lives in app_pages/).

Nothing imported here loads JAX: a fresh server's first page says what it is loading from its first second.

The page scripts are in app_pages/, not pages/: Streamlit runs a folder named pages/ next to the entry point as a
legacy multipage app (each file alone, without this script) until some session has called st.navigation, so the
first requests of a fresh server would skip the language, the navigation and the session set up here.
"""

import streamlit as st

from rnnlab.i18n import _
from rnnlab.server.work import wait_imported, warm_server
from ui.language import language_selector, page_style, use_language
from ui.navigation import page_links
from ui.notices import bounds_notice
from ui.starting import import_helpers, page_turn, wait_for_start

lang = use_language()  # first: every message of this run is in the reader's language
st.set_page_config(page_title="rnnlab", page_icon="🌀", layout="wide")
# Less empty space above each page's title, so that a projector's 720 lines reach the first chart.
st.html(page_style(lang))

# The navigation comes first, before anything slow (importing JAX). Its sidebar links are drawn here, above the
# language selector, with Streamlit's own list off (.streamlit/config.toml).
pages = [
    st.Page("app_pages/home.py", title=_("Home"), icon=":material/home:", default=True),
    st.Page("app_pages/explore.py", title=_("Explore a cell"), icon=":material/model_training:", url_path="explore"),
    st.Page("app_pages/gradients.py", title=_("Gradient flow"), icon=":material/trending_down:",
            url_path="gradients"),
    st.Page("app_pages/compare.py", title=_("Compare"), icon=":material/stacked_line_chart:", url_path="compare"),
    st.Page("app_pages/api.py", title=_("Old vs new API"), icon=":material/compare_arrows:", url_path="api"),
    st.Page("app_pages/classroom.py", title=_("Class"), icon=":material/groups:", url_path="classroom"),
]
navigation = st.navigation(pages, position="hidden")
page_links(pages)
language_selector()
bounds_notice()  # this tab was slowed or closed for sending too fast: say so


warm_server(import_helpers)  # once per server: the pages' imports, then every preset's programs, in the background
wait_for_start(wait_imported)  # a fresh server's first visitors read what it is loading meanwhile
with page_turn():  # a class opening one link: its pages are drawn one at a time, in the order they came
    navigation.run()
