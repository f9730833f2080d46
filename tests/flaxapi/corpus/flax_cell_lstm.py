# repository: https://github.com/google/flax
# file: tests/linen/linen_test.py in the flax 0.6.11 source distribution on PyPI, lines 345-368
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
  def test_lstm(self):
    rng = random.PRNGKey(0)
    key1, key2 = random.split(rng)
    x = random.normal(key1, (2, 3))
    c0, h0 = nn.LSTMCell.initialize_carry(rng, (2,), 4)
    self.assertEqual(c0.shape, (2, 4))
    self.assertEqual(h0.shape, (2, 4))
    lstm = nn.LSTMCell()
    (carry, y), initial_params = lstm.init_with_output(key2, (c0, h0), x)
    self.assertEqual(carry[0].shape, (2, 4))
    self.assertEqual(carry[1].shape, (2, 4))
    np.testing.assert_allclose(y, carry[1])
    param_shapes = jax.tree_util.tree_map(np.shape, initial_params['params'])
    self.assertEqual(param_shapes, {
        'ii': {'kernel': (3, 4)},
        'if': {'kernel': (3, 4)},
        'ig': {'kernel': (3, 4)},
        'io': {'kernel': (3, 4)},
        'hi': {'kernel': (4, 4), 'bias': (4,)},
        'hf': {'kernel': (4, 4), 'bias': (4,)},
        'hg': {'kernel': (4, 4), 'bias': (4,)},
        'ho': {'kernel': (4, 4), 'bias': (4,)},
    })
