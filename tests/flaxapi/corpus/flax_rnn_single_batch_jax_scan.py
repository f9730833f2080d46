# repository: https://github.com/google/flax
# file: tests/linen/linen_recurrent_test.py in the flax 0.6.11 source distribution on PyPI, lines 258-284
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


class RNNTest(absltest.TestCase):
# ---- verbatim excerpt
  def test_numerical_equivalence_single_batch_jax_scan(self):
    batch_size = 3
    seq_len = 4
    channels_in = 5
    channels_out = 6

    xs = jax.random.uniform(jax.random.PRNGKey(0), (batch_size, seq_len, channels_in))
    cell = nn.LSTMCell()
    carry = cell.initialize_carry(jax.random.PRNGKey(0), (batch_size,), channels_out)
    variables = cell.init(jax.random.PRNGKey(0), carry, xs[:, 0])
    cell_params = variables['params']

    def scan_fn(carry, x):
      return cell.apply({'params': cell_params}, carry, x)

    ys: jnp.ndarray
    carry, ys = jax.lax.scan(scan_fn, carry, xs.swapaxes(0, 1))
    ys = ys.swapaxes(0, 1)

    cell_carry = cell.initialize_carry(jax.random.PRNGKey(0), (batch_size,), channels_out)

    for i in range(seq_len):
      cell_carry, y = cell.apply({'params': cell_params}, cell_carry, xs[:, i, :])
      np.testing.assert_allclose(y, ys[:, i, :], rtol=1e-4)

    np.testing.assert_allclose(cell_carry, carry, rtol=1e-4)
