"""The Explore page driven with AppTest: training, buttons, charts' data, URL round trips, bad input."""

import numpy as np
import pytest

from rnnlab import probes  # noqa: F401  (imported so a broken probes module fails here too)
from rnnlab.config import Config
from rnnlab.tasks import TASKS
from tests.app.conftest import button, figures, open_page, trace, values


def test_default_preset_beats_the_baseline_and_charts_show_the_history():
    at = open_page("explore", run="1")  # the default preset: GRU, adding problem, T = 100
    run = at.session_state.run
    assert run.step == 300 and run.history.stop_reason is None
    assert "Finished 300 steps." in [s.value for s in at.success]
    figs = figures(at)
    loss = figs["Loss"]
    steps = run.history.steps_df()
    np.testing.assert_array_equal(values(trace(loss, "training loss"), "x"), steps["step"])
    np.testing.assert_allclose(values(trace(loss, "training loss"), "y"), steps["loss"], rtol=1e-6)
    evals = values(trace(loss, "evaluation loss"), "y")
    np.testing.assert_allclose(evals, run.history.chunks_df()["eval_loss"], rtol=1e-6)
    assert values(trace(loss, "memoryless baseline"), "y")[0] == pytest.approx(1 / 6)
    assert evals[-1] < 0.1 / 6
    heat = figs["Initial carry, hidden state h: units against training step"]
    z = values(heat["data"][0], "z")
    assert z.shape == (64, len(run.history.chunks))
    np.testing.assert_allclose(z[:, -1], run.history.carry_snapshots("h")[-1], rtol=1e-6)
    per_step = figures(at)["Loss at each time step of the sequence"]
    np.testing.assert_allclose(values(per_step["data"][0], "y"), run.history.per_step_loss[-1], rtol=1e-6)
    assert values(trace(per_step, "memoryless baseline"), "y")[0] == pytest.approx(1 / 6)
    assert dict(at.query_params) == {}  # defaults need no query parameters
    assert [b.label for b in at.get("download_button")] == ["History (CSV)", "Parameters (msgpack)",
                                                            "Reproduction script (.py)"]


def test_step_stop_reset_and_url_round_trip(small):
    at = open_page("explore", **small)
    assert at.session_state.run is None
    button(at, "Step").click().run()
    run = at.session_state.run
    assert run.step == 10 and not run.done
    assert {k: at.query_params[k] for k in small} == small  # the URL holds the experiment
    at.sidebar.number_input(key="w_lr").set_value(0.05).run()
    assert at.query_params["lr"] == "0.05"
    button(at, "Step").click().run()
    assert at.session_state.run is run and run.step == 20 and run.config.lr == 0.05
    assert run.program.train_chunk._cache_size() == 1  # changing the learning rate did not recompile
    button(at, "Train").click().run()
    assert run.step == 50 and run.done
    button(at, "Reset").click().run()
    assert at.session_state.run is None


def test_loading_a_link_sets_every_control(small):
    at = open_page("explore", **small, cell="lstm", carry_mode="fixed", carry_init="normal", carry_scale="0.3")
    sidebar = at.sidebar
    assert sidebar.selectbox(key="w_cell").value == "lstm"
    assert sidebar.radio(key="w_carry_mode").value == "fixed"
    assert sidebar.number_input(key="w_carry_scale").value == pytest.approx(0.3)
    assert sidebar.number_input(key="w_seq_len").value == 20
    assert at.session_state.shared.config == Config.from_dict({**small, "cell": "lstm", "carry_mode": "fixed",
                                                               "carry_init": "normal", "carry_scale": "0.3"})[0]


def test_bad_url_values_fall_back_with_a_visible_note(small):
    at = open_page("explore", **{**small, "features": "-4"}, lr="abc", cell="transformer", bogus="1")
    note = at.warning[0].value
    assert "Ignored lr='abc'" in note and "Ignored features='-4'" in note
    assert "Unknown cell 'transformer'" in note and "unknown setting 'bogus'" in note
    config = at.session_state.shared.config
    assert (config.lr, config.features, config.cell, config.seq_len) == (0.01, 64, "gru", 20)
    assert not at.exception


def test_incompatible_choice_is_explained_and_train_disabled(small):
    at = open_page("explore", **small)
    at.sidebar.selectbox(key="w_cell").set_value("conv_lstm").run()
    assert any("ConvLSTM cannot run Adding problem" in e.value for e in at.error)
    assert button(at, "Train").disabled and button(at, "Step").disabled
    at.sidebar.selectbox(key="w_task").set_value("moving_dot").run()
    assert not at.error and not button(at, "Train").disabled


def test_hidden_controls_are_not_drawn(small):
    at = open_page("explore", **small, hide="lr,clip", seed_hide="1")
    labels = [w.label for w in at.sidebar.number_input]
    assert "Learning rate" not in labels and "Clip (global norm)" not in labels and "Seed" not in labels
    assert "Batch size" in labels
    assert at.query_params["hide"] == "clip,lr,seed"


def test_changed_settings_keep_the_previous_run_on_screen(small):
    at = open_page("explore", **small, run="1")
    run = at.session_state.run
    assert run.done
    at.sidebar.selectbox(key="w_cell").set_value("mgu").run()
    assert at.session_state.run is run  # nothing lost
    assert any("The charts show the previous run; you changed cell" in i.value for i in at.info)
    assert "Loss" in figures(at)


def test_fixed_carry_says_it_does_not_learn_and_zero_overlay(small):
    at = open_page("explore", **small, task="sine", carry_mode="fixed", carry_init="normal", run="1")
    assert any("does not learn" in i.value for i in at.info)
    at.sidebar.checkbox(key="w_compare_zero").check().run()
    per_step = figures(at)["Loss at each time step of the sequence"]
    names = [t["name"] for t in per_step["data"]]
    assert names[:2] == ["fixed carry (normal)", "fixed zero carry"]
    zero = next(iter(at.session_state.zero_runs.values()))
    assert zero.step == at.session_state.run.step and zero.config.carry_init == "zeros"
    np.testing.assert_allclose(values(per_step["data"][1], "y"), zero.history.per_step_loss[-1], rtol=1e-6)
    assert len(per_step["data"]) == 2  # the sine's baseline is a mean over steps, not a per-step line
    assert not TASKS["sine"].baseline_per_step


def test_divergence_is_reported_and_history_kept(small):
    at = open_page("explore", **small, lr="1000000", clip="0", optimizer="sgd", run="1")
    run = at.session_state.run
    reason = run.history.stop_reason
    assert reason and any(reason == e.value for e in at.error)
    assert "Try a lower learning rate" in reason
    loss = values(trace(figures(at)["Loss"], "training loss"), "y")
    assert len(loss) == run.step and np.isfinite(loss).all()
