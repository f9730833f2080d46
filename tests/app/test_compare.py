"""The Compare page driven with AppTest: the default sweep, its charts' and table's numbers, bad selections."""

from io import StringIO

import numpy as np
import pandas as pd
import pytest

from rnnlab.config import Config
from rnnlab.grids import FIELDS
from rnnlab.model.tasks import TASKS
from rnnlab.probing.sweep import expand, run_sweep
from tests.app.conftest import button, figures, open_page, trace, unescaped, values

TITLES = ("Training loss: mean and spread over seeds", "Final evaluation loss per configuration",
          "Gradient reaching the initial carry per configuration")

GRU, SIMPLE = FIELDS["cell"].describe("gru"), FIELDS["cell"].describe("simple")


def test_default_sweep_trains_and_its_numbers_equal_run_sweep(small):
    at = open_page("compare", **small)
    assert "6 runs in 2 compiled programs" in " ".join(m.value for m in at.markdown)
    assert at.session_state.cmp_result is None and not at.error
    button(at, "Run sweep").click().run(timeout=900)
    assert not at.exception, [e.value for e in at.exception]
    result = at.session_state.cmp_result
    base = Config.from_dict(small)[0]
    configs = expand(base, {"cell": ["gru", "simple"], "seed": [0, 1, 2]})
    assert result.configs == configs and result.programs == 2
    assert "Trained 6 runs in 2 compiled program(s) on 1 device(s)" in at.success[0].value

    expected = run_sweep(configs)  # the same compiled programs, the same inputs: the same numbers
    table = at.dataframe[0].value
    want = expected.summary_df()
    assert list(table["label"]) == [GRU] * 3 + [SIMPLE] * 3
    assert list(table["seed"]) == [0, 1, 2] * 2 and (table["steps"] == 50).all()
    for column in ("final_loss", "eval_loss", "eval_metric", "h0_grad_norm"):
        np.testing.assert_allclose(table[column], want[column], rtol=1e-6)
    assert list(table["verdict"]) == list(want["verdict"])
    np.testing.assert_allclose(table["of_baseline"], want["eval_loss"] / result.baseline, rtol=1e-6)

    figs = figures(at)
    assert set(TITLES) <= set(figs)
    spread = expected.spread_df()
    curves = figs[TITLES[0]]
    for label in (GRU, SIMPLE):
        mean = trace(curves, f"{label} (mean of 3 seeds)")
        rows = spread[spread["label"] == label]
        np.testing.assert_array_equal(values(mean, "x"), rows["step"])
        np.testing.assert_allclose(values(mean, "y"), rows["mean"], rtol=1e-6)
    baseline = TASKS["adding"].baseline(base.seq_len)
    assert values(trace(curves, f"memoryless baseline {baseline:.4g}"), "y")[0] == pytest.approx(baseline)
    bars = figs[TITLES[1]]
    means = want.groupby("label", sort=False)["eval_loss"].mean()
    np.testing.assert_allclose(values(trace(bars, "mean over seeds"), "y"), means, rtol=1e-6)
    np.testing.assert_allclose(values(trace(bars, "each seed"), "y"), want["eval_loss"], rtol=1e-6)
    assert values(trace(bars, f"memoryless baseline {baseline:.4g}"), "y")[0] == pytest.approx(baseline)
    h0 = figs[TITLES[2]]
    np.testing.assert_allclose(values(trace(h0, "each seed"), "y"), want["h0_grad_norm"], rtol=1e-6)
    underflow = any("Exactly 0 in float32" in c.value for c in at.caption)
    assert underflow == bool((want["h0_grad_norm"] == 0).any())  # a zero bar cannot be drawn on a log scale

    download = at.get("download_button")[0]
    assert download.proto.label == "Final figures (CSV)"
    csv = pd.read_csv(StringIO(result.to_csv()))
    np.testing.assert_allclose(csv["eval_loss"], want["eval_loss"], rtol=1e-6)

    at.run()  # a rerun keeps the results
    assert at.session_state.cmp_result is result and set(TITLES) <= set(figures(at))


@pytest.mark.parametrize("widget, value, says", [
    ("w_cmp_lr", "0.01, abc", "Learning rate: 'abc' is not a valid value."),
    ("w_cmp_seed", ", ".join(map(str, range(25))), "make 50 runs; a sweep trains at most 48"),
    ("w_cmp_cell", ["gru", "conv_lstm"], "ConvLSTM cannot run Adding problem"),
])
def test_bad_selections_show_an_error_and_disable_run(small, widget, value, says):
    at = open_page("compare", **small)
    if widget == "w_cmp_cell":
        at.multiselect(key=widget).set_value(value).run()
    else:
        at.text_input(key=widget).set_value(value).run()
    assert not at.exception
    assert any(says in unescaped(e.value) for e in at.error), [e.value for e in at.error]
    assert button(at, "Run sweep").disabled
    assert at.session_state.cmp_result is None


def test_a_sweep_over_the_servers_time_limit_is_refused(monkeypatch):
    monkeypatch.setenv("RNNLAB_MAX_JOB_MINUTES", "0.001")
    at = open_page("compare", seq_len="12", batch="8", features="8", steps="10")
    button(at, "Run sweep").click().run()
    assert not at.exception and at.session_state.cmp_result is None
    assert any("more than this server's limit" in unescaped(e.value) for e in at.error)


def test_what_compare_varies_goes_into_the_url_and_a_reload_keeps_it():
    at = open_page("compare", seq_len="12", batch="8", features="8", steps="10")
    at.text_input(key="w_cmp_lr").input("0.003, 0.03").run()
    at.multiselect(key="w_cmp_cell").set_value(["lstm"]).run()
    query = {k: (v[0] if isinstance(v, list) else v) for k, v in at.query_params.items()}
    assert query["cmp_lr"] == "0.003,0.03" and query["cmp_cell"] == "lstm"
    again = open_page("compare", **{k: v for k, v in query.items() if k != "sid"})  # the reloaded address
    assert again.text_input(key="w_cmp_lr").value == "0.003, 0.03"
    assert again.multiselect(key="w_cmp_cell").value == ["lstm"]
    bad = open_page("compare", cmp_lr="fast", cmp_seed="1,2")
    assert bad.text_input(key="w_cmp_lr").value == "" and bad.text_input(key="w_cmp_seed").value == "1, 2"
    assert any("Learning rate: 'fast' is not a valid value" in unescaped(w.value) for w in bad.warning)
