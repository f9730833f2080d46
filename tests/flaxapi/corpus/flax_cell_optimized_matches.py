# repository: https://github.com/google/flax
# file: tests/linen/linen_test.py in the flax 0.6.11 source distribution on PyPI, lines 418-442
# The excerpt below the marker is verbatim; the imports above it were added so that it runs.
import functools
from functools import partial
import unittest as absltest
import jax
import jax.numpy as jnp
import numpy as np
from jax import random
import flax.linen as nn
from flax.core import freeze
def check_eq(xs, ys):
  return jax.tree_util.tree_all(
      jax.tree_util.tree_map(np.testing.assert_allclose, xs, ys))  # lines 34-36 of the same file


class RecurrentTest(absltest.TestCase):
# ---- verbatim excerpt
  def test_optimized_lstm_cell_matches_regular(self):

    # Create regular LSTMCell.
    rng = random.PRNGKey(0)
    key1, key2 = random.split(rng)
    x = random.normal(key1, (2, 3))
    c0, h0 = nn.LSTMCell.initialize_carry(rng, (2,), 4)
    self.assertEqual(c0.shape, (2, 4))
    self.assertEqual(h0.shape, (2, 4))
    lstm = nn.LSTMCell()
    (_, y), lstm_params = lstm.init_with_output(key2, (c0, h0), x)

    # Create OptimizedLSTMCell.
    rng = random.PRNGKey(0)
    key1, key2 = random.split(rng)
    x = random.normal(key1, (2, 3))
    c0, h0 = nn.OptimizedLSTMCell.initialize_carry(rng, (2,), 4)
    self.assertEqual(c0.shape, (2, 4))
    self.assertEqual(h0.shape, (2, 4))
    lstm_opt = nn.OptimizedLSTMCell()
    (_, y_opt), lstm_opt_params = lstm_opt.init_with_output(key2, (c0, h0), x)

    np.testing.assert_allclose(y, y_opt, rtol=1e-6)
    check_eq(lstm_params, lstm_opt_params)
