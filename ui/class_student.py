"""A student's screen in a class (made for a phone at 390x844): the question and its choices as large buttons, their
own answer, then, once the teacher reveals it, the run that settles it, the explanation and how the class answered.

The screen is drawn by full script runs; a small fragment (:func:`watch`) asks the store every few seconds (2 s in
a class of up to 30, less often in a larger one: :func:`rnnlab.session.class_screens.student_interval`) whether the
teacher changed what students see, and only then reruns the page. Other students' answers do not rerun it.
"""

from __future__ import annotations

import streamlit as st

from rnnlab.i18n import Msg, _
from rnnlab.server.votes import VoteRefused
from rnnlab.session.class_screens import StudentScreen, student_interval, student_screen
from rnnlab.sharing.classes import ClassView
from ui.classroom import draw_result, draw_spread, join_form, store, top_gap, voter
from ui.slots import LazyContainer

ss = st.session_state
ERROR_KEY = "class_vote_error"


def cast(code: str, question: int, round_: int, choice: int) -> None:
    """A choice's button: the student's answer (a refusal is kept to be shown)."""
    try:
        store().vote(code, voter(), question, round_, choice)
    except VoteRefused as refused:
        ss[ERROR_KEY] = refused.message


def watch(code: str, stage: int) -> None:
    """Rerun the page when the teacher has changed what students see (or the class has ended): a fragment rerun
    every :func:`rnnlab.session.class_screens.student_interval` seconds."""
    try:
        view = store().view(code)
    except VoteRefused:
        st.rerun()
    if view.stage != stage:
        st.rerun()


def draw_choices(code: str, view: ClassView, screen: StudentScreen) -> None:
    """The choices as buttons (the catalog's words), the one picked highlighted; what became of the last pick."""
    st.markdown(screen.prompt)
    for i, choice in enumerate(screen.choices):
        st.button(choice, key=f"vote_{code}_{view.current}_{view.question.round}_{i}",
                  type="primary" if i == screen.picked else "secondary", width="stretch",
                  on_click=cast, args=(code, view.current, view.question.round, i))
    refused: Msg | None = ss.pop(ERROR_KEY, None)
    if refused is not None:
        st.warning(str(refused), icon=":material/block:")
    elif screen.note:
        st.success(screen.note, icon=":material/how_to_vote:")


def student_page(code: str) -> None:
    """The student's screen of class ``code`` (joining it), or the one message of a code with no open class."""
    books = store()
    try:
        ballot = books.join(code, voter())
        view = books.view(code)
    except VoteRefused as refused:
        st.title(_("Join a class"))
        st.error(str(refused.message), icon=":material/link_off:")
        join_form()
        return
    screen = student_screen(view, ballot)
    body = LazyContainer()  # the last stage's buttons go at once, not faded while the result is waited for
    with body():
        top_gap()
        st.subheader(screen.heading)
        st.markdown(f"**{screen.question}**")
        if screen.voting:
            draw_choices(code, view, screen)
        else:
            st.info(screen.verdict, icon=":material/lightbulb:")
            draw_result(view.question.lesson, st.container(), key="class_result")
            st.markdown(screen.lesson)
            if screen.spread is not None:
                draw_spread(screen.spread, key="class_spread", height=300)
    st.fragment(watch, run_every=student_interval(view.joined))(code, view.stage)
