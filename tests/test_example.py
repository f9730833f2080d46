"""One example, step by step, against what it claims to be: the task's own definition of the answer, the whole
model's predictions, the gradient probe, and gated cells written out by hand in NumPy."""

from __future__ import annotations

import math
from dataclasses import replace
from functools import cache

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from rnnlab import true_sizes
from rnnlab.config import Config
from rnnlab.figures import example_words, log10_scale, size_words
from rnnlab.model.cells import CELLS
from rnnlab.model.tasks import COPY_BLANK, COPY_LEN, ORDER_SYMBOLS, SINE_OMEGA, TASKS, sine_prompt
from rnnlab.probing import example, logscale
from rnnlab.training.program import EVAL_CARRY, Program, get_program, hyper_args, stream
from rnnlab.true_sizes import F32_LOG10_FLOOR
from tests.plotly_figures import decoded, plotly_merge

F, B = 5, 3
BASE = Config(task="adding", cell="gru", features=F, seq_len=12, batch=B, carry_mode="learnable",
              carry_init="normal", carry_scale=0.5, seed=4, chunk=2, steps=2)
SPATIAL = dict(features=3, seq_len=5)
TASK_CELLS = [(task, cell) for task in TASKS for cell in CELLS
              if TASKS[task].spatial == CELLS[cell].spatial]
# Every cell once with the tasks and carry modes in turn, and the spatial cell with every mode: every cell, task and
# mode is met (each case compiles a program of its own; the task changes the inputs, not what the look computes).
MODES = ("learnable", "fixed", "noisy")
VECTOR_TASK_CELLS = [(task, cell) for task, cell in TASK_CELLS if not CELLS[cell].spatial]
VECTOR_CELLS = list(dict.fromkeys(cell for _, cell in VECTOR_TASK_CELLS))
VECTOR_TASKS = list(dict.fromkeys(task for task, _ in VECTOR_TASK_CELLS))
TASK_CELL_MODES = ([(VECTOR_TASKS[i % len(VECTOR_TASKS)], cell, MODES[i % len(MODES)])
                    for i, cell in enumerate(VECTOR_CELLS)]
                   + [(task, cell, mode) for task, cell in TASK_CELLS if CELLS[cell].spatial for mode in MODES])


def test_the_cases_meet_every_cell_task_and_mode():
    assert {cell for _, cell, _ in TASK_CELL_MODES} == set(CELLS)
    assert {task for task, _, _ in TASK_CELL_MODES} == set(TASKS)
    assert {mode for _, _, mode in TASK_CELL_MODES} == set(MODES)


def config_for(cell: str, task: str, mode: str = "learnable", init: str = "normal") -> Config:
    extra = SPATIAL if TASKS[task].spatial else {}
    seq_len = max(BASE.seq_len, TASKS[task].min_T)
    return replace(BASE, **{"seq_len": seq_len, **extra}, cell=cell, task=task, carry_mode=mode, carry_init=init)


@cache
def setup(cell: str, task: str, mode: str = "learnable", init: str = "normal"):
    config = config_for(cell, task, mode, init)
    program = get_program(config)
    lr, clip, scale = hyper_args(config)
    state = program.init(np.int32(config.seed), scale, lr, clip)
    params = jax.tree_util.tree_map(np.array, state["params"])
    return program, params, state["root"], scale


def the_batch(program, root, index):
    return program.task.generate(stream(root, example.EXAMPLES, index), program.static.batch,
                                 program.static.seq_len)


@pytest.mark.parametrize("task,cell,mode", TASK_CELL_MODES)
def test_predictions_are_the_whole_models_on_the_examples_row(task, cell, mode):
    program, params, root, scale = setup(cell, task, mode)
    look = example.look(program, params, root, scale, 2)
    x, y = the_batch(program, root, 2)
    key = stream(root, EVAL_CARRY) if mode == "noisy" else program.carry_key(root, 0)
    preds = np.asarray(program.model.apply(params, x, key, scale))[0]
    if program.task.out_features == 1 and not program.spec.spatial:
        np.testing.assert_allclose(look.prediction, preds[:, 0], rtol=1e-5, atol=1e-6)
    else:
        np.testing.assert_array_equal(look.prediction, preds.argmax(-1))
    np.testing.assert_allclose(look.loss, program.task.loss(preds[None], np.asarray(y)[:1]), rtol=1e-5, atol=1e-7)


def float64_example_grads(program, params, root, scale, index: int) -> np.ndarray:
    """(leaves, steps + 1): ||dL/dh_t|| of example ``index``'s own loss by automatic differentiation of rnnlab's Flax
    model in float64, the whole batch run (its initial carry drawn for the batch) and the loss read on row 0."""
    x, y = the_batch(program, root, index)
    key = stream(root, EVAL_CARRY) if program.static.carry_mode == "noisy" else program.carry_key(root, 0)

    def as64(tree):
        return jax.tree_util.tree_map(
            lambda a: np.asarray(a, np.float64) if np.issubdtype(np.asarray(a).dtype, np.floating) else np.asarray(a),
            tree)

    n = len(program.spec.leaves)
    with jax.enable_x64(True):
        wide = Program(program.static, fused=False)

        def loss(eps0, eps):
            preds = wide.probe_model.apply(as64(params), as64(x), key, np.float64(scale), eps0=eps0, eps=eps)
            return wide.task.loss(preds[:1], as64(y)[:1])

        eps = jnp.zeros(x.shape[:-1] + (n * program.static.features,), jnp.float64)
        g0, g = jax.jit(jax.grad(loss, argnums=(0, 1)))(as64(program.zero_carry()), eps)
        g0 = [np.asarray(a)[0] for a in program.spec.carry_as_tuple(g0)]
        g = [a[0] for a in np.split(np.asarray(g), n, axis=-1)]  # (steps, ...) of row 0
    axes = tuple(range(1, g[0].ndim))
    return np.stack([np.concatenate([[np.sqrt(np.sum(g0[k] ** 2))], np.sqrt(np.sum(g[k] ** 2, axis=axes))])
                     for k in range(n)])


# Every cell with one task, the tasks taking turns so that each task is met (the float64 sum is the same for all).
CELL_TASKS = [next((task, cell) for k in range(len(TASKS))
                   if (task := list(TASKS)[(i + k) % len(TASKS)], cell) in TASK_CELLS) for i, cell in enumerate(CELLS)]


def test_the_cells_with_a_task_meet_every_task():
    assert {cell for _, cell in CELL_TASKS} == set(CELLS) and {task for task, _ in CELL_TASKS} == set(TASKS)


@pytest.mark.parametrize("task,cell", CELL_TASKS)
def test_gradient_at_every_step_is_float64s_for_that_one_sequence(task, cell):
    program, params, root, scale = setup(cell, task, "learnable", "zeros")
    look = example.look(program, params, root, scale, 1)
    want = float64_example_grads(program, params, root, scale, 1)
    for i, leaf in enumerate(program.spec.leaves):
        got = look.grad_log10[leaf]
        if i == program.spec.output_leaf:
            np.testing.assert_allclose(got, np.log10(want[i]), rtol=1e-4, atol=1e-5)
        else:  # the last cell state is read by no later step: no gradient, drawn as no value rather than a zero
            np.testing.assert_allclose(got[:-1], np.log10(want[i][:-1]), rtol=1e-4, atol=1e-5)
            assert np.isnan(got[-1]) and want[i][-1] == 0 and look.grads.zero_cause[i, -1] == "unread"
        np.testing.assert_allclose(look.grad_norms[leaf], 10.0 ** got, rtol=1e-12)


@pytest.mark.parametrize("mode,init", [("fixed", "normal"), ("noisy", "normal"), ("noisy", "uniform")])
def test_a_drawn_initial_carry_is_the_examples_row_of_the_batchs_draw(mode, init):
    """The look runs the batch and keeps row 0; the probe starts one sequence from the same key: the same carry."""
    program, params, root, scale = setup("lstm", "adding", mode, init)
    look = example.look(program, params, root, scale, 3)
    want = float64_example_grads(program, params, root, scale, 3)
    np.testing.assert_allclose(look.grad_log10["h"], np.log10(want[1]), rtol=1e-4, atol=1e-5)


def test_a_new_example_is_a_new_sequence_and_the_same_number_the_same_one():
    program, params, root, scale = setup("gru", "adding")
    a, b, again = (example.look(program, params, root, scale, i) for i in (0, 1, 0))
    assert not np.array_equal(a.view.values, b.view.values)
    np.testing.assert_array_equal(a.view.values, again.view.values)


# --- the example is the task's own: the answer computed from the inputs alone -------------------------

def test_adding_answer_is_the_sum_of_the_two_marked_values():
    program, params, root, scale = setup("gru", "adding")
    for i in range(5):
        view = example.look(program, params, root, scale, i).view
        assert view.marked.sum() == 2
        T = len(view.values)
        first, second = np.flatnonzero(view.marked)
        assert first < T // 2 <= second
        assert np.isnan(view.target[:-1]).all()
        np.testing.assert_allclose(view.target[-1], view.values[first] + view.values[second], rtol=1e-6)


def test_copy_answer_is_the_first_ten_symbols_after_the_wait():
    program, params, root, scale = setup("lstm", "copy")
    view = example.look(program, params, root, scale, 0).view
    data = view.values[:COPY_LEN]
    assert (data < 8).all() and view.marked[:COPY_LEN].all() and not view.marked[COPY_LEN:].any()
    np.testing.assert_array_equal(view.target[-COPY_LEN:], data)
    assert (view.target[:-COPY_LEN] == COPY_BLANK).all()
    assert view.symbols[int(view.values[-COPY_LEN - 1])] == ":"  # the delimiter comes just before the answer


def test_temporal_order_answer_is_the_order_of_the_x_and_y_read():
    program, params, root, scale = setup("gru", "temporal_order")
    for i in range(6):
        view = example.look(program, params, root, scale, i).view
        read = [ORDER_SYMBOLS[int(v)] for v in view.values]
        pair = "".join(s for s in read if s in "XY")
        assert len(pair) == 2 and view.marked.sum() == 2
        assert view.classes[int(view.target[-1])] == pair
        assert read[0] == "E" and read[-1] == "B"


def test_sine_answer_is_the_curve_the_prompt_shows():
    program, params, root, scale = setup("simple", "sine")
    view = example.look(program, params, root, scale, 0).view
    T, prompt = len(view.values), sine_prompt(len(view.values))
    np.testing.assert_allclose(view.values[1:prompt], view.target[: prompt - 1], rtol=1e-6)
    assert (view.values[prompt:] == 0).all() and view.marked[:prompt].all()
    phi = np.arcsin(np.clip(view.target[0], -1, 1))
    candidates = [phi, np.pi - phi]
    best = min(np.max(np.abs(np.sin(SINE_OMEGA * np.arange(T) + p) - view.target)) for p in candidates)
    assert best < 1e-5


def test_moving_dot_answer_is_where_the_dot_is_next():
    program, params, root, scale = setup("conv_lstm", "moving_dot")
    view = example.look(program, params, root, scale, 0).view
    np.testing.assert_array_equal(view.target[:-1], view.values[1:])
    step = np.array(divmod(int(view.values[1]), 6)) - np.array(divmod(int(view.values[0]), 6))
    nxt = (np.array(divmod(int(view.values[-1]), 6)) + step) % 6
    assert int(view.target[-1]) == nxt[0] * 6 + nxt[1]


# --- the gates against the cells written out by hand ---------------------------------------------------

def sigmoid(a):
    return 1 / (1 + np.exp(-a))


def by_hand(cell: str, p: dict, h, c, x):
    """One step of Flax's gated cells in NumPy from the parameter tree: (gates, new h, new c)."""
    def dense(name, v):
        return v @ p[name]["kernel"] + p[name].get("bias", 0)
    if cell in ("lstm", "optimized_lstm"):
        i, f, o = (sigmoid(dense(f"i{g}", x) + dense(f"h{g}", h)) for g in "ifo")
        g = np.tanh(dense("ig", x) + dense("hg", h))
        c = f * c + i * g
        return {"i": i, "f": f, "o": o}, o * np.tanh(c), c
    if cell == "gru":
        r, z = (sigmoid(dense(f"i{g}", x) + dense(f"h{g}", h)) for g in "rz")
        n = np.tanh(dense("in", x) + r * dense("hn", h))
        return {"r": r, "z": z}, (1 - z) * n + z * h, None
    f = sigmoid(dense("if", x) + dense("hf", h))
    n = np.tanh(dense("in", x) + f * dense("hn", h))
    return {"f": f}, (1 - f) * n + f * h, None


GATED = [name for name, spec in CELLS.items() if spec.gates is not None]


@pytest.mark.parametrize("cell, task", [(cell, ("adding", "copy")[i % 2]) for i, cell in enumerate(GATED)])
def test_gates_and_carry_equal_the_cell_computed_by_hand(cell, task):
    program, params, root, scale = setup(cell, task)
    look = example.look(program, params, root, scale, 3)
    x, _ = the_batch(program, root, 3)
    x = np.asarray(x, np.float64)[0]
    p = jax.tree_util.tree_map(lambda a: np.asarray(a, np.float64), program.spec.params_in(params))
    top = params["params"]
    h = np.asarray(top["h0"], np.float64)
    c = np.asarray(top["c0"], np.float64) if "c0" in top else None
    h_norms, gates = [np.linalg.norm(h)], {name: [] for name in look.gates}
    for x_t in x:
        step_gates, h, c = by_hand(cell, p, h, c, x_t)
        for name, value in step_gates.items():
            gates[name].append(value)
        h_norms.append(np.linalg.norm(h))
    assert set(gates) == set(CELLS[cell].gates.names)
    for name, values in gates.items():
        np.testing.assert_allclose(look.gates[name], np.array(values), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(look.carry_norms["h"], h_norms, rtol=1e-4, atol=1e-6)


def synthetic_look(steps: int, step: int = 0) -> example.Look:
    rng = np.random.default_rng(steps + step)
    view = TASKS["adding"].view(np.stack([rng.random(steps), np.zeros(steps)], axis=-1), np.array([1.0]))
    log10 = np.linspace(-30.0, 0.0, steps + 1)
    log10[:3] = -np.inf  # cut at step 3 by saturated units
    cause = np.where(np.isneginf(log10), "saturated", "")
    at = np.where(np.isneginf(log10), 3, -1)
    grads = logscale.LogGrads(("h",), log10[None], cause[None], at[None])
    return example.Look(step, view, rng.random(steps), None, {"h": rng.random(steps + 1) + 1}, grads, {}, 0.5)


def test_a_long_sequence_draws_every_kth_cell_and_names_the_zeros():
    from rnnlab.figures import example_plots

    looks = [synthetic_look(9000, 0), synthetic_look(9000, 10)]
    figure = example_plots.unrolled_figure(looks)
    cells = next(t for t in figure.data if t.name.startswith("cells"))
    every = -(-9001 // example_plots.MAX_CELLS)
    assert len(cells.x) <= example_plots.MAX_CELLS and cells.name.endswith(f"one in {every}")
    np.testing.assert_array_equal(cells.x, np.arange(0, 9001, every))
    saturated = size_words.describe_zero("saturated", 3, "h", 0)
    assert cells.hovertext[0] == f"h_0: {saturated}" and "units so saturated that their derivative is 0" in saturated
    zeros = next(t for t in figure.data if t.name == log10_scale.zero_name(""))
    np.testing.assert_array_equal(zeros.x, [0, 1, 2])
    assert zeros.hovertext[2] == size_words.describe_zero("saturated", 3, "h", 2)
    assert [f.name for f in figure.frames] == ["0", "10"]


def test_summary_states_the_examples_numbers_at_their_true_size_and_names_zero_and_nan():
    program, params, root, scale = setup("lstm", "adding")
    now = example.look(program, params, root, scale, 2, step=7)
    text = example_words.summary(now, now, 2)
    assert text.startswith(f"**Example 3:** its loss is {now.loss:.3g} at training step 7 ({now.loss:.3g} untrained).")
    for i, leaf in enumerate(("c", "h")):
        assert f"||dL/d{leaf}_0|| = {true_sizes.format_log10(now.grads.log10[i, 0])}" in text
        assert float(now.grad_norms[leaf][0]) == pytest.approx(float(logscale.to_float(now.grads.log10[i, 0])))
    assert "below float32's smallest number" not in text
    log10 = np.array([[-np.inf, 1.0], [np.nan, 1.0]])
    cause = np.array([["gate", ""], ["", ""]])
    zero = replace(now, grads=logscale.LogGrads(("c", "h"), log10, cause, np.array([[1, -1], [-1, -1]])))
    text = example_words.summary(zero, now, 0)
    assert size_words.describe_zero("gate", 1, "c", 0).rstrip(".") in text and "dL/dh_0 is not a number" in text


def test_keeper_summary_is_the_keeper_gates_mean_and_share_above_0_9():
    program, params, root, scale = setup("gru", "adding")
    now = example.look(program, params, root, scale, 0)
    z = now.gates["z"]
    text = example_words.keeper_summary(now, program.spec.gates)
    assert f"The update gate z averages {z.mean():.2f} over this example; " in text
    assert f"{(z > 0.9).sum() / z.size:.0%} of its values are above 0.9." in text


def test_the_unrolled_view_has_its_panels_top_to_bottom_and_frames_replace_only_what_training_changes():
    from rnnlab.figures import example_plots

    program, params, root, scale = setup("lstm", "copy")
    looks = [example.look(program, params, root, scale, 2, step=s) for s in (0, 5)]
    figure = example_plots.unrolled_figure(looks, gates=CELLS["lstm"].gates)
    axes = [figure.layout[f"yaxis{i if i > 1 else ''}"] for i in range(1, 7)]
    assert [a.title.text for a in axes] == [example_plots.ROW_TITLES[r] for r in example_plots.rows_of(looks[-1])]
    names = [t.name for t in figure.data]
    assert names[:4] == ["symbol", "what the answer needs", "p(right answer), untrained", "the right answer (p = 1)"]
    assert names[5:9] == ["p(right answer) at training step 5", "input gate i", "forget gate f", "output gate o"]
    assert [f.traces for f in figure.frames] == [tuple(range(4, len(names)))] * 2
    assert axes[2].range == (-0.02, 1.08) and axes[1].ticktext == looks[0].view.symbols
    gradient_axis = axes[5]  # log10 values on a linear axis, each tick labelled with the true size it stands for
    assert gradient_axis.type in (None, "linear") and len(gradient_axis.tickvals) >= 2
    sizes = [float(text.replace("×10<sup>", "e").replace("</sup>", "").replace("−", "-"))
             for text in gradient_axis.ticktext]
    np.testing.assert_allclose(np.log10(sizes), gradient_axis.tickvals, atol=0.02)
    assert figure.layout.sliders[0].active == 1
    grads = [t for t in figure.data if t.name.startswith("||dL/d")]
    for trace, leaf in zip(grads, ("c", "h")):  # the frame shown is the last look's
        np.testing.assert_allclose(np.asarray(trace.y, float), looks[-1].grad_log10[leaf], equal_nan=True)
        t = 4
        assert trace.hovertext[t] == example_words.grad_text(looks[-1], leaf, t) == (
            f"||dL/d{leaf}_{t}|| = {true_sizes.format_log10(looks[-1].grad_log10[leaf][t])}")
    assert not any(n.startswith("float32's floor") for n in names)  # far above it: no floor drawn


def plain(trace: dict, key: str) -> object:
    """An attribute's value to compare: arrays (Plotly's typed-array encoding decoded) as lists, NaN as None."""
    if key not in trace:
        return None
    value = trace[key]
    if isinstance(value, (np.ndarray, list, tuple)) or (isinstance(value, dict) and "bdata" in value):
        return [None if isinstance(v, float) and math.isnan(v) else v for v in decoded(value).tolist()]
    return value


def test_each_frame_merged_into_the_drawn_traces_gives_its_looks_traces_and_sends_only_what_changes():
    from rnnlab.figures import example_plots, plots

    program, params, root, scale = setup("lstm", "copy")
    trained = jax.tree_util.tree_map(lambda p: p * 1.7 + 0.05, params)  # another step's parameters
    looks = [example.look(program, p, root, scale, 2, step=s) for p, s in ((params, 0), (trained, 5), (params, 9))]
    figure = plots.clickable(example_plots.unrolled_figure(looks, gates=CELLS["lstm"].gates))
    alone = [example_plots.unrolled_figure([look], gates=CELLS["lstm"].gates) for look in looks]
    drawn = figure.to_plotly_json()
    for frame, look, own in zip(drawn["frames"], looks, alone):
        assert frame["name"] == str(look.step)
        for index, update in zip(frame["traces"], frame["data"]):
            assert "x" not in update and "yaxis" not in update and "line" not in update  # the same in every frame
            merged = plotly_merge(drawn["data"][index], update)
            expected = own.data[index].to_plotly_json()  # this look's trace, drawn on its own
            for key in ("y", "hovertext", "name", "showlegend", "x"):
                assert plain(merged, key) == plain(expected, key), (index, key)
            if "marker" in expected and "color" in expected["marker"]:
                assert plain(merged["marker"], "color") == plain(expected["marker"], "color")
            if expected.get("mode") == "lines":  # the drawn trace's invisible markers for a click stay
                assert merged["mode"] == "lines+markers" and merged["marker"]["opacity"] == 0
    cells = [i for i, t in enumerate(drawn["data"]) if t["name"].startswith("cells")]
    assert all(set(f["data"][f["traces"].index(cells[0])]) == {"type", "marker", "hovertext"} for f in drawn["frames"])
    assert set(drawn["frames"][0]["data"][cells[0] - drawn["frames"][0]["traces"][0]]["marker"]) == {"color"}


def orthogonal_simple(rho: float, steps: int, features: int = 8, bias: float = 0.0):
    """A simple cell with W = rho * Q (Q orthogonal), inputs scaled by 1e-7 and a zero initial carry: tanh' is 1 in
    float32, so ||dL/dh_t|| = rho^(T - t) ||dL/dh_T||; a large ``bias`` saturates every unit instead."""
    config = Config(cell="simple", task="adding", features=features, seq_len=steps, batch=2, carry_mode="fixed",
                    carry_init="zeros", seed=1, chunk=2, steps=2)
    program = get_program(config)
    lr, clip, scale = hyper_args(config)
    state = program.init(np.int32(1), scale, lr, clip)
    params = jax.tree_util.tree_map(np.array, state["params"])
    p = program.spec.params_in(params)
    q, _ = np.linalg.qr(np.random.default_rng(0).normal(size=(features, features)))
    p["h"]["kernel"] = (rho * q).astype(np.float32)
    p["i"]["kernel"] = (1e-7 * p["i"]["kernel"]).astype(np.float32)
    p["i"]["bias"] = np.full_like(p["i"]["bias"], bias)
    return program, params, state["root"], scale


def test_a_vanished_gradient_is_shown_at_its_true_size_with_float32s_floor():
    from rnnlab.figures import example_plots

    rho, steps = 0.1, 60
    program, params, root, scale = orthogonal_simple(rho, steps)
    look = example.look(program, params, root, scale, 0)
    got = look.grad_log10["h"]
    want = got[-1] + (steps - np.arange(steps + 1)) * np.log10(rho)  # rho^(T - t) ||dL/dh_T||
    np.testing.assert_allclose(got, want, rtol=1e-4)
    assert got[0] < -55 and np.isfinite(got).all()
    assert look.grad_norms["h"][0] == pytest.approx(10.0 ** got[0], rel=1e-12) and look.grad_norms["h"][0] > 0
    text = example_words.summary(look, look, 0)
    assert f"||dL/dh_0|| = {true_sizes.format_log10(got[0])}" in text and "below float32's smallest number" in text
    figure = example_plots.unrolled_figure([look])
    line = next(t for t in figure.data if t.name.startswith("||dL/dh_t||"))
    np.testing.assert_allclose(np.asarray(line.y, float), got)
    assert line.hovertext[0] == f"||dL/dh_0|| = {true_sizes.format_log10(got[0])}"
    assert any(t.name.startswith("float32's smallest normal number") for t in figure.data)  # its legend entry
    floor = next(s for s in figure.layout.shapes if s.yref == "y5")  # its line across the gradient's panel
    assert floor.y0 == floor.y1 == pytest.approx(F32_LOG10_FLOOR) and floor.xref == "paper"
    axis = figure.layout.yaxis5  # a simple cell has no gates: the gradient is the fifth panel
    assert axis.range[0] < got.min() and axis.range[1] > got.max()


def test_saturated_units_zero_float32_but_the_true_size_is_shown_and_float32s_zero_named():
    from rnnlab.figures import example_plots

    steps = 10
    program, params, root, scale = orthogonal_simple(0.5, steps, bias=1000.0)  # tanh' 0 in float32 at every step
    look = example.look(program, params, root, scale, 0)
    log10 = look.grad_log10["h"]
    assert np.isfinite(log10).all()  # the true size, however small
    # each step multiplies by 0.5 (the orthogonal W's gain) and tanh'(about 1000) = 4 e^-2000: -868.3 decades
    step = math.log10(0.5) + math.log10(4.0) - 2000 * math.log10(math.e)
    assert np.all(np.abs(np.diff(log10) + step) < 3.0), np.diff(log10)
    assert (look.grads.zero_cause[0, :-1] == "saturated").all() and (look.grads.zero_at[0, :-1] == steps).all()
    sentence = size_words.describe_zero("saturated", steps, "h", 0, float(log10[0]))
    assert sentence.startswith("In float32 ||dL/dh_0|| is 0, though its true size is ") and f"step {steps}" in sentence
    assert sentence.rstrip(".") in example_words.summary(look, look, 0)
    figure = example_plots.unrolled_figure([look])
    line = next(t for t in figure.data if t.name.startswith("||dL/dh_t||"))
    np.testing.assert_allclose(np.asarray(line.y, float), log10)
    assert line.hovertext[0] == sentence
    assert not any(t.name == log10_scale.zero_name("") and len(t.x) for t in figure.data)  # no exact 0 left
