"""Configuration validation, the memory estimate and the flat string form."""

import math
from dataclasses import fields

import pytest

from rnnlab.config import SETTINGS, STATIC_FIELDS, Config, ConfigMethods, Static, StaticFields
from rnnlab.device import memory_budget_bytes
from rnnlab.model.cells import CELLS
from rnnlab.model.tasks import TASKS
from rnnlab.text import format_bytes

BIG = 2**62


def test_the_fields_declared_for_type_checkers_are_the_settings():
    """Config and Static are built from SETTINGS; the annotations type checkers read must say the same."""
    declared = {name: kind for name, kind in ConfigMethods.__annotations__.items() if not name.startswith("__")}
    assert declared == {s.name: s.type.__name__ for s in SETTINGS}
    assert StaticFields.__annotations__ == {name: declared[name] for name in STATIC_FIELDS}
    assert [f.name for f in fields(Config)] == list(declared)
    assert [f.name for f in fields(Static)] == list(StaticFields.__annotations__)


def test_default_is_valid_and_round_trips():
    config = Config()
    assert config.validate(BIG) == []
    back, notes = Config.from_dict(config.to_dict())
    assert back == config and notes == []


def test_every_field_round_trips_through_strings():
    config = Config(task="sine", cell="lstm", features=17, carry_mode="noisy", carry_init="truncated_normal",
                    carry_scale=0.37, seq_len=33, batch=5, optimizer="rmsprop", lr=3e-4, clip=0.0, steps=7,
                    seed=123, chunk=3, kernel_size=5)
    data = config.to_dict()
    assert all(isinstance(v, str) for v in data.values())
    assert Config.from_dict(data) == (config, [])


@pytest.mark.parametrize("key, raw, fragment", [
    ("lr", "nan", "not a valid float"),
    ("lr", "inf", "not a valid float"),
    ("lr", "-1", "greater than 0"),
    ("lr", "abc", "not a valid float"),
    ("seq_len", "-3", "seq_len must be a whole number from 1"),
    ("seq_len", "1e3", "not a valid int"),
    ("features", "100000", "features must be a whole number from 1 to 1024"),
    ("cell", "transformer", "Unknown cell 'transformer'"),
    ("task", "", "not a valid str"),
    ("clip", "-2", "clip must be 0 (off) or positive"),
    ("seed", "-1", "seed must be a whole number"),
    ("nonsense", "1", "Ignored unknown setting 'nonsense'"),
])
def test_bad_values_fall_back_with_a_note(key, raw, fragment):
    config, notes = Config.from_dict({key: raw, "batch": "32"})
    assert config.batch == 32  # the good value next to it is kept
    if key in Config.__dataclass_fields__:
        assert getattr(config, key) == getattr(Config(), key)
    assert len(notes) == 1 and fragment in notes[0], notes


def test_messages_name_the_problem():
    assert Config(lr=0.0).validate(BIG) == ["The learning rate must be greater than 0 (got 0)."]
    assert "finite" in Config(lr=math.nan).validate(BIG)[0]
    errors = Config(cell="conv_lstm").validate(BIG)
    assert errors == ["ConvLSTM cannot run Adding problem: it needs a spatial task. "
                      "Tasks it can run: Moving dot (spatial)."]
    assert "that task is spatial" in Config(task="moving_dot").validate(BIG)[0]
    assert "at least 10" in Config(task="temporal_order", seq_len=5).validate(BIG)[0]


def test_memory_budget_refuses_by_name_and_number():
    config = Config(seq_len=50000, batch=256)
    need = config.memory_bytes()
    assert need > 10 * 10**9
    errors = config.validate(budget=4 * 10**9)
    assert len(errors) == 1
    assert errors[0].startswith(f"T=50000 with batch 256 and 64 features needs about {format_bytes(need)}")
    assert "the limit is 4.0 GB" in errors[0]
    assert config.validate(budget=need) == []


def test_memory_estimate_grows_with_length_batch_and_cell():
    base = Config().memory_bytes()
    assert Config(seq_len=200).memory_bytes() == 2 * base
    assert Config(batch=128).memory_bytes() == 2 * base
    assert Config(cell="lstm").memory_bytes() > base > Config(cell="simple").memory_bytes()


def test_every_registered_cell_has_a_task_it_can_run():
    for name, cell in CELLS.items():
        fits = [t for t in TASKS.values() if t.spatial == cell.spatial]
        assert fits, name
        assert Config(cell=name, task=fits[0].name, seq_len=max(fits[0].min_T, 10)).validate(BIG) == []


def test_format_bytes():
    assert format_bytes(999) == "999 B"
    assert format_bytes(1_500_000) == "1.5 MB"
    assert format_bytes(13.2e9) == "13.2 GB"


@pytest.mark.parametrize("env, expected", [("2", 2 * 2**30), ("0.5", 2**29), ("abc", None), ("-1", None),
                                           ("nan", None), ("inf", None), ("0", None)])
def test_memory_budget_from_the_environment_or_free_memory(monkeypatch, env, expected):
    monkeypatch.setenv("RNNLAB_MEMORY_BUDGET_GB", env)
    budget = memory_budget_bytes()
    if expected is not None:
        assert budget == expected
    else:  # a bad value is ignored: half the free RAM of this CPU machine
        monkeypatch.delenv("RNNLAB_MEMORY_BUDGET_GB")
        assert abs(budget - memory_budget_bytes()) < 2**30 and budget > 0


def _other_value(setting):
    """A valid value of ``setting`` other than its default."""
    if setting.kind == "choice":
        return next(n for n in setting.choices if n != setting.default)
    if setting.kind == "int":
        return int(setting.default) + 1 if setting.default < setting.high else int(setting.default) - 1
    return float(setting.default) * 0.5 if setting.default else 0.5


def test_every_setting_in_the_table_reaches_the_url_the_cli_and_the_validation():
    from dataclasses import fields, replace

    from rnnlab.cli import build_parser
    from rnnlab.config import SETTINGS
    from rnnlab.sharing.urlstate import UrlState, parse_query, to_query

    assert [f.name for f in fields(Config)] == [s.name for s in SETTINGS]
    assert Config() == Config(**{s.name: s.default for s in SETTINGS})
    train_help = build_parser().parse_args(["train"])
    for setting in SETTINGS:
        assert getattr(train_help, setting.name) == setting.default  # a CLI option with the table's default
        changed = replace(Config(), **{setting.name: _other_value(setting)})
        query = to_query(UrlState(config=changed))
        assert setting.name in query
        if setting.name not in ("task", "cell"):  # these two must change together to stay compatible
            assert getattr(parse_query(query).config, setting.name) == getattr(changed, setting.name)
        if setting.kind == "int":
            too_big = replace(Config(), **{setting.name: int(setting.high) + 1})
            assert setting.name in too_big.field_errors()
        if setting.kind == "choice":
            assert setting.name in replace(Config(), **{setting.name: "no such thing"}).field_errors()


def test_choosing_a_cell_brings_the_settings_it_needs_to_run():
    from rnnlab.config import describe_changes, with_cell
    from rnnlab.training import estimate

    conv, changes = with_cell(Config(), "conv_lstm")
    assert changes == {"task": "moving_dot", "features": 16, "batch": 16, "seq_len": 20}
    assert conv.cell == "conv_lstm" and not conv.validate()
    estimate.forget_measurements()  # from sizes, as on a fresh server: not from the speed earlier tests measured
    guess = estimate.estimate(conv)
    assert estimate.over_limit(guess) is None and guess.total_s < estimate.CONFIRM_S  # runs without asking
    assert describe_changes("conv_lstm", changes).startswith(
        "ConvLSTM needs other settings to run, so these changed with it: Task: Moving dot (spatial); "
        "Hidden features: 16; Batch size: 16; Sequence length T: 20.")
    back, changes = with_cell(conv, "gru")
    assert changes == {"task": "adding"} and not back.validate() and back.features == 16
    same, changes = with_cell(Config(), "lstm")
    assert changes == {} and same == Config(cell="lstm")
    mine = Config(task="moving_dot", cell="conv_lstm", features=8, batch=4, seq_len=12)
    assert with_cell(mine, "conv_lstm") == (mine, {})  # a cell that can run keeps the user's sizes


def test_what_a_running_run_follows_is_declared_once_and_never_recompiles():
    from rnnlab.config import DURING_RUN, SETTING, Config
    from rnnlab.training.train import Run

    assert set(DURING_RUN) == {"lr", "clip", "carry_scale", "steps"}
    assert not any(SETTING[name].recompiles for name in DURING_RUN)
    run = Run(Config(seq_len=5, batch=4, features=4, steps=4, chunk=2))
    run.update(**{name: SETTING[name].default for name in DURING_RUN})
    with pytest.raises(ValueError, match="start a new run"):
        run.update(seed=1)
