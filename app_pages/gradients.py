"""Gradient flow: ||dL/dh_t|| through time, the gradient reaching h_0 against T, and connectivity."""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from rnnlab import grids
from rnnlab.config import ConfigError
from rnnlab.figures import gradient_views
from rnnlab.figures.shared import VIEWS, view_key
from rnnlab.i18n import N_, _, join_list, join_sentences, t, tn, tp
from rnnlab.model.cells import CELLS
from rnnlab.probing import probes
from rnnlab.server.work import Work, jobs
from rnnlab.sharing.urlstate import parse_cells, parse_lengths
from rnnlab.text import error_text, escape_markdown
from rnnlab.training.train import Run
from ui.charts import chart
from ui.marks import clickable_chart, marked
from ui.queue import client_id, run_job
from ui.session import kept, show_url_notes, url_state, write_url
from ui.work import probe, untrained_run

ss = st.session_state
ss.setdefault("run", None)
ss.setdefault("sweep_result", None)
url = url_state()
config = url.config
st.title(_("Gradient flow"))
show_url_notes()


def current_model() -> tuple[Run, bool]:
    """The Explore page's run when it matches the settings, else an untrained model of the settings."""
    run = ss.run
    if run is not None and run.matches(config):
        return run, True
    cached = ss.get("untrained")
    if cached is None or cached.config != config:
        cached = ss.untrained = untrained_run(config, queue_slot)
    return cached, False


errors = config.validate()
if errors:
    for message in errors:
        st.error(str(message), icon=":material/block:")
    st.stop()

queue_slot = st.empty()
run, trained = current_model()
cell = CELLS[config.cell]

def model_caption() -> str:
    """Which model the page probes, in one sentence (one message per carry mode)."""
    values = dict(cell=_(cell.label), task=_(run.program.task.label), T=config.seq_len)
    if config.carry_mode == "fixed":
        # TRANSLATORS: {cell} is a cell's name, {n} its hidden features, {task} the task's name, {T} its length
        return tn("Model: {cell} with {n} feature on {task}, T = {T}, fixed carry. Change it on the Explore page.",
                  "Model: {cell} with {n} features on {task}, T = {T}, fixed carry. Change it on the Explore page.",
                  config.features, **values)
    if config.carry_mode == "noisy":
        # TRANSLATORS: {cell} is a cell's name, {n} its hidden features, {task} the task's name, {T} its length
        return tn("Model: {cell} with {n} feature on {task}, T = {T}, noisy carry. Change it on the Explore page.",
                  "Model: {cell} with {n} features on {task}, T = {T}, noisy carry. Change it on the Explore page.",
                  config.features, **values)
    if config.carry_mode == "learnable":
        # TRANSLATORS: {cell} is a cell's name, {n} its hidden features, {task} the task's name, {T} its length
        return tn("Model: {cell} with {n} feature on {task}, T = {T}, learnable carry. Change it on the Explore "
                  "page.", "Model: {cell} with {n} features on {task}, T = {T}, learnable carry. Change it on the "
                  "Explore page.", config.features, **values)
    # TRANSLATORS: {mode} is a carry mode's id; the rest as "Model: {cell} with {n} features ..."
    return tn("Model: {cell} with {n} feature on {task}, T = {T}, {mode} carry. Change it on the Explore page.",
              "Model: {cell} with {n} features on {task}, T = {T}, {mode} carry. Change it on the Explore page.",
              config.features, mode=config.carry_mode, **values)


st.caption(model_caption())
if not trained:
    st.info(_("No trained run of these settings in this session, so this is the untrained model. Train it on "
              "**Explore a cell** to see how the picture changes as the cell learns."), icon=":material/info:")

st.subheader(_("1. ||dL/dh_t|| through time"))
key = (id(run), run.step)
if ss.get("grad_time_key") != key:
    ss.grad_time = probe(jobs.grad_through_time, run, N_("gradient probe"),
                         _("Probing the gradient at every time step"), queue_slot)
    ss.grad_time_key = key
if ss.get("conn_key") != key:  # part 3's probe, computed here: both charts share one axis to be compared
    ss.conn = probe(jobs.connectivity, run, N_("connectivity probe"), _("Computing connectivity"), queue_slot)
    ss.conn_key = key
grads, conn = ss.grad_time, ss.conn
probed = VIEWS.get(view_key(run, "gradient probes"), lambda: gradient_views.probe_view(grads, conn))
mark = marked()
clickable_chart(st, VIEWS.get(view_key(run, "gradient in time", mark),
                              lambda: gradient_views.time_figure(grads, probed, mark)), "grad_time_chart")
for sentence in probed.captions:
    st.caption(sentence)
st.markdown(probed.decay_back)
with st.expander(_("What am I looking at?")):
    st.markdown(_(
        "For every time step t, the norm (over the batch and units) of the gradient of the loss with respect to "
        "the carry h_t. t = 0 is the gradient that reaches the initial carry. The backward pass keeps the "
        "gradient's size as a logarithm, so each value is shown at its true size, also far below float32's "
        "smallest normal number, where a float32 backward pass gives 0; an exact 0 (by the cell's arithmetic) "
        "is marked at the bottom and named by its cause. The axis is log10: a constant factor per step is a "
        "straight line, and the sentences above give each line's fitted factor per step back. "
        "Lines are drawn at the start, middle and end of training, so you can see the decay change as the cell "
        "learns (as in RNNbow). LSTMs show c (dotted) and h (solid)."))

st.subheader(_("2. The gradient that reaches the initial carry, against sequence length"))
vector_cells = [n for n, c in CELLS.items() if not c.spatial]
left, middle, right = st.columns([2, 2, 3])
kept("w_sweep_cells", list(url.sweep_cells))
kept("w_sweep_lengths", ", ".join(map(str, url.sweep_lengths)))
kept("w_sweep_weights", url.sweep_weights)
# TRANSLATORS: the picker of the cells a sweep compares (the unrolled example's "Cells" is a row of one cell per step)
chosen = left.multiselect(tp("cells to compare", "Cells"), vector_cells, format_func=lambda n: _(CELLS[n].label),
                          key="w_sweep_cells", placeholder=_("Choose cells"), select_all=False)
lengths_text = middle.text_input(_("Sequence lengths T (comma-separated)"), key="w_sweep_lengths")
training = grids.SWEEP_TRAINING
# TRANSLATORS: an option: {n} training steps at sequence length {T}
trained_label = tn("trained briefly ({n} step at T = {T})", "trained briefly ({n} steps at T = {T})",
                   training["steps"], T=training["seq_len"])
weights = right.radio(
    _("Weights"), grids.SWEEP_WEIGHTS, key="w_sweep_weights", horizontal=True,
    format_func={"trained": trained_label, "untrained": _("untrained (as initialised)")}.get,
    help=_("Trained: each cell first learns the task for a moment (the same training for everyone, done once "
           "per server), which is when gates learn to keep the gradient. Untrained: Flax's initial weights."))
url.sweep_weights = weights
# TRANSLATORS: Gradient flow's button: it measures the gradient for each cell and length (Compare's trains a grid).
st.button(tp("Gradient flow", "Run sweep"), icon=":material/play_arrow:",
          on_click=lambda: ss.update(sweep_requested=True))
planned_cells, _unused = parse_cells(",".join(chosen))
planned_lengths, _unused = parse_lengths(lengths_text)
sweep_base = config if not run.program.task.spatial else replace(config, task="adding")
if planned_cells and planned_lengths and not any(  # a sweep that can run goes into the URL: a reload keeps it
        replace(sweep_base, cell=c, seq_len=T).validate() for c in planned_cells for T in planned_lengths):
    url.sweep_cells, url.sweep_lengths = planned_cells, planned_lengths
if planned_cells and planned_lengths and not run.program.task.spatial:
    # TRANSLATORS: {estimate} says how long the sweep will take ("about 12 s, 3 s of it compiling")
    st.caption(t("Run sweep: {estimate}. Any click stops it between two probes.",
                 estimate=probes.estimate_decay_sweep(config, planned_cells, planned_lengths, weights)))

sweep_error = None
if ss.pop("sweep_requested", False) or ss.pop("autorun_pending", False):
    cells, cell_error = parse_cells(",".join(chosen))
    lengths, length_error = parse_lengths(lengths_text)
    sweep_error = cell_error or length_error
    if not sweep_error:
        base = config if not run.program.task.spatial else replace(config, task="adding")
        try:
            for c in cells:
                for T in lengths:
                    problems = replace(base, cell=c, seq_len=T).validate()
                    if problems:
                        # TRANSLATORS: {cell} is a cell's name at sequence length {T}; {problems} what is wrong
                        raise ConfigError([t("{cell} at T = {T}: {problems}", cell=_(CELLS[c].label), T=T,
                                             problems=join_sentences(*map(str, problems)))])
            need = max(replace(base, cell=c, seq_len=T).memory_bytes() for c in cells for T in lengths)

            sweep_key = gradient_views.sweep_key(base, tuple(cells), tuple(lengths), weights)
            sweep, fits = run_job(Work(jobs.decay_sweep, (base, list(cells), list(lengths), weights), kind="sweep",
                                       label=N_("gradient sweep"), memory_bytes=need, client=client_id(),
                                       key=sweep_key), st.empty(), progress=_("Decay sweep"))
            ss.sweep_result, ss.sweep_key = (sweep, fits, base.task, weights), sweep_key
        except ConfigError as e:
            sweep_error = join_sentences(*map(str, e.messages))
        except Exception as e:  # noqa: BLE001 - a message, never a traceback; the last sweep stays
            # TRANSLATORS: {error} is the error's type and message, as Python gives it (in English)
            sweep_error = t("The sweep failed: {error}", error=error_text(e))
write_url(url)
if sweep_error:
    st.error(escape_markdown(str(sweep_error)), icon=":material/block:")
    if ss.sweep_result is not None:
        last = ss.sweep_result[0]
        # TRANSLATORS: {cells} lists cells' names (LSTM, GRU); {lengths} the sequence lengths (10, 20, 40)
        st.caption(t("The chart below is the last sweep that worked: {cells} at T = {lengths}.",
                     cells=join_list(_(CELLS[c].label) for c in dict.fromkeys(last["cell"])),
                     lengths=join_list(sorted(set(last["T"])))))
if ss.sweep_result is not None:
    sweep, fits, task_name, swept_weights = ss.sweep_result
    swept_key = ss.sweep_key
    shown = VIEWS.get(gradient_views.sweep_view_key(swept_key), lambda: gradient_views.sweep_view(
        sweep, fits, task_name, swept_weights, swept_key[1].seed))
    chart(st, shown.figure, key="decay")
    for item in shown.fits:
        st.markdown(item)
    st.dataframe(shown.table)
    for sentence in shown.zero_captions:
        st.caption(sentence)
    if shown.floor_caption:
        st.caption(shown.floor_caption)
    st.caption(shown.weights_caption)
else:
    st.caption(_("Pick cells and lengths and press **Run sweep**."))
with st.expander(_("Why does it decay, and why do gated cells keep it longer?")):
    st.markdown(_(
        r"""By the chain rule, $\partial L/\partial h_k = \sum_{t \ge k} \partial L_t/\partial h_t
\prod_{i=k+1}^{t} \partial h_i/\partial h_{i-1}$: a **product of Jacobians**, one per step back.
For a simple cell $h_t = \tanh(W h_{t-1} + U x_t + b)$, each Jacobian is $\mathrm{diag}(\tanh')\,W$; when the
largest singular value of $W$ is below 1 (tanh' is at most 1) the product shrinks exponentially with the
distance, and a gradient over T steps to the initial carry vanishes (Bengio, Simard & Frasconi 1994;
Pascanu, Mikolov & Bengio 2013). The **SimpleCell** has no way around this.

Gated cells add a path that is a sum, not a squashing: an LSTM's $c_t = f_t c_{t-1} + i_t g_t$ has
Jacobian $\mathrm{diag}(f_t)$ along $c$, and a GRU mixes $h_{t-1}$ in with weight $1 - z_t$. When the gates learn
to stay near 1, the gradient survives many steps. With Flax's default initialisation (LSTM forget bias 0, so
the gate starts half open) an *untrained* LSTM or GRU forgets about as fast as a simple cell, as the sweep
with untrained weights shows; training is what opens the path, as the sweep with trained weights shows (and
part 1, by comparing start and end of training).
The gradient reaching a learned initial carry is the last term of this product, so on long sequences it gets
almost no signal unless the loss also covers early steps."""))

st.subheader(_("3. Connectivity: which inputs the last output depends on"))
clickable_chart(st, VIEWS.get(view_key(run, "connectivity", mark),
                              lambda: gradient_views.connectivity_figure(conn, probed, mark)), "connectivity_chart")
if probed.connectivity_caption:
    st.caption(probed.connectivity_caption)
with st.expander(_("What am I looking at?")):
    st.markdown(_(
        "The norm of the Jacobian of the model's output at the last step with respect to the input at each "
        "step t, averaged over the evaluation batch: how strongly the final answer can still be moved by each "
        "input. A cell that remembers keeps it high far back; a forgetting cell is sensitive only to the last "
        "few inputs (Madsen, \"Visualizing memorization in RNNs\", Distill 2019)."))
