"""Home: what rnnlab teaches, the device in use, and one-click presets."""

import streamlit as st

from rnnlab.device import devices_sentence
from rnnlab.i18n import _, t
from rnnlab.sharing.presets import PRESETS
from ui.session import show_url_notes, url_state, write_url

state = url_state()
write_url(state)  # the experiment stays in the URL on this page too, so a reload keeps it
# A preset's title wraps on a phone instead of being cut off (a page link keeps its label on one line).
st.html("<style>[data-testid='stMainBlockContainer'] [data-testid='stPageLink'] :is(span, p) "
        "{white-space: normal; overflow: visible; line-height: 1.4;}</style>")
st.title(_("rnnlab: how recurrent cells remember"))
show_url_notes()
st.markdown(_(
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
    "the initial carry, faster for some cells than for others, and a carry that gets no gradient cannot learn."))
st.subheader(_("Start with a preset"))
st.caption(_("Each is a short lesson: predict what will happen, click the title to run it, then open Explain. "
             "The link opens a page with its settings and starts it; the URL then holds the experiment, so you "
             "can share it."))
for preset in PRESETS:
    with st.container(border=True):
        st.page_link(f"app_pages/{preset.page}.py", label=f"**{_(preset.title)}**", icon=":material/play_circle:",
                     query_params=preset.query(state.lang))
        # The choices stay the English ids (the widget keeps the reader's guess when the language changes).
        # TRANSLATORS: a preset's question follows, e.g. "Predict first: After 300 training steps, where is ...?"
        guess = st.radio(t("Predict first: {question}", question=_(preset.question)), preset.choices, index=None,
                         format_func=_, key=f"predict_{preset.key}")
        # TRANSLATORS: the title of a folded section that explains what a preset's run shows.
        with st.expander(_("Explain"), expanded=guess is not None, icon=":material/lightbulb:"):
            if guess is not None:
                answer = preset.choices[preset.answer]
                if guess == answer:
                    # TRANSLATORS: {guess} and {answer} are choices of the preset's question, in italics.
                    st.markdown(t("You predicted: *{guess}*, right. What the run shows: *{answer}*.",
                                  guess=_(guess), answer=_(answer)))
                else:
                    # TRANSLATORS: {guess} and {answer} are choices of the preset's question, in italics.
                    st.markdown(t("You predicted: *{guess}*, not what happens. What the run shows: *{answer}*.",
                                  guess=_(guess), answer=_(answer)))
            st.markdown(preset.lesson)


st.caption(devices_sentence())
