"""The experiment in the URL: query parameters <-> configuration, hidden controls and page options.

A link reproduces an experiment; a teacher hides controls with ``hide=lr,clip`` (or ``lr_hide=1``, as in
TensorFlow Playground). Bad or unknown values fall back to defaults, each with a note to show.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace

from rnnlab.cells import CELLS
from rnnlab.config import Config

CONFIG_KEYS = tuple(f.name for f in fields(Config))
DEFAULT_SWEEP_CELLS = ("gru", "lstm", "simple")
DEFAULT_SWEEP_LENGTHS = (10, 20, 40, 80)
MAX_SWEEP_LENGTHS = 12


@dataclass
class Shared:
    """Everything a URL can carry."""

    config: Config = field(default_factory=Config)
    hidden: frozenset[str] = frozenset()
    sweep_cells: tuple[str, ...] = DEFAULT_SWEEP_CELLS
    sweep_lengths: tuple[int, ...] = DEFAULT_SWEEP_LENGTHS
    compare_zero: bool = False
    autorun: bool = False
    notes: list[str] = field(default_factory=list)


def _first(value) -> str:
    return value[-1] if isinstance(value, (list, tuple)) else str(value)


def parse_lengths(text: str) -> tuple[tuple[int, ...], str | None]:
    """'10, 20,40' -> (10, 20, 40); a message instead when it is not 1-12 whole numbers from 1 to 100000."""
    parts = [p.strip() for p in text.replace(";", ",").split(",") if p.strip()]
    try:
        lengths = tuple(sorted({int(p) for p in parts}))
    except ValueError:
        return (), f"Sequence lengths must be whole numbers separated by commas (got '{text}')."
    if not lengths or len(lengths) > MAX_SWEEP_LENGTHS or lengths[0] < 1 or lengths[-1] > 100_000:
        return (), f"Give 1 to {MAX_SWEEP_LENGTHS} sequence lengths from 1 to 100000 (got '{text}')."
    return lengths, None


def parse_cells(text: str) -> tuple[tuple[str, ...], str | None]:
    """'gru,lstm' -> ('gru', 'lstm'); a message for unknown or spatial cells (the sweep uses vector tasks)."""
    cells = tuple(dict.fromkeys(c.strip() for c in text.split(",") if c.strip()))
    bad = [c for c in cells if c not in CELLS or CELLS[c].spatial]
    if bad or not cells:
        usable = ", ".join(n for n, c in CELLS.items() if not c.spatial)
        return (), f"Unknown or unusable cell(s) '{', '.join(bad) or text}' for the sweep; use: {usable}."
    return cells, None


def parse_query(params: Mapping[str, str | list[str]], base: Config | None = None) -> Shared:
    """Read a URL's query parameters. Never raises: what cannot be used is reported in ``notes``."""
    base = base or Config()
    raw = {k: _first(v) for k, v in params.items()}
    shared = Shared(config=base)
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
        shared.notes.append(f"Cannot hide unknown control(s): {', '.join(unknown_hidden)}.")
    shared.hidden = frozenset(hidden & set(CONFIG_KEYS))

    if "sweep_cells" in raw:
        cells, error = parse_cells(raw.pop("sweep_cells"))
        if error:
            shared.notes.append(error + " Kept the default cells.")
        else:
            shared.sweep_cells = cells
    if "sweep_lengths" in raw:
        lengths, error = parse_lengths(raw.pop("sweep_lengths"))
        if error:
            shared.notes.append(error + " Kept the default lengths.")
        else:
            shared.sweep_lengths = lengths
    for flag in ("compare_zero", "run"):
        if flag in raw:
            value = raw.pop(flag).strip().lower()
            on = value in ("1", "true", "yes")
            if not on and value not in ("0", "false", "no"):
                shared.notes.append(f"Ignored {flag}={value!r}: use 1 or 0.")
            setattr(shared, "autorun" if flag == "run" else flag, on)

    config, notes = Config.from_dict(raw, base)
    shared.notes.extend(notes)
    changed = [k for k in raw if k in CONFIG_KEYS and getattr(config, k) != getattr(base, k)]
    shared.config = _make_valid(config, base, changed, shared.notes)
    return shared


def _make_valid(config: Config, base: Config, given: list[str], notes: list[str]) -> Config:
    """Revert URL-given fields (last given first) to ``base`` until the combination is valid."""
    errors = config.validate()
    if not errors:
        return config
    notes.append("These settings do not fit together: " + " ".join(errors))
    for key in reversed(given):
        config = replace(config, **{key: getattr(base, key)})
        notes.append(f"Reset {key} to {getattr(base, key)}.")
        if not config.validate():
            return config
    return base if not base.validate() else Config()


def to_query(shared: Shared) -> dict[str, str]:
    """The query parameters for ``shared``: settings that differ from the defaults, hidden controls, options."""
    default = Config().to_dict()
    query = {k: v for k, v in shared.config.to_dict().items() if v != default[k]}
    if shared.hidden:
        query["hide"] = ",".join(sorted(shared.hidden))
    if shared.sweep_cells != DEFAULT_SWEEP_CELLS:
        query["sweep_cells"] = ",".join(shared.sweep_cells)
    if shared.sweep_lengths != DEFAULT_SWEEP_LENGTHS:
        query["sweep_lengths"] = ",".join(map(str, shared.sweep_lengths))
    if shared.compare_zero:
        query["compare_zero"] = "1"
    if shared.autorun:
        query["run"] = "1"
    return query


def parse_dims(text: str, what: str, max_dims: int = 4, max_size: int = 4096,
               max_elements: int = 65_536) -> tuple[tuple[int, ...], str | None]:
    """'2, 3' -> (2, 3); '' or '()' -> (); a message instead for anything else (e.g. 'x', '0', '-1', too big)."""
    cleaned = text.strip().strip("()[]").replace(";", ",")
    parts = [p.strip() for p in cleaned.split(",") if p.strip()]
    if not all(p.isdigit() for p in parts):
        return (), f"{what} must be whole numbers separated by commas, e.g. 2, 3 (got '{text}')."
    dims = tuple(int(p) for p in parts)
    if len(dims) > max_dims or any(not 1 <= d <= max_size for d in dims):
        return (), f"{what}: at most {max_dims} numbers, each from 1 to {max_size} (got '{text}')."
    if math.prod(dims) > max_elements:
        return (), f"{what}: at most {max_elements} elements in all (got {math.prod(dims)})."
    return dims, None
