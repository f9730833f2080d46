"""``server.maxMessageSize`` (.streamlit/config.toml) bounds what one tab may send; the app's own messages must fit
it with room: the unrolled example, whose lines are thinned to MAX_STEPS steps, at the longest sequence a link
allows, with every kept snapshot as a frame. (The per-step charts, measured over a real server with
tests/load/message_sizes.py: about 3 MB at T = 100,000; docs/robustness.md.)"""

from __future__ import annotations

import tomllib
from pathlib import Path

from rnnlab.config import SETTING
from rnnlab.figures import example_plots
from rnnlab.training.train import MAX_SNAPSHOTS
from tests.test_example import synthetic_look

ROOT = Path(__file__).resolve().parents[2]


def max_message_bytes() -> int:
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    return int(config["server"]["maxMessageSize"] * 1e6)  # Streamlit counts megabytes as 10^6 bytes


def test_the_limit_is_far_below_streamlits_default():
    assert max_message_bytes() <= 16e6  # Streamlit's default is 200 MB, read whole


def test_the_unrolled_example_at_the_longest_sequence_fits_the_limit_with_room():
    longest = SETTING["seq_len"].high
    looks = [synthetic_look(longest, step) for step in range(MAX_SNAPSHOTS + 2)]
    figure = example_plots.unrolled_figure(looks, mark=longest // 2)
    size = len(figure.to_json().encode())
    lines = [t for t in figure.data if t.mode and "lines" in t.mode]
    assert lines and all(len(t.x) <= example_plots.MAX_STEPS + 1 for t in lines)
    assert size < max_message_bytes() / 2, size
