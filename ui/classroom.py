"""The class page's shared parts: the class's code from the link (or typed), the store that keeps the answers
(:func:`rnnlab.server.answers.current_answers`), who answers, and the run that settles a question: keyed work
through the executor, computed once for the whole class (:func:`result_work`), drawn from views built once per
language (:func:`draw_result`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

import plotly.graph_objects as go
import streamlit as st

from rnnlab.figures import answer_views
from rnnlab.figures.gradient_views import sweep_key, sweep_view, sweep_view_key
from rnnlab.figures.run_views import describe_gap, describe_twin, loss_view
from rnnlab.figures.shared import VIEWS, view_key
from rnnlab.i18n import LANGUAGES, N_, _, t, using
from rnnlab.probing.analysis import first_steps_gap
from rnnlab.server.answers import AnswerRefused, AnswerStore, current_answers
from rnnlab.server.work import Job, Work, jobs
from rnnlab.session.class_screens import Spread
from rnnlab.sharing.classes import CODE_PARAM, ClassView, normal_code
from rnnlab.sharing.presets import Preset
from rnnlab.text import error_text
from ui.charts import CHART_CONFIG, chart
from ui.progress import job_progress
from ui.queue import client_id, submit, wait

ss = st.session_state
RETRY_S = 5.0  # a run that could not be submitted ahead of the reveal is tried again this often
CODE_KEY = "class_code"  # the class this session is in, kept when a page switch or the language drops the link's


def store() -> AnswerStore:
    """Where the classes' answers are kept (this process's, or the cluster's)."""
    return current_answers()


def student() -> str:
    """Who answers: the gate's fair-share identity (a browser on its machine; a tab on the server's own)."""
    return client_id()


def code_from_link() -> tuple[str | None, str]:
    """The class's code (None when there is none or it cannot be a code) and the text given, from the link, else
    the one this session is in. The link keeps the code (the language selector may rewrite the link)."""
    given = st.query_params.get(CODE_PARAM)
    if given is None and ss.get(CODE_KEY):
        st.query_params[CODE_PARAM] = given = ss[CODE_KEY]
    code = normal_code(given)
    if code is not None:
        ss[CODE_KEY] = code
    return code, (given or "")[:40]


def staged_view(code: str, stage: int) -> ClassView:
    """For a fragment of a class page: the class's view now; the whole page runs again instead when the teacher has
    changed what is shown since the page was drawn at ``stage``, or the class has ended."""
    try:
        view = store().view(code)
    except AnswerRefused:
        st.rerun()
    if view.stage != stage:
        st.rerun()
    return view


def join_form() -> None:
    """A box to type the class's code in; the page opens that class."""
    with st.form("class_join", border=True, enter_to_submit=True):
        typed = st.text_input(_("Class code"), max_chars=12, placeholder="ABC 234",
                              help=_("The six letters and digits your teacher shows."))
        if st.form_submit_button(_("Join"), type="primary"):
            ss.pop(CODE_KEY, None)
            st.query_params[CODE_PARAM] = typed.strip()[:40]
            st.rerun()


# ---- the run that settles a question ------------------------------------------------------------------------------
def result_work(preset: Preset) -> Work:
    """The work whose result settles ``preset``'s question, keyed as its page keys it, so that the class, the page
    and everyone on its link compute it once: the finished run (Explore) or the decay sweep (Gradient flow)."""
    config = preset.config
    if preset.page == "gradients":
        cells, lengths = list(preset.sweep_cells), list(preset.sweep_lengths)
        need = max(replace(config, cell=c, seq_len=T).memory_bytes() for c in cells for T in lengths)
        return Work(jobs.decay_sweep, (config, cells, lengths, preset.sweep_weights), kind="sweep",
                    label=N_("gradient sweep"), memory_bytes=need, client=client_id(),
                    key=sweep_key(config, tuple(cells), tuple(lengths), preset.sweep_weights))
    if preset.compare_zero:
        return Work(jobs.finished_twins, (config,), kind="train", label=N_("the question's run"),
                    memory_bytes=2 * config.memory_bytes(), client=client_id(), key=("finished twins", config))
    return Work(jobs.finished_run, (config,), kind="train", label=N_("the question's run"),
                memory_bytes=config.memory_bytes(), client=client_id(), key=("finished run", config))


def prepare(preset: Preset) -> Job | Exception:
    """The run of ``preset`` started ahead of the reveal, once per session (again after a failure, at most every
    :data:`RETRY_S`): the job to poll, or why it could not be submitted (a cluster that did not answer in time)."""
    prepared = ss.setdefault("class_prepared", {})
    kept = prepared.get(preset.key)
    if isinstance(kept, tuple):
        failure, at = kept
        if time.monotonic() - at < RETRY_S:
            return failure
    elif kept is not None and kept.status not in ("failed", "cancelled"):
        return kept
    try:
        job = prepared[preset.key] = submit(result_work(preset))
    except Exception as e:  # noqa: BLE001 - said on the teacher's page, and tried again
        prepared[preset.key] = (e, time.monotonic())
        return e
    return job


def result_figure(preset: Preset, value) -> go.Figure:
    """The chart of ``preset``'s result (:func:`result_work`'s value), built once per language for everyone."""
    if preset.page == "gradients":
        sweep, fits = value
        key = sweep_key(preset.config, preset.sweep_cells, preset.sweep_lengths, preset.sweep_weights)
        return VIEWS.get(sweep_view_key(key), lambda: sweep_view(sweep, fits, preset.config.task,
                                                                 preset.sweep_weights, preset.config.seed)).figure
    run = value[0] if preset.compare_zero else value
    return VIEWS.get(view_key(run, "loss"), lambda: loss_view(run))[0]


def settling_sentence(preset: Preset, value) -> str | None:
    """Under the chart of a question on a zero-carry comparison, the numbers that settle it, as the Explore page
    gives them: the losses from fresh carries (a drawn carry), or over the first time steps (a learned one)."""
    if not preset.compare_zero:
        return None
    run, twin, fresh = value
    return describe_twin(*fresh) if fresh is not None else describe_gap(first_steps_gap(run.history, twin.history))


def warm_views(preset: Preset, value) -> None:
    """Build the chart of ``preset``'s result in every language ahead of the reveal (kept for everyone), so that the
    class's screens only serialise it when the teacher reveals."""
    for lang in LANGUAGES:
        with using(lang):
            result_figure(preset, value)


def draw_wait(placeholder) -> Callable[[Job, float], None]:
    """How a page shows the wait for the class's run: its progress, or that it is being computed for everyone."""
    progress = job_progress(_("The question's run"), placeholder)

    def draw(job: Job, waited: float) -> None:
        info = job.queue
        if info is not None and info.reason == "result":
            placeholder.info(_("The run that settles this question is being computed, once for the whole class…"),
                             icon=":material/hourglass_top:")
        else:
            progress(job, waited)

    return draw


def draw_result(preset: Preset, container, key: str, height: int | None = None) -> None:
    """The run that settles ``preset``'s question, in ``container``: waited for (computed once for everyone), then
    its chart (``height`` pixels high, else the figure's own)."""
    with container:
        placeholder = st.empty()
        try:
            value = wait(submit(result_work(preset)), placeholder, draw_wait(placeholder))
        except Exception as e:  # noqa: BLE001 - a message, never a traceback: the next script run tries again
            # TRANSLATORS: {error} is the error's own text, in English
            placeholder.error(t("The run that settles this question could not be computed: {error} Reload the page "
                                "to try again.", error=error_text(e)), icon=":material/error:")
            return
        st.plotly_chart(result_figure(preset, value), key=key, config=CHART_CONFIG, height=height or "content")
        sentence = settling_sentence(preset, value)
        if sentence:
            st.markdown(sentence)


def top_gap() -> None:
    """A little room above a class page's first line, which sits higher than a page title: the tops of Chinese
    characters stayed under Streamlit's header."""
    st.html("<div style='height: 1px'></div>")


def draw_spread(spread: Spread, key: str, height: int = 330) -> None:
    """The class's answers as bars."""
    chart(st, answer_views.spread_figure(spread.choices, spread.counts, spread.rounds, spread.answer, spread.title,
                                       height), key=key)
