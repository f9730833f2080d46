"""The "Share with the class" dialog: controls to hide, autorun, and the link with its QR code; and a class that
predicts together (its code, the students' link and the teacher's)."""

from __future__ import annotations

import streamlit as st

from rnnlab.config import SETTING
from rnnlab.i18n import LANGUAGES, _, selectable_language, tn
from rnnlab.server.answers import AnswerRefused
from rnnlab.sharing import class_link
from rnnlab.sharing.classes import app_base, spaced, student_link, teacher_link
from rnnlab.sharing.presets import PRESETS, PRESETS_BY_KEY
from rnnlab.sharing.urlstate import UrlState
from ui.classroom import store
from ui.language import use_language
from ui.queue import client_id

ss = st.session_state


def page_address() -> str:
    """This page's address without its query (a relative '?' when there is no browser context)."""
    try:
        return (st.context.url or "").split("?")[0].split("#")[0]
    except Exception:  # noqa: BLE001 - outside a running server
        return ""


def share_dialog(state: UrlState, page_path: str = "explore") -> None:
    """Open the "Share with the class" dialog, its title in the reader's language (a title given to ``@st.dialog``
    at import would stay in the language of the first reader); ``page_path``: the address of the page it opens on."""
    st.dialog(_("Share with the class"), width="large")(share_dialog_content)(state, page_path)


def class_language_label(lang: str | None) -> str:
    """A choice of the class's language as the teacher reads it: a language by its own name, or the browser's."""
    return _("each student's own browser language") if lang is None else LANGUAGES[lang]


def share_dialog_content(state: UrlState, page_path: str = "explore") -> None:
    """The experiment's link for the class, and a class that predicts together."""
    use_language()  # the dialog reruns alone on a click inside it, without app.py, which sets the reader's language
    link_tab, class_tab = st.tabs([_("Link to this experiment"), _("Predict together")])
    with link_tab:
        experiment_link(state)
    with class_tab:
        class_section(state, page_path)


def experiment_link(state: UrlState) -> None:
    """Pick what the class may not change, whether training starts by itself and the class's language; show the
    link and its QR code."""
    hide = st.multiselect(
        _("Controls to hide from the class"), class_link.HIDEABLE, default=sorted(state.hidden),
        format_func=lambda name: _(SETTING[name].label), key="share_hide", placeholder=_("Choose options"),
        select_all=False,
        help=_("Hidden controls keep the values of this experiment; the class can change the others."))
    autorun = st.toggle(_("Start training when the link opens"), value=True, key="share_autorun")
    default = class_link.CLASS_LANGUAGES.index(class_link.default_class_language(state))
    lang = st.radio(_("Language for the class"), class_link.CLASS_LANGUAGES, index=default, horizontal=True,
                    format_func=class_language_label, key="share_lang")
    link = class_link.projected_link(page_address(), state, set(hide), autorun, lang)
    st.caption(_("The link (copy it with the button at its right):"))
    st.code(link, language=None, wrap_lines=True)
    st.image(class_link.qr_png(link), caption=_("Project this: a phone's camera opens the link."), width=320)


OPENED = "classes_opened"  # (code, teacher's key, language) of the classes this session opened, the newest first
REFUSED = "class_open_refused"
CLASS_LANGUAGE_KEY = "share_class_lang"


def open_class() -> None:
    """The "Open a class" button: a class for the presets chosen, in the language chosen for it; the store's refusal
    is kept to be shown."""
    chosen = ss.get("share_class_presets") or []
    if not chosen:
        return
    try:
        made = store().open(chosen, client_id())
    except AnswerRefused as refused:
        ss[REFUSED] = refused.message
    else:
        lang = ss.get(CLASS_LANGUAGE_KEY) or selectable_language()
        ss.setdefault(OPENED, []).insert(0, (made.code, made.secret, lang))


def class_section(state: UrlState, page_path: str) -> None:
    """Open a class for presets' questions; the classes this session opened, each with the students' link and the
    teacher's screen."""
    st.caption(_("Each student answers a preset's question on their own phone; your screen shows the class's answers "
                 "as they come in, then Reveal shows the run that settles the question."))
    keys = [p.key for p in PRESETS if p.choices]
    default = [p.key for p in PRESETS if p.page == "explore" and p.config == state.config][:1] or keys[:1]
    chosen = st.multiselect(_("Questions for the class"), keys, default=default, key="share_class_presets",
                            format_func=lambda key: _(PRESETS_BY_KEY[key].title), placeholder=_("Choose presets"),
                            select_all=False)
    st.radio(_("Language for the class"), list(LANGUAGES), index=list(LANGUAGES).index(selectable_language()),
             horizontal=True, format_func=LANGUAGES.get, key=CLASS_LANGUAGE_KEY,
             help=_("The teacher's screen and the students' phones open in it; each student may still switch."))
    opened: list[tuple[str, str, str]] = ss.setdefault(OPENED, [])
    st.button(_("Open a class"), type="primary", disabled=not chosen, key="share_class_open",
              icon=":material/groups:", on_click=open_class)
    refused = ss.pop(REFUSED, None)
    if refused is not None:
        st.error(str(refused), icon=":material/block:")
    base = app_base(page_address(), page_path)
    for code, secret, lang in list(opened):
        try:
            view = store().view(code)
        except AnswerRefused:
            opened.remove((code, secret, lang))
            continue
        with st.container(border=True):
            # TRANSLATORS: {code} is a class code such as ABC 234; {n} how many questions it asks; {joined} how
            # many students have joined it
            st.markdown(tn("Class **{code}**: {n} question, {joined} joined.",
                           "Class **{code}**: {n} questions, {joined} joined.", len(view.questions),
                           code=spaced(code), joined=view.joined))
            st.caption(_("The students' link:"))
            st.code(student_link(base, code, lang), language=None, wrap_lines=True)
            st.link_button(_("Open the teacher's screen"), teacher_link(base, code, secret, lang), type="primary",
                           icon=":material/co_present:")
            st.caption(_("The teacher's screen shows the code and the QR code for students, and can be projected. "
                         "Its link holds a key that only you should have: it opens in a new tab."))
