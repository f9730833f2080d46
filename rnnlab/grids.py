"""What a grid of runs may vary, and the grids' defaults: Compare's grid and Gradient flow's decay sweep.

Declared once here and read by the pages' controls, the URL, the command line and the sweeps themselves
(:mod:`rnnlab.figures.compare_words` says what a sweep keeps in English in the reader's language).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rnnlab.i18n import N_, _, join_list, t
from rnnlab.model.cells import CARRY_INITS, CELLS
from rnnlab.model.network import CARRY_MODES, carry_mode_label, carry_mode_phrase
from rnnlab.text import parse_float, parse_int

DEFAULT_SWEEP_CELLS = ("gru", "lstm", "simple")  # the decay sweep's default: two gated cells and the plain one
DEFAULT_SWEEP_LENGTHS = (10, 20, 40, 80)
SWEEP_TRAINING = {"seq_len": 40, "steps": 300}  # how the decay sweep's "trained" weights are made
SWEEP_WEIGHTS = ("trained", "untrained")


def named_piece(name: str) -> Callable[[object], str]:
    """A value's label piece in English for a field without words of its own: 'features 64'."""
    return lambda value: f"{name} {value}"


@dataclass(frozen=True)
class SweepField:
    """One field a sweep may vary: its label, its choices (a registry) or how to parse typed values, what its
    control's help says, and how a value is named: in a run's label in English (``piece_en``, kept by the CSV), in
    the reader's language (``piece``) and as a multiselect's option (``option``). ``in_label``: whether a run's
    label names it (seeds of one setting share a label). ``label`` and ``help`` are marked for the catalog
    (English): :attr:`shown_label` and :attr:`shown_help` are the reader's words."""

    name: str
    label: str
    choices: dict | None = None  # registry of names, or None for typed numbers
    parse_one: Callable[[str], object] | None = None
    help: str = ""
    piece_en: Callable[[object], str] | None = None
    piece: Callable[[object], str] | None = None
    option: Callable[[object], str] = str
    in_label: bool = True

    @property
    def shown_label(self) -> str:
        """The label in the reader's language."""
        return _(self.label)

    @property
    def shown_help(self) -> str:
        """The help in the reader's language ("" when there is none)."""
        return _(self.help) if self.help else ""

    def parse(self, text: str) -> list:
        """'0.01, 0.1' -> [0.01, 0.1] (duplicates dropped, order kept); ValueError with a readable message (in the
        reader's language: it is raised where the value is typed or read from the link)."""
        parts = [p.strip() for p in str(text).replace(";", ",").split(",") if p.strip()]
        values = []
        for part in parts:
            try:
                value = self.parse_one(part) if self.parse_one else part
            except ValueError:
                # TRANSLATORS: {field} is a field's name (e.g. "Learning rate"), {value} what was typed.
                raise ValueError(t("{field}: '{value}' is not a valid value.", field=self.shown_label,
                                   value=part)) from None
            if self.choices is not None and value not in self.choices:
                # TRANSLATORS: {choices} is a list of names, as they are written in a link: "fixed, noisy, learnable".
                raise ValueError(t("{field}: unknown '{value}'; choose from {choices}.", field=self.shown_label,
                                   value=part, choices=", ".join(self.choices))) from None
            values.append(value)
        return list(dict.fromkeys(values))

    def describe(self, value) -> str:
        """A value as a label piece in English, e.g. 'GRU', 'learnable carry', 'lr 0.01'."""
        return (self.piece_en or named_piece(self.name))(value)

    def shown(self, value) -> str:
        """:meth:`describe` in the reader's language (a legend's, a chart's axis' or a table's label piece)."""
        return (self.piece or self.describe)(value)


def cell_label(cell: object) -> str:
    return _(CELLS[str(cell)].label)


def init_piece(init: object) -> str:
    # TRANSLATORS: a run's label piece: the carry_init function it uses, e.g. "init zeros".
    return t("init {name}", name=CARRY_INITS[str(init)].word)


def lr_piece(lr: object) -> str:
    # TRANSLATORS: a run's label piece: its learning rate, e.g. "lr 0.01" ("lr" is the usual abbreviation).
    return t("lr {lr:g}", lr=lr)


def seed_piece(seed: object) -> str:
    # TRANSLATORS: a run's label piece: its random seed, e.g. "seed 2".
    return t("seed {seed}", seed=seed)


def shown_label(config, varying: tuple[str, ...]) -> str:
    """A run's label in the reader's language, from the fields that vary (seed excluded), as
    :func:`rnnlab.sweep.label_of` makes it in English (which the CSV keeps)."""
    parts = [FIELDS[name].shown(getattr(config, name)) for name in varying if FIELDS[name].in_label]
    if not parts:
        parts = [FIELDS[name].shown(getattr(config, name)) for name in ("cell", "carry_mode", "carry_init")]
    return join_list(parts)


SWEEP_FIELDS: tuple[SweepField, ...] = (
    SweepField("carry_mode", N_("Carry mode"), CARRY_MODES,
               help=N_("fixed: sampled once per run from carry_init (not trained). noisy: resampled from carry_init "
                       "for every batch (not trained). learnable: a parameter initialised by carry_init and trained "
                       "with the weights."),
               piece_en=lambda mode: f"{mode} carry", piece=lambda mode: str(carry_mode_phrase(str(mode))),
               option=lambda mode: carry_mode_label(str(mode))),
    SweepField("carry_init", N_("carry_init"), CARRY_INITS,
               help=N_("Each initialiser uses the sidebar's initialiser parameter where it has one."),
               piece_en=lambda init: f"init {init}", piece=init_piece, option=lambda init: CARRY_INITS[str(init)].word),
    SweepField("cell", N_("Cell"), CELLS, piece_en=lambda cell: CELLS[str(cell)].label, piece=cell_label,
               option=cell_label),
    SweepField("lr", N_("Learning rate"), None, parse_float,
               help=N_("Comma-separated, e.g. 0.003, 0.01, 0.03. They share one compiled program."),
               piece_en=lambda lr: f"lr {lr:g}", piece=lr_piece),
    SweepField("seed", N_("Seed"), None, parse_int,
               help=N_("Comma-separated, e.g. 0, 1, 2. Seeds of one setting are drawn as a mean and a band."),
               piece=seed_piece, in_label=False),
)
FIELDS: dict[str, SweepField] = {f.name: f for f in SWEEP_FIELDS}
# What the Compare page varies before anyone changes it (comma-separated, as typed; empty: the base's value):
# a GRU against a simple RNN, three seeds each (does gating help?).
COMPARE_DEFAULTS: dict[str, str] = {"carry_mode": "", "carry_init": "", "cell": "gru, simple", "lr": "",
                                    "seed": "0, 1, 2"}
