"""Explore's section "One example, unrolled": the controls, the looks (computed once per run, step and example)
and their charts (:mod:`rnnlab.probing.example`, :mod:`rnnlab.figures.example_plots`)."""

from __future__ import annotations

import streamlit as st

from rnnlab.figures.run_views import example_view
from rnnlab.figures.shared import VIEWS, view_key
from rnnlab.i18n import N_, _
from rnnlab.probing import example
from rnnlab.probing.example import Look
from rnnlab.server.work import Work, jobs
from rnnlab.training.train import Run
from ui.charts import chart
from ui.controls import explain
from ui.marks import SLIDER, clickable_chart, marked, set_mark
from ui.queue import client_id, run_job

KEEP_LOOKS = 3  # looks kept per session (each training step or example number has its own)
LONG_STEPS = 1000  # past this many time steps the replay keeps three snapshots (start, middle, end)

ss = st.session_state


def looks_of(run: Run, index: int, placeholder) -> list[Look]:
    """Example ``index`` under each kept snapshot of ``run`` (the first is the untrained model) and its current
    parameters; kept per run, step and example, so redrawing the page computes nothing again (and computed once
    for everyone for a pristine run). Light looks take no slot."""
    key = (id(run), run.step, index)
    kept = list(ss.get("example_looks", {}).items())[-KEEP_LOOKS:]  # the latest few of this run: bounded
    cache = {k: v for k, v in kept if k[0] == id(run)}
    if key not in cache:
        model = jobs.Model.of(run)
        frames = model.snapshots_at(9 if run.program.steps <= LONG_STEPS else 3)
        if frames[-1][0] != run.step:
            frames = frames + [(run.step, model.params)]
        work = Work(jobs.example_looks, (model, frames, index), kind="example", label=N_("example view"),
                    memory_bytes=run.config.memory_bytes(), client=client_id(),
                    key=("example", run.config, run.step, index) if run.pristine else None,
                    slot=example.looks_seconds(run.config, len(frames)) >= example.LIGHT_S)
        cache[key] = run_job(work, placeholder, progress=_("Looking at one example under each kept snapshot"))
        placeholder.empty()
    ss.example_looks = cache
    return cache[key]


def draw_example(run: Run) -> None:
    """The section: a new-example button, the time step to mark, a log time axis, the unrolled view, the keeper
    gate's heatmap and what the example shows, in numbers. The looks are a job, with a slot of its own unless
    they are light."""
    ss.setdefault("example_index", 0)
    st.subheader(_("4. One example, unrolled"))
    steps = run.program.steps
    new, log_col, mark_col = st.columns([1, 1, 2], vertical_alignment="bottom")
    new.button(_("New example"), key="example_new", icon=":material/shuffle:",
               on_click=lambda: ss.update(example_index=ss.example_index + 1),
               help=_("Draw another sequence of the task (the model and its snapshots stay as they are)."))
    log_time = log_col.checkbox(_("Log time axis"), key="w_example_log", value=steps > 200,
                                help=_("Space the time steps logarithmically, so that the first steps and the "
                                       "initial carry stay visible in a long sequence."))
    ss[SLIDER] = min(marked(), steps)
    mark = mark_col.slider(_("Mark time step t"), 0, steps, key=SLIDER, on_change=lambda: set_mark(ss[SLIDER]),
                           help=_("Draw a line at this step in every per-step chart, here and on Gradient flow "
                                  "(clicking a point of one of them marks its step too; hovering a panel below "
                                  "shows every panel's value at that step)."))
    status = st.empty()
    index = ss.example_index
    looks = looks_of(run, index, status)
    gates = run.program.spec.gates
    view = VIEWS.get(view_key(run, "example", index, mark, log_time),
                     lambda: example_view(looks, index, mark, log_time, gates))
    clickable_chart(st, view.unrolled, "unrolled", 1.0 if log_time else 0.0)
    st.markdown(view.summary)
    if view.keeper is not None:
        chart(st, view.keeper, key="keeper")
        st.markdown(view.keeper_summary)
    explain(_("One sequence of the task, drawn as the model reads it, one cell per time step from the initial "
            "carry h_0 (t = 0) on the left. The panels share their time axis: hover one and the same step is "
            "marked in all. **Prediction**: the model's answer at every step, untrained (dotted) and now "
            "(classification tasks: the probability it gives the right answer). **Carry norm**: the size of the "
            "state passed along. **||dL/dh_t||**: how much this example's loss still depends on the carry at "
            "step t, i.e. the gradient flowing back towards h_0, drawn at its true size (log10, labelled in powers "
            "of ten; the dashed line is float32's smallest normal number, drawn when the values come near it, and "
            "an exact 0 sits on the bottom row, its hover saying why). Play replays the snapshots kept during training "
            "(they are not trained again); the slider picks one."))

