"""The experiment in the URL: query parameters <-> configuration, hidden controls and page options.

A link reproduces an experiment; a teacher hides controls with ``hide=lr,clip`` (or ``lr_hide=1``, as in
TensorFlow Playground). Bad or unknown values fall back to defaults, each with a note to show.
The settings' keys come from :data:`rnnlab.config.SETTINGS`; every other key is one :class:`UrlKey` of
:data:`URL_KEYS`, which both :func:`parse_query` and :func:`to_query` read.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from rnnlab.config import CONTROL_RANGES, Config
from rnnlab.grids import COMPARE_DEFAULTS, DEFAULT_SWEEP_CELLS, DEFAULT_SWEEP_LENGTHS, FIELDS, SWEEP_WEIGHTS
from rnnlab.i18n import LANGUAGES, parse_language
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
    lang: str | None = None  # the interface's language when the link chose one ('en', 'zh', 'ru')
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
    lengths = tuple(sorted({n for n in numbers if n is not None}))
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


@dataclass(frozen=True)
class UrlKey:
    """One URL key besides the settings (:data:`rnnlab.config.SETTINGS`) and the hidden controls.

    ``read(text)`` gives the value, or raises ValueError with the reason; the value then stays UrlState's
    default and ``bad`` is the note, formatted with ``key``, ``reason`` and ``value`` (the text stripped, in
    lower case, shortened). ``attr`` is where the value goes in :class:`UrlState` (``entry``: the item of a
    dict field); ``write(value)`` is its text in a link, written only when it differs from the default.
    """

    name: str
    attr: str
    read: Callable[[str], Any]
    write: Callable[[Any], str]
    bad: str
    entry: str | None = None

    def get(self, state: UrlState) -> Any:
        """This key's value in ``state``."""
        value = getattr(state, self.attr)
        return value if self.entry is None else value[self.entry]

    def put(self, state: UrlState, value: Any) -> None:
        """Set this key's value in ``state``."""
        if self.entry is None:
            setattr(state, self.attr, value)
        else:
            getattr(state, self.attr)[self.entry] = value

    def note(self, text: str, reason: str) -> str:
        """The note for a ``text`` that cannot be used, and why."""
        return self.bad.format(key=self.name, reason=reason, value=shorten(text.strip().lower()))


ON, OFF = ("1", "true", "yes"), ("0", "false", "no")  # how a flag is written


def _read_cells(text: str) -> tuple[str, ...]:
    cells, error = parse_cells(text)
    if error:
        raise ValueError(error)
    return cells


def _read_lengths(text: str) -> tuple[int, ...]:
    lengths, error = parse_lengths(text)
    if error:
        raise ValueError(error)
    return lengths


def _read_weights(text: str) -> str:
    weights = text.strip().lower()
    if weights not in SWEEP_WEIGHTS:
        raise ValueError(f"use {' or '.join(SWEEP_WEIGHTS)}.")
    return weights


def _read_flag(text: str) -> bool:
    value = text.strip().lower()
    if value not in ON + OFF:
        raise ValueError("use 1 or 0.")
    return value in ON


def _read_lang(text: str) -> str:
    lang = parse_language(text)
    if lang is None:
        raise ValueError(", ".join(LANGUAGES))
    return lang


def _compare_key(name: str) -> UrlKey:
    """``cmp_<name>``: what the Compare page varies for one sweep field, as typed (duplicates dropped)."""
    return UrlKey(f"cmp_{name}", "compare", lambda text: ", ".join(map(str, FIELDS[name].parse(text))),
                  lambda text: text.replace(" ", ""), "{reason} Kept the Compare page's default for it.", entry=name)


IGNORED = "Ignored {key}={value!r}: {reason}"
URL_KEYS: tuple[UrlKey, ...] = (
    UrlKey("sweep_cells", "sweep_cells", _read_cells, ",".join, "{reason} Kept the default cells."),
    UrlKey("sweep_lengths", "sweep_lengths", _read_lengths, lambda v: ",".join(map(str, v)),
           "{reason} Kept the default lengths."),
    UrlKey("sweep_weights", "sweep_weights", _read_weights, str, IGNORED),
    *(_compare_key(name) for name in COMPARE_DEFAULTS),
    UrlKey("compare_zero", "compare_zero", _read_flag, lambda on: "1", IGNORED),
    UrlKey("run", "autorun", _read_flag, lambda on: "1", IGNORED),
    UrlKey("lang", "lang", _read_lang, str, "Ignored lang={value!r}: use {reason}."),
)
KNOWN_KEYS = frozenset(CONFIG_KEYS) | {"hide"} | {key.name for key in URL_KEYS}


def parse_query(params: Mapping[str, str | list[str]], base: Config | None = None) -> UrlState:
    """Read a URL's query parameters. Never raises: what cannot be used is reported in ``notes``.

    Each value that cannot be used keeps the default (``base``); when the values that can be used do not fit
    together (a cell/task pair, a sequence too short for the task, a memory estimate over the budget) the
    link's values are reset one by one, and a link that asked to start (``run=1``) does not start.
    """
    base = base or Config()
    state = UrlState(config=base)
    raw = _known_values(params, state.notes)
    state.hidden = _read_hidden(raw, state.notes)
    for key in URL_KEYS:
        if key.name in raw:
            text = raw.pop(key.name)
            try:
                key.put(state, key.read(text))
            except ValueError as e:
                state.notes.append(key.note(text, str(e)))
    config = _read_config(raw, base, state.notes)
    changed = [k for k in raw if k in CONFIG_KEYS and getattr(config, k) != getattr(base, k)]
    state.config = _make_valid(config, base, changed, state.notes)
    if state.config != config and state.autorun:
        state.autorun = False
        state.notes.append("The link asked to start the experiment; it was not started because its settings "
                            "had to be changed. Check them and press the button to start.")
    return state


def _known_values(params: Mapping[str, str | list[str]], notes: list[str]) -> dict[str, str]:
    """The values of the known keys (the last of a list), with a note for each unknown key or over-long value."""
    raw: dict[str, str] = {}
    unknown: list[str] = []
    for key, value in params.items():
        key, value = str(key), _first(value)
        if key not in KNOWN_KEYS and not key.endswith("_hide"):
            unknown.append(key)
        elif len(value) > MAX_VALUE_CHARS:
            notes.append(f"Ignored {shorten(key)}: its value is {len(value):,} characters long.")
        else:
            raw[key] = value
    notes.extend(f"Ignored unknown setting '{shorten(k)}'." for k in unknown[:MAX_NOTED_UNKNOWN])
    if len(unknown) > MAX_NOTED_UNKNOWN:
        notes.append(f"Ignored {len(unknown) - MAX_NOTED_UNKNOWN} more unknown settings.")
    return raw


def _read_hidden(raw: dict[str, str], notes: list[str]) -> frozenset[str]:
    """Take ``hide=a,b`` and ``<name>_hide=1`` out of ``raw``: the controls to hide (unknown ones get a note)."""
    hidden = set()
    for key, value in list(raw.items()):
        if key.endswith("_hide"):
            raw.pop(key)
            if value.strip().lower() in ON:
                hidden.add(key[: -len("_hide")])
    if "hide" in raw:
        hidden.update(h.strip() for h in raw.pop("hide").split(",") if h.strip())
    unknown_hidden = sorted(hidden - set(CONFIG_KEYS))
    if unknown_hidden:
        notes.append(f"Cannot hide unknown control(s): {shorten(', '.join(unknown_hidden), 80)}.")
    return frozenset(hidden & set(CONFIG_KEYS))


def _read_config(raw: dict[str, str], base: Config, notes: list[str]) -> Config:
    """The settings in ``raw`` over ``base``; a number outside its control's range keeps ``base``'s value."""
    config, config_notes = Config.from_dict(raw, base)
    notes.extend(config_notes)
    for key, (lo, hi) in CONTROL_RANGES.items():
        value = getattr(config, key)
        if key in raw and value != getattr(base, key) and not lo <= value <= hi:
            config = replace(config, **{key: getattr(base, key)})
            notes.append(f"Ignored {key}={shorten(raw[key])!r}: the control accepts {lo:g} to {hi:g}; "
                         f"kept {getattr(base, key)}.")
    return config


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
    """The query parameters for ``state``: settings that differ from the defaults, hidden controls, options."""
    default_config, default = Config().to_dict(), UrlState()
    query = {k: v for k, v in state.config.to_dict().items() if v != default_config[k]}
    if state.hidden:
        query["hide"] = ",".join(sorted(state.hidden))
    query.update({key.name: key.write(key.get(state)) for key in URL_KEYS if key.get(state) != key.get(default)})
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
