"""What a grid of runs may vary, and the grids' defaults: Compare's grid and Gradient flow's decay sweep.

Declared once here and read by the pages' controls, the URL, the command line and the sweeps themselves.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rnnlab.model.cells import CARRY_INITS, CELLS
from rnnlab.model.network import CARRY_MODES
from rnnlab.text import parse_float, parse_int

DEFAULT_SWEEP_CELLS = ("gru", "lstm", "simple")  # the decay sweep's default: two gated cells and the plain one
DEFAULT_SWEEP_LENGTHS = (10, 20, 40, 80)
SWEEP_TRAINING = {"seq_len": 40, "steps": 300}  # how the decay sweep's "trained" weights are made
SWEEP_WEIGHTS = ("trained", "untrained")


@dataclass(frozen=True)
class SweepField:
    """One field a sweep may vary: its label, its choices (a registry) or how to parse typed values."""

    name: str
    label: str
    choices: dict | None = None  # registry of names, or None for typed numbers
    parse_one: Callable[[str], object] | None = None

    def parse(self, text: str) -> list:
        """'0.01, 0.1' -> [0.01, 0.1] (duplicates dropped, order kept); ValueError with a readable message."""
        parts = [p.strip() for p in str(text).replace(";", ",").split(",") if p.strip()]
        values = []
        for part in parts:
            try:
                value = self.parse_one(part) if self.parse_one else part
            except ValueError:
                raise ValueError(f"{self.label}: '{part}' is not a valid value.") from None
            if self.choices is not None and value not in self.choices:
                raise ValueError(f"{self.label}: unknown '{part}'; choose from {', '.join(self.choices)}.")
            values.append(value)
        return list(dict.fromkeys(values))

    def describe(self, value) -> str:
        """A value as a label piece, e.g. 'GRU', 'learnable carry', 'lr 0.01'."""
        if self.name == "cell":
            return CELLS[value].label
        if self.name == "carry_mode":
            return f"{value} carry"
        if self.name == "carry_init":
            return f"init {value}"
        if self.name == "lr":
            return f"lr {value:g}"
        return f"{self.name} {value}"


SWEEP_FIELDS: tuple[SweepField, ...] = (
    SweepField("carry_mode", "Carry mode", CARRY_MODES),
    SweepField("carry_init", "carry_init", CARRY_INITS),
    SweepField("cell", "Cell", CELLS),
    SweepField("lr", "Learning rate", None, parse_float),
    SweepField("seed", "Seed", None, parse_int),
)
FIELDS: dict[str, SweepField] = {f.name: f for f in SWEEP_FIELDS}
# What the Compare page varies before anyone changes it (comma-separated, as typed; empty: the base's value):
# a GRU against a simple RNN, three seeds each (does gating help?).
COMPARE_DEFAULTS: dict[str, str] = {"carry_mode": "", "carry_init": "", "cell": "gru, simple", "lr": "",
                                    "seed": "0, 1, 2"}
