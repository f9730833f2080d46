"""The URL form of an experiment: parsing never raises, bad values fall back with notes, links round-trip."""

from dataclasses import replace

import pytest

from rnnlab.config import Config
from rnnlab.device import memory_budget_bytes
from rnnlab.grids import COMPARE_DEFAULTS
from rnnlab.sharing.urlstate import UrlState, parse_cells, parse_dims, parse_lengths, parse_query, to_query
from rnnlab.text import format_bytes


def test_round_trip_of_everything_a_url_carries():
    shared = UrlState(config=Config(cell="lstm", seq_len=30, lr=0.003), hidden=frozenset({"lr", "seed"}),
                    sweep_cells=("simple",), sweep_lengths=(5, 50), compare_zero=True, autorun=True)
    back = parse_query(to_query(shared))
    assert (back.config, back.hidden, back.sweep_cells, back.sweep_lengths, back.compare_zero, back.autorun) == (
        shared.config, shared.hidden, shared.sweep_cells, shared.sweep_lengths, True, True)
    assert back.notes == []
    assert to_query(UrlState()) == {}


def test_list_values_take_the_last_and_hide_flags_both_styles():
    shared = parse_query({"seq_len": ["10", "20"], "lr_hide": "1", "clip_hide": "0", "hide": "seed,nope"})
    assert shared.config.seq_len == 20
    assert shared.hidden == {"lr", "seed"}
    assert shared.notes == ["Cannot hide unknown control: nope."]


def test_settings_that_do_not_fit_together_are_reset_with_notes():
    shared = parse_query({"cell": "conv_lstm"})  # valid alone, but not with the default adding task
    assert shared.config == Config()
    assert any("do not fit together" in n for n in shared.notes) and "Cell went back to GRU." in shared.notes
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


# The URL table: every kind of bad value, what note it gives, and that the rest of the link still applies.
BAD_URL_VALUES = [  # (query, words in a note, field that must keep its default)
    ({"features": ""}, "Ignored features=''", "features"),
    ({"features": "abc"}, "not a valid int", "features"),
    ({"features": "0"}, "from 1 to 1024", "features"),
    ({"features": str(10**9)}, "from 1 to 1024", "features"),
    ({"features": "9" * 5000}, "5,000 characters long", "features"),
    ({"features": "9" * 100}, "from 1 to 1024", "features"),
    ({"features": "-4"}, "from 1 to 1024", "features"),
    ({"features": "²"}, "not a valid int", "features"),
    ({"seq_len": "1.5"}, "not a valid int", "seq_len"),
    ({"lr": "nan"}, "not a valid float", "lr"),
    ({"lr": "inf"}, "not a valid float", "lr"),
    ({"clip": "-inf"}, "not a valid float", "clip"),
    ({"carry_scale": "NaN"}, "not a valid float", "carry_scale"),
    ({"lr": "1e308"}, "the control accepts", "lr"),
    ({"lr": "1e7"}, "the control accepts", "lr"),
    ({"lr": "1e-9"}, "the control accepts", "lr"),
    ({"lr": "-1"}, "greater than 0", "lr"),
    ({"clip": "-1"}, "0 (off) or positive", "clip"),
    ({"carry_init": "normal", "carry_scale": "1e6"}, "the control accepts", "carry_scale"),
    ({"seed": "-1"}, "seed must be", "seed"),
    ({"cell": "foo"}, "Unknown cell 'foo'", "cell"),
    ({"task": "bar"}, "Unknown task 'bar'", "task"),
    ({"optimizer": ""}, "Ignored optimizer=''", "optimizer"),
    ({"carry_mode": "x"}, "Unknown carry_mode", "carry_mode"),
    ({"cell": "x" * 5000}, "5,000 characters long", "cell"),
    ({"bogus": "1"}, "unknown setting 'bogus'", None),
    ({"cell": "conv_lstm"}, "ConvLSTM cannot run Adding problem", "cell"),
    ({"task": "moving_dot"}, "that task is spatial", "task"),
    ({"sweep_lengths": "ten"}, "whole numbers", None),
    ({"sweep_cells": "foo"}, "Unknown or unusable cell 'foo'", None),
    ({"hide": "nope"}, "Cannot hide unknown control: nope", None),
    ({"run": "perhaps"}, "use 1 or 0", None),
    ({"sweep_weights": "pretrained"}, "Ignored sweep_weights='pretrained': use trained or untrained", None),
]


@pytest.mark.parametrize("query, words, kept", BAD_URL_VALUES, ids=[str(q)[:40] for q, _, _ in BAD_URL_VALUES])
def test_bad_url_values_keep_the_default_and_the_rest_of_the_link(query, words, kept):
    shared = parse_query({**query, "seq_len": query.get("seq_len", "30"), "batch": "8"})
    assert any(words in n for n in shared.notes), shared.notes
    assert all(len(n) < 400 for n in shared.notes)
    config = shared.config
    assert config.validate() == []
    assert config.batch == 8 and (config.seq_len == 30 or kept == "seq_len")  # the good values of the link
    if kept:
        assert getattr(config, kept) == getattr(Config(), kept)


def test_unknown_keys_and_list_values_are_summarised():
    shared = parse_query({**{f"k{i}": "1" for i in range(50)}, "steps": [], "x" * 500: "1"})
    assert shared.config == Config()
    assert sum("Ignored unknown setting" in n for n in shared.notes) == 5
    assert "Ignored 46 more unknown settings." in shared.notes


def test_over_the_memory_budget_is_not_started_and_says_the_estimate_and_limit(monkeypatch):
    monkeypatch.setenv("RNNLAB_MEMORY_BUDGET_GB", "0.05")
    huge = Config(seq_len=100_000, batch=4096, features=1024)
    shared = parse_query({"seq_len": "100000", "batch": "4096", "features": "1024", "run": "1"})
    note = next(n for n in shared.notes if "needs about" in n)
    assert format_bytes(huge.memory_bytes()) in note and "the limit is 53.7 MB" in note
    assert shared.config.validate() == [] and shared.config.memory_bytes() <= memory_budget_bytes()
    assert not shared.autorun and any("it was not started" in n for n in shared.notes)


@pytest.mark.parametrize("text, words", [
    ("", "at least one"), ("ten", "whole numbers"), ("0", "from 1 to 100000"), ("-5", "from 1 to 100000"),
    ("100001", "from 1 to 100000"), ("1e3", "whole numbers"), ("nan", "whole numbers"), ("inf", "whole numbers"),
    ("9" * 5000, "from 1 to 100000"), (",".join(map(str, range(1, 14))), "1 to 12"), ("1_0", "whole numbers"),
    ("5.0", "whole numbers"), (" , ; ", "at least one"),
])
def test_parse_lengths_table(text, words):
    lengths, error = parse_lengths(text)
    assert lengths == () and words in error and len(error) < 200


@pytest.mark.parametrize("text, words", [
    ("x", "whole numbers"), ("2, -1", "whole numbers"), ("nan", "whole numbers"), ("inf", "whole numbers"),
    ("0", "each from 1 to 4096"), ("4097", "each from 1 to 4096"), ("9" * 5000, "each from 1 to 4096"),
    ("²", "whole numbers"), ("1, 2, 3, 4, 5", "at most 4 numbers"), ("4096, 4096", "at most 65536 elements"),
    ("2.5", "whole numbers"), ("(2, 3]x", "whole numbers"),
])
def test_parse_dims_table(text, words):
    dims, error = parse_dims(text, "Batch dims")
    assert dims == () and words in error and len(error) < 200


# Every URL key besides the settings: how it is read, where it goes, what a bad value says, how it is written.
def test_every_option_key_is_written_in_one_order_and_read_back():
    shared = UrlState(config=Config(cell="lstm"), hidden=frozenset({"seed", "lr"}), sweep_cells=("simple", "gru"),
                      sweep_lengths=(5, 50), sweep_weights="untrained",
                      compare={**COMPARE_DEFAULTS, "carry_init": "ones", "cell": "gru, lstm", "lr": "0.01, 0.1"},
                      compare_zero=True, autorun=True)
    query = to_query(shared)
    assert list(query.items()) == [
        ("cell", "lstm"), ("hide", "lr,seed"), ("sweep_cells", "simple,gru"), ("sweep_lengths", "5,50"),
        ("sweep_weights", "untrained"), ("cmp_carry_init", "ones"), ("cmp_cell", "gru,lstm"),
        ("cmp_lr", "0.01,0.1"), ("compare_zero", "1"), ("run", "1")]
    back = parse_query(query)
    assert back.notes == [] and back == replace(shared, notes=[])


@pytest.mark.parametrize("query, attr, value", [
    ({"sweep_weights": " Untrained "}, "sweep_weights", "untrained"),
    ({"sweep_weights": "trained"}, "sweep_weights", "trained"),
    ({"sweep_cells": " lstm,gru , lstm"}, "sweep_cells", ("lstm", "gru")),
    ({"sweep_lengths": "50;5"}, "sweep_lengths", (5, 50)),
    *[({"compare_zero": text}, "compare_zero", True) for text in ("1", "true", " YES ")],
    *[({"compare_zero": text}, "compare_zero", False) for text in ("0", "False", "no ")],
    *[({"run": text}, "autorun", True) for text in ("1", "TRUE", "yes")],
    ({"run": "0"}, "autorun", False),
])
def test_good_option_values_are_used_without_notes(query, attr, value):
    shared = parse_query(query)
    assert shared.notes == [] and getattr(shared, attr) == value


@pytest.mark.parametrize("text, shown", [("0.01;0.1", "0.01, 0.1"), ("1,1,2", "1, 2"), ("", ""), (" 3 ", "3")])
def test_compare_values_are_parsed_and_shown_as_typed(text, shown):
    field = "lr" if "." in text else "seed"
    shared = parse_query({f"cmp_{field}": text})
    assert shared.notes == [] and shared.compare == {**COMPARE_DEFAULTS, field: shown}


def test_hide_flags_accept_1_true_yes_and_ignore_anything_else_silently():
    shared = parse_query({"lr_hide": "TRUE", "clip_hide": " yes ", "seed_hide": "no", "batch_hide": "2",
                          "steps_hide": "1", "hide": " task, ,cell"})
    assert shared.hidden == {"lr", "clip", "steps", "task", "cell"} and shared.notes == []
    assert parse_query({"nope_hide": "1"}).notes == ["Cannot hide unknown control: nope."]


def test_every_bad_option_value_keeps_its_default_with_its_own_note_in_one_order():
    shared = parse_query({"x" * 300: "1", "lr": "q" * 201, "zz": "1", "run": " PERHAPS ", "compare_zero": "maybe",
                          "cmp_cell": "gru, transformer", "cmp_lr": "fast", "sweep_weights": " Pretrained",
                          "sweep_lengths": "ten", "sweep_cells": "foo", "hide": "nope", "cmp_steps": "1", "seed": "x"})
    assert shared.notes == [
        "Ignored lr: its value is 201 characters long.",
        f"Ignored unknown setting '{'x' * 37}...'.",
        "Ignored unknown setting 'zz'.",
        "Ignored unknown setting 'cmp_steps'.",
        "Cannot hide unknown control: nope.",
        "Unknown or unusable cell 'foo' for the sweep; use: gru, lstm, optimized_lstm, mgu, simple. "
        "Kept the default cells.",
        "Sequence lengths must be whole numbers separated by commas (got 'ten'). Kept the default lengths.",
        "Ignored sweep_weights='pretrained': use trained or untrained.",
        "Cell: unknown 'transformer'; choose from gru, lstm, optimized_lstm, mgu, simple, conv_lstm. "
        "Kept the Compare page's default for it.",
        "Learning rate: 'fast' is not a valid value. Kept the Compare page's default for it.",
        "Ignored compare_zero='maybe': use 1 or 0.",
        "Ignored run='perhaps': use 1 or 0.",
        "Ignored seed='x': not a valid int; kept 0."]
    assert replace(shared, notes=[]) == UrlState()
