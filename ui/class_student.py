"""A student's screen in a class (made for a phone at 390x844): the question and its choices as large buttons, their
own answer, then, once the teacher reveals it, the run that settles it, the explanation and how the class answered.

The page's full script run draws the question (and after the reveal, the result). The choices are drawn by a
fragment that reruns by itself every few seconds (2 s in a class of up to 30, less often in a larger one:
:func:`rnnlab.session.class_screens.student_interval`) and reruns the whole page only when the teacher changed what
students see; a click reruns only the fragment. The buttons are the fragment's own, not the page's: a click on a
button outside a fragment that reruns by itself can be lost when the fragment's timer fires just after it
(Streamlit 1.67), a click in it not. Other students' answers rerun nothing.
"""

from __future__ import annotations

import streamlit as st

from rnnlab.i18n import Msg, _
from rnnlab.server.answers import AnswerRefused
from rnnlab.session.class_screens import student_interval, student_screen
from rnnlab.sharing.classes import Ballot
from ui.classroom import draw_result, draw_spread, join_form, staged_view, store, student, top_gap
from ui.language import use_language
from ui.slots import LazyContainer

ss = st.session_state
ERROR_KEY = "class_vote_error"
BALLOT_KEY = "class_ballot"  # (code, the student's answers as the store last gave them)


def ballot_of(code: str) -> Ballot:
    kept = ss.get(BALLOT_KEY)
    return kept[1] if kept is not None and kept[0] == code else Ballot()


def cast(code: str, question: int, round_: int, choice: int) -> None:
    """A choice's button: the student's answer (a refusal is kept to be shown)."""
    try:
        ss[BALLOT_KEY] = (code, store().answer(code, student(), question, round_, choice))
    except AnswerRefused as refused:
        ss[ERROR_KEY] = refused.message


def choices(code: str, stage: int) -> None:
    """The choices as buttons (the catalog's words), the one picked highlighted, and what became of the last pick;
    the whole page again when the teacher has changed what students see (or the class has ended)."""
    use_language()  # a fragment's own rerun does not pass through app.py, which sets the reader's language
    view = staged_view(code, stage)
    screen = student_screen(view, ballot_of(code))
    st.markdown(screen.prompt)
    for i, choice in enumerate(screen.choices):
        st.button(choice, key=f"answer_{code}_{view.current}_{view.question.round}_{i}",
                  type="primary" if i == screen.picked else "secondary", width="stretch",
                  on_click=cast, args=(code, view.current, view.question.round, i))
    refused: Msg | None = ss.pop(ERROR_KEY, None)
    if refused is not None:
        st.warning(str(refused), icon=":material/block:")
    elif screen.note:
        st.success(screen.note, icon=":material/how_to_vote:")


def watch(code: str, stage: int) -> None:
    """Once revealed: rerun the page when the teacher changes what students see (or the class has ended)."""
    staged_view(code, stage)


def student_page(code: str, join: bool = True) -> None:
    """The student's screen of class ``code``, or the one message of a code with no open class. Opening it joins the
    class (counted as joined), unless ``join`` is False: then an answer does."""
    books = store()
    try:
        if join:
            ss[BALLOT_KEY] = (code, books.join(code, student()))
        view = books.view(code)
    except AnswerRefused as refused:
        st.title(_("Join a class"))
        st.error(str(refused.message), icon=":material/link_off:")
        join_form()
        return
    screen = student_screen(view, ballot_of(code))
    every = student_interval(view.joined)
    body = LazyContainer()  # the last stage's buttons go at once, not faded while the result is waited for
    with body():
        top_gap()
        st.subheader(screen.heading)
        st.markdown(f"**{screen.question}**")
        if screen.answering:
            st.fragment(choices, run_every=every)(code, view.stage)
            return
        st.info(screen.verdict, icon=":material/lightbulb:")
        draw_result(view.question.lesson, st.container(), key="class_result")
        st.markdown(screen.lesson)
        if screen.spread is not None:
            draw_spread(screen.spread, key="class_spread", height=300)
    st.fragment(watch, run_every=every)(code, view.stage)
