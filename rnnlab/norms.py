"""Euclidean norms that survive float32's range.

``sqrt(sum(g ** 2))`` in float32 loses every element below about 1e-19 (its square is below the smallest
float32, 1e-38 for normal numbers) and overflows above about 1e19, so the norm of a small but non-zero
gradient comes out as 0. Dividing by the largest magnitude first keeps every element that float32 holds:
the norm is exact to rounding for every element float32 holds. A norm of exactly 0 then means every element
is 0 in float32. On its way back a gradient becomes 0 in two ways: it falls below float32's smallest normal
number (about 1.2e-38; XLA flushes smaller results to 0 rather than keep them as subnormals), or it passes
through units so saturated that their derivative is 0 in float32 (a tanh that rounds to 1).
"""

from __future__ import annotations

from collections.abc import Sequence

import jax
import jax.numpy as jnp


def scaled_norm(x: jax.Array, axis: int | Sequence[int] | None = None) -> jax.Array:
    """``||x||_2`` over ``axis`` (all axes by default), computed as ``m * ||x / m||`` with ``m = max |x|``."""
    m = jnp.max(jnp.abs(x), axis=axis, keepdims=True)
    safe = jnp.where(m > 0, m, jnp.ones_like(m))
    norm = m * jnp.sqrt(jnp.sum(jnp.square(x / safe), axis=axis, keepdims=True))
    return jnp.squeeze(norm, axis=axis) if axis is not None else norm.reshape(())


def tree_norm(tree) -> jax.Array:
    """``||tree||_2`` over every leaf together (the global norm), scaled as :func:`scaled_norm`."""
    leaves = jax.tree_util.tree_leaves(tree)
    if not leaves:
        return jnp.zeros(())
    m = jnp.max(jnp.stack([jnp.max(jnp.abs(x)) for x in leaves]))
    safe = jnp.where(m > 0, m, jnp.ones_like(m))
    return m * jnp.sqrt(sum(jnp.sum(jnp.square(x / safe)) for x in leaves))


def combine_norms(norms: Sequence[float]) -> float:
    """The norm of several parts from their norms (``sqrt(sum n_i^2)``, scaled, in float64)."""
    import numpy as np

    values = np.asarray(norms, float)
    m = float(np.max(np.abs(values))) if values.size else 0.0
    return m * float(np.sqrt(np.sum((values / m) ** 2))) if m > 0 else 0.0
