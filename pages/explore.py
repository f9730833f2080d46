"""Explore a cell: train it in chunks (Train / Stop / Step / Reset) and watch loss, carry and per-step loss."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace

import numpy as np
import pandas as pd
import streamlit as st

from rnnlab.config import STATIC_FIELDS, Config, ConfigError
from rnnlab.figures import ab, plots
from rnnlab.files import export
from rnnlab.probing import analysis, probes
from rnnlab.server import gate as scheduling
from rnnlab.server.shared_runs import RUNS
from rnnlab.text import error_text, escape_markdown
from rnnlab.training import estimate
from rnnlab.training.train import PART_SECONDS, Run, RunView
from ui.charts import chart
from ui.compiling import compile_first, compiles_in_worker
from ui.controls import config_controls, explain
from ui.example_view import draw_example
from ui.marks import marked_chart
from ui.progress import progress_bar, settle
from ui.queue import lead_slot, shared_result, training_slot
from ui.session import keep_run, share_link, show_url_notes, url_state, write_url
from ui.share import share_dialog
from ui.slots import LazyContainer

CHART_INTERVAL_S = 1.0  # while training, charts are redrawn at most this often (the progress bar every chunk)
UPLOAD_MB = export.MAX_PARAMS_BYTES // 2**20  # as the server's maxUploadSize in .streamlit/config.toml

ss = st.session_state
ss.setdefault("run", None)
ss.setdefault("training", False)
ss.setdefault("zero_runs", {})
ss.setdefault("explore_error", None)
ss.setdefault("load_message", None)  # (kind, text) of the last parameter upload
ss.setdefault("upload_n", 0)  # a new uploader after each upload, so the same file can be loaded again

url = url_state()
st.title("Explore a cell")
show_url_notes()
config = config_controls(url)
with st.sidebar:
    compare_zero = st.checkbox("Overlay a zero-carry run on the per-step loss", key="w_compare_zero",
                               value=url.compare_zero,
                               help="Trains the same configuration with a fixed zero initial carry for as many "
                                    "steps, to compare the loss at each time step.")
url.config, url.compare_zero = config, compare_zero
write_url(url)
errors = config.validate()


def same_run(run: Run | None, config: Config) -> bool:
    return run is not None and run.matches(config)


def run_of(new: Config) -> Run:
    """A run of ``new``: a copy of the one another session trained (or is training), else an initialisation and
    one evaluation."""
    return RUNS.copy_of(new) or Run(new)


def start_new_run() -> None:
    ss.pending_config = None
    if not errors and compiles_in_worker(config):
        ss.run, ss.pending_config, ss.explore_error = None, config, None  # built below, once compiled
        return
    try:
        ss.run = run_of(config)
        ss.explore_error = None
    except ConfigError as e:
        ss.run, ss.training, ss.explore_error = None, False, " ".join(e.messages)


def train() -> None:
    """Train: continue the current run, or start a new one when the settings changed or it has finished."""
    run = ss.run
    if not same_run(run, config) or (run.done and run.step >= config.steps) or run.history.stop_reason:
        start_new_run()
    ss.training = ss.run is not None or ss.get("pending_config") is not None


def step() -> None:
    """Step: one chunk, on the current run or a new one."""
    if not same_run(ss.run, config) or ss.run.done:
        start_new_run()
    ss.training = False
    ss.step_once = ss.run is not None or ss.get("pending_config") is not None


def reset() -> None:
    ss.run, ss.training, ss.zero_runs, ss.explore_error, ss.load_message = None, False, {}, None, None


def load_parameters() -> None:
    """Start a run of the current settings from an uploaded parameter file; a bad file leaves the run as it is."""
    file = ss.get(f"w_params_file_{ss.upload_n}")
    ss.upload_n += 1
    if file is None:
        return
    try:
        with training_slot(config.memory_bytes(), st.empty(), label="parameter upload", scheduler=scheduling.GATE):
            params = export.load_params(file.getvalue(), config)
            loaded = Run(config, params=params, origin=file.name)
    except (export.ExportError, ConfigError) as e:
        why = str(e)
    except Exception as e:  # noqa: BLE001  (a file must never crash the page)
        why = error_text(e)
    else:
        ss.run, ss.training, ss.zero_runs, ss.explore_error = loaded, False, {}, None
        ss.load_message = ("success", (
            f"Loaded the parameters in {file.name}. A new run starts from them at step 0: the file holds only "
            f"the parameters, so the optimiser's state ({config.optimizer}'s running averages, if it keeps any) "
            f"starts fresh, and the step count, history and batches start over from seed {config.seed}. "
            f"The charts show the loaded parameters; press Train or Step to train them further."))
        return
    ss.load_message = ("error", f"{file.name} was not loaded: {why.rstrip('.')}. The current run is unchanged.")


def slot(for_config: Config, what: str = "training"):
    """Hold one of the server's training slots (the queue position shows in the status line meanwhile)."""
    return training_slot(for_config.memory_bytes(), queue_slot, label=what, scheduler=scheduling.GATE)


def cost(what: str) -> estimate.Estimate:
    """How long Train (the remaining steps, or all of a new run) or Step (one chunk) will take."""
    run = ss.run
    if what == "step":
        return estimate.estimate(config, steps=config.chunk)
    left = config.steps - run.step if same_run(run, config) and not run.history.stop_reason else config.steps
    return estimate.estimate(config, steps=max(left, 0) or config.steps)


if ss.run is not None:
    settle(ss.run.settle)  # after a click or a reload, the interrupted script run finishes its call first
# Buttons only record what was asked; it is done here, with this run's settings.
action = ss.pop("action", None)
if ss.pop("autorun_pending", False) and not errors:
    action = "autorun"
if action in ("train", "step", "autorun") and not errors:
    guess = cost("step" if action == "step" else "train")
    confirmed = ss.pop("confirmed", False)
    refusal = estimate.over_limit(guess)
    if refusal:  # too long for this server: not even asked
        ss.explore_error, ss.confirm, action = refusal, None, None
    elif guess.total_s > estimate.CONFIRM_S and not confirmed:  # long work starts only when asked twice
        ss.confirm, action = (action, guess.describe()), None
if action is not None:
    ss.confirm = None  # another button: the question is gone
if action in ("train", "step", "reset"):
    ss.load_message = None
if action == "train" and not errors:
    train()
elif action == "step" and not errors:
    step()
elif action == "stop":
    ss.training = ss.step_once = False  # also a Step whose run waits for its compile
elif action == "reset":
    reset()
elif action == "load":
    load_parameters()
if action == "autorun":
    train()
    st.rerun()  # train in a second script run: in a session's first run the browser keeps widgets inactive

keep_run(ss.run)  # on the server too, so that a browser reload finds it
run: Run | None = ss.run
stale = run is not None and not same_run(run, config)
if run is not None and not stale and not errors:
    dynamic = {k: getattr(config, k) for k in ("lr", "clip", "carry_scale", "steps")}
    if dynamic != {k: getattr(run.config, k) for k in dynamic}:
        run.update(**dynamic)  # no recompilation: these are arguments of the compiled chunk
if stale:
    ss.training = False

BUTTONS = [  # label, action, icon, help, disabled
    ("Train", "train", "play_arrow", "Train to the number of steps (continues a stopped run).", bool(errors)),
    ("Stop", "stop", "stop", "Stop within about a second; every step trained so far stays.",
     not (ss.training or ss.get("step_once"))),
    ("Step", "step", "skip_next", f"Train one chunk ({config.chunk} steps).", bool(errors)),
    ("Reset", "reset", "restart_alt", "Forget the run.", False),
]
for col, (label, name, icon, help_text, disabled) in zip(st.columns(4), BUTTONS):
    col.button(label, type="primary" if name == "train" else "secondary", on_click=ss.update,
               kwargs={"action": name}, disabled=disabled, icon=f":material/{icon}:", help=help_text,
               use_container_width=True)

pin, unpin, share = st.columns([1, 1, 1])
pin.button("Pin this run as A", key="ab_pin", icon=":material/push_pin:", disabled=run is None or not run.step,
           on_click=lambda: ss.update(pinned=ss.run.view()),
           help="Keep this run on the charts as A: change the settings and train B to compare both on the same "
                "axes (GRU against simple RNN, zero against learned carry, two lengths T).")
unpin.button("Unpin A", key="ab_unpin", icon=":material/close:", disabled=ss.get("pinned") is None,
             on_click=lambda: ss.update(pinned=None), help="Take run A off the charts.")
if share.button("Share with the class", key="share_class", icon=":material/qr_code_2:",
                help="A link and a QR code to project: choose which controls the class may not change and "
                     "whether training starts when the link opens."):
    share_dialog(url)
link = f"[Link to this experiment]({share_link(url)}) to share its settings (without your session)."
st.caption(f"Train: {cost('train').describe()}. Step: {cost('step').describe()}. {link}" if not errors else link)
notes = LazyContainer()  # messages above the charts: one element in every run
pending = ss.get("confirm")
if pending and not errors:
    what, described = pending
    notes().warning(f"This will take {described}, longer than a minute. Start it anyway? (Stop ends it within "
                  "about a second and keeps every step trained.)", icon=":material/schedule:")
    go, cancel = notes().columns(2)
    go.button("Start anyway", key="confirm_go", icon=":material/play_arrow:",
              on_click=ss.update, kwargs={"action": "train" if what == "autorun" else what, "confirmed": True,
                                          "confirm": None})
    cancel.button("Cancel", key="confirm_cancel", on_click=ss.update, kwargs={"confirm": None})
for message in errors:
    notes().error(message, icon=":material/block:")
if ss.explore_error:
    notes().error(escape_markdown(ss.explore_error), icon=":material/block:")
restored = ss.pop("restored_step", None)
if restored is not None and run is not None:
    if run.history.stop_reason:
        then = "It had stopped (see below); Train starts a new run."
    elif run.step >= run.config.steps:
        then = "It had finished: raise the training steps and press Train to continue it."
    else:
        then = "Press Train to continue it."
    notes().info(f"Your run is back after the page was reloaded, at step {restored} (the last step it finished). "
               f"{then}", icon=":material/restore:")
with st.sidebar.expander("Load parameters (.msgpack)", expanded=ss.load_message is not None):
    # No type= filter: Streamlit would answer another extension with an exception box; the content decides.
    st.file_uploader("Load parameters (.msgpack)", key=f"w_params_file_{ss.upload_n}",
                     on_change=ss.update, kwargs={"action": "load"}, max_upload_size=UPLOAD_MB,
                     help=f"A file from the Parameters download (at most {UPLOAD_MB} MB) for the current "
                          "settings: same cell, features, task and carry mode. A new run starts from it.")
    if ss.load_message:
        kind, text = ss.load_message
        (st.error if kind == "error" else st.success)(escape_markdown(text), icon=":material/data_object:")
if stale:
    changed = [k for k in STATIC_FIELDS + ("seed",) if getattr(run.config, k) != getattr(config, k)]
    notes().info(f"The charts show the previous run; you changed {', '.join(changed)}. Press Train or Step to "
               "start a new run with the new settings.", icon=":material/history:")

if run is None:
    notes().info("Choose settings in the sidebar and press **Train**, or start from a preset on the Home page. "
               "The default trains a GRU with a learnable initial carry on the adding problem (T = 100).",
               icon=":material/info:")
progress_column, finished_column = st.columns([3, 2], vertical_alignment="center")
progress_slot, finished_slot = progress_column.empty(), finished_column.empty()
status_slot = st.empty()  # what is happening (compiling) or what went wrong
queue_slot = st.empty()  # the place in the server's queue while waiting for a slot
charts_slot = st.empty()


def draw_progress(run: Run | RunView, steps_per_second: float | None = None) -> None:
    fraction = min(1.0, run.step / max(run.config.steps, 1))
    speed = f" · {estimate.format_rate(steps_per_second)}" if steps_per_second else ""
    progress_slot.progress(fraction, text=f"step {run.step} / {run.config.steps}{speed}")
    if run.history.stop_reason:
        status_slot.error(f"{run.history.stop_reason} Then press Train for a new run.", icon=":material/warning:")
    else:
        status_slot.empty()
    if run.done and not run.history.stop_reason:
        finished_slot.success(f"Finished {run.step} steps.", icon=":material/check_circle:")
    else:
        finished_slot.empty()


def draw_charts(run: Run | RunView, n: int) -> None:
    """All charts of ``run``; ``n`` makes element keys unique when redrawn during training."""
    history, task = run.history, run.program.task
    baseline = task.baseline(run.config.seq_len)
    steps, evals = analysis.thin(history.steps_df()), history.chunks_df()
    loss = plots.loss_figure(steps, evals, baseline, task.baseline_text)
    if history.diverged_at is not None:
        loss.add_vline(x=history.diverged_at, line=dict(color="red", dash="dot"),
                       annotation_text=f"diverged at step {history.diverged_at}", annotation_position="top left")
    with charts_slot.container():
        st.subheader("1. Loss")
        if task.metric_is_loss:  # the metric is the loss itself: one chart
            chart(st, loss, key=f"loss_{n}")
        else:
            left, right = st.columns(2)
            chart(left, loss, key=f"loss_{n}")
            chart(right, plots.metric_figure(steps, evals, task.metric_name), key=f"metric_{n}")
        explain(f"The training loss of each batch (a fresh batch every step) and the loss on a fixed evaluation "
                f"batch after each chunk, on a log scale. The dashed line is the memoryless baseline: the loss "
                f"of the best prediction that sees, at each step, only the position and the current input, and "
                f"nothing earlier ({task.baseline_text}). A cell below it uses what it remembers.")

        pinned = ss.get("pinned")
        if pinned is not None:
            draw_ab(pinned, run, n)

        st.subheader("2. The initial carry")
        mode = run.config.carry_mode
        if mode != "learnable":
            what = ("drawn once for the whole run" if mode == "fixed"
                    else "drawn again for every batch (the evaluation batch's draw is shown)")
            st.info(f"In **{mode}** mode the initial carry is not a parameter: it is "
                    f"`cell.initialize_carry(key, input_shape)` with {run.config.carry_init}, {what}, so it does "
                    "not learn. The heatmap shows what it is; choose the learnable mode to watch it move.",
                    icon=":material/lock:")
        for leaf in history.leaves:
            units = analysis.thin_evaluations(analysis.carry_units_df(history, leaf))
            chart(st, plots.carry_heatmap(units, leaf), key=f"heat_{leaf}_{n}")
        left, right = st.columns(2)
        chart(left, plots.carry_distance_figure(analysis.carry_distance_df(history)), key=f"dist_{n}")
        chart(right, plots.carry_pca_figure(analysis.carry_pca_df(history)), key=f"pca_{n}")
        if mode != "learnable" and history.steps and not ss.training:
            draw_robustness(run)
        if history.steps:
            st.markdown(f"**By step {history.last_step}:** {analysis.describe_movement(history)}. The heatmap's "
                        "colours run from -1 to 1 (a tanh unit's range) or wider, the same for every run, so a "
                        "tiny movement stays pale.")
        explain("A learnable initial carry is a parameter per carry leaf (`c0`, `h0`), broadcast over the batch "
                "and trained with the weights; its gradient is the sum over the batch of dL/dh_0. The heatmap "
                "shows each unit after every chunk, the middle chart its distance from where it started, and "
                "the right one its path projected on the two directions it varied most (PCA). LSTMs carry two "
                "leaves, c and h, shown separately. Gers, Schraudolph & Schmidhuber (2002) argue the initial "
                "state should be learned.")

        st.subheader("3. Loss at each time step")
        table = analysis.per_step_loss_table(history, f"{mode} carry ({run.config.carry_init})")
        zero = ss.zero_runs.get(zero_key(run))
        if zero is not None:
            table = analysis.pd.concat([table, analysis.per_step_loss_table(zero.history, "fixed zero carry")])
        if pinned is not None and pinned.history.per_step_loss:
            a_label, _ = ab.labels(pinned.config, run.config)
            table = analysis.pd.concat([table, analysis.per_step_loss_table(pinned.history, f"A: {a_label}")])
        step_baselines = task.step_baselines(run.config.seq_len)
        marked_chart(st, plots.per_step_loss_figure(table, step_baselines), f"per_step_{n}", 1, len(step_baselines))
        if len(table) and not np.isfinite(table["loss"].to_numpy(float)).any():
            st.caption("Nothing to draw: every per-step loss of the last evaluation is infinite or not a number, "
                       "because the run diverged (see the message above).")
        elif len(table) and (table["loss"].to_numpy(float) > 1e30).all():
            st.caption("The per-step losses of the last evaluation are enormous because the run diverged.")
        if zero is not None:
            gap = analysis.first_steps_gap(history, zero.history)
            st.markdown(f"**Over the first {gap['steps']} time steps** the loss is {gap['run']:.3g} with this run's "
                        f"initial carry and {gap['zero']:.3g} with a fixed zero carry: "
                        + (f"the zero carry's is {gap['ratio']:.3g} times as large." if gap["ratio"] >= 1 else
                           f"the zero carry's is {1 / gap['ratio']:.3g} times smaller here."))
            first = table[table["t"] <= max(8, 2 * gap["steps"])]
            marked_chart(st, plots.per_step_loss_figure(first, step_baselines[: int(first["t"].max())],
                                                        title="The first time steps, zoomed in"),
                         f"per_step_first_{n}", 1, int(first["t"].max()))
        scored = task.scored_steps(run.config.seq_len)
        only_last = "" if scored.all() else (
            f" {task.label} scores only the last step, so the memoryless baseline is drawn there only: the earlier "
            "steps show how the final answer forms as the sequence is read, and are not compared with it.")
        explain("The loss on the evaluation batch at every time step of the sequence, after the latest chunk, "
                "with the memoryless baseline of each step (dashed). A learned start shows its value at the "
                "first steps: a zero carry has to spend steps finding where the sequence is, a learned carry can "
                "already encode what every sequence shares (R2RT, \"Non-Zero Initial States for Recurrent Neural "
                "Networks\", 2016)." + only_last)


def draw_ab(pinned: RunView, run: Run | RunView, n: int) -> None:
    """Run A (pinned) and this run (B) on shared axes, and the comparison in numbers."""
    st.subheader("A/B: the pinned run (A) and this one (B)")
    a_label, b_label = ab.labels(pinned.config, run.config)
    baseline = run.program.task.baseline(run.config.seq_len) if pinned.config.task == run.config.task else None
    left, right = st.columns(2)
    chart(left, ab.loss_figure(pinned.history, run.history, a_label, b_label, baseline), key=f"ab_loss_{n}")
    chart(right, ab.moved_figure(pinned.history, run.history, a_label, b_label), key=f"ab_moved_{n}")
    a, b = ab.side(pinned.config, pinned.history, a_label), ab.side(run.config, run.history, b_label)
    st.markdown(ab.describe(a, b))  # registry labels and numbers only


def robustness(run: Run):
    """A run's losses from other starts, cached per run and step (nine small evaluations; the run and its
    zero-carry twin are kept, so a redraw computes nothing again)."""
    key = (id(run), run.step)
    cache = {k: v for k, v in ss.get("robust", {}).items() if k[0] in (id(ss.run), *map(id, ss.zero_runs.values()))}
    if key not in cache:
        key_for_all = ("robustness", run.config, run.step) if run.pristine else None
        status = st.empty()
        cache[key] = shared_result(
            key_for_all,
            lambda: probes.start_robustness(run, progress=progress_bar("Starting the model elsewhere", status)),
            lambda: slot(run.config, "robustness check"), queue_slot)
        status.empty()
    ss.robust = cache
    return cache[key]


def draw_robustness(run: Run) -> None:
    """How the model does when started from other initial carries, beside its zero-carry twin when there is one."""
    losses = {f"this run ({run.config.carry_mode} carry)": robustness(run).set_index("start")["loss"]}
    zero = ss.zero_runs.get(zero_key(run))
    if zero is not None:
        losses["trained from a zero carry"] = robustness(zero).set_index("start")["loss"]
    table = pd.DataFrame(losses)
    st.markdown("**Started from other initial carries** (the evaluation batch's loss; fresh carries: the mean "
                f"of {probes.ROBUSTNESS_DRAWS} draws):")
    st.dataframe(table, column_config={c: st.column_config.NumberColumn(format="%.3g") for c in table.columns})
    if zero is not None:
        mine, theirs = table.iloc[1, 0], table.iloc[1, 1]
        ratio = f"{theirs / mine:.3g} times as large" if theirs >= mine else f"{mine / theirs:.3g} times smaller"
        st.markdown(f"From {table.index[1]}, this run's loss is {mine:.3g} and the zero-trained twin's "
                    f"{theirs:.3g}: {ratio}.")


@contextmanager
def training_of(run: Run, keep: Callable[[Run], None], what: str = "training") -> Iterator[Run]:
    """The run to train for the session's ``run``, with a server slot: the shared run of the same configuration
    and seed (``rnnlab.server.shared_runs``: identical steps are computed once, for everyone watching), or
    ``run`` alone when it cannot be shared. ``keep`` receives the session's run afterwards: what was trained (a
    copy of it when others go on training it)."""
    further = RUNS.copy_of(run.config, after_step=run.step) if run.pristine else None
    if further is not None:  # someone trained it further and left it: continue from there
        run = further
        keep(run)
    watch = RUNS.join(run)
    if watch is None:
        with slot(run.config, what):
            yield run
        return
    try:
        with lead_slot(watch, queue_slot, what, scheduler=scheduling.GATE):
            yield watch.lead
    finally:
        watch.leave()
        keep(watch.lead if watch.last else watch.lead.fork())


def keep_as_run(run: Run) -> None:
    ss.run = run


def next_call(lead: Run) -> None:
    """One compiled call of ``lead``, or (while another session's call on it is in progress) a wait for that."""
    if lead.run_chunk(PART_SECONDS, wait=False) is None:
        lead.settle(5 * PART_SECONDS)


def chunk_end(run: Run) -> int:
    """The step that ends ``run``'s current chunk."""
    return min(run.config.steps, (run.step // run.config.chunk + 1) * run.config.chunk)


def zero_key(run: Run | RunView) -> tuple:
    return (run.config.static_key(), run.config.seed, run.config.lr, run.config.clip, run.step)


pending = ss.get("pending_config")
if pending is not None:  # a new run whose long first compile runs in a worker, which Stop and leaving end
    wanted = ss.training or ss.get("step_once", False)
    stopped = not wanted
    if wanted and pending.static_key() == config.static_key() and pending.seed == config.seed:
        with slot(pending, "compiling"):
            stopped = not compile_first(pending, status_slot, lambda: bool(ss.training or ss.get("step_once")))
        if not stopped:
            ss.run = run = run_of(pending)
            stale = False
    if stopped:
        ss.training = ss.step_once = False
        status_slot.info("Stopped while compiling; press Train to start again.", icon=":material/stop_circle:")
    ss.pending_config = None

if run is not None:
    draw_progress(run)
    draw_charts(run, 0)
    if ss.training and not stale:
        with training_of(run, keep_as_run) as lead:
            if not compile_first(lead.config, status_slot, lambda: ss.training):
                ss.training = False
            n, drawn, began, first_step = 0, time.monotonic(), time.monotonic(), lead.step
            while not lead.done and ss.training:
                next_call(lead)
                keep_run(lead, throttle=True)
                n += 1
                if n == 1:  # the first call may include compiling: the rate counts from its end
                    began, first_step = time.monotonic(), lead.step
                view = lead.view()
                rate = (view.step - first_step) / (time.monotonic() - began) if n > 1 else None
                draw_progress(view, rate)  # steps per second of the user's clock, drawing included
                if n == 1 or time.monotonic() - drawn >= CHART_INTERVAL_S:
                    draw_charts(view, n)  # redrawing every chart is the browser's heaviest work: at most ~1/s
                    drawn = time.monotonic()
        ss.training = False
        st.rerun()  # redraw the buttons (Stop off) and the downloads for the finished run
    elif ss.pop("step_once", False):
        with training_of(run, keep_as_run) as lead:
            if not compile_first(lead.config, status_slot, lambda: True):
                st.stop()
            began, first_step, target = time.monotonic(), lead.step, chunk_end(lead)
            with st.spinner(f"Training one chunk of {lead.config.chunk} steps: {cost('step').describe()}…"):
                while not lead.done and lead.step < target:
                    next_call(lead)
                    draw_progress(lead.view())  # also where a Stop click takes effect
            status_slot.empty()
        run = ss.run
        keep_run(run)
        draw_progress(run, (run.step - first_step) / max(time.monotonic() - began, 1e-9))
        draw_charts(run, 1)

    if compare_zero and run.step > 0 and not ss.training:
        if run.config.carry_mode == "fixed" and run.config.carry_init == "zeros":
            st.caption("This run already uses a fixed zero carry.")
        elif zero_key(run) not in ss.zero_runs:
            zero_config = replace(run.config, carry_mode="fixed", carry_init="zeros", steps=run.step)
            twin: dict[str, Run] = {}
            with st.spinner(f"Training the zero-carry comparison ({run.step} steps, "
                            f"{estimate.estimate(zero_config).describe()})…"):
                with training_of(run_of(zero_config), lambda r: twin.update(run=r), "zero-carry comparison") as lead:
                    zero_bar = st.progress(0.0, text="zero-carry comparison: step 0")
                    while not lead.done:
                        next_call(lead)
                        zero_bar.progress(min(1.0, lead.step / lead.config.steps),
                                          text=f"zero-carry comparison: step {lead.step} / {lead.config.steps}")
                    zero_bar.empty()
            zero = twin["run"]
            ss.zero_runs = {zero_key(run): zero}
            draw_charts(run, 99)

    draw_example(run, lambda: slot(run.config, "example view"))
    st.subheader("Download")
    stem = export.filename_stem(run.config)
    cols = st.columns(3)
    cols[0].download_button("History (CSV)", export.history_csv(run.history), f"{stem}_history.csv", "text/csv",
                            icon=":material/table:", on_click="ignore")
    cols[1].download_button("Parameters (msgpack)", export.params_msgpack(run.params), f"{stem}_params.msgpack",
                            "application/octet-stream", icon=":material/data_object:", on_click="ignore")
    cols[2].download_button("Reproduction script (.py)", export.reproduce_script(run.config), f"{stem}.py",
                            "text/x-python", icon=":material/code:", on_click="ignore")
    if run.origin:
        st.caption(f"This run started from the parameters in {run.origin}; the reproduction script starts from "
                   "the seed's parameters.")

