"""The "Share with the class" dialog: controls to hide, autorun, and the link with its QR code."""

from __future__ import annotations

import streamlit as st

from rnnlab.config import SETTING
from rnnlab.i18n import LANGUAGES, _
from rnnlab.sharing import classroom
from rnnlab.sharing.urlstate import UrlState

ss = st.session_state


def page_address() -> str:
    """This page's address without its query (a relative '?' when there is no browser context)."""
    try:
        return (st.context.url or "").split("?")[0].split("#")[0]
    except Exception:  # noqa: BLE001 - outside a running server
        return ""


def share_dialog(state: UrlState) -> None:
    """Open the "Share with the class" dialog, its title in the reader's language (a title given to ``@st.dialog``
    at import would stay in the language of the first reader)."""
    st.dialog(_("Share with the class"), width="large")(share_dialog_content)(state)


def class_language_label(lang: str | None) -> str:
    """A choice of the class's language as the teacher reads it: a language by its own name, or the browser's."""
    return _("each student's own browser language") if lang is None else LANGUAGES[lang]


def share_dialog_content(state: UrlState) -> None:
    """Pick what the class may not change, whether training starts by itself and the class's language; show the
    link and its QR code."""
    hide = st.multiselect(
        _("Controls to hide from the class"), classroom.HIDEABLE, default=sorted(state.hidden),
        format_func=lambda name: _(SETTING[name].label), key="share_hide", placeholder=_("Choose options"),
        help=_("Hidden controls keep the values of this experiment; the class can change the others."))
    autorun = st.toggle(_("Start training when the link opens"), value=True, key="share_autorun")
    default = classroom.CLASS_LANGUAGES.index(classroom.default_class_language(state))
    lang = st.radio(_("Language for the class"), classroom.CLASS_LANGUAGES, index=default, horizontal=True,
                    format_func=class_language_label, key="share_lang")
    link = classroom.class_link(page_address(), state, set(hide), autorun, lang)
    st.caption(_("The link (copy it with the button at its right):"))
    st.code(link, language=None, wrap_lines=True)
    st.image(classroom.qr_png(link), caption=_("Project this: a phone's camera opens the link."), width=320)
