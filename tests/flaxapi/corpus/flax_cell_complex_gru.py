# repository: https://github.com/google/flax
# file: tests/linen/linen_test.py in the flax 0.6.11 source distribution on PyPI, lines 389-399
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
  def test_complex_input_gru(self):
    rng = random.PRNGKey(0)
    key1, key2 = random.split(rng)
    x = random.normal(key1, (2, 3), dtype=jnp.complex64)
    carry0 = nn.GRUCell.initialize_carry(rng, (2,), 4)
    self.assertEqual(carry0.shape, (2, 4))
    gru = nn.GRUCell()
    (carry, y), _ = gru.init_with_output(key2, carry0, x)
    self.assertEqual(carry.dtype, jnp.complex64)
    self.assertEqual(y.dtype, jnp.complex64)
