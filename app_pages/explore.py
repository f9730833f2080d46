"""Explore a cell: train it in chunks (Train / Stop / Step / Reset) and watch loss, carry and per-step loss."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from rnnlab.i18n import _, t
from rnnlab.session.explore_actions import Asked, Compiled, Effect, PendingSeen, StepBegun, TrainingEnded
from rnnlab.text import escape_markdown
from ui.controls import config_controls
from ui.example_view import draw_example
from ui.explore_charts import draw_charts, draw_progress, places
from ui.explore_controls import (
    WELCOME,
    draw_buttons,
    draw_downloads,
    draw_loader,
    draw_pin_and_share,
    draw_question,
    forked_note,
    restored_note,
    stale_note,
)
from ui.explore_state import carry_out, costs, explore_state, facts
from ui.explore_training import (
    TrainingFailed,
    compile_pending,
    follow_settings,
    robustness,
    step_once,
    train,
    zero_key,
    zero_twin,
)
from ui.progress import settle
from ui.session import keep_run, share_link, show_url_notes, url_state, write_url
from ui.slots import LazyContainer
from ui.work import start_run

ss = st.session_state
state = explore_state()

url = url_state()
st.title(t("Explore a cell"))
show_url_notes()
config = config_controls(url)
with st.sidebar:
    compare_zero = st.checkbox(t("Overlay a zero-carry run on the per-step loss"), key="w_compare_zero",
                               value=url.compare_zero,
                               help=t("Trains the same configuration with a fixed zero initial carry for as many "
                                      "steps, to compare the loss at each time step."))
url.config, url.compare_zero = config, compare_zero
write_url(url)
errors = config.validate()

if state.run is not None:
    settle(state.run.settle)  # after a click or a reload, the interrupted script run finishes its call first
# Buttons only record what was asked (ss.action); it is decided here, with this run's settings.
asked = Asked(facts(state.run, config, errors), ss.pop("action", None), ss.pop("confirmed", False),
              ss.pop("autorun_pending", False))
carry_out(state, state.apply(asked), config)
keep_run(state.run)  # on the server too, so that a browser reload finds it
run = state.run
stale = run is not None and not run.matches(config)
if run is not None and not stale and not errors:
    follow_settings(run, config)  # no recompilation: these are arguments of the compiled call

draw_buttons(config.chunk, errors, state.actions.busy)
draw_pin_and_share(state, url)
# TRANSLATORS: Markdown: keep [the link's words](...) together, with {url} as it is
link = t("[Link to this experiment]({url}) to share its settings (without your session).", url=share_link(url))
if errors:
    st.caption(link)
else:
    train_cost, step_cost = costs(run, config)
    # TRANSLATORS: "Train" and "Step" are the buttons; {train} and {step} are estimates such as "about 12 s (300
    # steps at about 20 ms each)"; {link} is the sentence with the link to this experiment
    st.caption(t("Train: {train}. Step: {step}. {link}", train=train_cost.describe(), step=step_cost.describe(),
                 link=link))
notes = LazyContainer()  # messages above the charts: one element in every run
if state.actions.question and not errors:
    draw_question(notes, state.actions.question)
for message in errors:
    notes().error(str(message), icon=":material/block:")
if state.actions.error:  # kept: rendered in the reader's language now
    notes().error(escape_markdown(str(state.actions.error)), icon=":material/block:")
restored = ss.pop("restored_step", None)
if restored is not None and run is not None:
    notes().info(restored_note(run, restored), icon=":material/restore:")
forked = ss.pop("forked_step", None)
if forked is not None and run is not None:
    notes().info(forked_note(forked), icon=":material/content_copy:")
draw_loader(state.uploader_key, state.actions.load_message)
if stale and run is not None:
    notes().info(stale_note(run.config, config), icon=":material/history:")
if run is None:
    notes().info(_(WELCOME), icon=":material/info:")
where = places()


def progress(shown, steps_per_second: float | None = None) -> None:
    draw_progress(where, shown, steps_per_second)


def robustness_of(shown) -> pd.DataFrame:
    kept = tuple(r for r in (state.run, *state.zero_runs.values()) if r is not None)
    return robustness(shown, state.robust, kept, where.queue)


def charts(shown, n: int) -> None:
    """The charts of ``shown`` as they are now (the robustness table only while nothing trains)."""
    draw_charts(where.charts, shown, n, state.pinned, state.zero_runs.get(zero_key(shown)),
                None if state.training else robustness_of)


def keep(trained) -> None:
    state.run = trained


pending = state.actions.pending
if pending is not None:  # a new run whose long first compile runs in a worker, which Stop and leaving end
    effects = state.apply(PendingSeen(pending.static_key() == config.static_key() and pending.seed == config.seed))
    if Effect.COMPILE in effects:
        effects = state.apply(Compiled(compile_pending(pending, where.status, where.queue,
                                                       lambda: state.actions.busy)))
    if Effect.BUILD_PENDING in effects:
        state.run = run = start_run(pending)
        stale = False
    if Effect.SAY_STOPPED in effects:
        where.status.info(t("Stopped while compiling; press Train to start again."), icon=":material/stop_circle:")

if run is not None:
    progress(run)
    charts(run, 0)
    if state.training and not stale:
        try:
            train(run, keep, lambda: state.training, where.status, where.queue, progress, charts)
            ended = TrainingEnded()
        except TrainingFailed as failure:
            ended = TrainingEnded(failure.message)
        carry_out(state, state.apply(ended), config)  # redraw the buttons (Stop off) and the downloads
    elif state.actions.step_once:
        state.apply(StepBegun())
        try:
            rate = step_once(run, keep, where.status, where.queue, progress, costs(run, config)[1].describe())
        except TrainingFailed as failure:
            carry_out(state, state.apply(TrainingEnded(failure.message)), config)
        if rate is None:
            st.stop()
        run = state.run or run
        keep_run(run)
        progress(run, rate)
        charts(run, 1)

    if compare_zero and run.step > 0 and not state.training:
        if run.config.carry_mode == "fixed" and run.config.carry_init == "zeros":
            st.caption(t("This run already uses a fixed zero carry."))
        elif zero_key(run) not in state.zero_runs:
            state.zero_runs = {zero_key(run): zero_twin(run, where.queue)}
            charts(run, 99)

    draw_example(run)
    draw_downloads(run)
