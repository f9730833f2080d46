"""rnnlab: the Streamlit entry point (navigation only; each page lives in pages/)."""

import streamlit as st

st.set_page_config(page_title="rnnlab", page_icon="🌀", layout="wide")

pages = [
    st.Page("pages/home.py", title="Home", icon=":material/home:", default=True),
    st.Page("pages/explore.py", title="Explore a cell", icon=":material/model_training:", url_path="explore"),
    st.Page("pages/gradients.py", title="Gradient flow", icon=":material/trending_down:", url_path="gradients"),
]
st.navigation(pages).run()
