# repository: https://github.com/d2l-ai/d2l-en
# file: d2l/jax.py in the d2l 1.0.3 source distribution on PyPI, lines 975-1005
# The excerpt below the marker is verbatim; the lines above it were added so that it runs.
import functools
from functools import partial
from typing import Any, Optional, Tuple
import jax
import jax.numpy as jnp
import numpy as np
from jax import random
import flax.linen as nn
import types
d2l = types.SimpleNamespace(RNN=nn.Module)


# ---- verbatim excerpt
class GRU(d2l.RNN):
    """The multilayer GRU model.

    Defined in :numref:`sec_deep_rnn`"""
    num_hiddens: int
    num_layers: int
    dropout: float = 0

    @nn.compact
    def __call__(self, X, state=None, training=False):
        outputs = X
        new_state = []
        if state is None:
            batch_size = X.shape[1]
            state = [nn.GRUCell.initialize_carry(jax.random.PRNGKey(0),
                    (batch_size,), self.num_hiddens)] * self.num_layers

        GRU = nn.scan(nn.GRUCell, variable_broadcast="params",
                      in_axes=0, out_axes=0, split_rngs={"params": False})

        # Introduce a dropout layer after every GRU layer except last
        for i in range(self.num_layers - 1):
            layer_i_state, X = GRU()(state[i], outputs)
            new_state.append(layer_i_state)
            X = nn.Dropout(self.dropout, deterministic=not training)(X)

        # Final GRU layer without dropout
        out_state, X = GRU()(state[-1], X)
        new_state.append(out_state)
        return X, jnp.array(new_state)
