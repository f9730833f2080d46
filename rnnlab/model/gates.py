"""Gate activations of the gated cells, computed from a Flax cell's own parameter tree.

Each function takes the cell's parameters (``{'ii': {'kernel': ...}, 'hi': {...}, ...}``, as Flax names them),
the carry before a step and that step's input, and returns each gate's activation (values in 0..1). The
formulas are Flax's (``flax.linen.recurrent``): a test rebuilds the cell's new carry from them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import jax
import jax.numpy as jnp

from rnnlab.i18n import N_

GateFn = Callable[[dict, object, jax.Array], dict[str, jax.Array]]


def _dense(p: dict, x: jax.Array) -> jax.Array:
    y = jnp.dot(x, p["kernel"])
    return y + p["bias"] if "bias" in p else y


def lstm_gates(p: dict, carry, x: jax.Array) -> dict[str, jax.Array]:
    """i, f, o of ``c' = f * c + i * g`` and ``h' = o * tanh(c')``."""
    _, h = carry
    return {name: jax.nn.sigmoid(_dense(p[f"i{name}"], x) + _dense(p[f"h{name}"], h)) for name in "ifo"}


def gru_gates(p: dict, carry, x: jax.Array) -> dict[str, jax.Array]:
    """r and z of ``n = tanh(W_in x + r * (W_hn h + b_hn))`` and ``h' = (1 - z) * n + z * h``."""
    h = carry
    return {name: jax.nn.sigmoid(_dense(p[f"i{name}"], x) + _dense(p[f"h{name}"], h)) for name in "rz"}


def mgu_gates(p: dict, carry, x: jax.Array) -> dict[str, jax.Array]:
    """f of ``n = tanh(W_in x + f * (W_hn h + b_hn))`` and ``h' = (1 - f) * n + f * h``."""
    h = carry
    return {"f": jax.nn.sigmoid(_dense(p["if"], x) + _dense(p["hf"], h))}


@dataclass(frozen=True)
class GateSpec:
    """The gates of one cell: their readable names, the one that keeps the carry, and how to compute them."""

    compute: GateFn
    names: dict[str, str]  # gate -> readable name (English, marked for the catalog: translate where shown)
    keeper: str  # the gate that keeps the carry as it is when it is 1
    keeps: str  # what it keeps, in words (English, marked for the catalog: translate where shown)


LSTM_GATES = GateSpec(lstm_gates,
                      {"i": N_("input gate i"), "f": N_("forget gate f"), "o": N_("output gate o")}, "f",
                      N_("c_t = f * c_(t-1) + i * g: where f stays near 1 the cell state, and the gradient through "
                         "it, carries on"))
GRU_GATES = GateSpec(gru_gates, {"r": N_("reset gate r"), "z": N_("update gate z")}, "z",
                     N_("h_t = (1 - z) * n + z * h_(t-1): where z stays near 1 the carry, and the gradient through "
                        "it, carries on"))
MGU_GATES = GateSpec(mgu_gates, {"f": N_("forget gate f")}, "f",
                     N_("h_t = (1 - f) * n + f * h_(t-1): where f stays near 1 the carry, and the gradient through "
                        "it, carries on"))
