"""The "Share with the class" dialog: controls to hide, autorun, and the link with its QR code."""

from __future__ import annotations

import streamlit as st

from rnnlab.config import SETTING
from rnnlab.sharing import classroom
from rnnlab.sharing.urlstate import UrlState

ss = st.session_state


def page_address() -> str:
    """This page's address without its query (a relative '?' when there is no browser context)."""
    try:
        return (st.context.url or "").split("?")[0].split("#")[0]
    except Exception:  # noqa: BLE001 - outside a running server
        return ""


@st.dialog("Share with the class", width="large")
def share_dialog(state: UrlState) -> None:
    """Pick what the class may not change and whether training starts by itself; show the link and its QR code."""
    hide = st.multiselect(
        "Controls to hide from the class", classroom.HIDEABLE, default=sorted(state.hidden),
        format_func=lambda name: SETTING[name].label, key="share_hide",
        help="Hidden controls keep the values of this experiment; the class can change the others.")
    autorun = st.toggle("Start training when the link opens", value=True, key="share_autorun")
    link = classroom.class_link(page_address(), state, set(hide), autorun)
    st.caption("The link (copy it with the button at its right):")
    st.code(link, language=None, wrap_lines=True)
    st.image(classroom.qr_png(link), caption="Project this: a phone's camera opens the link.", width=320)
