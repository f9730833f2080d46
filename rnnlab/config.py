"""The experiment configuration: one flat, validated, URL-safe record of everything a run depends on."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import Field, asdict, dataclass, field, make_dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar, cast

from rnnlab.device import memory_budget_bytes
from rnnlab.i18n import N_, _, join_clauses, join_list, number, t, tn
from rnnlab.model.cells import CARRY_INITS, CELLS
from rnnlab.model.network import CARRY_MODES, carry_mode_label, carry_mode_phrase
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
    ``during_run``: a run being trained follows a change of it between chunks (it never recompiles); changing any
    other setting starts a new run.
    ``label_en`` and ``help_en`` are English (marked for the catalog); ``label`` and ``help`` give them in the
    reader's language.
    How the setting is shown: ``phrase`` names one value in a run's short name ('T = 100'; None: its label and
    value); ``control`` is the sidebar's kind of control for a choice ('select', or 'radio': every option side by
    side); ``choices_in_help``: the control's help lists each choice's description; ``brings_settings``: choosing
    a value may change other settings (:func:`with_cell`), said in a note; ``parameter_of``: the setting is the
    parameter of the entry chosen in that other setting (labelled by its name, hidden where it has none).
    """

    name: str
    default: object
    label_en: str
    help_en: str
    kind: str
    choices: Mapping[str, object] | None = None
    low: float | None = None
    high: float | None = None
    step: float = 1
    recompiles: bool = False
    during_run: bool = False
    advanced: bool = False  # shown under "Advanced" in the sidebar
    phrase: Callable[[Any], str] | None = None
    control: str = "select"
    choices_in_help: bool = True
    brings_settings: bool = False
    parameter_of: str | None = None

    @property
    def label(self) -> str:
        """The control's label in the reader's language."""
        return _(self.label_en)

    @property
    def help(self) -> str:
        """The control's help in the reader's language."""
        return _(self.help_en)

    def shown_value(self, value: object) -> str:
        """``value`` as the reader reads it: a registry entry's label in the reader's language ('Adding problem',
        '加法问题'), a carry mode's name, a number written the reader's way."""
        entry = self.choices.get(value) if self.choices is not None and isinstance(value, str) else None
        label = getattr(entry, "label", None)
        if isinstance(label, str):
            return label
        if self.choices is CARRY_MODES:
            return carry_mode_label(str(value))
        return number(value, "g") if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)

    @property
    def type(self) -> type:
        """The Python type of the value."""
        return {"choice": str, "int": int, "float": float}[self.kind]


SETTINGS: tuple[Setting, ...] = (
    Setting("task", "adding", N_("Task"), N_("the synthetic problem the cell is trained on"), "choice", TASKS,
            recompiles=True),
    Setting("cell", "gru", N_("Cell"),
            N_("the Flax Linen recurrent cell: one set of weights applied at every time step"),
            "choice", CELLS, recompiles=True, brings_settings=True),
    Setting("features", 64, N_("Hidden features"), N_("number of hidden units of the cell (the size of its carry)"),
            "int", low=1, high=1024, recompiles=True),
    Setting("carry_mode", "learnable", N_("Carry mode"),
            N_("how the initial carry h_0 is made: fixed: drawn once; noisy: redrawn for every batch; learnable: a "
               "parameter trained with the weights"), "choice", CARRY_MODES, recompiles=True,
            phrase=lambda mode: str(carry_mode_phrase(mode)), control="radio", choices_in_help=False),
    # TRANSLATORS: the control's label: Flax's argument name, kept; a translation may put a few words before it that
    # say what it is ("初始化函数 carry_init")
    Setting("carry_init", "zeros", N_("carry_init"),
            N_("the function that fills the initial carry h_0 with numbers before training (zeros, ones, a normal "
               "or uniform draw, a constant); Flax calls it with a key, a shape and a dtype"), "choice", CARRY_INITS,
            recompiles=True, phrase=lambda init: f"carry_init {init}"),  # code: the argument and its value
    Setting("carry_scale", 0.1, N_("Initialiser parameter"),
            N_("the initialiser's parameter: stddev (normal), scale (uniform) or value (constant)"), "float",
            low=-100.0, high=100.0, step=0.05, during_run=True, parameter_of="carry_init"),
    Setting("seq_len", 100, N_("Sequence length T"), N_("number of time steps in each sequence"), "int", low=1,
            high=100_000, recompiles=True, phrase=lambda length: f"T = {length}"),  # notation
    Setting("batch", 64, N_("Batch size"), N_("sequences per training step"), "int", low=1, high=4096,
            recompiles=True),
    Setting("optimizer", "adam", N_("Optimiser"),
            N_("the optax optimiser (after clipping the gradient by its global norm)"),
            "choice", OPTIMIZERS, recompiles=True),
    Setting("lr", 1e-2, N_("Learning rate"), N_("how far each optimiser step moves the weights"), "float", low=1e-6,
            high=1e6, step=1e-3, during_run=True),
    Setting("clip", 1.0, N_("Clip (global norm)"), N_("clip the gradient to this global norm (0 = no clipping)"),
            "float", low=0.0, high=1e6, step=0.5, during_run=True),
    Setting("steps", 300, N_("Training steps"), N_("number of optimiser steps"), "int", low=1, high=100_000,
            during_run=True),
    Setting("seed", 0, N_("Seed"), N_("random seed for weights, carries and batches"), "int", low=0,
            high=2**31 - 1),
    Setting("chunk", 25, N_("Steps per chunk"),
            N_("optimiser steps between two evaluations (the evaluation loss, carry and per-step charts update "
               "after each); a long chunk is trained in parts, so Stop acts within about a second"), "int",
            low=1, high=1000, recompiles=True, advanced=True),
    Setting("kernel_size", 3, N_("Kernel size"), N_("ConvLSTM kernel size (square)"), "int", low=1, high=7,
            recompiles=True, advanced=True),
)
SETTING: dict[str, Setting] = {s.name: s for s in SETTINGS}
DURING_RUN: tuple[str, ...] = tuple(s.name for s in SETTINGS if s.during_run)  # what a running run follows


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
HELP: dict[str, str] = {s.name: s.help_en for s in SETTINGS}  # English: the CLI and the script translate


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
                # TRANSLATORS: {name} is a setting's id (cell, task...), {value} what was asked, {choices} the ids.
                errors[name] = t("Unknown {name} '{value}'; choose one of: {choices}.", name=name, value=value,
                                 choices=", ".join(choices))
        for name, (lo, hi) in LIMITS.items():
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
                # TRANSLATORS: {name} is a setting's id (seq_len, batch...).
                errors[name] = t("{name} must be a whole number from {lo} to {hi} (got {value!r}).", name=name,
                                 lo=lo, hi=hi, value=value)
        for name in CONTROL_RANGES:
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
                # TRANSLATORS: {name} is a setting's id (lr, clip...).
                errors[name] = t("{name} must be a finite number (got {value!r}).", name=name, value=value)
        if "lr" not in errors and self.lr <= 0:
            errors["lr"] = t("The learning rate must be greater than 0 (got {lr:g}).", lr=self.lr)
        if "clip" not in errors and self.clip < 0:
            errors["clip"] = t("clip must be 0 (off) or positive (got {clip:g}).", clip=self.clip)
        return errors

    def validate(self, budget: int | None = None) -> list[str]:
        """Messages for everything wrong with this configuration; empty when it can run."""
        errors = list(self.field_errors().values())
        if errors:
            return errors
        task, cell = TASKS[self.task], CELLS[self.cell]
        if not compatible(cell.spatial, task):
            fits = join_list([other.label for other in TASKS.values() if compatible(cell.spatial, other)])
            if cell.spatial:
                # TRANSLATORS: {cell} is a cell's name (ConvLSTM), {task} and {tasks} tasks' names.
                errors.append(t("{cell} cannot run {task}: it needs a spatial task. Tasks it can run: {tasks}.",
                                cell=cell.label, task=task.label, tasks=fits))
            else:
                # TRANSLATORS: {cell} is a cell's name (GRU), {task} and {tasks} tasks' names.
                errors.append(t("{cell} cannot run {task}: that task is spatial (ConvLSTM only). Tasks it can run: "
                                "{tasks}.", cell=cell.label, task=task.label, tasks=fits))
        if self.seq_len < task.min_T:
            # TRANSLATORS: {task} is a task's name; {min_T} and {T} are sequence lengths.
            errors.append(t("{task} needs a sequence length of at least {min_T} (got {T}).", task=task.label,
                            min_T=task.min_T, T=self.seq_len))
        budget = memory_budget_bytes() if budget is None else budget
        need = self.memory_bytes()
        if need > budget:
            # TRANSLATORS: {n} hidden features; {need} and {limit} are sizes in bytes, already written with their unit
            # ('1.2 GB').
            errors.append(tn("T={T} with batch {batch} and {n} feature needs about {need} for backpropagation through "
                             "time; the limit is {limit}. Lower the sequence length, the batch or the features.",
                             "T={T} with batch {batch} and {n} features needs about {need} for backpropagation "
                             "through time; the limit is {limit}. Lower the sequence length, the batch or the "
                             "features.", self.features, T=self.seq_len, batch=self.batch,
                             need=format_bytes(need), limit=format_bytes(budget)))
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
                notes.append(t("Ignored unknown setting '{key}'.", key=key))
                continue
            try:
                value = _parse(types[key], raw)
            except ValueError:
                # TRANSLATORS: {key}={raw!r} is what the link asked ("lr='abc'"); {type} is int, float or str;
                # {kept} the value kept.
                notes.append(t("Ignored {key}={raw!r}: not a valid {type}; kept {kept}.", key=key, raw=raw,
                               type=types[key].__name__, kept=getattr(base, key)))
                continue
            error = replace(base, **{key: value}).field_errors().get(key)
            if error:
                # TRANSLATORS: {error} is a whole sentence saying what is wrong; {kept} the value kept.
                notes.append(t("Ignored {key}={raw!r}: {error} Kept {kept}.", key=key, raw=raw, error=error,
                               kept=getattr(base, key)))
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
        # TRANSLATORS: one changed setting in a list: its label, then its new value ('Task: Moving dot').
        parts.append(t("{setting}: {value}", setting=setting.label, value=shown))
    # TRANSLATORS: {cell} is a cell's name; {changes} lists 'setting: value' pairs separated by semicolons.
    return t("{cell} needs other settings to run, so these changed with it: {changes}. Change them as you like.",
             cell=CELLS[cell].label, changes=join_clauses(parts))
