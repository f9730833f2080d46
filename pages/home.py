"""Home: what rnnlab teaches, the device in use, and one-click presets."""

import streamlit as st

from rnnlab.device import describe_devices
from rnnlab.presets import PRESETS
from ui.session import shared_state, show_url_notes, write_url

write_url(shared_state())  # the experiment stays in the URL on this page too, so a reload keeps it
st.title("rnnlab: how recurrent cells remember")
show_url_notes()
st.markdown(
    "Train a recurrent cell from Flax (LSTM, GRU, MGU, simple RNN, ConvLSTM) on a synthetic task and watch "
    "two things that are hard to see anywhere else:\n"
    "- **the initial carry**: fixed, redrawn for every batch, or *learned*, and how a learned one moves "
    "during training;\n"
    "- **the gradient on its way back through time**: how ||dL/dh_t|| shrinks from the last step to the "
    "initial carry, and how that depends on the cell and the sequence length.\n\n"
    "Everything runs as jitted JAX on the device below; every number on screen comes from the `rnnlab` "
    "package and is checked by its tests.")

info = describe_devices()
st.info(f"JAX backend: **{info['backend']}**, {info['count']} device(s): {info['kinds']} ({info['versions']})",
        icon=":material/memory:")

st.subheader("Start with a preset")
st.caption("Each one opens a page with its settings and starts it; the URL then holds the experiment, so you "
           "can share it.")
for preset in PRESETS:
    with st.container(border=True):
        st.page_link(f"pages/{preset.page}.py", label=f"**{preset.title}**", icon=":material/play_circle:",
                     query_params=preset.query())
        st.caption(preset.lesson)
