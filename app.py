"""rnnlab: the Streamlit entry point (language, page config, navigation, warm-up; each page lives in app_pages/).

The page scripts are in app_pages/, not pages/: Streamlit runs a folder named pages/ next to the entry point as a
legacy multipage app (each file alone, without this script) until some session has called st.navigation, so the
first requests of a fresh server would skip the language, the navigation and the session set up here.
"""

import streamlit as st

from rnnlab.i18n import _
from ui.language import language_selector, page_style, use_language
from ui.navigation import page_links

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


@st.cache_resource(show_spinner=False)
def compile_default_preset() -> None:
    """Once per server: reuse compiled programs from disk, and compile the default preset in the background."""
    from rnnlab.server.precompile import warm_up
    from rnnlab.training.compiled import enable_persistent_cache

    enable_persistent_cache()
    warm_up()


compile_default_preset()
navigation.run()
