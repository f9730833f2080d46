"""Compare's bars at true size (rnnlab.figures.true_size on the axis of rnnlab.figures.log10_scale): log10 on a linear
axis labelled 10^k, exact zeros named by their cause on a row of their own, float32's and float64's floors drawn when
the values come near them, as on every true-size axis."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from rnnlab.figures import log10_scale, true_size
from rnnlab.figures.size_words import describe_zero
from rnnlab.true_sizes import F32_LOG10_FLOOR, F64_LOG10_FLOOR, format_log10

TITLE = "Gradient reaching the initial carry per configuration"


def summary(log10: list[float], labels: list[str], causes: list[str] | None = None) -> pd.DataFrame:
    causes = causes or [""] * len(log10)
    return pd.DataFrame({"label": labels, "seed": range(len(log10)), "h0_log10": log10, "h0_zero_cause": causes,
                         "h0_zero_at": [7 if c else -1 for c in causes]})


def trace(fig, name: str):
    (found,) = [t for t in fig.data if t.name == name]
    return found


def floor_lines(fig) -> dict[str, float]:
    """Tag -> y of the horizontal lines across the plot."""
    lines = [s.y0 for s in fig.layout.shapes if s.type == "line" and s.y0 == s.y1]
    return dict(zip([a.text for a in fig.layout.annotations], lines))


def test_floors_are_drawn_only_near_the_values():
    floors = {low: log10_scale.log10_axis(np.array([low, low + 1.0])).floors
              for low in (-5.0, F32_LOG10_FLOOR + 5, -120.0, -400.0)}
    assert floors == {-5.0: (), F32_LOG10_FLOOR + 5: ("float32",), -120.0: ("float32",),
                      -400.0: ("float32", "float64")}
    assert log10_scale.log10_axis(np.array([-math.inf])).floors == ()


def test_bars_dots_and_whiskers_are_the_true_sizes():
    table = summary([-5.0, -6.0, -60.0, -62.0], ["GRU", "GRU", "simple", "simple"])
    fig = true_size.log10_bar_figure(table, TITLE, "||dL/dh_0||")
    bars = trace(fig, "mean over seeds")
    bottom = bars.base
    means = [math.log10((1e-5 + 1e-6) / 2), math.log10((1e-60 + 1e-62) / 2)]
    np.testing.assert_allclose(np.asarray(bars.y) + bottom, means)  # the bar reaches the mean of the values
    np.testing.assert_allclose(np.asarray(bars.y) + bottom + np.asarray(bars.error_y.array), [-5.0, -60.0])
    np.testing.assert_allclose(np.asarray(bars.y) + bottom - np.asarray(bars.error_y.arrayminus), [-6.0, -62.0])
    assert bars.hovertext[1] == f"simple: mean over seeds {format_log10(means[1])}"
    assert bottom == log10_scale.log10_axis(table["h0_log10"]).bottom  # from the bottom of the true-size axis
    dots = trace(fig, "each seed")
    np.testing.assert_array_equal(dots.y, [-5.0, -6.0, -60.0, -62.0])
    assert dots.hovertext[2] == "simple, seed 2: 1.000e-60"
    assert floor_lines(fig) == {log10_scale.floor_tag("float32"): F32_LOG10_FLOOR}  # near -62; float64's far below
    axis = fig.layout.yaxis
    assert axis.type in (None, "linear") and axis.range[0] == bottom < -62 and axis.range[1] > -5
    assert all(t.startswith("10<sup>") or t == "1" for t in axis.ticktext)


def test_exact_zeros_sit_below_everything_named_by_their_cause_and_float64s_floor_shows_below_it():
    table = summary([-400.0, -math.inf, -3.0, math.nan], ["LSTM", "LSTM", "GRU", "GRU"],
                    ["", "saturated", "", ""])
    fig = true_size.log10_bar_figure(table, TITLE, "||dL/dh_0||")
    zeros = trace(fig, log10_scale.zero_name("saturated"))
    assert list(zeros.x) == ["LSTM"] and zeros.y[0] < -400 and zeros.y[0] < F64_LOG10_FLOOR
    assert zeros.hovertext[0] == "LSTM, seed 1: " + describe_zero("saturated", 7, "h", 0)
    assert "derivative is 0 in float32" in zeros.hovertext[0]
    bars = trace(fig, "mean over seeds")
    assert list(bars.x) == ["LSTM", "GRU"]  # the run not measured (nan) is left out
    assert np.asarray(bars.y)[0] + bars.base == pytest.approx(-400 + math.log10(0.5))  # (1e-400 + 0) / 2
    assert floor_lines(fig) == {log10_scale.floor_tag("float32"): F32_LOG10_FLOOR,
                                log10_scale.floor_tag("float64"): F64_LOG10_FLOOR}
    np.testing.assert_array_equal(trace(fig, "each seed").y, [-400.0, -3.0])
