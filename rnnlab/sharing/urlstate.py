"""The experiment in the URL: query parameters <-> configuration, hidden controls and page options.

A link reproduces an experiment; a teacher hides controls with ``hide=lr,clip`` (or ``lr_hide=1``, as in
TensorFlow Playground). Bad or unknown values fall back to defaults, each with a note to show.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace

from rnnlab.config import CONTROL_RANGES, Config
from rnnlab.grids import COMPARE_DEFAULTS, DEFAULT_SWEEP_CELLS, DEFAULT_SWEEP_LENGTHS, FIELDS, SWEEP_WEIGHTS
from rnnlab.model.cells import CELLS
from rnnlab.text import shorten, whole

CONFIG_KEYS = tuple(f.name for f in fields(Config))
MAX_SWEEP_LENGTHS = 12
MAX_SWEEP_LENGTH = 100_000
MAX_VALUE_CHARS = 200  # a longer query value is refused without being read
MAX_NOTED_UNKNOWN = 5  # unknown keys named one by one in the notes; the rest are counted
# The range each number control of the pages accepts (config.LIMITS holds the whole-number ones). A link may
# only set what a student could set by hand: a value outside would be clamped silently by the control.


@dataclass
class UrlState:
    """Everything a URL can carry."""

    config: Config = field(default_factory=Config)
    hidden: frozenset[str] = frozenset()
    sweep_cells: tuple[str, ...] = DEFAULT_SWEEP_CELLS
    sweep_lengths: tuple[int, ...] = DEFAULT_SWEEP_LENGTHS
    sweep_weights: str = SWEEP_WEIGHTS[0]  # the decay sweep probes briefly trained or untrained cells
    compare: dict[str, str] = field(default_factory=lambda: dict(COMPARE_DEFAULTS))  # what Compare varies
    compare_zero: bool = False
    autorun: bool = False
    notes: list[str] = field(default_factory=list)


def _first(value) -> str:
    if isinstance(value, (list, tuple)):
        return str(value[-1]) if value else ""
    return str(value)


def parse_lengths(text: str) -> tuple[tuple[int, ...], str | None]:
    """'10, 20,40' -> (10, 20, 40); a message instead when it is not 1-12 whole numbers from 1 to 100000."""
    parts = [p.strip() for p in str(text).replace(";", ",").split(",") if p.strip()]
    if not parts:
        return (), "Give at least one sequence length, e.g. 10, 20, 40."
    numbers = [whole(p) for p in parts]
    if None in numbers:
        bad = parts[numbers.index(None)]
        if bad.lstrip("-").isascii() and bad.lstrip("-").isdigit():
            return (), f"Sequence lengths must be from 1 to {MAX_SWEEP_LENGTH} (got '{shorten(bad)}')."
        return (), f"Sequence lengths must be whole numbers separated by commas (got '{shorten(text)}')."
    lengths = tuple(sorted(set(numbers)))  # type: ignore[arg-type]
    if len(lengths) > MAX_SWEEP_LENGTHS or lengths[0] < 1 or lengths[-1] > MAX_SWEEP_LENGTH:
        return (), (f"Give 1 to {MAX_SWEEP_LENGTHS} sequence lengths from 1 to {MAX_SWEEP_LENGTH} "
                    f"(got '{shorten(text)}').")
    return lengths, None


def parse_cells(text: str) -> tuple[tuple[str, ...], str | None]:
    """'gru,lstm' -> ('gru', 'lstm'); a message for unknown or spatial cells (the sweep uses vector tasks)."""
    cells = tuple(dict.fromkeys(c.strip() for c in str(text).split(",") if c.strip()))
    usable = ", ".join(n for n, c in CELLS.items() if not c.spatial)
    if not cells:
        return (), f"Pick at least one cell for the sweep ({usable})."
    bad = [c for c in cells if c not in CELLS or CELLS[c].spatial]
    if bad:
        return (), f"Unknown or unusable cell(s) '{shorten(', '.join(bad))}' for the sweep; use: {usable}."
    return cells, None


def parse_query(params: Mapping[str, str | list[str]], base: Config | None = None) -> UrlState:
    """Read a URL's query parameters. Never raises: what cannot be used is reported in ``notes``.

    Each value that cannot be used keeps the default (``base``); when the values that can be used do not fit
    together (a cell/task pair, a sequence too short for the task, a memory estimate over the budget) the
    link's values are reset one by one, and a link that asked to start (``run=1``) does not start.
    """
    base = base or Config()
    state = UrlState(config=base)
    raw: dict[str, str] = {}
    unknown: list[str] = []
    known = (set(CONFIG_KEYS) | {"hide", "sweep_cells", "sweep_lengths", "sweep_weights", "compare_zero", "run"}
             | {f"cmp_{name}" for name in COMPARE_DEFAULTS})
    for key, value in params.items():
        key, value = str(key), _first(value)
        if key not in known and not key.endswith("_hide"):
            unknown.append(key)
        elif len(value) > MAX_VALUE_CHARS:
            state.notes.append(f"Ignored {shorten(key)}: its value is {len(value):,} characters long.")
        else:
            raw[key] = value
    state.notes.extend(f"Ignored unknown setting '{shorten(k)}'." for k in unknown[:MAX_NOTED_UNKNOWN])
    if len(unknown) > MAX_NOTED_UNKNOWN:
        state.notes.append(f"Ignored {len(unknown) - MAX_NOTED_UNKNOWN} more unknown settings.")
    hidden = set()
    for key, value in list(raw.items()):
        if key.endswith("_hide"):
            raw.pop(key)
            if value.strip().lower() in ("1", "true", "yes"):
                hidden.add(key[: -len("_hide")])
    if "hide" in raw:
        hidden.update(h.strip() for h in raw.pop("hide").split(",") if h.strip())
    unknown_hidden = sorted(hidden - set(CONFIG_KEYS))
    if unknown_hidden:
        state.notes.append(f"Cannot hide unknown control(s): {shorten(', '.join(unknown_hidden), 80)}.")
    state.hidden = frozenset(hidden & set(CONFIG_KEYS))

    if "sweep_cells" in raw:
        cells, error = parse_cells(raw.pop("sweep_cells"))
        if error:
            state.notes.append(error + " Kept the default cells.")
        else:
            state.sweep_cells = cells
    if "sweep_lengths" in raw:
        lengths, error = parse_lengths(raw.pop("sweep_lengths"))
        if error:
            state.notes.append(error + " Kept the default lengths.")
        else:
            state.sweep_lengths = lengths
    if "sweep_weights" in raw:
        weights = raw.pop("sweep_weights").strip().lower()
        if weights in SWEEP_WEIGHTS:
            state.sweep_weights = weights
        else:
            state.notes.append(f"Ignored sweep_weights={shorten(weights)!r}: use {' or '.join(SWEEP_WEIGHTS)}.")
    for name in COMPARE_DEFAULTS:
        if f"cmp_{name}" in raw:
            text = raw.pop(f"cmp_{name}")
            try:
                state.compare[name] = ", ".join(map(str, FIELDS[name].parse(text)))
            except ValueError as e:
                state.notes.append(f"{e} Kept the Compare page's default for it.")
    for flag in ("compare_zero", "run"):
        if flag in raw:
            value = raw.pop(flag).strip().lower()
            on = value in ("1", "true", "yes")
            if not on and value not in ("0", "false", "no"):
                state.notes.append(f"Ignored {flag}={shorten(value)!r}: use 1 or 0.")
            setattr(state, "autorun" if flag == "run" else flag, on)

    config, notes = Config.from_dict(raw, base)
    state.notes.extend(notes)
    for key, (lo, hi) in CONTROL_RANGES.items():
        value = getattr(config, key)
        if key in raw and value != getattr(base, key) and not lo <= value <= hi:
            config = replace(config, **{key: getattr(base, key)})
            state.notes.append(f"Ignored {key}={shorten(raw[key])!r}: the control accepts {lo:g} to {hi:g}; "
                                f"kept {getattr(base, key)}.")
    changed = [k for k in raw if k in CONFIG_KEYS and getattr(config, k) != getattr(base, k)]
    state.config = _make_valid(config, base, changed, state.notes)
    if state.config != config and state.autorun:
        state.autorun = False
        state.notes.append("The link asked to start the experiment; it was not started because its settings "
                            "had to be changed. Check them and press the button to start.")
    return state


def _make_valid(config: Config, base: Config, given: list[str], notes: list[str]) -> Config:
    """Reset as few URL-given fields as possible to ``base`` so that the combination is valid.

    One field first, then any two, three, ... (the last given first), so that the link's other values stay; if
    there are too many combinations to try, the fields are reset one by one from the last given.
    """
    errors = config.validate()
    if not errors:
        return config
    notes.append("These settings do not fit together: " + " ".join(errors))
    order = list(reversed(given))
    for size in range(1, len(order) + 1):
        if math.comb(len(order), size) > 500:
            break
        for keys in itertools.combinations(order, size):
            trial = replace(config, **{k: getattr(base, k) for k in keys})
            if not trial.validate():
                notes.extend(f"Reset {k} to {getattr(base, k)}." for k in keys)
                return trial
    for key in order:
        config = replace(config, **{key: getattr(base, key)})
        notes.append(f"Reset {key} to {getattr(base, key)}.")
        if not config.validate():
            return config
    return base if not base.validate() else Config()


def to_query(state: UrlState) -> dict[str, str]:
    """The query parameters for ``shared``: settings that differ from the defaults, hidden controls, options."""
    default = Config().to_dict()
    query = {k: v for k, v in state.config.to_dict().items() if v != default[k]}
    if state.hidden:
        query["hide"] = ",".join(sorted(state.hidden))
    if state.sweep_cells != DEFAULT_SWEEP_CELLS:
        query["sweep_cells"] = ",".join(state.sweep_cells)
    if state.sweep_lengths != DEFAULT_SWEEP_LENGTHS:
        query["sweep_lengths"] = ",".join(map(str, state.sweep_lengths))
    if state.sweep_weights != SWEEP_WEIGHTS[0]:
        query["sweep_weights"] = state.sweep_weights
    for name, text in state.compare.items():
        if text != COMPARE_DEFAULTS[name]:
            query[f"cmp_{name}"] = text.replace(" ", "")
    if state.compare_zero:
        query["compare_zero"] = "1"
    if state.autorun:
        query["run"] = "1"
    return query


def parse_dims(text: str, what: str, max_dims: int = 4, max_size: int = 4096,
               max_elements: int = 65_536) -> tuple[tuple[int, ...], str | None]:
    """'2, 3' -> (2, 3); '' or '()' -> (); a message instead for anything else (e.g. 'x', '0', '-1', too big)."""
    cleaned = str(text).strip().strip("()[]").replace(";", ",")
    parts = [p.strip() for p in cleaned.split(",") if p.strip()]
    dims = tuple(whole(p) for p in parts)
    if None in dims:
        bad = parts[dims.index(None)]
        if not (bad.isascii() and bad.isdigit()):
            return (), f"{what} must be whole numbers separated by commas, e.g. 2, 3 (got '{shorten(text)}')."
    if len(dims) > max_dims or any(d is None or not 1 <= d <= max_size for d in dims):
        return (), f"{what}: at most {max_dims} numbers, each from 1 to {max_size} (got '{shorten(text)}')."
    if math.prod(dims) > max_elements:  # type: ignore[arg-type]
        return (), f"{what}: at most {max_elements} elements in all (got {math.prod(dims)})."  # type: ignore[arg-type]
    return dims, None  # type: ignore[return-value]
