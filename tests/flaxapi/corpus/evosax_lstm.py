# repository: https://github.com/RobertTLange/evosax
# file: evosax/networks/lstm.py in the evosax 0.1.0 source distribution on PyPI, lines 15-55
# The excerpt below the marker is verbatim; the lines above it were added so that it runs.
import functools
from functools import partial
from typing import Any, Optional, Tuple
import jax
import jax.numpy as jnp
import numpy as np
from jax import random
import flax.linen as nn
try:
    import chex
except ImportError:  # not installed beside the pinned Flax; only its type names are used
    import types
    chex = types.SimpleNamespace(Array=Any, ArrayTree=Any, PRNGKey=Any)
import jax
import jax.numpy as jnp
from flax import linen as nn
from jax.nn.initializers import (
    glorot_normal,
    glorot_uniform,
    he_normal,
    he_uniform,
    kaiming_normal,
    kaiming_uniform,
    lecun_normal,
    lecun_uniform,
    xavier_normal,
    xavier_uniform,
)


kernel_init_fn = {
    "glorot_normal": glorot_normal,
    "glorot_uniform": glorot_uniform,
    "he_normal": he_normal,
    "he_uniform": he_uniform,
    "kaiming_normal": kaiming_normal,
    "kaiming_uniform": kaiming_uniform,
    "lecun_normal": lecun_normal,
    "lecun_uniform": lecun_uniform,
    "xavier_normal": xavier_normal,
    "xavier_uniform": xavier_uniform,
}


def default_bias_init(scale=0.05):
    return nn.initializers.uniform(scale)


def identity_out(
    x: chex.Array, num_output_units: int, init_type: str = "lecun_normal"
) -> chex.Array:
    """Simple affine layer."""
    x_out = nn.Dense(
        features=num_output_units,
        kernel_init=kernel_init_fn[init_type](),
        bias_init=default_bias_init(),
    )(x)
    return x_out


def tanh_out(
    x: chex.Array, num_output_units: int, init_type: str = "lecun_normal"
) -> chex.Array:
    """Simple affine layer & tanh rectification."""
    x = nn.Dense(
        features=num_output_units,
        kernel_init=kernel_init_fn[init_type](),
        bias_init=default_bias_init(),
    )(x)
    return nn.tanh(x)


def categorical_out(
    rng: chex.PRNGKey,
    x: chex.Array,
    num_output_units: int,
    init_type: str = "lecun_normal",
) -> chex.Array:
    """Simple affine layer & categorical sample from logits."""
    x = nn.Dense(
        features=num_output_units,
        kernel_init=kernel_init_fn[init_type](),
        bias_init=default_bias_init(),
    )(x)
    x_out = jax.random.categorical(rng, x)
    return x_out


def gaussian_out(
    rng: chex.PRNGKey,
    x: chex.Array,
    num_output_units: int,
    init_type: str = "lecun_normal",
) -> chex.Array:
    """Simple affine layers for mean and log var + gaussian sample."""
    x_mean = nn.Dense(
        features=num_output_units,
        kernel_init=kernel_init_fn[init_type](),
        bias_init=default_bias_init(),
    )(x)
    x_log_var = nn.Dense(
        features=1,
        kernel_init=kernel_init_fn[init_type](),
        bias_init=default_bias_init(),
    )(x)
    x_std = jnp.exp(0.5 * x_log_var)
    noise = x_std * jax.random.normal(rng, (num_output_units,))
    return x_mean + noise

# ---- verbatim excerpt
class LSTM(nn.Module):
    """Simple LSTM Wrapper with flexible output head."""

    num_hidden_units: int = 32
    num_output_units: int = 1
    output_activation: str = "identity"
    kernel_init_type: str = "lecun_normal"
    model_name: str = "LSTM"

    @nn.compact
    def __call__(
        self,
        x: chex.Array,
        carry: chex.ArrayTree,
        rng: Optional[chex.PRNGKey] = None,
    ) -> Tuple[Tuple[chex.ArrayTree, chex.ArrayTree], chex.Array]:
        lstm_state, x = nn.LSTMCell(
            bias_init=default_bias_init(),
            kernel_init=kernel_init_fn[self.kernel_init_type](),
        )(carry, x)
        if self.output_activation == "identity":
            x = identity_out(x, self.num_output_units, self.kernel_init_type)
        elif self.output_activation == "tanh":
            x = tanh_out(x, self.num_output_units, self.kernel_init_type)
        # Categorical and gaussian output heads require rng for sampling
        elif self.output_activation == "categorical":
            x = categorical_out(
                rng, x, self.num_output_units, self.kernel_init_type
            )
        elif self.output_activation == "gaussian":
            x = gaussian_out(
                rng, x, self.num_output_units, self.kernel_init_type
            )
        return lstm_state, x

    def initialize_carry(self) -> Tuple[chex.ArrayTree, chex.ArrayTree]:
        """Initialize hidden state of LSTM."""
        return nn.LSTMCell.initialize_carry(
            jax.random.PRNGKey(0), (), self.num_hidden_units
        )
