"""Compare: a grid of configurations trained at once, one vmapped program per compiled configuration."""

from __future__ import annotations

import math

import streamlit as st

from rnnlab.figures import plots, true_size
from rnnlab.grids import FIELDS
from rnnlab.model.cells import CARRY_INITS, CELLS
from rnnlab.model.network import CARRY_MODES
from rnnlab.probing import sweep
from rnnlab.probing.probes import format_log10
from rnnlab.probing.sweep import SweepError
from rnnlab.server import jobs
from rnnlab.server.executor import Work, current_executor
from rnnlab.text import escape_markdown
from rnnlab.training import estimate
from rnnlab.training.train import PART_SECONDS
from ui.charts import chart
from ui.controls import config_controls, explain
from ui.progress import job_progress, settle
from ui.queue import client_id, wait
from ui.session import kept, show_url_notes, url_state, write_url
from ui.slots import LazyContainer

MAX_CURVE_POINTS = 500  # steps per curve drawn (the table and the CSV keep every number)

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
st.title("Compare configurations")
show_url_notes()
base = config_controls(url)
url.config = base

st.markdown(
    "Train several configurations side by side and compare them on the same axes: a GRU against a simple RNN, "
    "a learned initial carry against a fixed one, a few learning rates, and each with several seeds, so that "
    "you can see which differences are larger than the luck of the draw.")

st.subheader("What varies")
st.caption("An empty choice keeps the sidebar's value. Everything else (task, T, batch, features, steps, "
           "optimiser, clip, initialiser parameter) comes from the sidebar and is shared by every run.")
cols = st.columns(3)
cols[0].multiselect("Carry mode", list(CARRY_MODES), key="w_cmp_carry_mode",
                    placeholder=f"as in the sidebar ({base.carry_mode})",
                    help=" ".join(f"{k}: {v}." for k, v in CARRY_MODES.items()))
cols[1].multiselect("carry_init", list(CARRY_INITS), key="w_cmp_carry_init",
                    placeholder=f"as in the sidebar ({base.carry_init})",
                    help="Each initialiser uses the sidebar's initialiser parameter where it has one.")
cols[2].multiselect("Cell", list(CELLS), key="w_cmp_cell", format_func=lambda n: CELLS[n].label,
                    placeholder=f"as in the sidebar ({CELLS[base.cell].label})")
numbers = st.columns(2)
numbers[0].text_input("Learning rates", key="w_cmp_lr", placeholder=f"as in the sidebar ({base.lr:g})",
                   help="Comma-separated, e.g. 0.003, 0.01, 0.03. They share one compiled program.")
numbers[1].text_input("Seeds", key="w_cmp_seed", placeholder=f"as in the sidebar ({base.seed})",
                   help="Comma-separated, e.g. 0, 1, 2. Seeds of one setting are drawn as a mean and a band.")

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
        configs = sweep.expand(base, axes)
    except SweepError as e:
        errors.extend(e.messages)

if configs:
    st.markdown(f"**{sweep.describe_plan(configs)}**, each {base.steps} steps of {base.chunk} per chunk "
                "(a sweep's runs share the number of steps).")
for message in errors:
    st.error(escape_markdown(message), icon=":material/block:")


with st.expander("How the runs are trained at once"):
    st.markdown(
        "Runs that differ only in numbers the compiled training step takes as arguments (learning rate, seed) "
        "are stacked along a new leading axis with `jax.vmap` and trained by **one** compiled program, as one "
        "batched computation; that axis is split across every device JAX sees (`jax.sharding`), so a machine "
        "with several GPUs trains a bigger grid in the same time. A different cell, carry mode or `carry_init` "
        "changes the program itself, so each is compiled separately (and trained alongside the others, chunk "
        "by chunk).")


def start() -> None:
    ss.cmp_action, ss.cmp_confirm = "run", None


def confirm_run() -> None:
    ss.cmp_action, ss.cmp_confirm, ss.cmp_confirmed = "run", None, True


guess = sweep.estimate_sweep(configs) if configs and not errors else None
st.button("Run sweep", type="primary", icon=":material/play_arrow:", on_click=start, disabled=bool(errors),
          help="Train every configuration above; the charts appear when all have finished (or at Stop).")
caption_slot, notes = st.empty(), LazyContainer()  # one element each in every run: nothing stays faded below


if guess is not None:
    caption_slot.caption(f"Run sweep: {guess.describe()}.")
if ss.get("cmp_confirm") and guess is not None:
    notes().warning(f"This sweep will take {guess.describe()}, longer than a minute. Start it anyway? (Stop "
                    "ends it within about a second and keeps what it trained.)", icon=":material/schedule:")
    go, cancel = notes().columns(2)
    go.button("Start anyway", key="cmp_confirm_go", icon=":material/play_arrow:", on_click=confirm_run)
    cancel.button("Cancel", key="cmp_confirm_cancel", on_click=ss.update, kwargs={"cmp_confirm": None})
progress_slot = st.empty()
stop_slot = st.empty()
results_slot = st.empty()  # an empty element until the results are drawn: the last run's page does not stay faded

action = ss.pop("cmp_action", None)
refusal = estimate.over_limit(guess, "This sweep") if action == "run" and guess is not None else None
confirmed = ss.pop("cmp_confirmed", False)
if refusal:
    ss.cmp_error, action = refusal, None
elif action == "run" and guess is not None and guess.total_s > estimate.CONFIRM_S and not confirmed:
    ss.cmp_confirm, action = True, None
    st.rerun()
if action == "run" and configs and not errors:
    progress_slot.progress(0.0, text="Starting…")
    stop_slot.button("Stop", icon=":material/stop:", key="cmp_stop",
                     help="Stop the sweep within about a second; the steps trained so far are shown.")
    job = current_executor().submit(Work(jobs.compare_sweep, (configs, PART_SECONDS), kind="sweep",
                                         label="compare sweep", memory_bytes=sweep.total_memory_bytes(configs),
                                         client=client_id()))
    stopped_sweeps["job"] = job  # picked up by the next script run when a click interrupts this one
    try:
        ss.cmp_result, ss.cmp_error = wait(job, progress_slot, job_progress("Sweep", progress_slot)), None
    except SweepError as e:
        ss.cmp_error = " ".join(e.messages)
    stopped_sweeps.pop("job", None)
    progress_slot.empty()
    stop_slot.empty()

def draw_results() -> None:
    """The last sweep's charts and table (or how to start one)."""
    if ss.cmp_error:
        st.error(escape_markdown(ss.cmp_error), icon=":material/block:")

    result: sweep.SweepResult | None = ss.cmp_result
    if result is None:
        st.info("Press **Run sweep**. The default compares a GRU with a simple RNN, three seeds each, on the "
                "sidebar's experiment (the adding problem at T = 100): do gates let a cell remember across 100 steps? "
                "Add carry modes or initialisers to compare those instead.",
                icon=":material/info:")
        return

    if not result.stopped:
        st.success(f"Trained {len(result.configs)} runs in {result.programs} compiled program(s) on {result.devices} "
                   f"device(s) in {result.seconds:.1f} s.", icon=":material/check_circle:")
    if result.stopped:
        trained = sorted({h.last_step for h in result.histories})
        when = (f"at step {trained[0]}" if len(trained) == 1 else
                f"with {trained[0]} to {trained[-1]} steps trained (see the steps column)")
        st.warning(f"Stopped {when} of {result.steps}: the charts and the table show what was trained until then. "
                   "Press **Run sweep** to train it again from the start.", icon=":material/stop_circle:")
    if result.configs != configs:
        st.info("These results are from the previous sweep; the selection has changed since. Press **Run sweep** to "
                "train the new one.", icon=":material/history:")
    for label, config, reason in zip(result.labels, result.configs, result.stop_reasons):
        if reason:
            st.warning(f"**{label}, seed {config.seed}**: {reason}", icon=":material/warning:")

    summary = result.summary_df()
    st.subheader("1. Loss curves")
    spread = result.spread_df()
    every = max(1, math.ceil(result.steps / MAX_CURVE_POINTS))
    if every > 1:
        last = spread.groupby("label")["step"].transform("max")
        spread = spread[(spread["step"] % every == 0) | (spread["step"] == last)]
    chart(st, plots.sweep_curves_figure(spread, result.baseline), key="cmp_curves")
    explain("The training loss of each configuration: the line is the mean over its seeds, the band the lowest and "
            "highest seed at each step. The dashed line is the task's memoryless baseline: a run below it has learned "
            "to use what it remembers.")

    st.subheader("2. Final loss and the gradient reaching the initial carry")
    left, right = st.columns(2)
    chart(left, plots.sweep_bar_figure(summary, "eval_loss", "Final evaluation loss per configuration",
                                             "evaluation loss (log scale)", result.baseline), key="cmp_final")
    chart(right, true_size.log10_bar_figure(summary, "Gradient reaching the initial carry per configuration",
                                            "||dL/dh_0|| (true size)"), key="cmp_h0")
    zero = [(label, config.seed, size) for label, config, size in zip(result.labels, result.configs, result.h0)
            if size.cause]
    if zero:
        right.caption("Exactly 0 by the arithmetic, not too small to store (the probe keeps any size), drawn on the "
                      "bottom row: " + " ".join(f"{label} (seed {seed}): {size.describe_zero()}"
                                                for label, seed, size in zero))
    explain("Left: the loss on each run's fixed evaluation batch after the last step (bar: mean over seeds; "
            "whisker: lowest to highest seed; dots: each seed), against the memoryless baseline. Right: "
            "||dL/dh_0||, the size of the gradient of that loss with respect to the initial carry, with the final "
            "parameters (as on the Gradient flow page), at its true size: the probe carries its scale as a "
            "logarithm, so a gradient far below float32's smallest number (about 1e-38, where float32 arithmetic "
            "gives 0) is still measured; the dashed line is that floor when the values come near it. A learnable "
            "carry is trained by exactly this gradient: where it has vanished, a learned start cannot move.")

    st.subheader("3. Final figures")
    number = {c: st.column_config.NumberColumn(format="%.4g") for c in ("final_loss", "eval_loss", "eval_metric")}
    table = summary.assign(h0_grad_norm=[format_log10(v) if not math.isnan(v) else "not measured"
                                         for v in summary["h0_log10"]])
    if not (table["h0_zero_cause"] != "").any():  # the columns that say why an exact 0 is 0: only when one is
        table = table.drop(columns=["h0_zero_cause", "h0_zero_at"])
    st.dataframe(table, hide_index=True, key="cmp_table",
                 column_config={**number, "h0_grad_norm": st.column_config.TextColumn("||dL/dh_0||"),
                                "h0_log10": st.column_config.NumberColumn(format="%.3f"),
                                "of_baseline": st.column_config.NumberColumn(format="percent")})
    st.caption("final_loss: the last training batch's loss; eval_loss and eval_metric: the fixed evaluation "
               "batch after the last step; ||dL/dh_0||: its true size (h0_log10: its log10; h0_zero_cause and "
               "h0_zero_at, shown when one is exactly 0 and always in the CSV: why, and the step that cut it); "
               "of_baseline: eval_loss as a share of "
               "the memoryless baseline "
               f"({result.baseline:.4g}); verdict: at most {sweep.SOLVED_FRACTION:.0%} of it is 'learned the task', "
               f"below {sweep.MEMORY_FRACTION:.0%} 'uses some memory, not solved' (below the baseline, but far from "
               "solved).")
    st.download_button("Final figures (CSV)", result.to_csv(), "sweep.csv", "text/csv", icon=":material/table:",
                       on_click="ignore")


with results_slot.container():
    draw_results()
