"""Explore's "One example, unrolled" driven with AppTest: the figure's data against the task and the model,
the frames against the run's kept snapshots, New example, the marked step, and that nothing trains again."""

from __future__ import annotations

import numpy as np

from rnnlab.figures import example_plots
from rnnlab.figures.example_plots import TITLE
from rnnlab.model.tasks import COPY_LEN
from rnnlab.probing import example
from rnnlab.true_sizes import format_log10
from tests.app.conftest import SMALL, button, figures, open_page, trace, unescaped, values
from tests.plotly_figures import frame_traces

COPY = {**SMALL, "cell": "lstm", "task": "copy"}


def unrolled(at) -> dict:
    return figures(at)[TITLE]


def test_the_example_is_the_tasks_and_the_prediction_the_models():
    at = open_page("explore", run="1", **COPY)
    run = at.session_state.run
    assert run.done
    figure = unrolled(at)
    symbols = values(trace(figure, "symbol"), "y")
    answer = trace(figure, "the right answer")
    answer_x, answer_text = values(answer, "x"), answer["text"]
    recall = [int(s) for x, s in zip(answer_x, answer_text) if x > len(symbols) - COPY_LEN]
    assert recall == [int(v) for v in symbols[:COPY_LEN]]  # copy: write back the first ten symbols read
    look = example.look(run.program, run.params, run.root, run.scale, 0, run.step)
    shown = values(trace(figure, f"p(right answer) at training step {run.step}"), "y")
    np.testing.assert_allclose(shown, look.confidence, rtol=1e-6)
    text = " ".join(m.value for m in at.markdown)
    assert f"its loss is {look.loss:.3g} at training step {run.step}" in text


def test_frames_replay_the_kept_snapshots_without_training_again():
    at = open_page("explore", run="1", **COPY)
    run = at.session_state.run
    figure = unrolled(at)
    steps = [int(frame["name"]) for frame in figure["frames"]]
    assert steps == [s for s, _ in run.snapshots_at(9)]
    assert steps[0] == 0 and steps[-1] == run.step
    first = example.look(run.program, run.snapshots[0][1], run.root, run.scale, 0, 0)
    frame_now = next(t for t in frame_traces(figure, figure["frames"][0])
                     if t["name"].startswith("p(right answer)"))
    np.testing.assert_allclose(values(frame_now, "y"), first.confidence, rtol=1e-6)
    untrained = values(trace(figure, "p(right answer), untrained"), "y")
    np.testing.assert_allclose(untrained, first.confidence, rtol=1e-6)
    before = run.step
    at.run()  # a redraw computes nothing and trains nothing
    assert at.session_state.run.step == before


def test_gates_show_for_gated_cells_only_and_the_keeper_gates_claim_is_its_values():
    at = open_page("explore", run="1", **COPY)
    run = at.session_state.run
    look = example.look(run.program, run.params, run.root, run.scale, 0, run.step)
    assert {t["name"] for t in unrolled(at)["data"]} >= {"input gate i", "forget gate f", "output gate o"}
    heat = next(f for title, f in figures(at).items() if title.startswith("The forget gate f of every unit"))
    np.testing.assert_allclose(values(heat["data"][0], "z"), look.gates["f"].T, rtol=1e-6)
    text = " ".join(m.value for m in at.markdown)
    assert f"averages {look.gates['f'].mean():.2f}" in text
    assert f"{np.mean(look.gates['f'] > 0.9):.0%} of its values are above 0.9" in text
    plain = open_page("explore", run="1", **{**COPY, "cell": "simple"})
    assert not any("gate" in t["name"] for t in unrolled(plain)["data"])
    assert not any(title.startswith("The forget") for title in figures(plain))


def test_new_example_draws_another_sequence_and_the_mark_moves_in_both_charts():
    at = open_page("explore", run="1", **COPY)
    before = values(trace(unrolled(at), "symbol"), "y")
    button(at, "New example").click().run()
    assert at.session_state.example_index == 1
    after = values(trace(unrolled(at), "symbol"), "y")
    assert not np.array_equal(before, after)
    run = at.session_state.run
    look = example.look(run.program, run.params, run.root, run.scale, 1, run.step)
    np.testing.assert_array_equal(after, look.view.values)
    at.slider(key="w_example_mark").set_value(7).run()
    lines = [s for s in unrolled(at)["layout"]["shapes"] if s["type"] == "line"]
    assert [s["x0"] for s in lines] == [7]
    heat = next(f for title, f in figures(at).items() if title.startswith("The forget gate f"))
    assert [s["x0"] for s in heat["layout"]["shapes"]] == [7]


def mark_lines(figure: dict) -> list[float]:
    return [s["x0"] for s in figure["layout"].get("shapes", []) if s["type"] == "line"]


def test_the_marked_step_is_the_same_step_in_every_per_step_chart_and_on_gradient_flow():
    at = open_page("explore", run="1", **COPY)
    at.slider(key="w_example_mark").set_value(12).run()
    charts = figures(at)
    assert mark_lines(charts[TITLE]) == [12]
    per_step = charts["Loss at each time step of the sequence"]
    assert mark_lines(per_step) == [12]
    run = at.session_state.run
    # step t of the per-step loss is the output after reading input t: the same t as the unrolled view's
    t = values(per_step["data"][0], "x")
    np.testing.assert_array_equal(t, np.arange(1, run.program.steps + 1))
    np.testing.assert_allclose(values(per_step["data"][0], "y")[11], run.history.per_step_loss[-1][11], rtol=1e-6)
    at.switch_page("app_pages/gradients.py").run()
    assert not at.exception, [e.value for e in at.exception]
    grads = figures(at)
    through_time = next(f for title, f in grads.items() if title.startswith("Gradient of the loss with respect"))
    connectivity = next(f for title, f in grads.items() if title.startswith("Connectivity"))
    assert mark_lines(through_time) == [12] and mark_lines(connectivity) == [12]
    np.testing.assert_array_equal(values(connectivity["data"][0], "x"), np.arange(1, run.program.steps + 1))
    at.switch_page("app_pages/explore.py").run()
    assert at.slider(key="w_example_mark").value == 12  # back on Explore, the mark is where it was left


def test_the_row_of_cells_is_coloured_by_the_gradient_on_one_scale_for_every_frame():
    at = open_page("explore", run="1", **COPY)
    run = at.session_state.run
    figure = unrolled(at)
    cells = [t for t in figure["data"] if t["name"].startswith("cells")]
    assert len(cells) == 1
    look = example.look(run.program, run.params, run.root, run.scale, 0, run.step)
    np.testing.assert_array_equal(values(cells[0], "x"), np.arange(run.program.steps + 1))  # h_0 at the left
    grads = look.grad_norms["h"]
    assert (grads > 0).all()
    np.testing.assert_allclose(values(cells[0]["marker"], "color"), np.log10(grads), rtol=1e-5)
    drawn = [t for frame in figure["frames"] for t in frame_traces(figure, frame)]
    scales = {(t["marker"]["cmin"], t["marker"]["cmax"]) for t in drawn
              if t["name"].startswith("cells")}
    assert len(scales) == 1  # the replay compares colours, so every frame shares the scale
    low, high = scales.pop()
    everything = np.concatenate([values(t["marker"], "color") for t in drawn
                                 if t["name"].startswith("cells")])
    assert low <= everything.min() and everything.max() <= high + 1e-9


def test_the_gradient_panel_and_sentence_give_the_probes_true_sizes():
    at = open_page("explore", run="1", **COPY)
    run = at.session_state.run
    figure = unrolled(at)
    look = example.look(run.program, run.params, run.root, run.scale, 0, run.step)
    for leaf in ("c", "h"):
        line = trace(figure, f"||dL/d{leaf}_t||")
        np.testing.assert_allclose(values(line, "y"), look.grad_log10[leaf], rtol=1e-6, equal_nan=True)
        live = np.flatnonzero(np.isfinite(look.grad_log10[leaf]))
        assert [line["hovertext"][t] for t in live[:3]] == [
            f"||dL/d{leaf}_{t}|| = {format_log10(look.grad_log10[leaf][t])}" for t in live[:3]]
    axis = next(a for k, a in figure["layout"].items() if k.startswith("yaxis")
                and a.get("title", {}).get("text") == example_plots.ROW_TITLES["gradient"])
    assert axis.get("type", "linear") == "linear" and all(t == "1" or t.startswith("10<sup>") for t in axis["ticktext"])
    text = " ".join(m.value for m in at.markdown)
    for i, leaf in enumerate(("c", "h")):
        assert f"||dL/d{leaf}_0|| = {format_log10(look.grads.log10[i, 0])}" in unescaped(text)
