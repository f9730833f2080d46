"""Compare: a grid of configurations trained at once, one vmapped program per compiled configuration."""

from __future__ import annotations

import streamlit as st

from rnnlab import sweep
from rnnlab.figures import compare_views
from rnnlab.figures.compare_words import (
    describe_plan,
)
from rnnlab.figures.shared import VIEWS
from rnnlab.grids import FIELDS
from rnnlab.i18n import _, sentences, t, tn, tp
from rnnlab.model.cells import CARRY_INITS, CELLS
from rnnlab.model.network import CARRY_MODES, carry_mode_label
from rnnlab.server.work import Work, jobs
from rnnlab.sweep import SweepError
from rnnlab.text import escape_markdown
from rnnlab.training import estimate
from rnnlab.training.train import CALL_SECONDS
from ui.charts import chart, number_table
from ui.controls import config_controls, explain
from ui.progress import job_progress, settle
from ui.queue import client_id, submit, wait
from ui.session import kept, show_url_notes, url_state, write_url
from ui.slots import LazyContainer


def columns() -> dict[str, str]:
    """The results table's headers as the reader reads them (the CSV keeps the column names)."""
    # TRANSLATORS: the Compare table's headers. In English they are the CSV's column names; translate them as short
    # headers (the caption under the table explains each by the name given here).
    return {"label": tp("Compare table", "label"), "seed": tp("Compare table", "seed"),
            "steps": tp("Compare table", "steps"),
            "final_loss": tp("Compare table", "final_loss"), "eval_loss": tp("Compare table", "eval_loss"),
            "eval_metric": tp("Compare table", "eval_metric"), "h0_grad_norm": "||dL/dh_0||",
            "h0_log10": tp("Compare table", "h0_log10"), "h0_zero_cause": tp("Compare table", "h0_zero_cause"),
            "h0_zero_at": tp("Compare table", "h0_zero_at"), "of_baseline": tp("Compare table", "of_baseline"),
            "verdict": tp("Compare table", "verdict"), "diverged": tp("Compare table", "diverged")}


ss = st.session_state
ss.setdefault("cmp_result", None)
ss.setdefault("cmp_error", None)
# A plain dict: writable while Streamlit interrupts the script. A click starts the next script run at once and
# cancels the sweep's job, which stops after its compiled call (about a second) with what it trained.
stopped_sweeps = ss.setdefault("cmp_stopped", {})
stopped_job = stopped_sweeps.pop("job", None)
if stopped_job is not None and settle(stopped_job.poll) and stopped_job.status != "failed":
    try:
        stopped = stopped_job.result()
    except Exception:  # noqa: BLE001 - cancelled before it trained anything: nothing to show
        stopped = None
    if stopped is not None and any(h.steps for h in stopped.histories):
        ss.cmp_result, ss.cmp_error = stopped, None
CHOSEN = ("carry_mode", "carry_init", "cell")  # picked from a list; lr and seed are typed

url = url_state()
for name, text in url.compare.items():  # what was chosen here stays across other pages (and, in the URL, F5)
    kept(f"w_cmp_{name}", FIELDS[name].parse(text) if name in CHOSEN else text)
st.title(_("Compare configurations"))
show_url_notes()
base = config_controls(url)
url.config = base

st.markdown(_(
    "Train several configurations side by side and compare them on the same axes: a GRU against a simple RNN, "
    "a learned initial carry against a fixed one, a few learning rates, and each with several seeds, so that "
    "you can see which differences are larger than the luck of the draw."))

st.subheader(_("What varies"))
st.caption(_("An empty choice keeps the sidebar's value. Everything else (task, T, batch, features, steps, "
             "optimiser, clip, initialiser parameter) comes from the sidebar and is shared by every run."))


def as_in_sidebar(value: str) -> str:
    """An empty control's placeholder: the sidebar's value (as a link or an input box writes it)."""
    # TRANSLATORS: the placeholder of an empty control of the Compare grid; {value} is the sidebar's setting.
    return t("as in the sidebar ({value})", value=value)


# The options are ids (the widgets' state and the link keep them); the reader sees words through format_func.
cols = st.columns(3)
cols[0].multiselect(FIELDS["carry_mode"].shown_label, list(CARRY_MODES), key="w_cmp_carry_mode",
                    format_func=FIELDS["carry_mode"].option,
                    placeholder=as_in_sidebar(carry_mode_label(base.carry_mode)), select_all=False,
                    help=FIELDS["carry_mode"].shown_help)
cols[1].multiselect(FIELDS["carry_init"].shown_label, list(CARRY_INITS), key="w_cmp_carry_init",
                    format_func={name: FIELDS["carry_init"].option(name) for name in CARRY_INITS}.__getitem__,
                    placeholder=as_in_sidebar(CARRY_INITS[base.carry_init].word), help=FIELDS["carry_init"].shown_help,
                    select_all=False)
cols[2].multiselect(FIELDS["cell"].shown_label, list(CELLS), key="w_cmp_cell", format_func=FIELDS["cell"].option,
                    placeholder=as_in_sidebar(_(CELLS[base.cell].label)), select_all=False)
numbers = st.columns(2)
numbers[0].text_input(_("Learning rates"), key="w_cmp_lr", placeholder=as_in_sidebar(f"{base.lr:g}"),
                      help=FIELDS["lr"].shown_help)
numbers[1].text_input(_("Seeds"), key="w_cmp_seed", placeholder=as_in_sidebar(str(base.seed)),
                      help=FIELDS["seed"].shown_help)

errors: list[str] = []
axes: dict[str, list] = {name: list(ss[f"w_cmp_{name}"]) for name in ("carry_mode", "carry_init", "cell")}
for name in ("lr", "seed"):
    try:
        axes[name] = FIELDS[name].parse(ss[f"w_cmp_{name}"])
    except ValueError as e:
        errors.append(str(e))
for name in url.compare:  # what can be used goes into the URL, so that a reload or a link keeps it
    text = ", ".join(ss[f"w_cmp_{name}"]) if name in CHOSEN else ss[f"w_cmp_{name}"]
    try:
        FIELDS[name].parse(text)
    except ValueError:
        continue
    url.compare[name] = text
write_url(url)
configs: list = []
if not errors:
    try:
        configs = sweep.expand(base, axes)  # its refusals (too many runs, too much memory) in the reader's language
    except SweepError as e:
        errors.extend(e.messages)

if configs:
    st.markdown(describe_plan(configs, base))
for message in errors:
    st.error(escape_markdown(message), icon=":material/block:")


with st.expander(_("How the runs are trained at once")):
    st.markdown(_(
        "Runs that differ only in numbers the compiled training step takes as arguments (learning rate, seed) "
        "are stacked along a new leading axis with `jax.vmap` and trained by **one** compiled program, as one "
        "batched computation; that axis is split across every device JAX sees (`jax.sharding`), so a machine "
        "with several GPUs trains a bigger grid in the same time. A different cell, carry mode or `carry_init` "
        "changes the program itself, so each is compiled separately (and trained alongside the others, chunk "
        "by chunk)."))


def start() -> None:
    ss.cmp_action, ss.cmp_confirm = "run", None


def confirm_run() -> None:
    ss.cmp_action, ss.cmp_confirm, ss.cmp_confirmed = "run", None, True


guess = sweep.estimate_sweep(configs) if configs and not errors else None
st.button(_("Run sweep"), type="primary", icon=":material/play_arrow:", on_click=start, disabled=bool(errors),
          help=_("Train every configuration above; the charts appear when all have finished (or at Stop)."),
          key="cmp_run")
caption_slot, notes = st.empty(), LazyContainer()  # one element each in every run: nothing stays faded below


if guess is not None:
    # TRANSLATORS: {estimate} is how long it will take, e.g. "about 12 s (compiling about 6 s, then ...)".
    caption_slot.caption(t("Run sweep: {estimate}.", estimate=guess.describe()))
if ss.get("cmp_confirm") and guess is not None:
    notes().warning(t("This sweep will take {estimate}, longer than a minute. Start it anyway? (Stop "
                      "ends it within about a second and keeps what it trained.)", estimate=guess.describe()),
                    icon=":material/schedule:")
    go, cancel = notes().columns(2)
    go.button(_("Start anyway"), key="cmp_confirm_go", icon=":material/play_arrow:", on_click=confirm_run)
    cancel.button(_("Cancel"), key="cmp_confirm_cancel", on_click=ss.update, kwargs={"cmp_confirm": None})
progress_slot = st.empty()
stop_slot = st.empty()
results_slot = st.empty()  # an empty element until the results are drawn: the last run's page does not stay faded

if ss.pop("autorun_pending", False) and configs and not errors:  # a class link starts its sweep on opening
    start()
action = ss.pop("cmp_action", None)
# kept as a message: shown in the reader's language, also after a switch of language
refusal = estimate.refusal(guess, "This sweep") if action == "run" and guess is not None else None
confirmed = ss.pop("cmp_confirmed", False)
if refusal:
    ss.cmp_error, action = refusal, None
elif action == "run" and guess is not None and guess.total_s > estimate.CONFIRM_S and not confirmed:
    ss.cmp_confirm, action = True, None
    st.rerun()
if action == "run" and configs and not errors:
    progress_slot.progress(0.0, text=_("Starting…"))
    stop_slot.button(_("Stop"), icon=":material/stop:", key="cmp_stop",
                     help=_("Stop the sweep within about a second; the steps trained so far are shown."))
    job = submit(Work(jobs.compare_sweep, (configs, CALL_SECONDS), kind="sweep", label="compare sweep",
                      memory_bytes=sweep.total_memory_bytes(configs), client=client_id(),
                      key=compare_views.sweep_key(configs)))
    stopped_sweeps["job"] = job  # picked up by the next script run when a click interrupts this one
    # the job's place in the queue, then its progress and note (a message: in the reader's language)
    draw = job_progress(tp("progress", "Sweep"), progress_slot, guess.total_s if guess is not None else None)
    try:
        ss.cmp_result, ss.cmp_error = wait(job, progress_slot, draw), None
    except SweepError as e:
        ss.cmp_error = sentences(*e.messages)
    stopped_sweeps.pop("job", None)
    progress_slot.empty()
    stop_slot.empty()

def draw_results() -> None:
    """The last sweep's charts and table (or how to start one)."""
    if ss.cmp_error:
        st.error(escape_markdown(str(ss.cmp_error)), icon=":material/block:")

    result: sweep.SweepResult | None = ss.cmp_result
    if result is None:
        st.info(_("Press **Run sweep**. The default compares a GRU with a simple RNN, three seeds each, on the "
                  "sidebar's experiment (the adding problem at T = 100): do gates let a cell remember across 100 "
                  "steps? Add carry modes or initialisers to compare those instead."),
                icon=":material/info:")
        return

    shown = VIEWS.get(compare_views.view_key(result), lambda: compare_views.compare_view(result))
    labels = shown.labels
    if not result.stopped:
        # TRANSLATORS: {programs} is "2 compiled programs", {devices} "1 device", each counted in its own words.
        st.success(tn("Trained {n} run in {programs} on {devices} in {seconds:.1f} s.",
                      "Trained {n} runs in {programs} on {devices} in {seconds:.1f} s.", len(result.configs),
                      programs=tn("{n} compiled program", "{n} compiled programs", result.programs),
                      devices=tn("{n} device", "{n} devices", result.devices), seconds=result.seconds),
                   icon=":material/check_circle:")
    if result.stopped:
        trained = sorted({h.last_step for h in result.histories})
        if len(trained) == 1:
            stopped_text = t("Stopped at step {step} of {steps}: the charts and the table show what was trained "
                             "until then. Press **Run sweep** to train it again from the start.",
                             step=trained[0], steps=result.steps)
        else:
            stopped_text = t("Stopped with {low} to {high} steps trained (see the steps column) of {steps}: the "
                             "charts and the table show what was trained until then. Press **Run sweep** to train "
                             "it again from the start.", low=trained[0], high=trained[-1], steps=result.steps)
        st.warning(stopped_text, icon=":material/stop_circle:")
    if result.configs != configs:
        st.info(_("These results are from the previous sweep; the selection has changed since. Press **Run sweep** "
                  "to train the new one."), icon=":material/history:")
    for label, config, reason in zip(labels, result.configs, result.stop_reasons):
        if reason:
            # TRANSLATORS: {reason} says why the run stopped early (e.g. its loss diverged).
            st.warning(t("**{label}, seed {seed}**: {reason}", label=label, seed=config.seed, reason=str(reason)),
                       icon=":material/warning:")

    st.subheader(_("1. Loss curves"))
    chart(st, shown.curves, key="cmp_curves")
    explain(_("The training loss of each configuration: the line is the mean over its seeds, the band the lowest "
              "and highest seed at each step. The dashed line is the task's memoryless baseline: a run below it has "
              "learned to use what it remembers."))

    st.subheader(_("2. Final loss and the gradient reaching the initial carry"))
    left, right = st.columns(2)
    chart(left, shown.final_loss, key="cmp_final")
    chart(right, shown.h0, key="cmp_h0")
    if shown.zero_caption:
        right.caption(shown.zero_caption)
    explain(_("Left: the loss on each run's fixed evaluation batch after the last step (bar: mean over seeds; "
              "whisker: lowest to highest seed; dots: each seed), against the memoryless baseline. Right: "
              "||dL/dh_0||, the size of the gradient of that loss with respect to the initial carry, with the final "
              "parameters (as on the Gradient flow page), at its true size: the probe carries its scale as a "
              "logarithm, so a gradient far below float32's smallest number (about 1e-38, where float32 arithmetic "
              "gives 0) is still measured; the dashed line is that floor when the values come near it. A learnable "
              "carry is trained by exactly this gradient: where it has vanished, a learned start cannot move."))

    st.subheader(_("3. Final figures"))
    number_table(st, shown.table, NUMBER_FORMATS, hide_index=True, key="cmp_table",
                 column_config=column_config(shown.table))
    # TRANSLATORS: explains the Compare table's columns by their headers (translate the names as in the headers);
    # {baseline} is the memoryless baseline's loss, {solved} and {memory} the verdicts' thresholds (10%, 90%).
    st.caption(t("final_loss: the last training batch's loss; eval_loss and eval_metric: the fixed evaluation "
                 "batch after the last step; ||dL/dh_0||: its true size (h0_log10: its log10; h0_zero_cause and "
                 "h0_zero_at, shown when one is exactly 0 and always in the CSV: why, and the step that cut it); "
                 "of_baseline: eval_loss as a share of the memoryless baseline ({baseline:.4g}); verdict: at most "
                 "{solved:.0%} of it is 'learned the task', below {memory:.0%} 'uses some memory, not solved' "
                 "(below the baseline, but far from solved).", baseline=result.baseline,
                 solved=sweep.SOLVED_FRACTION, memory=sweep.MEMORY_FRACTION))
    # The CSV keeps the English column names and values whatever the reader's language.
    st.download_button(_("Final figures (CSV)"), shown.csv, "sweep.csv", "text/csv", icon=":material/table:",
                       on_click="ignore")


# How the results table writes its numbers (each the reader's way: number_table); the CSV keeps them as they are.
NUMBER_FORMATS = {"lr": "g", "final_loss": ".4g", "eval_loss": ".4g", "eval_metric": ".4g", "h0_log10": ".3f",
                  "of_baseline": ".2%"}


def column_config(table) -> dict:
    """The results table's column settings as the reader sees them: headers in the reader's words (the numbers'
    formats are NUMBER_FORMATS)."""
    names = columns()
    return {c: st.column_config.Column(names.get(c, c)) for c in table.columns}


with results_slot.container():
    draw_results()
