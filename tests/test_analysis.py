"""Tables computed from a History for the charts, and the figures drawn from them."""

import numpy as np
import pandas as pd
import pytest

from rnnlab.figures import log10_scale, plots, true_size
from rnnlab.probing import analysis
from rnnlab.training.history import History


def make_history(snaps_h: np.ndarray, snaps_c: np.ndarray | None = None) -> History:
    leaves = ("c", "h") if snaps_c is not None else ("h",)
    history = History(leaves)
    for i, h in enumerate(snaps_h):
        carry0 = (snaps_c[i], h) if snaps_c is not None else (h,)
        history.add_evaluation(10 * i, {"loss": 1.0 / (i + 1), "metric": 0.5, "per_step_loss": np.arange(4.0) + i,
                                        "carry0": carry0})
    return history


def test_distance_from_start_per_leaf():
    h = np.array([[0.0, 0.0], [3.0, 4.0], [6.0, 8.0]], np.float32)
    c = np.array([[1.0, 1.0], [1.0, 1.0], [1.0, 2.0]], np.float32)
    df = analysis.carry_distance_df(make_history(h, c))
    assert list(df[df.leaf == "h"]["distance"]) == [0.0, 5.0, 10.0]
    assert list(df[df.leaf == "c"]["distance"]) == [0.0, 0.0, 1.0]
    assert list(df[df.leaf == "h"]["step"]) == [0, 10, 20]


def test_pca_recovers_a_straight_path():
    direction = np.array([1.0, 2.0, 2.0]) / 3.0
    h = np.stack([t * direction for t in range(5)]).astype(np.float32)
    df = analysis.carry_pca_df(make_history(h))
    np.testing.assert_allclose(df["pc1"], np.arange(5) - 2.0, atol=1e-5)  # centred, starting negative
    np.testing.assert_allclose(df["pc2"], 0.0, atol=1e-5)
    assert df["explained"].iloc[0] == pytest.approx(1.0)


def test_pca_of_a_carry_that_never_moves():
    df = analysis.carry_pca_df(make_history(np.ones((3, 4), np.float32)))
    assert (df[["pc1", "pc2"]].to_numpy() == 0).all() and (df["explained"] == 1.0).all()


def test_units_table_and_heatmap_hold_the_snapshots():
    h = np.arange(6, dtype=np.float32).reshape(3, 2)
    history = make_history(h)
    units = analysis.carry_units_df(history, "h")
    assert len(units) == 6
    fig = plots.carry_heatmap(units, "h")
    np.testing.assert_array_equal(np.asarray(fig.data[0].z), h.T)  # units are rows, evaluations columns
    assert list(fig.data[0].x) == ["0", "10", "20"]


def test_per_step_loss_table_takes_the_last_evaluation():
    table = analysis.per_step_loss_table(make_history(np.zeros((3, 2), np.float32)), "run")
    assert list(table["loss"]) == [2.0, 3.0, 4.0, 5.0] and list(table["t"]) == [1, 2, 3, 4]


def test_thin_keeps_first_and_last_and_bounds_the_size():
    df = pd.DataFrame({"step": np.arange(1, 10_001)})
    thinned = analysis.thin(df, max_points=1000)
    assert len(thinned) <= 1001 and thinned["step"].iloc[0] == 1 and thinned["step"].iloc[-1] == 10_000
    assert analysis.thin(df.head(50), 1000) is not None and len(analysis.thin(df.head(50), 1000)) == 50
    units = pd.DataFrame({"step": np.repeat(np.arange(500), 2), "unit": np.tile([0, 1], 500), "value": 0.0})
    kept = analysis.thin_evaluations(units, max_columns=100)
    assert kept["step"].nunique() <= 101 and 499 in set(kept["step"]) and 0 in set(kept["step"])


def test_loss_figure_draws_the_dataframes_and_the_baseline():
    steps = pd.DataFrame({"step": [1, 2, 3], "loss": [0.5, 0.25, 0.125], "metric": [0.1, 0.2, 0.3]})
    evals = pd.DataFrame({"step": [0, 3], "eval_loss": [0.6, 0.1], "eval_metric": [0.0, 0.4]})
    fig = plots.loss_figure(steps, evals, 1 / 6, "always predict 1")
    names = [t.name for t in fig.data]
    assert names == ["training loss", "evaluation loss", "memoryless baseline 0.1667"]
    assert list(fig.data[0].y) == [0.5, 0.25, 0.125] and list(fig.data[1].x) == [0, 3]
    assert list(fig.data[2].y) == [1 / 6, 1 / 6] and fig.layout.yaxis.type == "log"


def test_decay_figure_names_each_cell_with_its_halving():
    sweep = pd.DataFrame({"cell": ["gru", "gru"], "T": [10, 20], "h0_grad_norm": [1.0, 0.25]})
    fits = pd.DataFrame({"cell": ["gru"], "rate_per_step": [0.5 ** 0.2], "halving_steps": [5.0], "points": [2]})
    fig = true_size.decay_figure(sweep, fits, {"gru": "GRU"})
    assert fig.data[0].name == "GRU (halves every 5 steps)"
    np.testing.assert_allclose(list(fig.data[0].y), [0.0, np.log10(0.25)])  # true sizes, as log10


def test_carry_movement_in_numbers_and_a_fixed_colour_scale():
    history = History(("h",))
    for step, carry in ((0, np.zeros(3)), (10, np.array([1e-6, -2e-6, 0.0]))):
        history.add_evaluation(step, {"loss": 1.0, "metric": 0.0, "per_step_loss": np.zeros(2),
                                      "carry0": (carry.astype(np.float32),)})
    moved = analysis.carry_movement(history)["h"]
    assert moved["distance"] == pytest.approx(np.sqrt(5) * 1e-6, rel=1e-5)
    assert moved["largest_unit"] == pytest.approx(2e-6, rel=1e-5) and moved["start_size"] == 0
    assert "moved 2.2e-06 in all (no unit by more than 2e-06" in analysis.describe_movement(history)
    heat = plots.carry_heatmap(analysis.carry_units_df(history, "h"), "h")
    assert (heat.data[0].zmin, heat.data[0].zmax) == (-1, 1)  # not stretched to +-2e-6
    assert plots.heatmap_bound(pd.Series([0.5, -3.2])) == 4


@pytest.mark.parametrize("values, expected", [
    ([3.1, 0.4, 0.52], ["0.5", "1", "2"]),  # the copy task's loss: one decade, so 1-2-5 steps are labelled
    ([0.0097, 0.0104], ["0.0097", "0.01"]),  # narrower than one step: its two ends
])
def test_a_log_axis_within_two_decades_labels_several_plain_ticks(values, expected):
    steps = pd.DataFrame({"step": range(1, len(values) + 1), "loss": values, "metric": values})
    evals = pd.DataFrame({"step": [0], "eval_loss": [values[0]], "eval_metric": [values[0]]})
    fig = plots.loss_figure(steps, evals, values[0], "baseline")
    assert list(fig.layout.yaxis.ticktext) == expected
    wide = plots.loss_figure(steps.assign(loss=[1e-4] + values[1:]), evals, values[0], "baseline")
    assert wide.layout.yaxis.ticktext is None  # wider ranges keep Plotly's powers of ten


def test_log_floor_is_a_decade_below_the_smallest_positive_value_of_every_column():
    columns = pd.Series([0.0, 3e-7, 0.2]), np.array([[5e-5, np.nan], [np.inf, 0.0]])
    assert log10_scale.zero_level(*columns) == pytest.approx(1e-8)
    assert log10_scale.zero_level(pd.Series([0.0, np.nan]), np.zeros(3)) == 1e-45  # nothing positive to sit below
    assert log10_scale.zero_level() == 1e-45
