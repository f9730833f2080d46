"""What a recurrent cell is to every part of rnnlab: :class:`CellSpec`, which a cell family's file declares
(:mod:`rnnlab.model.cell_families`) and the registry collects (:data:`rnnlab.model.cells.CELLS`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import flax.linen as nn
import jax

from rnnlab.i18n import _
from rnnlab.model.fused import FusedCell
from rnnlab.model.gates import GateSpec
from rnnlab.model.probe_step import ProbeCell

Initializer = Callable[..., jax.Array]


@dataclass(frozen=True)
class CellSpec:
    """How to build one Linen cell, read its carry, run it fused and probe it."""

    name: str
    label_en: str  # the readable name in English (marked for the catalog where it has words): see ``label``
    cls: Callable[..., nn.RNNCellBase]  # the Flax class
    leaves: tuple[str, ...]  # names of the carry leaves, in the order the cell's carry holds them
    spatial: bool = False  # needs inputs with spatial axes (ConvLSTM)
    saved_per_step: int = 4  # arrays of (batch, features) kept per step by backprop (memory estimate)
    matmuls: int = 4  # weight products per step, each (input + hidden) x hidden: one per gate (time estimate)
    description: str = ""  # English, marked for the catalog: translate where shown
    # Settings that run this cell quickly, applied when it is chosen with a task it cannot run (setting, value).
    quick_settings: tuple[tuple[str, object], ...] = ()
    gates: GateSpec | None = None  # the gates, for the cells with gates, read from the fused step (so it needs one)
    # Its fused form (the same functions of the same parameters), which training runs; None: Flax's own cell under
    # nn.RNN.
    fused: FusedCell | None = None
    compile_s: float | None = None  # seconds to compile a training program, where not the default (time estimate)
    place: int = 100  # where it is listed among the cells (menus, tables): lowest first
    probe: ProbeCell = field(kw_only=True)  # its step as the log-scaled probe differentiates it

    def __post_init__(self):
        if self.gates is not None and self.fused is None:
            raise ValueError(f"the {self.name} cell's gates are read from its fused step: give it one")

    @property
    def label(self) -> str:
        """The readable name in the reader's language ('Simple RNN', '简单 RNN'; names like GRU stay)."""
        return _(self.label_en)

    @property
    def output_leaf(self) -> int:
        """Index of the carry leaf a Flax cell returns as its output (always the hidden state h)."""
        return self.leaves.index("h")

    def carry_as_tuple(self, carry) -> tuple[jax.Array, ...]:
        """The carry as a tuple of leaves, whatever its container."""
        return tuple(carry) if len(self.leaves) > 1 else (carry,)

    def carry_from_tuple(self, leaves: tuple[jax.Array, ...]):
        """The inverse of :meth:`carry_as_tuple`."""
        return tuple(leaves) if len(self.leaves) > 1 else leaves[0]

    def params_in(self, params: dict) -> dict:
        """This cell's own parameters (as Flax names them) inside a sequence model's parameter tree."""
        return params["params"][f"{self.cls.__name__}_0"]

    def build(self, features: int, carry_init: Initializer | None = None,
              kernel_size: int | tuple[int, ...] = 3) -> nn.RNNCellBase:
        """Build the Flax cell with ``features`` units (and ``carry_init``, else Flax's default, zeros)."""
        kwargs = {} if carry_init is None else {"carry_init": carry_init}
        if self.spatial:
            kernel = tuple(kernel_size) if isinstance(kernel_size, tuple | list) else (kernel_size, kernel_size)
            return self.cls(features=features, kernel_size=kernel, **kwargs)
        return self.cls(features=features, **kwargs)
