"""The gradient charts at true size: log10 on a linear axis with powers of ten as ticks, hover giving each size,
float32's and float64's floors as labelled lines, exact zeros marked at the bottom and named by cause."""

import math

import numpy as np
import pandas as pd
import pytest

from rnnlab import true_sizes
from rnnlab.figures import log10_scale, size_words, true_size
from rnnlab.probing import probes


def grads_table(log10: list[float], leaf: str = "h", causes: list[str] | None = None,
                at: list[int] | None = None) -> pd.DataFrame:
    n = len(log10)
    return pd.DataFrame({"step": 0, "t": range(n), "leaf": leaf, "grad_norm": probes.logscale.to_float(log10),
                         "log10": log10, "zero_cause": causes or [""] * n, "zero_at": at or [-1] * n})


def annotations(fig) -> dict[str, str]:
    return {a.name: a.text for a in fig.layout.annotations if a.name in log10_scale.FLOORS_SHOWN}


def floor_lines(fig) -> list[float]:
    return sorted(s.y0 for s in fig.layout.shapes if s.xref == "paper" and s.y0 == s.y1)


def legend_lines(fig) -> list[str]:
    return [t.name for t in fig.data if t.legendgroup in log10_scale.FLOORS_SHOWN]


@pytest.mark.parametrize("bottom, top, labels", [
    (-620.0, 5.0, ["10<sup>\u2212600</sup>", "10<sup>\u2212500</sup>", "10<sup>\u2212400</sup>",
                   "10<sup>\u2212300</sup>", "10<sup>\u2212200</sup>", "10<sup>\u2212100</sup>", "1"]),
    (-60.0, -1.0, ["10<sup>\u221260</sup>", "10<sup>\u221250</sup>", "10<sup>\u221240</sup>",
                   "10<sup>\u221230</sup>", "10<sup>\u221220</sup>", "10<sup>\u221210</sup>"]),
    (-4.2, 0.3, ["10<sup>\u22124</sup>", "10<sup>\u22123</sup>", "10<sup>\u22122</sup>", "10<sup>\u22121</sup>",
                 "1"]),
    (-1.1, 0.1, ["0.1", "0.2", "0.5", "1"]),
])
def test_ticks_are_powers_of_ten_and_at_most_eight(bottom, top, labels):
    values, texts = log10_scale.log10_ticks(bottom, top)
    assert texts == labels and len(values) <= log10_scale.MAX_TICKS
    assert all(bottom <= v <= top for v in values)


def test_floors_are_drawn_where_the_values_reach_them_and_said_in_words_where_not():
    near_zero = log10_scale.log10_axis(np.array([-6.0, -1.0]))
    assert near_zero.floors == ()
    assert size_words.floors_note(near_zero) == (
        "float32's smallest normal number (1.2e-38) is not drawn: the smallest value is 32 decades above it; "
        "float64's smallest normal number (2.2e-308) is not drawn: the smallest value is 302 decades above it.")
    lstm = log10_scale.log10_axis(np.array([-6.8, -53.26]))  # the LSTM at T = 50 and 500
    assert lstm.floors == ("float32",) and lstm.bottom < -53.26 and lstm.top > -6.8
    assert "float64's smallest normal number (2.2e-308) is not drawn: the smallest value is 254 decades" in \
        size_words.floors_note(lstm)
    deep = log10_scale.log10_axis(np.array([-0.3, -600.0, -np.inf]))
    assert deep.floors == ("float32", "float64") and deep.zero_y < -600 and deep.bottom < deep.zero_y
    assert size_words.floors_note(deep) == ""
    # float32's floor is drawn when at most about doubling the axis: 20 decades of values 15 above it
    assert log10_scale.log10_axis(np.array([-3.0, -23.0])).floors == ("float32",)


def test_carry_gradient_chart_plots_true_sizes_with_hover_floors_and_named_zeros():
    log10 = [-np.inf, -np.inf, -600.25, -320.0, -40.0, -1.0, -0.5]
    grads = grads_table(log10, causes=["saturated", "saturated", "", "", "", "", ""], at=[2, 2, -1, -1, -1, -1, -1])
    fig = true_size.grad_through_time_figure(grads)
    line = fig.data[0]
    assert line.name == "before training, h"
    np.testing.assert_array_equal(np.asarray(line.y, float), [np.nan, np.nan, -600.25, -320, -40, -1, -0.5])
    assert list(line.customdata) == [true_sizes.format_log10(v) for v in log10]
    assert line.customdata[2] == "5.623e-601" and "%{customdata}" in line.hovertemplate
    zeros = next(t for t in fig.data if t.name == "exactly 0: saturated units")
    assert list(zeros.x) == [0, 1] and all(y < -600.25 for y in zeros.y)
    assert list(zeros.hovertext) == [size_words.describe_zero("saturated", 2, "h", t) for t in (0, 1)]
    assert floor_lines(fig) == pytest.approx([true_sizes.F64_LOG10_FLOOR, true_sizes.F32_LOG10_FLOOR])
    assert annotations(fig) == {"float32": "float32's floor", "float64": "float64's floor"}
    assert legend_lines(fig) == ["float32's smallest normal number (1.2e-38):<br>below it float32 gives 0",
                                 "float64's smallest normal number (2.2e-308):<br>below it float64 gives 0"]
    assert [s.line.dash for s in fig.layout.shapes] == ["dash", "dot"]
    low, high = fig.layout.yaxis.range
    assert low < min(zeros.y) and high > -0.5 and len(fig.layout.yaxis.tickvals) <= log10_scale.MAX_TICKS
    assert list(fig.layout.xaxis.range) == log10_scale.step_range(6) == [-0.5, 6.5]  # a marker at an end shows whole


def test_the_final_lstm_cell_state_is_marked_as_read_by_nothing():
    c = grads_table([-3.0, -2.0, -np.inf], "c", causes=["", "", "unread"])
    fig = true_size.grad_through_time_figure(pd.concat([c, grads_table([-2.5, -1.5, -1.0])], ignore_index=True))
    unread = next(t for t in fig.data if t.name == "exactly 0: read by nothing")
    assert list(unread.x) == [2] and list(unread.hovertext) == [size_words.describe_zero("unread", -1, "c", 2)]
    assert floor_lines(fig) == [] and legend_lines(fig) == []  # every value far above both floors
    assert size_words.describe_exact_zeros(c) == []  # the page says this one in its own sentence


def test_decay_chart_draws_true_sizes_and_the_fitted_line():
    sweep = pd.DataFrame({"cell": "lstm", "T": [50, 500, 5000], "h0_grad_norm": [1.57e-7, 5.5e-54, 0.0],
                          "log10": [-6.804, -53.257, -520.0], "zero_cause": "", "zero_at": -1})
    fits = probes.fit_decay(sweep)
    fig = true_size.decay_figure(sweep, fits, {"lstm": "LSTM"})
    halving = fits["halving_steps"].iloc[0]
    line = fig.data[0]
    assert line.name == f"LSTM (halves every {halving:.3g} steps)" and list(line.y) == [-6.804, -53.257, -520.0]
    assert list(line.customdata) == ["1.570e-07", "5.534e-54", "1.000e-520"]
    assert list(line.text) == ["1.6e-07", "5.5e-54", "1.0e-520"]  # one cell, few lengths: quoted beside each point
    fit = next(t for t in fig.data if t.name == "LSTM: fitted line")
    slope = np.polyfit(np.asarray(fit.x, float), np.asarray(fit.y, float), 1)[0]
    assert slope == pytest.approx(math.log10(fits["rate_per_step"].iloc[0]))
    a, b = np.polyfit([50, 500, 5000], [-6.804, -53.257, -520.0], 1)[::-1]
    np.testing.assert_allclose(fit.y, a + b * np.asarray(fit.x, float))  # log10 = a + T log10(rate)
    assert fig.layout.xaxis.type == "log" and floor_lines(fig) == pytest.approx(
        [true_sizes.F64_LOG10_FLOOR, true_sizes.F32_LOG10_FLOOR])


def test_decay_chart_names_an_exact_zero_by_its_cause():
    sweep = pd.DataFrame({"cell": "simple", "T": [10, 20], "h0_grad_norm": [1e-3, 0.0], "log10": [-3.0, -np.inf],
                          "zero_cause": ["", "saturated"], "zero_at": [-1, 7]})
    fig = true_size.decay_figure(sweep, probes.fit_decay(sweep))
    zero = next(t for t in fig.data if t.name == "exactly 0: saturated units")
    assert list(zero.x) == [20] and list(zero.hovertext) == [
        "T = 20: " + size_words.describe_zero("saturated", 7, "h", 0)]
    assert fig.data[0].name == "simple (no decay fitted)"


def test_decay_chart_says_a_gradient_that_does_not_shrink_with_T_does_not_decay():
    sweep = pd.DataFrame({"cell": "lstm", "T": [10, 20, 40], "h0_grad_norm": [1e-3, 2e-3, 4e-3],
                          "log10": np.log10([1e-3, 2e-3, 4e-3]), "zero_cause": "", "zero_at": -1})
    fits = probes.fit_decay(sweep)
    assert math.isinf(fits["halving_steps"].iloc[0])
    assert true_size.decay_figure(sweep, fits).data[0].name == "lstm (does not decay)"


def test_connectivity_shares_the_carry_charts_axis():
    grads = grads_table([-80.0 + t for t in range(11)])
    conn = pd.DataFrame({"t": range(1, 11), "connectivity": 0.0, "log10": [-90.0 + t for t in range(10)]})
    axis = log10_scale.log10_axis(grads["log10"], conn["log10"])
    a, b = true_size.grad_through_time_figure(grads, axis), true_size.connectivity_figure(conn, axis)
    assert list(a.layout.yaxis.range) == list(b.layout.yaxis.range) == [axis.bottom, axis.top]
    assert list(a.layout.xaxis.range) == list(b.layout.xaxis.range) == log10_scale.step_range(10)
    assert list(b.data[0].y) == list(conn["log10"]) and b.data[0].customdata[0] == "1.000e-90"


def test_a_straight_decay_is_described_by_its_rate_and_where_it_passes_float32s_floor():
    T, slope = 1000, -0.06
    grads = grads_table([slope * (T - t) - 0.3 for t in range(T + 1)])
    row = size_words.decay_back(grads).iloc[0]
    assert row["rate"] == pytest.approx(10 ** slope) and row["halving"] == pytest.approx(math.log10(2) / -slope)
    crossing = max(t for t in range(T + 1) if slope * (T - t) - 0.3 < true_sizes.F32_LOG10_FLOOR)
    assert row["below_float32"] == crossing
    assert size_words.describe_decay_back(grads) == [
        f"Before training, h: ×{10 ** slope:.3g} per step back (the gradient halves every "
        f"{math.log10(2) / -slope:.3g} steps); below float32's smallest normal number at t = {crossing}, "
        f"{T - crossing} steps before the last, so a float32 backward pass gives 0 there and at every earlier step."]
    below = grads["log10"][grads["log10"] < true_sizes.F32_LOG10_FLOOR]
    assert size_words.describe_below_float32(grads["log10"], "||dL/dh_t||") == (
        f"{len(below)} values of ||dL/dh_t|| are below float32's smallest normal number (1.2e-38), where a float32 "
        f"gradient is 0: the chart shows their true size, down to {true_sizes.format_log10(below.min())}.")


def test_exact_zeros_cut_by_a_step_are_named_with_the_step():
    grads = grads_table([-np.inf, -np.inf, -np.inf, -2.0, -1.0], causes=["gate"] * 3 + ["", ""], at=[3, 3, 3, -1, -1])
    assert size_words.describe_exact_zeros(grads) == [
        "Before training: " + size_words.describe_zero("gate", 3, "h", 2) + " So are the 2 steps before it."]


def test_a_floors_tag_goes_where_the_values_leave_room():
    """The LSTM sweep (T = 50 and 500): the line crosses float32's floor; its tag goes at the left end (the values
    there are furthest from it), under the line (the values there are above it)."""
    sweep = pd.DataFrame({"cell": "lstm", "T": [50, 500], "h0_grad_norm": 0.0, "log10": [-6.8, -53.3]})
    figure = true_size.decay_figure(sweep, probes.fit_decay(sweep))
    tag = next(a for a in figure.layout.annotations if a.name == "float32")
    assert (tag.x, tag.xanchor, tag.yanchor) == (0.01, "left", "top")
    # a floor at the top of the axis: its tag goes under it, where there is room
    deep = grads_table([-60.0 - t for t in range(100)])
    tag = next(a for a in true_size.grad_through_time_figure(deep).layout.annotations if a.name == "float32")
    assert tag.yanchor == "top"
