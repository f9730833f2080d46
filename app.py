"""rnnlab: the Streamlit entry point (page config, navigation, warm-up; each page lives in pages/)."""

import streamlit as st

st.set_page_config(page_title="rnnlab", page_icon="🌀", layout="wide")
# Less empty space above each page's title, so that a projector's 720 lines reach the first chart.
st.html("<style>[data-testid='stMainBlockContainer'] {padding-top: 2.5rem;}</style>")

# The navigation comes first, before anything slow (importing JAX): until it has run once, a fresh server's
# sidebar lists the files in pages/ instead of these pages.
navigation = st.navigation([
    st.Page("pages/home.py", title="Home", icon=":material/home:", default=True),
    st.Page("pages/explore.py", title="Explore a cell", icon=":material/model_training:", url_path="explore"),
    st.Page("pages/gradients.py", title="Gradient flow", icon=":material/trending_down:", url_path="gradients"),
    st.Page("pages/compare.py", title="Compare", icon=":material/stacked_line_chart:", url_path="compare"),
    st.Page("pages/api.py", title="Old vs new API", icon=":material/compare_arrows:", url_path="api"),
])


@st.cache_resource(show_spinner=False)
def compile_default_preset() -> None:
    """Once per server: reuse compiled programs from disk, and compile the default preset in the background."""
    from rnnlab.server.precompile import warm_up
    from rnnlab.training.compiled import enable_persistent_cache

    enable_persistent_cache()
    warm_up()


compile_default_preset()
navigation.run()
