"""The flax 0.6.x ``initialize_carry`` reconstruction: the same arrays as the current API for the same key, float32
initializer and PRNG (jax 0.4's, which the reconstruction uses), the old shapes and dtype, the old failure modes,
and the source text it shows. Its values against a real flax 0.6.11 install: ``test_old_flax.py``."""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.nn import initializers

from rnnlab.flaxapi.legacy import (
    LATER_CELLS,
    LEGACY_CELLS,
    OLD_SOURCE,
    VERSION_FACTS,
    canonical_cell,
    legacy_initialize_carry,
    old_prng,
)

IN_FEATURES, HIDDEN = 3, 5
INITS = {
    "zeros": initializers.zeros,
    "ones": initializers.ones,
    "normal": initializers.normal(0.1),
    "uniform": initializers.uniform(),
}
BATCHES = [(), (4,), (2, 3)]
NEW = {"LSTMCell": nn.LSTMCell, "OptimizedLSTMCell": nn.OptimizedLSTMCell, "GRUCell": nn.GRUCell}


def leaves(carry) -> list[jax.Array]:
    return list(carry) if isinstance(carry, tuple) else [carry]


@pytest.mark.parametrize("batch", BATCHES, ids=str)
@pytest.mark.parametrize("init", INITS)
@pytest.mark.parametrize("cell", NEW)
def test_old_and_new_api_give_identical_arrays(cell, init, batch):
    key = jax.random.key(7)
    old = legacy_initialize_carry(cell, key, batch, HIDDEN, INITS[init])
    with old_prng():  # the same PRNG: only the API differs
        new = NEW[cell](features=HIDDEN, carry_init=INITS[init]).initialize_carry(key, batch + (IN_FEATURES,))
    assert type(old) is type(new)
    assert len(leaves(old)) == (1 if cell == "GRUCell" else 2)
    for a, b in zip(leaves(old), leaves(new), strict=True):
        assert a.shape == batch + (HIDDEN,)
        assert a.dtype == jnp.float32 == b.dtype
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("batch", BATCHES, ids=str)
@pytest.mark.parametrize("name", ["ConvLSTMCell", "ConvLSTM"])
def test_conv_lstm_spatial_shapes_and_identical_arrays(name, batch):
    key = jax.random.PRNGKey(3)
    init = initializers.normal(0.1)
    old = legacy_initialize_carry(name, key, batch, (8, 8, 6), init)
    with old_prng():
        new = nn.ConvLSTMCell(6, kernel_size=(3, 3), carry_init=init).initialize_carry(key, batch + (8, 8, 3))
    assert isinstance(old, tuple) and len(old) == 2
    for a, b in zip(old, new, strict=True):
        assert a.shape == batch + (8, 8, 6) and a.dtype == jnp.float32
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_key_use_lstm_splits_gru_uses_key_itself():
    key = jax.random.PRNGKey(0)
    init = initializers.normal(1.0)
    c, h = legacy_initialize_carry("LSTMCell", key, (2,), 4, init)
    g = legacy_initialize_carry("GRUCell", key, (2,), 4, init)
    with old_prng():
        k1, k2 = jax.random.split(key)
        np.testing.assert_array_equal(c, init(k1, (2, 4)))
        np.testing.assert_array_equal(h, init(k2, (2, 4)))
        np.testing.assert_array_equal(g, init(key, (2, 4)))
    assert not np.array_equal(g, init(key, (2, 4)))  # today's PRNG draws other numbers from the same key


def test_default_is_zeros_and_init_fn_gets_no_dtype():
    calls = []

    def spy(key, shape, *rest, **kw):
        calls.append((shape, rest, kw))
        return jnp.ones(shape)

    carry = legacy_initialize_carry("LSTMCell", jax.random.PRNGKey(0), (), 3)
    assert all(float(jnp.abs(leaf).sum()) == 0.0 and leaf.dtype == jnp.float32 for leaf in carry)
    legacy_initialize_carry("OptimizedLSTMCell", jax.random.PRNGKey(0), (2,), 3, spy)
    assert calls == [((2, 3), (), {}), ((2, 3), (), {})]


def test_old_failure_modes_are_kept():
    key = jax.random.PRNGKey(0)
    with pytest.raises(TypeError, match="concatenate"):
        legacy_initialize_carry("ConvLSTMCell", key, (2,), 6)  # ConvLSTM size must be a tuple


@pytest.mark.parametrize("name, version", [("MGUCell", "0.7.5"), ("SimpleCell", "0.8.2")])
def test_later_cells_are_refused_with_their_version(name, version):
    with pytest.raises(ValueError, match=rf"{name} did not exist in flax 0\.6\.x.*{version}"):
        legacy_initialize_carry(name, jax.random.PRNGKey(0), (2,), 4)
    assert LATER_CELLS[name] == version


def test_unknown_cell_is_refused():
    with pytest.raises(ValueError, match="unknown flax 0.6.x cell 'LSTM'.*LSTMCell"):
        legacy_initialize_carry("LSTM", jax.random.PRNGKey(0), (2,), 4)
    assert canonical_cell("ConvLSTM") == "ConvLSTMCell"


def test_old_source_is_the_code_that_runs():
    for name in [*LEGACY_CELLS, "ConvLSTM"]:
        src = OLD_SOURCE[name]
        assert f"class {name}(RNNCellBase):" in src
        assert "@staticmethod" in src and "def initialize_carry(rng, batch_dims, size, init_fn=" in src
        assert "noqa" not in src
    assert "key1, key2 = random.split(rng)" in OLD_SOURCE["LSTMCell"]
    assert "return init_fn(rng, mem_shape)" in OLD_SOURCE["GRUCell"]
    assert "mem_shape = batch_dims + size\n" in OLD_SOURCE["ConvLSTMCell"]
    assert "init_fn=initializers.zeros)" in OLD_SOURCE["ConvLSTM"]


def test_version_facts():
    facts = {f.version: f.change for f in VERSION_FACTS}
    assert "nn.RNN" in facts["0.6.7"] and "seq_lengths" in facts["0.6.10"]
    assert "FLIP 3099" in facts["0.7.0"] and "MGUCell" in facts["0.7.5"] and "SimpleCell" in facts["0.8.2"]
