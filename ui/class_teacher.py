"""The teacher's screen of a class, made for a projector at 1280x720: the question, the buttons that run the lesson
(reveal, a second round, reset, the other questions), who has joined and answered and the spread of answers as a
live chart (:func:`live`, a fragment redrawn every :data:`TEACHER_EVERY_S` without a click), then the run that
settles the question beside the spread.

The teacher's key comes in the teacher's link once: it is kept in the session and taken out of the address, so
that a projected address bar shows none (a reload of this tab opens the students' view; the teacher's link opens
this screen again). Every action sends the key to the store, which compares it in constant time.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from rnnlab.i18n import Msg, _, selectable_language, t
from rnnlab.server.answers import CLOSE, GOTO, RESET, REVEAL, SECOND, AnswerRefused
from rnnlab.server.work import DONE, FAILED, Job
from rnnlab.session.class_screens import TeacherScreen, teacher_screen
from rnnlab.sharing.class_link import qr_png
from rnnlab.sharing.classes import CLASS_PATH, TEACHER_PARAM, answers_csv, app_base, spaced, student_link
from rnnlab.sharing.presets import Preset
from rnnlab.text import error_text
from ui.classroom import draw_result, draw_spread, prepare, staged_view, store, top_gap, warm_views
from ui.language import use_language
from ui.slots import LazyContainer

ss = st.session_state
TEACHER_EVERY_S = 1.0
RESULT_HEIGHT = 280  # pixels: the run's chart under the answer, with the numbers that settle it, within 720 lines
KEYS = "class_keys"  # code -> the teacher's key, for this session
NOT_THE_KEY = "class_not_the_key"  # the codes this session opened with a teacher's link that was not the class's
ERROR_KEY = "class_teach_error"


def teacher_key(code: str) -> str | None:
    """The teacher's key of class ``code`` for this session: taken from the link (and out of the address) when it
    is the class's, else the one kept; None for a student."""
    keys = ss.setdefault(KEYS, {})
    given = st.query_params.get(TEACHER_PARAM)
    if given is not None:
        try:
            is_teacher = store().is_teacher(code, given[:200])
        except AnswerRefused as refused:  # the store did not answer: the key stays in the link for a reload
            st.warning(str(refused.message), icon=":material/cloud_off:")
            return keys.get(code)
        del st.query_params[TEACHER_PARAM]
        if is_teacher:
            keys[code] = given[:200]
        else:
            ss.setdefault(NOT_THE_KEY, set()).add(code)
            # TRANSLATORS: {code} is a class code such as ABC234
            st.warning(t("This teacher's link does not open class {code}: the class has ended, or the link is cut "
                         "short. Here is the students' view.", code=code), icon=":material/key_off:")
    return keys.get(code)


def came_as_teacher(code: str) -> bool:
    """Whether this session opened class ``code`` with a teacher's link that was not the class's (a cut or forged
    one): its holder is shown the students' view but is not counted as a student who joined until they answer."""
    return code in ss.get(NOT_THE_KEY, ())


def act(code: str, key: str, action: str, question: int | None = None) -> None:
    """A teacher's button: ``action`` on the class (a refusal is kept to be shown)."""
    try:
        store().teach(code, key, action, question)
    except AnswerRefused as refused:
        ss[ERROR_KEY] = refused.message


def prepared_line(job: Job | Exception, preset: Preset) -> str:
    """How far the run that settles the question is, ahead of the reveal (once it is ready, its chart is built in
    every language); ``job`` may be why it could not be started."""
    if isinstance(job, Exception):
        return t("The run that settles this question failed: {error} Reveal tries again.", error=error_text(job))
    job.poll(0)
    if job.status == DONE:
        warmed = ss.setdefault("class_warmed", set())
        if preset.key not in warmed:
            warm_views(preset, job.result())
            warmed.add(preset.key)
        return _("The run that settles this question is ready.")
    if job.status == FAILED:
        try:
            job.result()
        except Exception as e:  # noqa: BLE001 - said, not raised: Reveal tries again
            # TRANSLATORS: {error} is the error's own text, in English
            return t("The run that settles this question failed: {error} Reveal tries again.", error=error_text(e))
    share = job.progress or 0.0
    # TRANSLATORS: {share} is the part done, e.g. 45%
    return t("The run that settles this question is being computed ahead of the reveal: {share:.0%} done.",
             share=share)


@dataclass(frozen=True)
class Places:
    """Where the live fragment draws on the teacher's screen: the buttons' row, the counts and the chart, the tools."""

    buttons: DeltaGenerator
    counts: DeltaGenerator
    tools: DeltaGenerator


@st.fragment(run_every=TEACHER_EVERY_S)
def live(code: str, key: str, stage: int, preset: Preset, places: Places) -> None:
    """The teacher's buttons, who has joined and answered, the spread of answers and the tools, redrawn every
    :data:`TEACHER_EVERY_S`; the whole page again when the class has changed stage (a button here, another of the
    teacher's tabs) or ended. The buttons are drawn here, not by the page: a click on a button outside a fragment that
    reruns by itself can be lost when the fragment's timer fires just after it (Streamlit 1.67), a click in it not."""
    use_language()  # a fragment's own rerun does not pass through app.py, which sets the reader's language
    screen = teacher_screen(staged_view(code, stage), time.time())
    with places.buttons:
        said: Msg | None = ss.pop(ERROR_KEY, None)
        if said is not None:
            st.error(str(said), icon=":material/block:")
        controls(code, key, screen)
    with places.counts:
        joined, answered, first = st.columns(3)
        # TRANSLATORS: counts on the teacher's screen: students who opened the class, who answered (in the second
        # round: answered again), who answered the first round
        joined.metric(_("Joined"), screen.joined)
        answered.metric(_("Answered") if screen.first_answered is None else _("Answered again"), screen.answered)
        if screen.first_answered is not None:
            first.metric(_("Answered first"), screen.first_answered)
        draw_spread(screen.spread, key="class_live_spread")
        if not screen.revealed:
            st.caption(prepared_line(prepare(preset), preset))
    with places.tools:
        tools(code, key, screen)


def controls(code: str, key: str, screen: TeacherScreen) -> None:
    """The buttons that run the lesson, in one row."""
    reveal, second, reset, back, forward = st.columns([3, 3, 2, 2, 2])
    # TRANSLATORS: the teacher's buttons: show the answer and the run; open a second round of answers; clear this
    # question's answers; go to the previous or next question of the class (Previous, Next)
    reveal.button(_("Reveal"), key="class_reveal", type="primary", disabled=screen.revealed,
                  icon=":material/visibility:", on_click=act, args=(code, key, REVEAL), width="stretch")
    second.button(_("Second round"), key="class_second", disabled=not screen.can_second, icon=":material/forum:",
                  help=_("After a discussion, students answer again; the first answers stay beside."),
                  on_click=act, args=(code, key, SECOND), width="stretch")
    reset.button(_("Reset"), key="class_reset", icon=":material/restart_alt:",
                 help=_("Clear this question's answers and ask again."), on_click=act, args=(code, key, RESET),
                 width="stretch")
    last = len(screen.titles) - 1
    back.button(_("Previous"), key="class_back", disabled=screen.position == 0, icon=":material/arrow_back:",
                on_click=act, args=(code, key, GOTO, max(0, screen.position - 1)), width="stretch")
    forward.button(_("Next"), key="class_next", disabled=screen.position >= last, icon=":material/arrow_forward:",
                   on_click=act, args=(code, key, GOTO, min(last, screen.position + 1)), width="stretch")


def join_panel(code: str) -> None:
    """How students join: the code, the link in the class's language (this screen's) and its QR code (never the
    teacher's key)."""
    link = student_link(app_base(st.context.url or "", CLASS_PATH), code, selectable_language())
    st.markdown(t("Join at **{link}**  ·  code **{code}**", link=link, code=spaced(code)))
    st.image(qr_png(link, scale=6), width=230)


def answers_download(code: str) -> None:
    """The class's answers as a CSV file, made when clicked. Drawn by the page, not by the live fragment: a download
    the fragment redrew every second would lose its file to the next redraw while a click on it was on its way."""
    st.download_button(_("Answers as CSV (counts only)"), data=lambda: answers_csv(store().view(code)),
                       file_name=f"class-{code}-answers.csv", mime="text/csv", on_click="ignore",
                       icon=":material/download:", key="class_answers_csv")


def tools(code: str, key: str, screen: TeacherScreen) -> None:
    """How long the class is kept, and its end (under the answers' file, in the page's expander)."""
    st.caption(screen.ends)
    st.caption(_("This address holds no key, so it can be projected. A reload opens the students' view; your "
                 "teacher's link opens this screen again."))
    st.button(_("End this class now"), key="class_close", icon=":material/stop_circle:", on_click=act,
              args=(code, key, CLOSE), help=_("Its answers are deleted; students see that the class has ended."))


def teacher_page(code: str, key: str) -> None:
    """The teacher's screen of class ``code``."""
    try:
        view = store().view(code)
    except AnswerRefused as refused:
        st.error(str(refused.message), icon=":material/link_off:")
        return
    screen = teacher_screen(view, time.time())
    preset = view.question.lesson
    top_gap()
    title, badge = st.columns([5, 1])
    title.subheader(screen.heading)
    badge.markdown(f"### `{spaced(code)}`")
    st.markdown(f"#### {screen.question}")
    buttons = st.container()
    left, right = st.columns([11, 9], gap="large")
    with st.expander(_("This class: its answers as a file, its end"), icon=":material/settings:"):
        answers_download(code)
        tools_place = st.container()
    live(code, key, view.stage, preset, Places(buttons, left.container(), tools_place))
    with right, LazyContainer()():  # the join panel goes at once when the run is waited for
        if screen.revealed:  # the answer and the run on a projector's 720 lines in every language; the lesson under
            st.success(t("The run settles it: **{answer}**", answer=screen.answer), icon=":material/check_circle:")
            draw_result(preset, st.container(), key="class_result", height=RESULT_HEIGHT)
            st.markdown(str(screen.lesson))
        else:
            st.caption(screen.status)
            join_panel(code)
