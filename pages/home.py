"""Home: what rnnlab teaches, the device in use, and one-click presets."""

import streamlit as st

from rnnlab.device import describe_devices
from rnnlab.sharing.presets import PRESETS
from ui.session import show_url_notes, url_state, write_url

write_url(url_state())  # the experiment stays in the URL on this page too, so a reload keeps it
st.title("rnnlab: how recurrent cells remember")
show_url_notes()
st.markdown(
    "A **recurrent cell** reads a sequence one step at a time. What it passes from one step to the next is "
    "its **carry** (its memory: the hidden state *h*, and for an LSTM also a cell state *c*). Before the first "
    "step there is nothing to pass on, so the carry has to start from something: the **initial carry** *h₀*, "
    "zeros by default.\n\n"
    "Here you train cells from the Flax library (LSTM, GRU, MGU, simple RNN, ConvLSTM) on small made-up tasks "
    "that need memory, and watch two things that are hard to see anywhere else:\n"
    "- **the initial carry**: fixed, redrawn for every batch, or *learned* like a weight, and how a learned one "
    "moves during training;\n"
    "- **the training signal on its way back through time**: the gradient, how much the loss would change if "
    "the carry at step t changed (written ||dL/dh_t||). It shrinks as it travels back from the last step to "
    "the initial carry, faster for some cells than for others, and a carry that gets no gradient cannot learn.")
st.subheader("Start with a preset")
st.caption("Each is a short lesson: predict what will happen, click the title to run it, then open Explain. "
           "The link opens a page with its settings and starts it; the URL then holds the experiment, so you "
           "can share it.")
for preset in PRESETS:
    with st.container(border=True):
        st.page_link(f"pages/{preset.page}.py", label=f"**{preset.title}**", icon=":material/play_circle:",
                     query_params=preset.query())
        guess = st.radio(f"Predict first: {preset.question}", preset.choices, index=None,
                         key=f"predict_{preset.key}")
        with st.expander("Explain", expanded=guess is not None, icon=":material/lightbulb:"):
            if guess is not None:
                verdict = "right" if guess == preset.choices[preset.answer] else "not what happens"
                st.markdown(f"You predicted: *{guess}*, {verdict}. What the run shows: "
                            f"*{preset.choices[preset.answer]}*.")
            st.markdown(preset.lesson)


info = describe_devices()
st.caption(f"Runs on this server's {info['backend']} ({info['count']} device(s): {info['kinds']}; "
           f"{info['versions']}): every step is compiled once by JAX and then runs as fast machine code.")
