"""Registries of recurrent cells and carry initialisers.

Adding a cell or an initialiser is one entry here: the model, its fused form, the probe, the time and memory
estimates, the CLI, the URL, the app's pages and the tests read these dictionaries when they need them and never
list the cells themselves (``tests/test_one_cell.py`` registers a cell and finds it everywhere). A cell with new maths
also needs its maths: its fused step (:mod:`rnnlab.model.fused`) and its log-scaled probe step
(:mod:`rnnlab.probing.probe_cells`, found from the fused form).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import flax.linen as nn
import jax
from jax.nn import initializers

from rnnlab.i18n import N_, _
from rnnlab.model import fused as forms
from rnnlab.model.fused import FusedCell
from rnnlab.model.gates import GRU_GATES, LSTM_GATES, MGU_GATES, GateSpec

Initializer = Callable[..., jax.Array]


@dataclass(frozen=True)
class CellSpec:
    """How to build one Linen cell and read its carry."""

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
    gates: GateSpec | None = None  # gate activations, for the cells with gates (not the ConvLSTM's convolutions)
    # Its fused form (rnnlab.model.fused: the same functions of the same parameters), which training runs and the
    # probe finds its log-scaled step by; None: Flax's own cell under nn.RNN.
    fused: FusedCell | None = None
    compile_s: float | None = None  # seconds to compile a training program, where not the default (time estimate)

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

    def build(self, features: int, carry_init: Initializer | None = None,
              kernel_size: int | tuple[int, ...] = 3) -> nn.RNNCellBase:
        """Build the Flax cell with ``features`` units (and ``carry_init``, else Flax's default, zeros)."""
        kwargs = {} if carry_init is None else {"carry_init": carry_init}
        if self.spatial:
            kernel = tuple(kernel_size) if isinstance(kernel_size, tuple | list) else (kernel_size, kernel_size)
            return self.cls(features=features, kernel_size=kernel, **kwargs)
        return self.cls(features=features, **kwargs)


CELLS: dict[str, CellSpec] = {
    spec.name: spec
    for spec in [
        CellSpec("gru", "GRU", nn.GRUCell, ("h",), saved_per_step=6, matmuls=3,
                 description=N_("Gated recurrent unit: reset and update gates, one state vector."), gates=GRU_GATES,
                 fused=forms.GRU),
        CellSpec("lstm", "LSTM", nn.LSTMCell, ("c", "h"), saved_per_step=9,
                 description=N_("Long short-term memory: a cell state c with an additive path, and h."),
                 gates=LSTM_GATES, fused=forms.LSTM),
        CellSpec("optimized_lstm", N_("Optimized LSTM"), nn.OptimizedLSTMCell, ("c", "h"), saved_per_step=9,
                 description=N_("The same LSTM maths with the gate matmuls fused."), gates=LSTM_GATES,
                 fused=forms.LSTM),
        CellSpec("mgu", "MGU", nn.MGUCell, ("h",), saved_per_step=5, matmuls=2,
                 description=N_("Minimal gated unit: a single forget gate."), gates=MGU_GATES, fused=forms.MGU),
        CellSpec("simple", N_("Simple RNN"), nn.SimpleCell, ("h",), saved_per_step=2, matmuls=1,
                 description=N_("h_t = tanh(W h_{t-1} + U x_t + b): no gates, the textbook vanishing gradient."),
                 fused=forms.SIMPLE),
        CellSpec("conv_lstm", "ConvLSTM", nn.ConvLSTMCell, ("c", "h"), spatial=True, saved_per_step=9,
                 description=N_("An LSTM whose matmuls are convolutions: needs a spatial task."),
                 quick_settings=(("task", "moving_dot"), ("features", 16), ("batch", 16), ("seq_len", 20))),
    ]
}


@dataclass(frozen=True)
class CarryInitSpec:
    """A carry initialiser family: ``build(p)`` gives the ``jax.nn.initializers`` function for parameter p.

    Every family is linear in its parameter (``build(p)(key, shape) == p * build(1)(key, shape)``: bit for bit
    when run eagerly, within one unit in the last place under jit), so the parameter can be passed to a
    compiled function as a number instead of being baked into it.
    """

    name: str
    label_en: str  # English (the code-like ones are not translated): see ``label``
    build: Callable[[float], Initializer]
    param: str | None = None  # name of the parameter, e.g. "stddev"; None for zeros and ones
    default: float = 1.0
    random: bool = False  # draws from the key

    @property
    def label(self) -> str:
        """The readable name in the reader's language."""
        return _(self.label_en)

    def unit(self) -> Initializer:
        """The initialiser with its parameter set to 1 (the compiled functions multiply by the parameter)."""
        return self.build(1.0)

    def describe(self, value: float | None = None) -> str:
        """Readable form, e.g. ``normal(stddev=0.1)``."""
        if self.param is None:
            return self.name
        return f"{self.name}({self.param}={self.default if value is None else value:g})"


CARRY_INITS: dict[str, CarryInitSpec] = {
    spec.name: spec
    for spec in [
        CarryInitSpec("zeros", "zeros", lambda p: initializers.zeros),
        CarryInitSpec("ones", "ones", lambda p: initializers.ones),
        CarryInitSpec("constant", "constant(value)", lambda p: initializers.constant(p), "value", 0.5),
        CarryInitSpec("normal", "normal(stddev)", lambda p: initializers.normal(stddev=p), "stddev", 0.1,
                      random=True),
        CarryInitSpec("uniform", "uniform(scale)", lambda p: initializers.uniform(scale=p), "scale", 0.1,
                      random=True),
        CarryInitSpec("truncated_normal", N_("truncated normal(stddev)"),
                      lambda p: initializers.truncated_normal(stddev=p), "stddev", 0.1, random=True),
    ]
}


def carry_init_fn(name: str, value: float | jax.Array) -> Initializer:
    """The initialiser ``name`` with parameter ``value``, which may be a traced number."""
    spec = CARRY_INITS[name]
    unit = spec.unit()
    if spec.param is None:
        return unit
    return lambda key, shape, dtype=jax.numpy.float32: value * unit(key, shape, dtype)
