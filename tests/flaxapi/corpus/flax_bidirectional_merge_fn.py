# repository: https://github.com/google/flax
# file: tests/linen/linen_recurrent_test.py in the flax 0.6.11 source distribution on PyPI, lines 410-427
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
  def test_custom_merge_fn(self):
    batch_size = 3
    seq_len = 4
    channels_in = 5
    channels_out = 6

    bdirectional = nn.Bidirectional(
      nn.RNN(nn.LSTMCell(), channels_out),
      nn.RNN(nn.LSTMCell(), channels_out),
      merge_fn=lambda x, y: x + y
    )

    xs = jnp.ones((batch_size, seq_len, channels_in))
    ys: jnp.ndarray
    ys, variables = bdirectional.init_with_output(jax.random.PRNGKey(0), xs)

    self.assertEqual(ys.shape, (batch_size, seq_len, channels_out))
