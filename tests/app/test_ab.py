"""A/B on Explore driven with AppTest: pin a run, train another configuration, and read both on shared axes
with the comparison stated in numbers that equal the two histories."""

from __future__ import annotations

import re

import numpy as np

from rnnlab.figures import ab
from rnnlab.probing import analysis
from tests.app.conftest import SMALL, button, figures, open_page, values

GRU = {**SMALL, "cell": "gru", "task": "adding"}


def test_pin_a_gru_then_train_a_simple_rnn_and_compare_on_one_screen():
    at = open_page("explore", run="1", **GRU)
    a_run = at.session_state.run
    button(at, "Pin this run as A").click().run()
    assert at.session_state.explore.pinned.history.last_step == a_run.step
    at.selectbox(key="w_cell").set_value("simple").run()
    button(at, "Train").click().run()
    b_run = at.session_state.run
    assert b_run.config.cell == "simple" and b_run.done
    charts = figures(at)
    loss = charts[ab.LOSS_TITLE]
    names = [t["name"] for t in loss["data"]]
    assert names == ["A: GRU, learnable carry", "B: Simple RNN, learnable carry"]
    np.testing.assert_allclose(values(loss["data"][0], "y"), [c["eval_loss"] for c in a_run.history.chunks], rtol=1e-6)
    np.testing.assert_allclose(values(loss["data"][1], "y"), [c["eval_loss"] for c in b_run.history.chunks], rtol=1e-6)
    moved = charts[ab.MOVED_TITLE]
    a_moved = analysis.carry_movement(a_run.history)["h"]["distance"]
    b_moved = analysis.carry_movement(b_run.history)["h"]["distance"]
    assert np.isclose(values(moved["data"][0], "y")[-1], a_moved)
    assert np.isclose(values(moved["data"][1], "y")[-1], b_moved)
    text = next(m.value for m in at.markdown if m.value.startswith("**A**"))
    a_loss, b_loss = a_run.history.chunks[-1]["eval_loss"], b_run.history.chunks[-1]["eval_loss"]
    assert f"evaluation loss is {a_loss:.3g} and its initial carry moved {a_moved:.2g}" in text
    assert f"evaluation loss is {b_loss:.3g} and its initial carry moved {b_moved:.2g}" in text
    ratio = max(a_moved, b_moved) / min(a_moved, b_moved)
    stated = re.search(r"B's initial carry moved ([\d,.]+) times (more|less) than A's", text)
    assert stated and float(stated.group(1).replace(",", "")) == float(f"{ratio:.3g}")
    assert (stated.group(2) == "less") == (b_moved < a_moved)
    per_step = charts["Loss at each time step of the sequence"]
    assert "A: GRU, learnable carry" in [t["name"] for t in per_step["data"]]
    button(at, "Unpin A").click().run()
    assert ab.LOSS_TITLE not in figures(at)


def test_labels_name_what_differs():
    from rnnlab.config import Config
    a, b = Config(), Config(cell="simple", seq_len=200)
    assert ab.labels(a, b) == ("GRU, learnable carry, T = 100", "Simple RNN, learnable carry, T = 200")
    a, b = Config(carry_mode="fixed"), Config()
    assert ab.labels(a, b) == ("GRU, fixed carry", "GRU, learnable carry")
    assert ab.times(6e-6, 3.0) == "500,000 times less than"
    assert ab.times(2.0, 1.0) == "2 times more than"
    assert ab.times(6.7e-6, 3.146) == "470,000 times less than"
