"""A reconstruction of flax 0.6.x's static ``initialize_carry``, which cannot be imported next to current jax.

The four ``Flax06*`` classes below hold the ``initialize_carry`` static methods of flax 0.6.5 to 0.6.11
(``flax/linen/recurrent.py``) with their bodies unchanged: one key split in two for the LSTMs (``c`` from the
first key, ``h`` from the second), the key itself for the GRU, ``mem_shape = batch_dims + (size,)`` (ConvLSTM:
``batch_dims + size`` with ``size = spatial + (features,)``), and ``init_fn`` called WITHOUT a dtype, so every
carry is float32. Flax 0.6.4 and earlier had ``init_fn=initializers.zeros`` as the default: the same function
as ``initializers.zeros_init()``, so the result does not change. ``OLD_SOURCE`` is the text of that code, taken
from the classes with :func:`inspect.getsource`, so the source a page shows is the source that runs.
"""

from __future__ import annotations

import contextlib
import inspect
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import jax
from flax.linen import initializers
from jax import random

from rnnlab.i18n import N_, t

Initializer = Callable[..., jax.Array]

LAST_OLD_VERSION = "0.6.11"  # the last release with the static initialize_carry
OLD_JAX_VERSION = "0.4.13"  # the jax flax 0.6.11 was released with
NEW_API_VERSION = "0.7.0"  # the RNNCellBase refactor (FLIP 3099)
TIME_MAJOR_VERSION = "0.7.5"  # nn.RNN's second field became time_major (0.7.0-0.7.4 still had cell_size)
OLD_PRNG = ("jax < 0.5 random numbers (jax_threefry_partitionable=False, as on jax "
            f"{OLD_JAX_VERSION}); today's jax draws other numbers from the same key")
OLD_MISSING_INIT_MESSAGES: dict[str, str] = {  # carry initializers jax 0.4.13 did not have ({jax}: its version)
    "truncated_normal": N_("jax.nn.initializers.truncated_normal did not exist in jax {jax}"),
}


def old_missing_init(name: str) -> str:
    """Why jax 0.4.13 could not give the carry initializer ``name``, in the reader's language."""
    return t(OLD_MISSING_INIT_MESSAGES[name], jax=OLD_JAX_VERSION)


@contextlib.contextmanager
def old_prng() -> Iterator[None]:
    """Draw random numbers as jax 0.4.x did (the PRNG flax 0.6.x ran on), for this thread and block only."""
    with jax.threefry_partitionable(False):
        yield


class Flax06LSTMCell:
    """``nn.LSTMCell.initialize_carry`` as in flax 0.6.11 (reconstruction; the cell itself is not rebuilt)."""

    @staticmethod
    def initialize_carry(rng, batch_dims, size, init_fn=initializers.zeros_init()):  # noqa: B008 (0.6.x default)
        """Initialize the RNN cell carry.

        Args:
          rng: random number generator passed to the init_fn.
          batch_dims: a tuple providing the shape of the batch dimensions.
          size: the size or number of features of the memory.
          init_fn: initializer function for the carry.
        Returns:
          An initialized carry for the given RNN cell.
        """
        key1, key2 = random.split(rng)
        mem_shape = batch_dims + (size,)
        return init_fn(key1, mem_shape), init_fn(key2, mem_shape)


class Flax06OptimizedLSTMCell:
    """``nn.OptimizedLSTMCell.initialize_carry`` as in flax 0.6.11 (reconstruction)."""

    @staticmethod
    def initialize_carry(rng, batch_dims, size, init_fn=initializers.zeros_init()):  # noqa: B008 (0.6.x default)
        """Initialize the RNN cell carry.

        Args:
          rng: random number generator passed to the init_fn.
          batch_dims: a tuple providing the shape of the batch dimensions.
          size: the size or number of features of the memory.
          init_fn: initializer function for the carry.

        Returns:
          An initialized carry for the given RNN cell.
        """
        key1, key2 = random.split(rng)
        mem_shape = batch_dims + (size,)
        return init_fn(key1, mem_shape), init_fn(key2, mem_shape)


class Flax06GRUCell:
    """``nn.GRUCell.initialize_carry`` as in flax 0.6.11 (reconstruction)."""

    @staticmethod
    def initialize_carry(rng, batch_dims, size, init_fn=initializers.zeros_init()):  # noqa: B008 (0.6.x default)
        """Initialize the RNN cell carry.

        Args:
          rng: random number generator passed to the init_fn.
          batch_dims: a tuple providing the shape of the batch dimensions.
          size: the size or number of features of the memory.
          init_fn: initializer function for the carry.
        Returns:
          An initialized carry for the given RNN cell.
        """
        mem_shape = batch_dims + (size,)
        return init_fn(rng, mem_shape)


class Flax06ConvLSTMCell:
    """``nn.ConvLSTMCell.initialize_carry`` as in flax 0.6.11 (``nn.ConvLSTM`` before 0.6.4; reconstruction)."""

    @staticmethod
    def initialize_carry(rng, batch_dims, size, init_fn=initializers.zeros_init()):  # noqa: B008 (0.6.x default)
        """Initialize the RNN cell carry.

        Args:
          rng: random number generator passed to the init_fn.
          batch_dims: a tuple providing the shape of the batch dimensions.
          size: the input_shape + (features,).
          init_fn: initializer function for the carry.
        Returns:
          An initialized carry for the given RNN cell.
        """
        key1, key2 = random.split(rng)
        mem_shape = batch_dims + size
        return init_fn(key1, mem_shape), init_fn(key2, mem_shape)


LEGACY_CELLS: dict[str, type[Any]] = {
    "LSTMCell": Flax06LSTMCell,
    "OptimizedLSTMCell": Flax06OptimizedLSTMCell,
    "GRUCell": Flax06GRUCell,
    "ConvLSTMCell": Flax06ConvLSTMCell,
}
LEGACY_ALIASES: dict[str, str] = {"ConvLSTM": "ConvLSTMCell"}  # the name before flax 0.6.4
LEGACY_LEAVES: dict[str, tuple[str, ...]] = {
    "LSTMCell": ("c", "h"), "OptimizedLSTMCell": ("c", "h"), "GRUCell": ("h",), "ConvLSTMCell": ("c", "h"),
}
LATER_CELLS: dict[str, str] = {"MGUCell": "0.7.5", "SimpleCell": "0.8.2"}  # cell -> flax version that added it


@dataclass(frozen=True)
class VersionFact:
    """One dated change of the Flax recurrent API."""

    version: str
    change: str


VERSION_FACTS: tuple[VersionFact, ...] = (
    VersionFact("0.6.4", "ConvLSTM renamed ConvLSTMCell; initialize_carry's default init_fn was initializers.zeros"),
    VersionFact("0.6.5", "initialize_carry's default init_fn became initializers.zeros_init() (same zeros)"),
    VersionFact("0.6.7", "nn.RNN added: nn.RNN(cell, cell_size), cell_size required"),
    VersionFact("0.6.8", "nn.Bidirectional added"),
    VersionFact("0.6.10", "nn.RNN takes seq_lengths (replacing segmentation_mask)"),
    VersionFact("0.7.0", "RNNCellBase refactor (FLIP 3099): cells take features and carry_init; initialize_carry "
                         "becomes an instance method (rng, input_shape) and passes param_dtype to the initializer; "
                         "num_feature_axes added; nn.RNN's second field cell_size stays, only to raise an error "
                         "when it is given"),
    VersionFact("0.7.5", "nn.RNN's second field becomes time_major (0.7.0-0.7.4 kept cell_size there); MGUCell added"),
    VersionFact("0.8.2", "SimpleCell added"),
)


def canonical_cell(cell: str) -> str:
    """The flax 0.6.x class name for ``cell`` (resolving ``ConvLSTM``); a clear ValueError otherwise."""
    name = LEGACY_ALIASES.get(cell, cell)
    if name in LEGACY_CELLS:
        return name
    if name in LATER_CELLS:
        raise ValueError(f"{name} did not exist in flax 0.6.x: it was added in flax {LATER_CELLS[name]}")
    known = ", ".join([*LEGACY_CELLS, *LEGACY_ALIASES])
    raise ValueError(f"unknown flax 0.6.x cell {cell!r}; known: {known}")


def legacy_initialize_carry(
    cell: str, rng: jax.Array, batch_dims: tuple[int, ...], size: Any, init_fn: Initializer | None = None
) -> Any:
    """``nn.<cell>.initialize_carry(rng, batch_dims, size, init_fn)`` exactly as flax 0.6.5-0.6.11 computed it.

    ``size`` is an int (hidden features), or for ConvLSTM a tuple ``spatial + (features,)``. ``init_fn=None``
    means the old default (zeros). Keys are split and numbers drawn as on jax 0.4.x (:func:`old_prng`), so a
    random ``init_fn`` gives flax 0.6.11's values. Wrong argument types fail the way the old code failed.
    """
    method = LEGACY_CELLS[canonical_cell(cell)].initialize_carry
    with old_prng():
        return method(rng, batch_dims, size) if init_fn is None else method(rng, batch_dims, size, init_fn)


def legacy_source(cell: str) -> str:
    """The flax 0.6.x source of ``<cell>.initialize_carry``, as it sat in the class (``ConvLSTM`` keeps its name)."""
    name = canonical_cell(cell)
    shown = cell if cell in LEGACY_ALIASES else name
    method = inspect.getsource(LEGACY_CELLS[name].initialize_carry)
    method = textwrap.dedent(method).replace("  # noqa: B008 (0.6.x default)", "")
    header = f"# flax 0.6.5 to {LAST_OLD_VERSION}, flax/linen/recurrent.py"
    if shown != name:  # the pre-0.6.4 name, whose default was initializers.zeros (the same function)
        method = method.replace("init_fn=initializers.zeros_init()", "init_fn=initializers.zeros")
        header = f"# flax < 0.6.4 (renamed {name} in 0.6.4), flax/linen/recurrent.py"
    return f"{header}\nclass {shown}(RNNCellBase):\n    ...\n\n" + textwrap.indent(method, "    ")


OLD_SOURCE: dict[str, str] = {name: legacy_source(name) for name in [*LEGACY_CELLS, *LEGACY_ALIASES]}
