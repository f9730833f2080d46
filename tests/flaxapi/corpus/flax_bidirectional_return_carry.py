# repository: https://github.com/google/flax
# file: tests/linen/linen_recurrent_test.py in the flax 0.6.11 source distribution on PyPI, lines 428-453
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
  def test_return_carry(self):
    batch_size = 3
    seq_len = 4
    channels_in = 5
    channels_out = 6

    bdirectional = nn.Bidirectional(
      nn.RNN(nn.LSTMCell(), channels_out),
      nn.RNN(nn.LSTMCell(), channels_out),
      return_carry=True
    )

    xs = jnp.ones((batch_size, seq_len, channels_in))
    ys: jnp.ndarray
    (carry, ys), variables = bdirectional.init_with_output(jax.random.PRNGKey(0), xs)
    carry_forward, carry_backward = carry

    self.assertEqual(ys.shape, (batch_size, seq_len, channels_out * 2))
    self.assertEqual(
      jax.tree_map(jnp.shape, carry_forward),
      ((batch_size, channels_out), (batch_size, channels_out))
    )
    self.assertEqual(
      jax.tree_map(jnp.shape, carry_backward),
      ((batch_size, channels_out), (batch_size, channels_out))
    )
