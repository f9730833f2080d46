"""The experiment configuration: one flat, validated, URL-safe record of everything a run depends on."""

from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass, fields, replace

from rnnlab.cells import CARRY_INITS, CELLS
from rnnlab.model import CARRY_MODES
from rnnlab.optimizers import OPTIMIZERS
from rnnlab.tasks import TASKS, compatible

LIMITS: dict[str, tuple[int, int]] = {
    "features": (1, 1024),
    "seq_len": (1, 100_000),
    "batch": (1, 4096),
    "steps": (1, 100_000),
    "chunk": (1, 1000),
    "kernel_size": (1, 7),
}

CHOICES: dict[str, dict] = {
    "task": TASKS,
    "cell": CELLS,
    "carry_mode": CARRY_MODES,
    "carry_init": CARRY_INITS,
    "optimizer": OPTIMIZERS,
}

# Ranges of the app's number controls for the float fields (wider values are valid for the CLI and the API;
# a link asking for one outside these is refused with a note, so the controls can show it).
CONTROL_RANGES: dict[str, tuple[float, float]] = {"lr": (1e-6, 1e6), "clip": (0.0, 1e6), "carry_scale": (-100.0, 100.0)}

# Fields whose change needs a new compiled program; everything else is passed as an argument.
STATIC_FIELDS = ("task", "cell", "features", "carry_mode", "carry_init", "seq_len", "batch", "optimizer",
                 "chunk", "kernel_size")

HELP: dict[str, str] = {
    "task": "the synthetic problem the cell is trained on",
    "cell": "the Flax Linen recurrent cell, one set of weights shared by all time steps",
    "features": "number of hidden units of the cell",
    "carry_mode": "fixed: drawn once; noisy: redrawn every batch; learnable: a trained parameter",
    "carry_init": "the initialiser of the initial carry (carry_init)",
    "carry_scale": "the initialiser's parameter: stddev (normal), scale (uniform) or value (constant)",
    "seq_len": "sequence length T",
    "batch": "sequences per training step",
    "optimizer": "the optax optimiser (after clipping the gradient by its global norm)",
    "lr": "learning rate",
    "clip": "clip the gradient to this global norm (0 = no clipping)",
    "steps": "number of optimiser steps",
    "seed": "random seed for weights, carries and batches",
    "chunk": "optimiser steps per compiled call (charts update after each)",
    "kernel_size": "ConvLSTM kernel size (square)",
}


def memory_budget_bytes() -> int:
    """Memory a run may use: ``RNNLAB_MEMORY_BUDGET_GB`` if set, else half of what is free now.

    Free means the first accelerator's free memory when JAX runs on one (its ``memory_stats``), else the
    RAM available (``MemAvailable``). Trainings already running are counted separately, by
    :mod:`rnnlab.scheduler`, which admits a training only when its estimate fits in what they leave.
    """
    env = os.environ.get("RNNLAB_MEMORY_BUDGET_GB")
    if env:
        try:
            value = float(env)
        except ValueError:
            value = math.nan
        if math.isfinite(value) and value > 0:
            return int(value * 2**30)
    device_free = _device_free_bytes()
    if device_free is not None:
        return device_free // 2
    try:
        with open("/proc/meminfo") as f:
            info = dict(line.split(":", 1) for line in f)
        return int(info["MemAvailable"].split()[0]) * 1024 // 2
    except (OSError, KeyError, ValueError):
        return 4 * 2**30


def _device_free_bytes() -> int | None:
    """Free memory of the first accelerator, or None on CPU (or when the device does not say)."""
    import jax

    if jax.default_backend() == "cpu":
        return None
    try:
        stats = jax.devices()[0].memory_stats() or {}
        return int(stats["bytes_limit"]) - int(stats.get("bytes_in_use", 0))
    except (KeyError, TypeError, ValueError, RuntimeError):
        return None


def format_bytes(n: float) -> str:
    """1234567 -> '1.2 MB'."""
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    raise AssertionError


@dataclass(frozen=True)
class Config:
    """One experiment. Defaults: a GRU with a learnable carry on the adding problem at T = 100."""

    task: str = "adding"
    cell: str = "gru"
    features: int = 64
    carry_mode: str = "learnable"
    carry_init: str = "zeros"
    carry_scale: float = 0.1
    seq_len: int = 100
    batch: int = 64
    optimizer: str = "adam"
    lr: float = 1e-2
    clip: float = 1.0
    steps: int = 300
    seed: int = 0
    chunk: int = 25
    kernel_size: int = 3

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
        for name in ("lr", "carry_scale", "clip"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
                errors[name] = f"{name} must be a finite number (got {value!r})."
        if "lr" not in errors and self.lr <= 0:
            errors["lr"] = f"The learning rate must be greater than 0 (got {self.lr:g})."
        if "clip" not in errors and self.clip < 0:
            errors["clip"] = f"clip must be 0 (off) or positive (got {self.clip:g})."
        if not isinstance(self.seed, int) or isinstance(self.seed, bool) or not 0 <= self.seed < 2**31:
            errors["seed"] = f"seed must be a whole number from 0 to {2**31 - 1} (got {self.seed!r})."
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
        base = base or cls()
        notes, values = [], {}
        types = {f.name: f.type for f in fields(cls)}
        for key, raw in data.items():
            if key not in types:
                notes.append(f"Ignored unknown setting '{key}'.")
                continue
            try:
                value = _parse(types[key], raw)
            except ValueError:
                notes.append(f"Ignored {key}={raw!r}: not a valid {types[key]}; kept {getattr(base, key)}.")
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


def _parse(type_name, raw: str):
    raw = str(raw).strip()
    if type_name in ("int", int):
        if not raw.lstrip("-").isdigit():
            raise ValueError(raw)
        return int(raw)
    if type_name in ("float", float):
        value = float(raw)
        if not math.isfinite(value):
            raise ValueError(raw)
        return value
    if not raw:
        raise ValueError(raw)
    return raw

