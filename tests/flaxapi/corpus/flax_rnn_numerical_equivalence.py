# repository: https://github.com/google/flax
# file: tests/linen/linen_recurrent_test.py in the flax 0.6.11 source distribution on PyPI, lines 156-176
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
  def test_numerical_equivalence(self):
    batch_size = 3
    seq_len = 4
    channels_in = 5
    channels_out = 6

    rnn = nn.RNN(nn.LSTMCell(), channels_out, return_carry=True)

    xs = jnp.ones((batch_size, seq_len, channels_in))
    ys: jnp.ndarray
    (carry, ys), variables = rnn.init_with_output(jax.random.PRNGKey(0), xs)

    cell_carry = rnn.cell.initialize_carry(jax.random.PRNGKey(0), (batch_size,), channels_out)
    cell_params = variables['params']['cell']

    for i in range(seq_len):
      cell_carry, y = rnn.cell.apply({'params': cell_params}, cell_carry, xs[:, i, :])
      np.testing.assert_allclose(y, ys[:, i, :], rtol=1e-5)

    np.testing.assert_allclose(cell_carry, carry, rtol=1e-5)
