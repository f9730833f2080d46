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

from rnnlab.config import CONTROL_RANGES, SETTING, Config
from rnnlab.grids import COMPARE_DEFAULTS, DEFAULT_SWEEP_CELLS, DEFAULT_SWEEP_LENGTHS, FIELDS, SWEEP_WEIGHTS
from rnnlab.i18n import LANGUAGES, N_, bilingual, join_sentences, parse_language, t, tn
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
        return (), t("Give at least one sequence length, e.g. 10, 20, 40.")
    numbers = [whole(p) for p in parts]
    if None in numbers:
        bad = parts[numbers.index(None)]
        if bad.lstrip("-").isascii() and bad.lstrip("-").isdigit():
            # TRANSLATORS: {text} is what was typed, shown as it is.
            return (), t("Sequence lengths must be from 1 to {high} (got '{text}').", high=MAX_SWEEP_LENGTH,
                         text=shorten(bad))
        # TRANSLATORS: {text} is what was typed, shown as it is.
        return (), t("Sequence lengths must be whole numbers separated by commas (got '{text}').",
                     text=shorten(text))
    lengths = tuple(sorted({n for n in numbers if n is not None}))
    if len(lengths) > MAX_SWEEP_LENGTHS or lengths[0] < 1 or lengths[-1] > MAX_SWEEP_LENGTH:
        # TRANSLATORS: {most} is how many lengths a sweep may have; {text} is what was typed, shown as it is.
        return (), t("Give 1 to {most} sequence lengths from 1 to {high} (got '{text}').", most=MAX_SWEEP_LENGTHS,
                     high=MAX_SWEEP_LENGTH, text=shorten(text))
    return lengths, None


def parse_cells(text: str) -> tuple[tuple[str, ...], str | None]:
    """'gru,lstm' -> ('gru', 'lstm'); a message for unknown or spatial cells (the sweep uses vector tasks)."""
    cells = tuple(dict.fromkeys(c.strip() for c in str(text).split(",") if c.strip()))
    usable = ", ".join(n for n, c in CELLS.items() if not c.spatial)
    if not cells:
        # TRANSLATORS: {cells} lists the ids of the cells a sweep can use (gru, lstm, ...).
        return (), t("Pick at least one cell for the sweep ({cells}).", cells=usable)
    bad = [c for c in cells if c not in CELLS or CELLS[c].spatial]
    if bad:
        # TRANSLATORS: {bad} is what was asked, shown as it is; {cells} lists the ids of the usable cells.
        return (), tn("Unknown or unusable cell '{bad}' for the sweep; use: {cells}.",
                      "Unknown or unusable cells '{bad}' for the sweep; use: {cells}.", len(bad),
                      bad=shorten(", ".join(bad)), cells=usable)
    return cells, None


@dataclass(frozen=True)
class UrlKey:
    """One URL key besides the settings (:data:`rnnlab.config.SETTINGS`) and the hidden controls.

    ``read(text)`` gives the value, or raises ValueError with the reason (in the reader's language); the value then
    stays UrlState's default and ``bad`` is the note (English, marked for the catalog), translated and filled with
    ``key``, ``reason`` and ``value`` (the text stripped, in lower case, shortened). A ``bilingual`` note is followed
    by its English when the reader's language is another, for a reader who chose a language by mistake.
    ``attr`` is where the value goes in :class:`UrlState` (``entry``: the item of a
    dict field); ``write(value)`` is its text in a link, written only when it differs from the default.
    """

    name: str
    attr: str
    read: Callable[[str], Any]
    write: Callable[[Any], str]
    bad: str
    entry: str | None = None
    bilingual: bool = False

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
        values = dict(key=self.name, reason=reason, value=shorten(text.strip().lower()))
        return bilingual(self.bad, **values) if self.bilingual else t(self.bad, **values)


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
        trained, untrained = SWEEP_WEIGHTS
        # TRANSLATORS: {trained} and {untrained} are the values a link may give (trained, untrained), as they are.
        raise ValueError(t("use {trained} or {untrained}.", trained=trained, untrained=untrained))
    return weights


def _read_flag(text: str) -> bool:
    value = text.strip().lower()
    if value not in ON + OFF:
        raise ValueError(t("use 1 or 0."))
    return value in ON


def _read_lang(text: str) -> str:
    lang = parse_language(text)
    if lang is None:
        raise ValueError(", ".join(LANGUAGES))
    return lang


def _compare_key(name: str) -> UrlKey:
    """``cmp_<name>``: what the Compare page varies for one sweep field, as typed (duplicates dropped)."""
    return UrlKey(f"cmp_{name}", "compare", lambda text: ", ".join(map(str, FIELDS[name].parse(text))),
                  lambda text: text.replace(" ", ""),
                  # TRANSLATORS: {reason} is a sentence saying what is wrong with a value of the link.
                  N_("{reason} Kept the Compare page's default for it."), entry=name)


# TRANSLATORS: {key}={value!r} is what the link asked ("run='maybe'"); {reason} says what it may be instead.
IGNORED = N_("Ignored {key}={value!r}: {reason}")
URL_KEYS: tuple[UrlKey, ...] = (
    # TRANSLATORS: {reason} is a sentence saying what is wrong with the link's cells.
    UrlKey("sweep_cells", "sweep_cells", _read_cells, ",".join, N_("{reason} Kept the default cells.")),
    UrlKey("sweep_lengths", "sweep_lengths", _read_lengths, lambda v: ",".join(map(str, v)),
           # TRANSLATORS: {reason} is a sentence saying what is wrong with the link's sequence lengths.
           N_("{reason} Kept the default lengths.")),
    UrlKey("sweep_weights", "sweep_weights", _read_weights, str, IGNORED),
    *(_compare_key(name) for name in COMPARE_DEFAULTS),
    UrlKey("compare_zero", "compare_zero", _read_flag, lambda on: "1", IGNORED),
    UrlKey("run", "autorun", _read_flag, lambda on: "1", IGNORED),
    # TRANSLATORS: {value!r} is the language the link asked for ('xx'); {reason} lists the app's: en, zh, ru.
    UrlKey("lang", "lang", _read_lang, str, N_("Ignored lang={value!r}: use {reason}."), bilingual=True),
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
        state.notes.append(t("The link asked to start the experiment; it was not started because its settings "
                             "had to be changed. Check them and press the button to start."))
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
            # TRANSLATORS: {key} is a key of the link; {n:,} how many characters its value has.
            notes.append(tn("Ignored {key}: its value is {n:,} character long.",
                            "Ignored {key}: its value is {n:,} characters long.", len(value), key=shorten(key)))
        else:
            raw[key] = value
    notes.extend(t("Ignored unknown setting '{key}'.", key=shorten(k)) for k in unknown[:MAX_NOTED_UNKNOWN])
    if len(unknown) > MAX_NOTED_UNKNOWN:
        more = len(unknown) - MAX_NOTED_UNKNOWN
        notes.append(tn("Ignored {n} more unknown setting.", "Ignored {n} more unknown settings.", more))
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
        # TRANSLATORS: {names} lists the ids the link asked to hide, as they are.
        notes.append(tn("Cannot hide unknown control: {names}.", "Cannot hide unknown controls: {names}.",
                        len(unknown_hidden), names=shorten(", ".join(unknown_hidden), 80)))
    return frozenset(hidden & set(CONFIG_KEYS))


def _read_config(raw: dict[str, str], base: Config, notes: list[str]) -> Config:
    """The settings in ``raw`` over ``base``; a number outside its control's range keeps ``base``'s value."""
    config, config_notes = Config.from_dict(raw, base)
    notes.extend(config_notes)
    for key, (lo, hi) in CONTROL_RANGES.items():
        value = getattr(config, key)
        if key in raw and value != getattr(base, key) and not lo <= value <= hi:
            config = replace(config, **{key: getattr(base, key)})
            # TRANSLATORS: {key}={value!r} is what the link asked ("lr='1e9'"); {kept} the value kept.
            notes.append(t("Ignored {key}={value!r}: the control accepts {lo:g} to {hi:g}; kept {kept}.", key=key,
                           value=shorten(raw[key]), lo=lo, hi=hi, kept=getattr(base, key)))
    return config


def _make_valid(config: Config, base: Config, given: list[str], notes: list[str]) -> Config:
    """Reset as few URL-given fields as possible to ``base`` so that the combination is valid.

    One field first, then any two, three, ... (the last given first), so that the link's other values stay; if
    there are too many combinations to try, the fields are reset one by one from the last given.
    """
    errors = config.validate()
    if not errors:
        return config
    # TRANSLATORS: {errors} is one or more sentences saying what does not fit.
    notes.append(t("These settings do not fit together: {errors}", errors=join_sentences(*errors)))
    order = list(reversed(given))
    for size in range(1, len(order) + 1):
        if math.comb(len(order), size) > 500:
            break
        for keys in itertools.combinations(order, size):
            trial = replace(config, **{k: getattr(base, k) for k in keys})
            if not trial.validate():
                notes.extend(_reset(k, getattr(base, k)) for k in keys)
                return trial
    for key in order:
        config = replace(config, **{key: getattr(base, key)})
        notes.append(_reset(key, getattr(base, key)))
        if not config.validate():
            return config
    return base if not base.validate() else Config()


def _reset(key: str, value: object) -> str:
    setting = SETTING.get(key)
    if setting is None:
        # TRANSLATORS: {key} is a setting's id (cell, seq_len...), {value} the value it went back to.
        return t("Reset {key} to {value}.", key=key, value=value)
    # TRANSLATORS: {setting} is a setting's label (Task, Cell), {value} the value it went back to (Adding problem).
    return t("{setting} went back to {value}.", setting=setting.label, value=setting.shown_value(value))


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
            # TRANSLATORS: {what} is the field's label (e.g. 'Batch dims'); {text} what was typed, as it is.
            return (), t("{what} must be whole numbers separated by commas, e.g. 2, 3 (got '{text}').", what=what,
                         text=shorten(text))
    if len(dims) > max_dims or any(d is None or not 1 <= d <= max_size for d in dims):
        # TRANSLATORS: {what} is the field's label (e.g. 'Batch dims'); {text} what was typed, as it is.
        return (), tn("{what}: at most {n} number, each from 1 to {high} (got '{text}').",
                      "{what}: at most {n} numbers, each from 1 to {high} (got '{text}').", max_dims, what=what,
                      high=max_size, text=shorten(text))
    elements = math.prod(dims)  # type: ignore[arg-type]
    if elements > max_elements:
        # TRANSLATORS: {what} is the field's label (e.g. 'Input shape'); {got} how many elements the shape has.
        return (), tn("{what}: at most {n} element in all (got {got}).",
                      "{what}: at most {n} elements in all (got {got}).", max_elements, what=what, got=elements)
    return dims, None  # type: ignore[return-value]
