"""The Compare page driven with AppTest: the default sweep, its charts' and table's numbers, bad selections."""

import math
from dataclasses import replace
from io import StringIO

import jax
import numpy as np
import pandas as pd
import pytest

from rnnlab.config import Config
from rnnlab.figures import log10_scale
from rnnlab.figures.size_words import describe_zero
from rnnlab.grids import FIELDS
from rnnlab.model.tasks import TASKS
from rnnlab.probing import logscale, probes
from rnnlab.sweep import H0Size, expand, run_sweep
from rnnlab.training.program import get_program, hyper_args
from rnnlab.true_sizes import F32_LOG10_FLOOR, format_log10
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
    assert "Trained 6 runs in 2 compiled programs on 1 device in " in at.success[0].value

    expected = run_sweep(configs)  # the same compiled programs, the same inputs: the same numbers
    table = at.dataframe[0].value
    want = expected.summary_df()
    assert list(table["label"]) == [GRU] * 3 + [SIMPLE] * 3
    assert list(table["seed"]) == [0, 1, 2] * 2 and (table["steps"] == 50).all()
    for column in ("final_loss", "eval_loss", "eval_metric", "h0_log10"):
        np.testing.assert_allclose(table[column], want[column], rtol=1e-6)
    assert list(table["h0_grad_norm"]) == [format_log10(v) for v in want["h0_log10"]]  # e.g. '4.700e-54'
    for i, config in enumerate(configs):  # the probe's size for each run's final parameters
        program, scale = get_program(config), hyper_args(config)[2]
        batch = probes.probe_batch(program, jax.random.PRNGKey(config.seed))
        sizes = logscale.carry_grad_log10(program, result.params[i], batch, scale)
        assert table["h0_log10"][i] == pytest.approx(sizes.h0_log10(), abs=1e-9)
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
    np.testing.assert_allclose(values(trace(h0, "each seed"), "y"), want["h0_log10"], rtol=1e-6)
    bars = trace(h0, "mean over seeds")
    np.testing.assert_allclose(values(bars, "y") + bars["base"],
                               want.groupby("label", sort=False)["h0_log10"].agg(lambda v: np.log10(np.mean(10 ** v))),
                               rtol=1e-6)
    seeds = trace(h0, "each seed")["hovertext"]
    assert seeds[0] == f"{GRU}, seed 0: {format_log10(want['h0_log10'][0])}"
    assert not any("Exactly 0" in c.value for c in at.caption)  # no exact zero here: none named
    assert "h0_zero_cause" not in table and "h0_zero_at" not in table  # in the CSV only, where nothing is 0

    download = at.get("download_button")[0]
    assert download.proto.label == "Final figures (CSV)"
    csv = pd.read_csv(StringIO(result.to_csv()))
    np.testing.assert_allclose(csv["eval_loss"], want["eval_loss"], rtol=1e-6)
    np.testing.assert_allclose(csv["h0_log10"], table["h0_log10"], rtol=1e-12)
    np.testing.assert_allclose(csv["h0_grad_norm"], 10 ** table["h0_log10"], rtol=1e-12)

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


def test_true_sizes_below_float32_and_exact_zeros_are_shown_and_named():
    query = dict(seq_len="12", batch="8", features="8", steps="10", chunk="5")
    configs = expand(Config.from_dict(query)[0], {"seed": [0, 1, 2]})
    result = replace(run_sweep(configs), h0=[H0Size(-60.0), H0Size(-math.inf, "saturated", 4), H0Size(-3.0)])
    at = open_page("compare", **query)
    at.session_state["cmp_result"] = result
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    table = at.dataframe[0].value
    assert list(table["h0_grad_norm"]) == ["1.000e-60", "exactly 0", "1.000e-03"]
    caption = next(c.value for c in at.caption if "Exactly 0 by the arithmetic" in c.value)
    assert unescaped(describe_zero("saturated", 4, "h", 0)) in unescaped(caption) and "(seed 1)" in caption
    h0 = figures(at)[TITLES[2]]
    assert values(trace(h0, "each seed"), "y").tolist() == [-60.0, -3.0]
    zero = trace(h0, log10_scale.zero_name("saturated"))
    assert zero["hovertext"][0].endswith(describe_zero("saturated", 4, "h", 0))
    floor = [shape for shape in h0["layout"]["shapes"] if shape["type"] == "line"]
    assert [s["y0"] for s in floor] == [pytest.approx(F32_LOG10_FLOOR)]
    assert [a["text"] for a in h0["layout"]["annotations"]] == [log10_scale.floor_tag("float32")]
    assert "h0_zero_cause" in table and "h0_zero_at" in table
    csv = pd.read_csv(StringIO(result.to_csv()))
    assert csv["h0_log10"].tolist()[::2] == [-60.0, -3.0] and np.isneginf(csv["h0_log10"][1])
    assert csv["h0_zero_cause"].fillna("").tolist() == ["", "saturated", ""]
