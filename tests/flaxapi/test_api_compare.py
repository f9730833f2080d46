"""Old Linen vs new Linen vs NNX, computed live: the numbers, the verdicts, the upgrade breakages, the shape
explorer and the learnable-carry recipes."""

from __future__ import annotations

import contextlib
import types

import flax.linen as nn
import jax
import numpy as np
import pytest
from flax import nnx
from jax.nn import initializers

from rnnlab.flaxapi import legacy
from rnnlab.flaxapi.breakages import upgrade_breakages
from rnnlab.flaxapi.columns import compare
from rnnlab.flaxapi.recipes import learnable_recipes
from rnnlab.flaxapi.shapes import explore_shapes
from rnnlab.flaxapi.trees import resolve_cell


@pytest.fixture(scope="module")
def breakages():
    return {b.title: b for b in upgrade_breakages()}


@pytest.fixture(scope="module")
def recipes():
    return {r.key: r for r in learnable_recipes()}


def run_snippet(code: str, namespace: dict) -> object:
    """Execute a snippet this module generated (never user input) and return its ``carry``."""
    lines = [line for line in code.splitlines() if not line.startswith(("import ", "from "))]
    exec("\n".join(lines), namespace)  # noqa: S102 - our own generated code (never user input)
    return namespace["carry"]


def as_leaves(carry) -> list[np.ndarray]:
    return [np.asarray(a) for a in (carry if isinstance(carry, tuple) else (carry,))]


@pytest.mark.parametrize("init", ["zeros", "normal"])
@pytest.mark.parametrize("cell", ["lstm", "optimized_lstm", "gru"])
def test_old_and_new_linen_same_arrays_but_for_the_old_prng(cell, init):
    c = compare(cell, (4,), 3, 5, init, None, seed=2)
    old, new = c.column("old_linen"), c.column("new_linen")
    pair = c.pair("old_linen", "new_linen")
    if init == "zeros":
        assert pair.status == "identical"
    else:  # flax 0.6 ran on jax 0.4.x, whose PRNG draws other numbers from the same key
        assert pair.status == "different" and "under one PRNG the two compute the same arrays" in pair.reasons[0]
        assert "under one PRNG" not in " ".join(c.pair("old_linen", "nnx").reasons)  # NNX draws other keys
        with legacy.old_prng():
            redone = compare(cell, (4,), 3, 5, init, None, seed=2).column("new_linen").arrays
        for a, b in zip(old.arrays, redone, strict=True):
            np.testing.assert_array_equal(a, b)
    for a in old.arrays:
        assert a.shape == (4, 5) and a.dtype == np.float32
    assert old.structure == ("array h" if cell == "gru" else "tuple (c, h)")
    assert [leaf.shape for leaf in old.leaves] == [(4, 5)] * len(old.arrays)
    assert all(call.dtype is None for call in old.calls) and all(call.dtype == "float32" for call in new.calls)
    assert "initialize_carry(key, (4,), 5" in old.code and "initialize_carry(key, (4, 3))" in new.code


def test_shown_code_gives_the_numbers():
    c = compare("lstm", (2, 3), 3, 5, "normal", 0.2, seed=1)
    old_nn = types.SimpleNamespace(LSTMCell=legacy.Flax06LSTMCell)  # the 0.6.x static method under its old name
    for key, ns in [("old_linen", {"jax": jax, "nn": old_nn, "initializers": initializers}),
                    ("new_linen", {"jax": jax, "nn": nn, "initializers": initializers}),
                    ("nnx", {"jax": jax, "nnx": nnx, "initializers": initializers})]:
        col = c.column(key)
        with legacy.old_prng() if key == "old_linen" else contextlib.nullcontext():  # the old code ran on jax 0.4
            got_leaves = as_leaves(run_snippet(col.code, ns))
        for got, shown in zip(got_leaves, col.arrays, strict=True):
            np.testing.assert_array_equal(got, shown)
        assert "stddev=0.2" in col.code


def test_nnx_gru_differs_for_random_init_and_says_why():
    c = compare("gru", (4,), 3, 5, "normal", 0.1, seed=0)
    pair = c.pair("new_linen", "nnx")
    assert pair.status == "different"
    text = " ".join(pair.reasons)
    assert "different keys" in text and "key(0)" in text and "fold_in(key(0), 0)" in text
    assert "b_hn" in c.verdict and "RNGs must be provided" in c.verdict
    assert c.pair("old_linen", "new_linen").status == "different"
    assert not c.verdict.startswith("identical")


def test_nnx_lstm_coincides_because_split_equals_fold_in():
    c = compare("lstm", (4,), 3, 5, "normal", 0.1, seed=0)
    assert c.pair("new_linen", "nnx").status == "identical"
    assert "split(key(0))[0] = fold_in(key(0), 0)" in " ".join(c.pair("new_linen", "nnx").reasons)
    old_keys = " ".join(c.pair("old_linen", "new_linen").reasons)
    assert "(jax 0.4.x split)" in old_keys and "fold_in(key(0), 0) (jax 0.4.x" not in old_keys
    assert not c.verdict.startswith("identical")  # the old column draws with jax 0.4's PRNG


def test_nnx_needs_rng_even_for_zeros():
    c = compare("gru", (4,), 3, 5, "zeros", None, seed=0)
    assert c.pair("new_linen", "nnx").status == "identical"
    assert any("RNGs must be provided to initialize the cell carry" in v for v in c.column("nnx").caveats)
    assert "NNX needs an RNG even for zeros" in c.verdict


def test_param_dtype_reaches_the_new_apis_only():
    c = compare("lstm", (2,), 3, 4, "normal", 0.1, seed=0, param_dtype="bfloat16")
    assert [leaf.dtype for leaf in c.column("old_linen").leaves] == ["float32", "float32"]
    assert [leaf.dtype for leaf in c.column("new_linen").leaves] == ["bfloat16", "bfloat16"]
    pair = c.pair("old_linen", "new_linen")
    assert pair.status == "different" and "dtype" in pair.reasons[0] and "param_dtype" in pair.reasons[0]
    assert "param_dtype=jnp.bfloat16" in c.column("new_linen").code


def test_missing_cells_reported():
    mgu = compare("mgu", (4,), 3, 5, "ones")
    assert "0.7.5" in mgu.column("old_linen").error
    assert "flax.nnx has no MGUCell" in mgu.column("nnx").error
    assert mgu.pair("old_linen", "new_linen").status == "not comparable"
    assert mgu.column("new_linen").ok and mgu.column("new_linen").leaves[0].first_values[0] == 1.0
    assert "0.8.2" in compare("simple", (4,), 3, 5).column("old_linen").error

    conv = compare("conv_lstm", (2,), 3, 5, "normal", 0.1, spatial=(8, 8), kernel_size=3)
    assert "flax.nnx has no ConvLSTMCell" in conv.column("nnx").error
    assert "jax 0.4.x" in " ".join(conv.pair("old_linen", "new_linen").reasons)
    assert [leaf.shape for leaf in conv.column("old_linen").leaves] == [(2, 8, 8, 5)] * 2
    assert conv.input_shape == (2, 8, 8, 3)
    assert "initialize_carry(key, (2,), (8, 8, 5)" in conv.column("old_linen").code


def test_cell_names():
    assert resolve_cell("LSTMCell").name == "lstm" and resolve_cell("ConvLSTM").name == "conv_lstm"
    with pytest.raises(ValueError, match="unknown cell"):
        resolve_cell("transformer")


def test_breakages_reproduced_live(breakages):
    assert len(breakages) == 4
    expected = {
        "Cells need features": "missing 1 required positional argument: 'features'",
        "initialize_carry is an instance method": "'int' object is not subscriptable",
        "nn.RNN no longer takes cell_size": "unexpected keyword argument 'cell_size'",
    }
    for title, message in expected.items():
        b = breakages[title]
        assert b.error.startswith("TypeError") and message in b.error and not b.silent
    assert "(2, 4)" in breakages["initialize_carry is an instance method"].fix_result
    assert "(2, 5, 4)" in breakages["nn.RNN no longer takes cell_size"].fix_result


def test_silent_time_major(breakages):
    b = breakages["nn.RNN(cell, 4) now sets time_major=4"]
    assert b.silent and b.error.startswith("no error")
    assert "time_major=4" in b.error and "initialize_carry got (5, 3)" in b.error
    assert "((5, 4), (5, 4))" in b.error
    assert "changes sample 1's output by 0 (independent)" in b.fix_result


@pytest.mark.parametrize("shape, time_major, cell, time_axis, batch, carry_input", [
    ((2, 5, 3), False, "lstm", 1, (2,), (2, 3)),
    ((5, 2, 3), True, "lstm", 0, (2,), (2, 3)),
    ((2, 3, 5, 4), False, "gru", 2, (2, 3), (2, 3, 4)),
    ((2, 5, 8, 8, 3), False, "conv_lstm", 1, (2,), (2, 8, 8, 3)),
    ((3, 3, 3), False, "lstm", 1, (3,), (3, 3)),  # ambiguous sizes: settled by the causality probe
])
def test_explore_shapes(shape, time_major, cell, time_axis, batch, carry_input):
    r = explore_shapes(shape, time_major, cell, 6)
    assert r.error is None
    assert (r.time_axis, r.batch_dims, r.carry_input_shape) == (time_axis, batch, carry_input)
    assert r.time_steps == shape[time_axis]
    assert r.output_shape == shape[:-r.num_feature_axes] + ((8, 8, 6) if cell == "conv_lstm" else (6,))


def test_explore_conv_lstm_feature_axes():
    r = explore_shapes((2, 5, 8, 8, 3), False, "conv_lstm", 6, kernel_size=3)
    assert r.num_feature_axes == 3 and r.carry_shapes == ((2, 8, 8, 6), (2, 8, 8, 6))


@pytest.mark.parametrize("shape, cell", [((3,), "lstm"), ((2, 5, 3), "conv_lstm"), ((2, 0, 3), "gru")])
def test_explore_bad_shape_is_a_message(shape, cell):
    r = explore_shapes(shape, False, cell, 4)
    assert isinstance(r.error, str) and r.error and r.output_shape is None


def test_recipes_fixed_versions_pass(recipes):
    assert list(recipes) == ["param", "default", "merge"]
    for r in recipes.values():
        assert r.checks and all(c.passed for c in r.checks), [c for c in r.checks if not c.passed]
        assert "nn.GRUCell()" in r.seed_code
        assert all(d.code in r.seed_code for d in r.defects)
        assert "GRUCell(self." in r.fixed_code or "nn.RNN" in r.fixed_code
    assert "class LearnedCarryRNN" in recipes["param"].fixed_code
    assert "class LearnedCarryLoop" in recipes["param"].fixed_code


def test_seed_loop_defects_computed(recipes):
    seed = {c.name: c for c in recipes["param"].seed_checks}
    grows = seed["cell parameters do not grow with sequence length"]
    assert not grows.passed and "300 for T=3, 444 for T=7" in grows.detail
    assert not seed["one cell shared by all steps"].passed and "3 separate GRUCells" in seed[
        "one cell shared by all steps"].detail
    default = {c.name: c for c in recipes["default"].seed_checks}
    assert "ScopeParamNotFoundError" in default["init with a carry creates the parameter"].detail
    merge = recipes["merge"].seed_checks
    assert not merge[1].passed and "|dL/dinitial_carry| = 0;" in merge[1].detail
