"""Registries of recurrent cells and carry initialisers.

A cell is one file: its family's file in :mod:`rnnlab.model.cell_families` declares its :class:`CellSpec` (in
``SPECS``) beside the maths it needs (its fused step and hand-written derivative, its gates, its log-scaled probe
step), and :data:`CELLS` collects every family's specs, in the order of their ``place``. The model, the probe, the
time and memory estimates, the CLI, the URL, the app's pages and the tests read these dictionaries when they need
them and never list the cells themselves (``tests/test_one_cell.py`` registers a cell and finds it everywhere).
An initialiser is one entry in :data:`CARRY_INITS`.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import jax
from jax.nn import initializers

from rnnlab.i18n import N_, _
from rnnlab.model import cell_families
from rnnlab.model.cell_spec import CellSpec, Initializer


def family_specs() -> Iterator[CellSpec]:
    """The specs every cell family's file declares (each module of :mod:`rnnlab.model.cell_families`)."""
    for family in pkgutil.iter_modules(cell_families.__path__):
        yield from importlib.import_module(f"rnnlab.model.cell_families.{family.name}").SPECS


CELLS: dict[str, CellSpec] = {spec.name: spec for spec in sorted(family_specs(), key=lambda spec: spec.place)}


@dataclass(frozen=True)
class CarryInitSpec:
    """A carry initialiser family: ``build(p)`` gives the ``jax.nn.initializers`` function for parameter p.

    Every family is linear in its parameter (``build(p)(key, shape) == p * build(1)(key, shape)``: bit for bit
    when run eagerly, within one unit in the last place under jit), so the parameter can be passed to a
    compiled function as a number instead of being baked into it.
    """

    name: str
    label_en: str  # the menu's entry: its code name with its parameter, marked for the catalog (glossed there)
    build: Callable[[float], Initializer]
    param: str | None = None  # name of the parameter, e.g. "stddev"; None for zeros and ones
    default: float = 1.0
    random: bool = False  # draws from the key
    word_en: str = ""  # its bare code name, marked for the catalog: in legends and progress ("learnable carry (zeros)")

    @property
    def label(self) -> str:
        """The menu's entry in the reader's language ('normal(stddev)', '正态 normal(stddev)')."""
        return _(self.label_en)

    @property
    def word(self) -> str:
        """The bare name in the reader's language ('zeros', '全零 zeros')."""
        return _(self.word_en or self.name)

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
        # TRANSLATORS: the initialisers are jax.nn.initializers' code names: keep each name, and gloss it
        CarryInitSpec("zeros", N_("zeros"), lambda p: initializers.zeros, word_en=N_("zeros")),
        CarryInitSpec("ones", N_("ones"), lambda p: initializers.ones, word_en=N_("ones")),
        CarryInitSpec("constant", N_("constant(value)"), lambda p: initializers.constant(p), "value", 0.5,
                      word_en=N_("constant")),
        CarryInitSpec("normal", N_("normal(stddev)"), lambda p: initializers.normal(stddev=p), "stddev", 0.1,
                      random=True, word_en=N_("normal")),
        CarryInitSpec("uniform", N_("uniform(scale)"), lambda p: initializers.uniform(scale=p), "scale", 0.1,
                      random=True, word_en=N_("uniform")),
        CarryInitSpec("truncated_normal", N_("truncated_normal(stddev)"),
                      lambda p: initializers.truncated_normal(stddev=p), "stddev", 0.1, random=True,
                      word_en=N_("truncated_normal")),
    ]
}


def carry_init_fn(name: str, value: float | jax.Array) -> Initializer:
    """The initialiser ``name`` with parameter ``value``, which may be a traced number."""
    spec = CARRY_INITS[name]
    unit = spec.unit()
    if spec.param is None:
        return unit
    return lambda key, shape, dtype=jax.numpy.float32: value * unit(key, shape, dtype)
