"""What a gated cell's gates are: their names, the one that keeps the carry, and where its fused step keeps them.

A gated cell's family file (:mod:`rnnlab.model.cell_families`) declares its :class:`GateSpec`. The activations
are read from what the cell's fused step saves for its backward pass (:meth:`rnnlab.model.fused.FusedCell.step`),
so they are the values that step computes; ``tests/test_example.py`` checks them against Flax's formulas.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax


@dataclass(frozen=True)
class GateSpec:
    """The gates of one cell: their readable names, the one that keeps the carry, and where they are saved."""

    names: dict[str, str]  # gate -> readable name (English, marked for the catalog: translate where shown)
    keeper: str  # the gate that keeps the carry as it is when it is 1
    keeps: str  # what it keeps, in words (English, marked for the catalog: translate where shown)
    saved: dict[str, int]  # gate -> its index among the activations the fused step saves

    def read(self, saved: tuple[jax.Array, ...]) -> dict[str, jax.Array]:
        """Each gate's activation (values in 0..1) from a fused step's saved activations."""
        return {name: saved[self.saved[name]] for name in self.names}
