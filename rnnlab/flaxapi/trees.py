"""Helpers the API lesson's modules share: running a call whose error is the result, and reading pytrees."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import flax.linen as nn
import jax
import numpy as np

from rnnlab.model.cell_spec import CellSpec
from rnnlab.model.cells import CELLS
from rnnlab.text import error_text

Initializer = Callable[..., jax.Array]


def attempt(fn: Callable[[], Any]) -> tuple[Any, str | None]:
    """``(fn(), None)``, or ``(None, 'TypeError: ...')`` when it raises: the error is what the page shows."""
    try:
        return fn(), None
    except Exception as e:  # noqa: BLE001 - the error is the result we show
        return None, error_text(e)


def output(module: nn.Module, variables: Any, *args: Any, **kwargs: Any) -> Any:
    """``module.apply(variables, *args, **kwargs)``: what the module returns (Flax types apply's result as that
    or the (output, state) pair ``mutable=`` gives, so checkers need to be told which)."""
    return module.apply(variables, *args, **kwargs)


def shapes(tree: Any) -> Any:
    """The tree with each array replaced by its shape."""
    return jax.tree_util.tree_map(lambda a: tuple(a.shape), tree)


def param_count(tree: Any) -> int:
    """Number of scalars in a parameter tree."""
    return int(sum(np.size(x) for x in jax.tree_util.tree_leaves(tree)))


def resolve_cell(cell: str) -> CellSpec:
    """The registry entry for a registry name ("lstm") or a Flax class name ("LSTMCell", "ConvLSTM")."""
    if cell in CELLS:
        return CELLS[cell]
    name = "ConvLSTMCell" if cell == "ConvLSTM" else cell
    for spec in CELLS.values():
        if spec.cls.__name__ == name:
            return spec
    known = ", ".join([*CELLS, *(s.cls.__name__ for s in CELLS.values())])
    raise ValueError(f"unknown cell {cell!r}; known: {known}")


def kernel_shape(kernel_size: int | tuple[int, ...], n_spatial: int) -> tuple[int, ...]:
    """A kernel size as a tuple: an int is repeated over the ``n_spatial`` spatial axes."""
    if isinstance(kernel_size, tuple | list):
        return tuple(int(k) for k in kernel_size)
    return (int(kernel_size),) * n_spatial


def recording_cell(seen: dict[str, Any]) -> Callable[[nn.RNNCellBase], nn.RNNCellBase]:
    """A cell wrapper (a class taking the cell) that records what nn.RNN hands the cell (init input shape, carry,
    step input)."""

    class RecordingCell(nn.RNNCellBase):
        cell: nn.RNNCellBase

        @nn.compact
        def __call__(self, carry, inputs):
            seen["step_input"] = tuple(inputs.shape)
            return self.cell(carry, inputs)

        @nn.nowrap
        def initialize_carry(self, rng, input_shape):
            seen["init_input_shape"] = tuple(input_shape)
            carry = self.cell.initialize_carry(rng, input_shape)
            seen["carry_shapes"] = shapes(carry)
            return carry

        @property
        def num_feature_axes(self) -> int:
            return self.cell.num_feature_axes

    return RecordingCell
