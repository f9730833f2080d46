"""The Gradient flow page: probes of the current model, the decay sweep and connectivity, checked by number."""

import numpy as np
import pytest

from rnnlab import grids, true_sizes
from rnnlab.config import Config
from rnnlab.figures import log10_scale, size_words
from rnnlab.probing import probes
from rnnlab.sharing.presets import PRESETS_BY_KEY
from tests.app.conftest import SMALL, figures, open_page, trace, values

SWEEP_TITLE = "Gradient reaching the initial carry against sequence length"


def test_untrained_model_probes_match_the_library():
    at = open_page("gradients", **SMALL, cell="lstm")
    assert any("this is the untrained model" in i.value for i in at.info)
    run = at.session_state.untrained
    figs = figures(at)
    grad = figs["Gradient of the loss with respect to the carry at each time step"]
    assert [t["name"] for t in grad["data"]] == ["before training, c", "exactly 0: read by nothing",
                                                 "before training, h"]
    expected = probes.carry_grad_sizes(run.program, run.params, run.state["root"], run.scale)
    for t, leaf in zip(grad["data"][::2], ("c", "h")):
        np.testing.assert_array_equal(values(t, "x"), np.arange(21))
        sizes = expected.log10[expected.leaves.index(leaf)]
        np.testing.assert_allclose(values(t, "y"), np.where(np.isfinite(sizes), sizes, np.nan), rtol=1e-9)
        assert t["customdata"] == [true_sizes.format_log10(v) for v in sizes]  # the hover's true sizes
    assert np.isneginf(expected.log10[0, -1]) and expected.zero_cause[0, -1] == "unread"
    assert any("final cell state c at t = 20 is exactly 0" in c.value for c in at.caption)
    unread = trace(grad, "exactly 0: read by nothing")
    assert list(unread["x"]) == [20] and unread["hovertext"] == [size_words.describe_zero("unread", -1, "c", 20)]
    conn = figs["Connectivity: how much the last output depends on each input step"]
    np.testing.assert_allclose(values(conn["data"][0], "y"),
                               probes.connectivity_log10(run.program, run.params, run.state["root"], run.scale),
                               rtol=1e-9)
    assert grad["layout"]["yaxis"]["range"] == conn["layout"]["yaxis"]["range"]  # one axis, to be compared
    assert SWEEP_TITLE not in figs


def test_trained_run_shows_start_middle_end():
    at = open_page("explore", **SMALL, run="1")
    run = at.session_state.run
    at.switch_page("app_pages/gradients.py").run()
    assert not at.exception
    names = [t["name"] for t in figures(at)["Gradient of the loss with respect to the carry at each time step"]["data"]]
    steps = [s for s, _ in run.snapshots_at(3)]
    assert names == ["before training, h", *(f"after {s} training steps, h" for s in steps[1:])]
    assert steps[0] == 0 and steps[-1] == 50


def test_sweep_form_gives_the_library_numbers_and_fit():
    at = open_page("gradients", **SMALL)
    at.multiselect(key="w_sweep_cells").set_value(["simple", "gru"])
    at.text_input(key="w_sweep_lengths").input("5, 10,20")
    at.button[0].click().run()  # "Run sweep" (the form's submit button)
    assert not at.exception and not at.error
    fig = figures(at)[SWEEP_TITLE]
    base = Config.from_dict(SMALL)[0]
    params = {c: probes.trained_params(probes.sweep_training_config(base, c)) for c in ("simple", "gru")}
    expected = probes.decay_sweep(base, ["simple", "gru"], [5, 10, 20], params=params)  # trained, the default
    fits = probes.fit_decay(expected)
    lines = [d for d in fig["data"] if d.get("showlegend") is not False and d["name"][0] in "SG"]  # the cells' lines
    for t, cell in zip(lines, ["simple", "gru"]):
        np.testing.assert_array_equal(values(t, "x"), [5, 10, 20])
        np.testing.assert_allclose(values(t, "y"), expected[expected.cell == cell]["log10"], rtol=1e-9)
        halving = fits.set_index("cell").loc[cell, "halving_steps"]
        label = {"simple": "Simple RNN", "gru": "GRU"}[cell]
        assert t["name"] == f"{label} (halves every {halving:.3g} steps)"
        fitted = trace(fig, f"{label}: fitted line")
        rate = fits.set_index("cell").loc[cell, "rate_per_step"]
        slope = np.polyfit(values(fitted, "x"), values(fitted, "y"), 1)[0]
        assert slope == pytest.approx(np.log10(rate))
    text = " ".join(m.value for m in at.markdown)
    assert "Simple RNN" in text and "the gradient halves every" in text
    assert at.query_params["sweep_cells"] == "simple,gru" and at.query_params["sweep_lengths"] == "5,10,20"


def test_bad_sweep_lengths_give_a_message():
    at = open_page("gradients", **SMALL)
    at.text_input(key="w_sweep_lengths").input("10, ten")
    at.button[0].click().run()
    assert any("whole numbers separated by commas" in e.value for e in at.error)
    assert SWEEP_TITLE not in figures(at)


def test_lstm_50_vs_500_preset_runs_its_sweep():
    preset = PRESETS_BY_KEY["lstm_h0_50_vs_500"]
    at = open_page("gradients", **preset.query())
    sweep, _, _, _ = at.session_state.sweep_result
    assert list(sweep["T"]) == [50, 500] and list(sweep["cell"]) == ["lstm", "lstm"]
    g50, g500 = sweep["log10"]
    assert -8 < g50 < -6 and g500 < true_sizes.F32_LOG10_FLOOR  # about 1e-7, and far below float32's range
    table = at.dataframe[0].value
    assert list(table["LSTM"]) == [true_sizes.format_log10(g50), true_sizes.format_log10(g500)]
    assert f"about {true_sizes.format_log10(g500, 1)} at T = 500" in preset.lesson
    captions = " ".join(c.value for c in at.caption)
    assert ("1 value of ||dL/dh_0|| is below float32's smallest normal number (1.2e-38), where a float32 gradient "
            f"is 0: the chart shows their true size, down to {true_sizes.format_log10(g500)}.") in captions
    fig = figures(at)[SWEEP_TITLE]
    assert [s["y0"] for s in fig["layout"]["shapes"]] == [true_sizes.F32_LOG10_FLOOR]  # float64's is far off
    assert "float64's smallest normal number (2.2e-308) is not drawn: the smallest value is " \
           f"{g500 - true_sizes.F64_LOG10_FLOOR:.0f} decades above it." in captions


def test_simple_3000_steps_preset_states_its_straight_lines_rate_and_float32_crossing():
    preset = PRESETS_BY_KEY["simple_3000_steps"]
    at = open_page("gradients", **preset.query())
    run = at.session_state.untrained
    grads = probes.carry_grad_df(run.program, run.params, run.state["root"], run.scale)
    row = size_words.decay_back(grads).iloc[0]
    T, crossing = preset.config.seq_len, int(row["below_float32"])
    text = " ".join(m.value for m in at.markdown)
    assert (f"Before training, h: ×{row['rate']:.3g} per step back (the gradient halves every "
            f"{row['halving']:.3g} steps); below float32's smallest normal number at t = {crossing}, "
            f"{T - crossing} steps before the last, so a float32 backward pass gives 0 there and at every earlier "
            f"step.") in text
    assert f"×{row['rate']:.2f} per step back" in preset.lesson and f"at t = {crossing}, " in preset.lesson
    fig = figures(at)["Gradient of the loss with respect to the carry at each time step"]
    np.testing.assert_allclose(values(fig["data"][0], "y"), grads["log10"], rtol=1e-9)
    assert [s["y0"] for s in fig["layout"]["shapes"] if s["xref"] == "paper"] == [true_sizes.F32_LOG10_FLOOR]
    assert len(fig["layout"]["yaxis"]["ticktext"]) <= log10_scale.MAX_TICKS
    below = int((grads["log10"] < true_sizes.F32_LOG10_FLOOR).sum())
    captions = " ".join(c.value for c in at.caption)
    assert f"{below} values of ||dL/dh_t|| are below float32's smallest normal number" in captions
    lowest = min(grads["log10"].min(), at.session_state.conn["log10"].min())  # the two charts share one axis
    assert "float64's smallest normal number (2.2e-308) is not drawn: the smallest value is " \
           f"{lowest - true_sizes.F64_LOG10_FLOOR:.0f} decades above it." in captions
    sweep, fits, _, _ = at.session_state.sweep_result
    assert f"×{fits['rate_per_step'].iloc[0]:.3g} per step" in text
    assert f"{fits['rate_per_step'].iloc[0]:.2f}" == f"{row['rate']:.2f}"  # the same factor against T


@pytest.mark.minutes  # the page trains three cells and probes 15 lengths up to T = 160 in one run
def test_gates_preset_shows_trained_gated_cells_keeping_the_gradient():
    """The lesson's numbers for the preset's seed, as the page computes them: untrained, every cell multiplies the
    gradient by 0.70 to 0.85 per step back; after the sweep's brief training the GRU and the LSTM by more than 0.95
    (tests/test_presets.py checks the same for three seeds, and that the simple cell's factor is theirs to spare)."""
    preset = PRESETS_BY_KEY["gates_keep_the_gradient"]
    numbers = preset.numbers
    at = open_page("gradients", timeout=900, **preset.query())  # trains three cells, then 15 probes up to T = 160
    sweep, fits, _, weights = at.session_state.sweep_result
    assert weights == "trained" and sorted(set(sweep["T"])) == [numbers["T_min"], 20, 40, 80, numbers["T_max"]]
    rate = dict(zip(fits["cell"], fits["rate_per_step"]))
    assert rate["gru"] > numbers["kept"] and rate["lstm"] > numbers["kept"]  # "more than 0.95 per step back"
    text = " ".join(m.value for m in at.markdown)
    assert f"×{rate['simple']:.3g} per step" in text
    untrained = probes.fit_decay(probes.decay_sweep(preset.config, list(grids.DEFAULT_SWEEP_CELLS),
                                                    list(preset.sweep_lengths)))
    assert untrained["rate_per_step"].between(numbers["low"], numbers["high"]).all()  # "0.70 to 0.85", gated or not


def test_typed_sweep_lengths_go_into_the_url_so_a_reload_keeps_them():
    at = open_page("gradients", **SMALL)
    at.text_input(key="w_sweep_lengths").input("7, 9").run()
    assert at.query_params["sweep_lengths"] in (["7,9"], "7,9")
    again = open_page("gradients", **SMALL, sweep_lengths="7,9")  # the reloaded address
    assert again.text_input(key="w_sweep_lengths").value == "7, 9"


def test_a_class_on_one_link_computes_its_probes_and_sweep_once(monkeypatch):
    calls = {"grad": 0, "conn": 0, "sweep": 0}
    for name, kind in (("run_grad_through_time", "grad"), ("run_connectivity", "conn"), ("decay_sweep", "sweep")):
        real = getattr(probes, name)

        def counting(*args, real=real, kind=kind, **kwargs):
            calls[kind] += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(probes, name, counting)
    preset = PRESETS_BY_KEY["lstm_h0_50_vs_500"]
    first, second = (open_page("gradients", **preset.query()) for _ in range(2))
    assert calls == {"grad": 1, "conn": 1, "sweep": 1}  # the second student's page computed nothing
    for key in ("grad_time", "conn"):
        assert first.session_state[key].equals(second.session_state[key])
    assert first.session_state.sweep_result[0].equals(second.session_state.sweep_result[0])
    assert figures(first) == figures(second)
