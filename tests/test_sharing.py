"""The URL form of an experiment: parsing never raises, bad values fall back with notes, links round-trip."""

import pytest

from rnnlab.config import Config
from rnnlab.sharing import Shared, parse_cells, parse_dims, parse_lengths, parse_query, to_query


def test_round_trip_of_everything_a_url_carries():
    shared = Shared(config=Config(cell="lstm", seq_len=30, lr=0.003), hidden=frozenset({"lr", "seed"}),
                    sweep_cells=("simple",), sweep_lengths=(5, 50), compare_zero=True, autorun=True)
    back = parse_query(to_query(shared))
    assert (back.config, back.hidden, back.sweep_cells, back.sweep_lengths, back.compare_zero, back.autorun) == (
        shared.config, shared.hidden, shared.sweep_cells, shared.sweep_lengths, True, True)
    assert back.notes == []
    assert to_query(Shared()) == {}


def test_list_values_take_the_last_and_hide_flags_both_styles():
    shared = parse_query({"seq_len": ["10", "20"], "lr_hide": "1", "clip_hide": "0", "hide": "seed,nope"})
    assert shared.config.seq_len == 20
    assert shared.hidden == {"lr", "seed"}
    assert shared.notes == ["Cannot hide unknown control(s): nope."]


def test_settings_that_do_not_fit_together_are_reset_with_notes():
    shared = parse_query({"cell": "conv_lstm"})  # valid alone, but not with the default adding task
    assert shared.config == Config()
    assert any("do not fit together" in n for n in shared.notes) and "Reset cell to gru." in shared.notes
    ok = parse_query({"cell": "conv_lstm", "task": "moving_dot", "seq_len": "8"})
    assert ok.notes == [] and ok.config.cell == "conv_lstm"


@pytest.mark.parametrize("params", [{"lr": "1e999"}, {"steps": "3.5"}, {"seed": "9" * 40}, {"task": "\x00"},
                                    {"run": "perhaps"}, {"sweep_lengths": ""}, {"sweep_cells": "conv_lstm"}])
def test_garbage_never_raises_and_says_why(params):
    shared = parse_query(params)
    assert shared.notes and shared.config.validate() == []


def test_parse_lengths_cells_dims():
    assert parse_lengths("40, 10;20") == ((10, 20, 40), None)
    assert parse_lengths("10, ten")[1].startswith("Sequence lengths must be whole numbers")
    assert "1 to 12" in parse_lengths(",".join(map(str, range(1, 20))))[1]
    assert parse_cells("gru, lstm,gru") == (("gru", "lstm"), None)
    assert "unusable" in parse_cells("conv_lstm")[1]
    assert parse_dims("(2, 3)", "Batch dims") == ((2, 3), None)
    assert parse_dims("", "Batch dims") == ((), None)
    assert "whole numbers" in parse_dims("2, -1", "Batch dims")[1]
    assert "each from 1 to 4096" in parse_dims("0", "Batch dims")[1]
    assert "at most 65536 elements" in parse_dims("4096, 4096", "Batch dims")[1]
