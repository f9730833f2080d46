"""Norms that survive float32's range, checked against float64 computations of the same numbers."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

from rnnlab.norms import combine_norms, scaled_norm, tree_norm


@pytest.mark.parametrize("scale", [1e-44, 1e-40, 1e-30, 1e-23, 1e-17, 1.0, 1e10, 1e18, 1e30])
def test_scaled_norm_equals_the_float64_norm_across_float32s_range(scale):
    rng = np.random.default_rng(0)
    x32 = (rng.standard_normal((4, 7, 5)) * scale).astype(np.float32)  # what float32 holds of these numbers
    exact = np.linalg.norm(x32.astype(np.float64))
    assert exact > 0
    got = float(scaled_norm(jnp.asarray(x32)))
    rtol = 1e-5 if scale > 1e-37 else 0.2  # subnormals carry few significant bits themselves
    assert got == pytest.approx(exact, rel=rtol)
    if 1e-37 < scale < 1e-19:  # the plain float32 formula loses these entirely or in part
        plain = float(jnp.sqrt(jnp.sum(jnp.asarray(x32) ** 2)))
        assert plain == 0 or abs(plain - exact) > 1e-3 * exact


def test_norm_over_axes_and_of_a_tree_and_zero():
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((3, 6, 4)) * 1e-25).astype(np.float32)
    by_t = np.asarray(scaled_norm(jnp.asarray(x), axis=(0, 2)))
    exact = np.sqrt((x.astype(np.float64) ** 2).sum(axis=(0, 2)))
    np.testing.assert_allclose(by_t, exact, rtol=1e-5)
    tree = {"a": jnp.asarray(x), "b": [jnp.full((2,), 3e-30, jnp.float32)]}
    whole = np.sqrt((x.astype(np.float64) ** 2).sum() + 2 * np.float64(np.float32(3e-30)) ** 2)
    assert float(tree_norm(tree)) == pytest.approx(whole, rel=1e-5)
    assert float(scaled_norm(jnp.zeros((3, 3)))) == 0.0 and float(tree_norm({"z": jnp.zeros(4)})) == 0.0
    assert combine_norms([3e-30, 4e-30]) == pytest.approx(5e-30) and combine_norms([0.0, 0.0]) == 0.0
