"""The experiment configuration: one flat, validated, URL-safe record of everything a run depends on."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import Field, asdict, dataclass, field, make_dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar, cast

from rnnlab.device import memory_budget_bytes
from rnnlab.model.cells import CARRY_INITS, CELLS
from rnnlab.model.network import CARRY_MODES
from rnnlab.model.optimizers import OPTIMIZERS
from rnnlab.model.tasks import TASKS, compatible
from rnnlab.text import format_bytes, parse_float, parse_int


class ConfigError(ValueError):
    """A configuration that cannot run; ``messages`` says why."""

    def __init__(self, messages: list[str]):
        super().__init__(" ".join(messages))
        self.messages = messages


@dataclass(frozen=True)
class Setting:
    """One experiment setting, declared once: the controls, the URL, the CLI and the validation read it.

    ``kind`` is 'choice' (a registry of names), 'int' or 'float'. ``low``/``high`` bound a number: for a
    whole number they are what is valid anywhere, for a float the range of the app's control (the CLI and the
    API accept any valid value; a link asking for one outside the control's range is refused with a note).
    ``recompiles``: changing it needs a new compiled program (everything else is an argument of the program).
    """

    name: str
    default: object
    label: str
    help: str
    kind: str
    choices: Mapping[str, object] | None = None
    low: float | None = None
    high: float | None = None
    step: float = 1
    recompiles: bool = False
    advanced: bool = False  # shown under "Advanced" in the sidebar

    @property
    def type(self) -> type:
        """The Python type of the value."""
        return {"choice": str, "int": int, "float": float}[self.kind]


SETTINGS: tuple[Setting, ...] = (
    Setting("task", "adding", "Task", "the synthetic problem the cell is trained on", "choice", TASKS,
            recompiles=True),
    Setting("cell", "gru", "Cell", "the Flax Linen recurrent cell: one set of weights applied at every time step",
            "choice", CELLS, recompiles=True),
    Setting("features", 64, "Hidden features", "number of hidden units of the cell (the size of its carry)", "int",
            low=1, high=1024, recompiles=True),
    Setting("carry_mode", "learnable", "Carry mode",
            "how the initial carry h_0 is made: fixed: drawn once; noisy: redrawn for every batch; learnable: a "
            "parameter trained with the weights", "choice", CARRY_MODES, recompiles=True),
    Setting("carry_init", "zeros", "carry_init",
            "the function that fills the initial carry h_0 with numbers before training (zeros, ones, a normal "
            "or uniform draw, a constant); Flax calls it with a key, a shape and a dtype", "choice", CARRY_INITS,
            recompiles=True),
    Setting("carry_scale", 0.1, "Initialiser parameter",
            "the initialiser's parameter: stddev (normal), scale (uniform) or value (constant)", "float",
            low=-100.0, high=100.0, step=0.05),
    Setting("seq_len", 100, "Sequence length T", "number of time steps in each sequence", "int", low=1,
            high=100_000, recompiles=True),
    Setting("batch", 64, "Batch size", "sequences per training step", "int", low=1, high=4096, recompiles=True),
    Setting("optimizer", "adam", "Optimiser", "the optax optimiser (after clipping the gradient by its global norm)",
            "choice", OPTIMIZERS, recompiles=True),
    Setting("lr", 1e-2, "Learning rate", "how far each optimiser step moves the weights", "float", low=1e-6,
            high=1e6, step=1e-3),
    Setting("clip", 1.0, "Clip (global norm)", "clip the gradient to this global norm (0 = no clipping)", "float",
            low=0.0, high=1e6, step=0.5),
    Setting("steps", 300, "Training steps", "number of optimiser steps", "int", low=1, high=100_000),
    Setting("seed", 0, "Seed", "random seed for weights, carries and batches", "int", low=0, high=2**31 - 1),
    Setting("chunk", 25, "Steps per chunk", "optimiser steps between two evaluations (the evaluation loss, carry "
            "and per-step charts update after each); a long chunk is trained in parts, so Stop acts within about "
            "a second", "int",
            low=1, high=1000, recompiles=True, advanced=True),
    Setting("kernel_size", 3, "Kernel size", "ConvLSTM kernel size (square)", "int", low=1, high=7,
            recompiles=True, advanced=True),
)
SETTING: dict[str, Setting] = {s.name: s for s in SETTINGS}


def _bounds(setting: Setting) -> tuple[float, float]:
    if setting.low is None or setting.high is None:
        raise TypeError(f"the number setting {setting.name} needs low and high")
    return setting.low, setting.high


# Views of the table, for the modules that need one aspect of every setting.
LIMITS: dict[str, tuple[int, int]] = {s.name: (int(_bounds(s)[0]), int(_bounds(s)[1])) for s in SETTINGS
                                      if s.kind == "int"}
CHOICES: dict[str, Mapping[str, object]] = {s.name: s.choices or {} for s in SETTINGS if s.kind == "choice"}
CONTROL_RANGES: dict[str, tuple[float, float]] = {s.name: _bounds(s) for s in SETTINGS if s.kind == "float"}
STATIC_FIELDS: tuple[str, ...] = tuple(s.name for s in SETTINGS if s.recompiles)
HELP: dict[str, str] = {s.name: s.help for s in SETTINGS}


class ConfigMethods:
    """What every :class:`Config` can do. Its fields come from :data:`SETTINGS`; they are declared here as well,
    for type checkers (tests/test_config.py checks that the two agree)."""

    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]
    task: str
    cell: str
    features: int
    carry_mode: str
    carry_init: str
    carry_scale: float
    seq_len: int
    batch: int
    optimizer: str
    lr: float
    clip: float
    steps: int
    seed: int
    chunk: int
    kernel_size: int

    # ---- derived ---------------------------------------------------------------------------------
    @property
    def steps_per_sequence(self) -> int:
        """Number of scanned time steps (the copy task adds 20 to T)."""
        return TASKS[self.task].steps(self.seq_len)

    def static_key(self) -> tuple:
        """The part of the configuration that needs a new compiled program."""
        return tuple(getattr(self, name) for name in STATIC_FIELDS)

    def memory_bytes(self) -> int:
        """Estimate of what backpropagation through time keeps: per step, the cell's saved activations."""
        task, cell = TASKS[self.task], CELLS[self.cell]
        space = 1 if not task.spatial else 36  # 6 x 6 grid of the spatial task
        per_step = self.batch * space * (cell.saved_per_step * self.features + task.in_features
                                         + task.out_features)
        return 4 * per_step * self.steps_per_sequence * 2  # float32; x2 for the gradient probes' copies

    # ---- validation ------------------------------------------------------------------------------
    def field_errors(self) -> dict[str, str]:
        """What is wrong with each field on its own (type, range, known name), by field name."""
        errors = {}
        for name, choices in CHOICES.items():
            value = getattr(self, name)
            if value not in choices:
                errors[name] = f"Unknown {name} '{value}'; choose one of: {', '.join(choices)}."
        for name, (lo, hi) in LIMITS.items():
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
                errors[name] = f"{name} must be a whole number from {lo} to {hi} (got {value!r})."
        for name in CONTROL_RANGES:
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
                errors[name] = f"{name} must be a finite number (got {value!r})."
        if "lr" not in errors and self.lr <= 0:
            errors["lr"] = f"The learning rate must be greater than 0 (got {self.lr:g})."
        if "clip" not in errors and self.clip < 0:
            errors["clip"] = f"clip must be 0 (off) or positive (got {self.clip:g})."
        return errors

    def validate(self, budget: int | None = None) -> list[str]:
        """Messages for everything wrong with this configuration; empty when it can run."""
        errors = list(self.field_errors().values())
        if errors:
            return errors
        task, cell = TASKS[self.task], CELLS[self.cell]
        if not compatible(cell.spatial, task):
            fits = [t.label for t in TASKS.values() if compatible(cell.spatial, t)]
            errors.append(f"{cell.label} cannot run {task.label}: "
                          f"{'it needs a spatial task' if cell.spatial else 'that task is spatial (ConvLSTM only)'}"
                          f". Tasks it can run: {', '.join(fits)}.")
        if self.seq_len < task.min_T:
            errors.append(f"{task.label} needs a sequence length of at least {task.min_T} (got {self.seq_len}).")
        budget = memory_budget_bytes() if budget is None else budget
        need = self.memory_bytes()
        if need > budget:
            errors.append(f"T={self.seq_len} with batch {self.batch} and {self.features} features needs about "
                          f"{format_bytes(need)} for backpropagation through time; the limit is "
                          f"{format_bytes(budget)}. Lower the sequence length, the batch or the features.")
        return errors

    # ---- flat string form (URL query parameters, CLI) ------------------------------------------
    def to_dict(self) -> dict[str, str]:
        """Every field as a string, e.g. ``{'task': 'adding', 'lr': '0.01', ...}``."""
        return {k: _fmt(v) for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, data: dict[str, str], base: Config | None = None) -> tuple[Config, list[str]]:
        """Parse a flat dict of strings; bad or unknown entries fall back to ``base`` with a note each."""
        if base is None:
            base = cast("Config", cls())
        notes: list[str] = []
        values: dict[str, object] = {}
        types = {name: setting.type for name, setting in SETTING.items()}
        for key, raw in data.items():
            if key not in types:
                notes.append(f"Ignored unknown setting '{key}'.")
                continue
            try:
                value = _parse(types[key], raw)
            except ValueError:
                notes.append(f"Ignored {key}={raw!r}: not a valid {types[key].__name__}; kept {getattr(base, key)}.")
                continue
            error = replace(base, **{key: value}).field_errors().get(key)
            if error:
                notes.append(f"Ignored {key}={raw!r}: {error} Kept {getattr(base, key)}.")
                continue
            values[key] = value
        config = replace(base, **values)
        return config, notes


def _fmt(value) -> str:
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _parse(kind: type, raw: str):
    raw = str(raw).strip()
    if kind is int:
        return parse_int(raw)
    if kind is float:
        return parse_float(raw)
    if not raw:
        raise ValueError(raw)
    return raw


class StaticFields:
    """The fields of :class:`Static` (the settings that recompile), declared for type checkers."""

    task: str
    cell: str
    features: int
    carry_mode: str
    carry_init: str
    seq_len: int
    batch: int
    optimizer: str
    chunk: int
    kernel_size: int


if TYPE_CHECKING:
    class Config(ConfigMethods):
        def __init__(self, **values: object) -> None: ...

    class Static(StaticFields):
        def __init__(self, *values: object) -> None: ...
else:
    Config = make_dataclass(
        "Config", [(s.name, s.type, field(default=s.default)) for s in SETTINGS], bases=(ConfigMethods,), frozen=True)
    Static = make_dataclass("Static", [(name, SETTING[name].type) for name in STATIC_FIELDS], bases=(StaticFields,),
                            frozen=True)
Config.__module__, Config.__qualname__ = __name__, "Config"
Config.__doc__ = """One experiment: a flat, validated, URL-safe record with one field per entry of :data:`SETTINGS`.

Defaults: a GRU with a learnable carry on the adding problem at T = 100.
"""
Static.__module__, Static.__qualname__ = __name__, "Static"
Static.__doc__ = "The part of a configuration that needs its own compiled program (the settings that recompile)."


def static_part(config: Config) -> Static:
    """``config``'s :class:`Static` part: the key of its compiled program."""
    return Static(*config.static_key())


def with_cell(config: Config, cell: str) -> tuple[Config, dict[str, object]]:
    """``config`` with ``cell``, and the other settings changed so that it can run: a cell that cannot run the
    task gets its quick settings (:attr:`rnnlab.model.cells.CellSpec.quick_settings`; the ConvLSTM's moving dot at a
    size that compiles and trains in seconds), and a vector cell after a spatial task gets the default task.
    Returns the new configuration and the settings changed besides the cell."""
    spec, task = CELLS[cell], TASKS[config.task]
    changes: dict[str, object] = {}
    if not compatible(spec.spatial, task):
        changes = dict(spec.quick_settings) if spec.quick_settings else {"task": SETTING["task"].default}
    changes = {name: value for name, value in changes.items() if getattr(config, name) != value}
    return replace(config, cell=cell, **changes), changes


def describe_changes(cell: str, changes: Mapping[str, object]) -> str:
    """What :func:`with_cell` changed, in words ('ConvLSTM needs other settings to run, so these changed ...')."""
    parts = []
    for name, value in changes.items():
        setting = SETTING[name]
        shown = getattr(setting.choices.get(str(value)), "label", value) if setting.choices else value
        parts.append(f"{setting.label}: {shown}")
    return (f"{CELLS[cell].label} needs other settings to run, so these changed with it: {'; '.join(parts)}. "
            "Change them as you like.")
