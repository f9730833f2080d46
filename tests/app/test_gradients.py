"""The Gradient flow page: probes of the current model, the decay sweep and connectivity, checked by number."""

import numpy as np

from rnnlab import grids
from rnnlab.config import Config
from rnnlab.probing import probes
from rnnlab.sharing.presets import PRESETS_BY_KEY
from tests.app.conftest import SMALL, figures, open_page, values

SWEEP_TITLE = "Gradient reaching the initial carry against sequence length"


def test_untrained_model_probes_match_the_library():
    at = open_page("gradients", **SMALL, cell="lstm")
    assert any("this is the untrained model" in i.value for i in at.info)
    run = at.session_state.untrained
    figs = figures(at)
    grad = figs["Gradient of the loss with respect to the carry at each time step"]
    assert [t["name"] for t in grad["data"]] == ["after 0 training steps, c", "after 0 training steps, h"]
    expected = probes.carry_grad_norms(run.program, run.params, run.state["root"], run.scale)
    for t, leaf in zip(grad["data"], ("c", "h")):
        np.testing.assert_array_equal(values(t, "x"), np.arange(21))
        np.testing.assert_allclose(values(t, "y"), np.where(expected[leaf] > 0, expected[leaf], np.nan), rtol=1e-6)
    assert expected["c"][-1] == 0 and any("final cell state c at t = 20 is exactly 0" in c.value for c in at.caption)
    conn = figs["Connectivity: how much the last output depends on each input step"]
    np.testing.assert_allclose(values(conn["data"][0], "y"),
                               probes.connectivity(run.program, run.params, run.state["root"], run.scale), rtol=1e-6)
    assert SWEEP_TITLE not in figs


def test_trained_run_shows_start_middle_end():
    at = open_page("explore", **SMALL, run="1")
    run = at.session_state.run
    at.switch_page("pages/gradients.py").run()
    assert not at.exception
    names = [t["name"] for t in figures(at)["Gradient of the loss with respect to the carry at each time step"]["data"]]
    steps = [s for s, _ in run.snapshots_at(3)]
    assert names == [f"after {s} training steps, h" for s in steps] and steps[0] == 0 and steps[-1] == 50


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
    for t, cell in zip([d for d in fig["data"] if d["name"] != "0 in float32"], ["simple", "gru"]):
        np.testing.assert_array_equal(values(t, "x"), [5, 10, 20])
        np.testing.assert_allclose(values(t, "y"), expected[expected.cell == cell]["h0_grad_norm"], rtol=1e-6)
        halving = fits.set_index("cell").loc[cell, "halving_steps"]
        label = {"simple": "Simple RNN", "gru": "GRU"}[cell]
        assert t["name"] == f"{label} (halves every {halving:.3g} steps)"
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
    g50, g500 = sweep["h0_grad_norm"]
    assert 1e-8 < g50 < 1e-6 and g500 == 0  # the lesson's numbers: about 1e-7, and exactly 0 (underflow)
    assert "0 in float32" in at.dataframe[0].value.to_string()


def test_gates_preset_shows_trained_gated_cells_keeping_the_gradient():
    """The preset's claim as numbers: after brief training the gated cells keep > 95% per step back, the simple
    cell keeps < 80% (a third lost per step); untrained, all three lose about a fifth per step alike."""
    preset = PRESETS_BY_KEY["gates_keep_the_gradient"]
    at = open_page("gradients", **preset.query())
    sweep, fits, _, weights = at.session_state.sweep_result
    assert weights == "trained" and sorted(set(sweep["T"])) == [10, 20, 40, 80, 160]
    rate = dict(zip(fits["cell"], fits["rate_per_step"]))
    assert rate["gru"] > 0.95 and rate["lstm"] > 0.95 and rate["simple"] < 0.8
    text = " ".join(m.value for m in at.markdown)
    assert f"×{rate['simple']:.3g} per step" in text
    untrained = probes.fit_decay(probes.decay_sweep(preset.config, list(grids.DEFAULT_SWEEP_CELLS),
                                                    list(preset.sweep_lengths)))
    assert (untrained["rate_per_step"].between(0.7, 0.85)).all()


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
