"""The page against real flax 0.6.11 (recorded by ``old_flax/record.py``) and each claim it makes, run for real."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from rnnlab.flaxapi import breakages, columns, legacy, migrate, recipes, shapes
from rnnlab.text import error_text

RECORDED = json.loads((Path(__file__).parent / "old_flax" / "flax_0_6_11.json").read_text())
FACTS = RECORDED["facts"]
CELLS = {"LSTMCell": "lstm", "OptimizedLSTMCell": "optimized_lstm", "GRUCell": "gru", "ConvLSTMCell": "conv_lstm"}
INITS = {"zeros": ("zeros", None), "ones": ("ones", None), "constant(0.5)": ("constant", 0.5),
         "normal(0.1)": ("normal", 0.1), "normal(1.0)": ("normal", 1.0), "uniform(0.1)": ("uniform", 0.1)}


def test_the_recording_is_real_flax_0_6_11_on_jax_0_4_13():
    assert (FACTS["flax"], FACTS["jax"]) == (legacy.LAST_OLD_VERSION, legacy.OLD_JAX_VERSION)
    assert FACTS["threefry_partitionable"] is False
    cells = {c["cell"] for c in RECORDED["carries"]}
    assert cells == set(legacy.LEGACY_CELLS) and len(RECORDED["carries"]) >= 100
    assert len({tuple(c["batch_dims"]) for c in RECORDED["carries"]}) >= 4
    assert len({c["seed"] for c in RECORDED["carries"]}) >= 3


@pytest.mark.parametrize("case", RECORDED["carries"],
                         ids=lambda c: f"{c['cell']}-{c['init']}-{c['batch_dims']}-{c['hidden']}-{c['seed']}")
def test_old_column_gives_flax_0_6_11s_numbers(case):
    init, value = INITS[case["init"]]
    spatial = tuple(case["spatial"] or (8, 8))
    comparison = columns.compare(CELLS[case["cell"]], tuple(case["batch_dims"]), 3, case["hidden"], init, value,
                                 seed=case["seed"], spatial=spatial, kernel_size=(3,) * len(spatial))
    old = comparison.column("old_linen")
    assert len(old.arrays) == len(case["leaves"])
    for got, want in zip(old.arrays, case["leaves"], strict=True):
        assert list(got.shape) == want["shape"] and got.dtype.name == want["dtype"]
        expected = np.asarray(want["values"], dtype=np.float32).reshape(want["shape"])
        np.testing.assert_array_max_ulp(got, expected, maxulp=2)


def test_the_page_default_matches_the_real_install():
    """LSTM, normal(0.1), seed 0, batch 4, hidden 5: the numbers a user sees first."""
    case = next(c for c in RECORDED["carries"] if (c["cell"], c["init"], c["batch_dims"], c["hidden"], c["seed"])
                == ("LSTMCell", "normal(0.1)", [4], 5, 0))
    shown = columns.compare("lstm", (4,), 3, 5, "normal", 0.1, seed=0).column("old_linen").leaves[0].first_values
    np.testing.assert_allclose(shown, case["leaves"][0]["values"][: len(shown)], rtol=1e-6)


def test_old_prng_is_scoped_to_the_old_column():
    before = np.asarray(jax.random.normal(jax.random.key(0), (3,)))
    columns.compare("lstm", (4,), 3, 5, "normal", 0.1, seed=0)
    np.testing.assert_array_equal(np.asarray(jax.random.normal(jax.random.key(0), (3,))), before)
    assert jax.config.jax_threefry_partitionable is True


def test_truncated_normal_did_not_exist_in_the_old_jax():
    assert FACTS["has_truncated_normal"] is False and "truncated_normal" in legacy.OLD_MISSING_INIT_MESSAGES
    comparison = columns.compare("lstm", (4,), 3, 5, "truncated_normal", 0.1)
    assert "did not exist in jax 0.4.13" in comparison.column("old_linen").error
    assert comparison.column("new_linen").ok


def test_split_equals_fold_in_only_on_the_new_prng():
    key = jax.random.PRNGKey(0)
    assert np.array_equal(jax.random.split(key)[0], jax.random.fold_in(key, 0))  # jax >= 0.5 (installed)
    with legacy.old_prng():
        old_equal = np.array_equal(jax.random.split(key)[0], jax.random.fold_in(key, 0))
    assert old_equal is FACTS["split0_equals_fold_in0"] is False  # as on the real jax 0.4.13


def test_time_major_became_the_second_field_in_0_7_5():
    fields = FACTS["rnn_fields_by_version"]
    first = next(v for v, f in fields.items() if f[1] == "time_major")
    assert first == legacy.TIME_MAJOR_VERSION == "0.7.5"
    assert all(f[1] == "cell_size" for v, f in fields.items() if v != first and v < first)
    assert [f.name for f in dataclasses.fields(nn.RNN)][1] == "time_major"  # the installed Flax
    assert "0.7.5" in str(migrate.RULES["rnn-positional-size"])
    fact = next(f for f in legacy.VERSION_FACTS if f.version == "0.7.5")
    assert "time_major" in fact.change


def test_time_major_batch_comes_after_time():
    x = jnp.zeros((5, 2, 7, 3))
    rnn = nn.RNN(nn.LSTMCell(4), time_major=True, return_carry=True)
    carry, y = rnn.apply(rnn.init(jax.random.key(0), x), x)
    assert [c.shape for c in carry] == [(2, 7, 4)] * 2 and y.shape == (5, 2, 7, 4)
    assert "(5, 2, 7, 3)" in shapes.TIME_AXIS_EXPLAINED and "batch `(2, 7)`" in shapes.TIME_AXIS_EXPLAINED
    assert "Everything before the time axis is batch" not in shapes.TIME_AXIS_EXPLAINED


KEY = jax.random.PRNGKey(0)
STATIC_CALLS = {  # the pasted call -> the same call on the installed Flax
    "nn.LSTMCell.initialize_carry(key, (2,), 4)": lambda: nn.LSTMCell.initialize_carry(KEY, (2,), 4),
    "nn.LSTMCell.initialize_carry(key, (2,), 4, init_fn=nn.initializers.ones)":
        lambda: nn.LSTMCell.initialize_carry(KEY, (2,), 4, init_fn=nn.initializers.ones),
    "nn.GRUCell.initialize_carry(key, batch_dims=(2,), size=4)":
        lambda: nn.GRUCell.initialize_carry(KEY, batch_dims=(2,), size=4),
    "nn.ConvLSTMCell.initialize_carry(key, (2,), (4, 4, 6))":
        lambda: nn.ConvLSTMCell.initialize_carry(KEY, (2,), (4, 4, 6)),
    "nn.ConvLSTM.initialize_carry(key, (2,), (4, 4, 6))": lambda: nn.ConvLSTM.initialize_carry(KEY, (2,), (4, 4, 6)),
}


@pytest.mark.parametrize("call", STATIC_CALLS)
def test_static_call_messages_quote_the_real_error(call):
    with pytest.raises(Exception) as raised:  # whatever the installed Flax raises
        STATIC_CALLS[call]()
    real = error_text(raised.value)
    finding = next(f for f in migrate.check(f"import flax.linen as nn\nc = {call}\n").findings
                   if f.rule == "static-initialize-carry")
    assert real in str(finding.message)


def test_instance_call_quotes_the_real_error():
    source = "import flax.linen as nn\ncell = nn.LSTMCell(4)\nc = cell.initialize_carry(key, (2,), 4)\n"
    finding = next(f for f in migrate.check(source).findings if f.rule == "instance-initialize-carry")
    with pytest.raises(TypeError, match="takes 3 positional arguments but 4 were given"):
        nn.LSTMCell(4).initialize_carry(jax.random.key(0), (2,), 4)
    assert "takes 3 positional arguments but 4 were given" in str(finding.message)


def test_nnx_gru_equals_linen_while_b_hn_is_zero():
    assert columns.gru_output_gap(3, 5, 0.0) == 0.0
    assert columns.gru_output_gap(3, 5, 0.5) > 1e-2
    note = columns.compare("gru", (4,), 3, 5, "zeros").verdict
    assert "the same step while b_hn = 0" in note and "different functions even with equal weights" not in note


def test_any_value_is_accepted_as_time_major():
    assert breakages.accepted_time_major() == [4, 0, -1, "x"]
    explanation = next(b for b in breakages.upgrade_breakages() if b.silent).explanation
    assert "4, 0, -1, 'x'" in explanation and "truthy int" not in explanation
    assert "0.7.5" in explanation


def test_moveaxis_defect_describes_both_input_ranks():
    assert recipes.moveaxis_steps((7, 3)) == (3, (7,))  # (T, D): D steps of T numbers
    assert recipes.moveaxis_steps((2, 7, 3)) == (7, (3, 2))  # (batch, T, D): T steps, each (D, batch)
    assert "(D, batch)" in recipes.MOVEAXIS_DEFECT and "feature axis" in recipes.MOVEAXIS_DEFECT
