"""One-click experiments, each chosen to teach one thing. Each is a URL query for a page.

A preset's words are English, marked for the catalog: its title, question and choices are translated where they
are shown (``_(preset.title)``); its lesson is a kept message (:class:`~rnnlab.i18n.Msg`) whose numbers are named
placeholders, so that every language writes the same numbers its own way (``preset.lesson``, ``preset.numbers``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from rnnlab.config import Config
from rnnlab.grids import DEFAULT_SWEEP_CELLS, DEFAULT_SWEEP_LENGTHS, SWEEP_WEIGHTS
from rnnlab.i18n import N_, Msg, MsgN
from rnnlab.sharing.urlstate import UrlState, to_query


@dataclass(frozen=True)
class Preset:
    """An experiment as a short lesson: predict (a question and its choices), run (the link), explain."""

    key: str
    title: str  # English, marked for the catalog: translate where shown
    explanation: Msg  # the lesson: what the run shows, its numbers as values (the tests check each claim)
    page: str  # "explore" or "gradients"
    config: Config = field(default_factory=Config)
    question: str = ""  # English, marked for the catalog, as are the choices
    choices: tuple[str, ...] = ()
    answer: int = 0  # the index of the choice the lesson confirms
    sweep_cells: tuple[str, ...] = DEFAULT_SWEEP_CELLS
    sweep_lengths: tuple[int, ...] = DEFAULT_SWEEP_LENGTHS
    compare_zero: bool = False
    sweep_weights: str = SWEEP_WEIGHTS[0]

    @property
    def lesson(self) -> str:
        """The lesson in the reader's language, its numbers written that language's way."""
        return str(self.explanation)

    @property
    def numbers(self) -> dict[str, Any]:
        """The lesson's numbers by placeholder name (a counted lesson's count is ``n``)."""
        counted = {"n": self.explanation.n} if self.explanation.counted else {}
        return {**counted, **self.explanation.values}

    def query(self, lang: str | None = None) -> dict[str, str]:
        """Query parameters that open this preset and start it, in ``lang`` when the reader chose a language."""
        return to_query(UrlState(config=self.config, sweep_cells=self.sweep_cells,
                               sweep_lengths=self.sweep_lengths, compare_zero=self.compare_zero,
                               sweep_weights=self.sweep_weights, autorun=True, lang=lang))


PRESETS: list[Preset] = [
    Preset("gru_adding", N_("A GRU solves the adding problem (T = 100)"),
           # TRANSLATORS: {n} is the sequence length (100); {baseline} is the memoryless loss, written 1/6.
           MsgN("Gates let a GRU carry two numbers across {n} step: the loss falls far below the {baseline} "
                "baseline within a few hundred steps.",
                "Gates let a GRU carry two numbers across {n} steps: the loss falls far below the {baseline} "
                "baseline within a few hundred steps.", 100, baseline=Fraction(1, 6)),
           "explore", Config(),
           question=N_("After 300 training steps, where is the GRU's evaluation loss?"),
           choices=(N_("At the 1/6 baseline: it cannot remember"), N_("Far below the baseline"),
                    N_("Above the baseline")),
           answer=1),
    Preset("simple_adding", N_("A simple RNN fails at the same task"),
           # TRANSLATORS: {n} is the sequence length (100).
           MsgN("Without gates the gradient vanishes through {n} tanh step: the simple cell stays at the "
                "baseline, predicting the mean.",
                "Without gates the gradient vanishes through {n} tanh steps: the simple cell stays at the "
                "baseline, predicting the mean.", 100),
           "explore", Config(cell="simple"),
           question=N_("Same task, same 300 steps, no gates: where is the simple RNN's evaluation loss?"),
           choices=(N_("At the baseline: it predicts the mean"), N_("Far below the baseline, like the GRU")),
           answer=0),
    Preset("sine_zero_vs_learned", N_("Zero versus learned initial carry (sine)"),
           Msg("The phase is nearly the same in every sequence, so a learned carry can encode it: over the first "
               "steps its loss is several times lower than a zero carry's (the number is under the chart). After "
               "one period of input the cell continues the curve alone, far below the memoryless line."),
           "explore", Config(task="sine", cell="lstm", seq_len=40, features=32, steps=200, lr=5e-3),
           compare_zero=True,
           question=N_("Over the first few time steps, which initial carry gives the lower loss?"),
           choices=(N_("The zero carry"), N_("The learned carry"),
                    N_("No difference: the carry is forgotten at once")),
           answer=1),
    Preset("gates_keep_the_gradient", N_("Gates keep the gradient alive: GRU and LSTM against a simple RNN"),
           # TRANSLATORS: {low}, {high} and {kept} are factors per step back (0.70, 0.85, 0.95); {T_min} and {T_max}
           # are the shortest and longest sequence lengths of the sweep.
           Msg("Before training, gated or not, every cell multiplies the gradient by {low:.2f} to {high:.2f} at "
               "each step back. After a moment of training on the adding problem, the gradient reaching the initial "
               "carry is measured again at T = {T_min} to {T_max}: the GRU and the LSTM now multiply it by more "
               "than {kept:.2f} per step back, as their gates have learned to hold it. The simple cell has no gate "
               "to learn: what it keeps is left to its weights, and it changes from one seed to the next far more "
               "than theirs.", low=0.7, high=0.85, kept=0.95, T_min=10, T_max=160),
           "gradients", Config(), sweep_lengths=(10, 20, 40, 80, 160),
           question=N_("After a moment of training, how much of the gradient do the GRU and the LSTM keep at each "
                       "step back?"),
           choices=(N_("Almost all of it"), N_("About three quarters, as before training"),
                    N_("Less than before training")), answer=0),
    Preset("lstm_h0_50_vs_500", N_("An untrained LSTM's gradient to the initial carry: T = 50 vs T = 500"),
           # TRANSLATORS: {n} is how many orders of magnitude smaller (46); {at_short} and {at_long} are the
           # gradient's sizes at T = {short} and T = {long}; {f32_min} is float32's smallest normal number.
           MsgN("The gradient that reaches the initial carry is the last term of a product of Jacobians, one per "
                "step: before training it is about {at_short:.2g} at T = {short} and about {at_long:.2g} at "
                "T = {long}, {n} order of magnitude smaller and far below float32's smallest normal number "
                "({f32_min:.2g}), where a float32 backward pass gives exactly 0. The probe keeps its size as a "
                "logarithm, so the chart and the table show it.",
                "The gradient that reaches the initial carry is the last term of a product of Jacobians, one per "
                "step: before training it is about {at_short:.2g} at T = {short} and about {at_long:.2g} at "
                "T = {long}, {n} orders of magnitude smaller and far below float32's smallest normal number "
                "({f32_min:.2g}), where a float32 backward pass gives exactly 0. The probe keeps its size as a "
                "logarithm, so the chart and the table show it.",
                46, at_short=1.6e-07, short=50, at_long=5.5e-54, long=500, f32_min=1.2e-38),
           "gradients", Config(cell="lstm", seq_len=50), sweep_cells=("lstm",), sweep_lengths=(50, 500),
           sweep_weights="untrained",
           question=N_("Before training, how large is the gradient that reaches an LSTM's initial carry at "
                       "T = 500?"),
           choices=(N_("About the same as at T = 50"),
                    N_("Dozens of orders of magnitude smaller: below float32's range"), N_("Larger than at T = 50")),
           answer=1),
    Preset("simple_3000_steps", N_("A simple RNN's gradient across 3000 steps: one straight line"),
           # TRANSLATORS: {rate} is the factor per step back (0.87); {last} and {first} are the gradient's sizes at
           # the last step and at the initial carry; the gradient falls below {f32_min} at step {t}, {n} steps
           # before the last.
           MsgN("Each step back multiplies the gradient by the same factor on average, so on a log axis it is one "
                "straight line: ×{rate:.2f} per step back for this untrained simple cell, from about {last:.2f} "
                "at the last step down to about {first:.1g} at the initial carry. It falls below float32's "
                "smallest normal number ({f32_min:.2g}) at t = {t}, {n} step before the last: a float32 backward "
                "pass gives exactly 0 for every earlier step. The sweep against T finds the same factor per step.",
                "Each step back multiplies the gradient by the same factor on average, so on a log axis it is one "
                "straight line: ×{rate:.2f} per step back for this untrained simple cell, from about {last:.2f} "
                "at the last step down to about {first:.1g} at the initial carry. It falls below float32's "
                "smallest normal number ({f32_min:.2g}) at t = {t}, {n} steps before the last: a float32 backward "
                "pass gives exactly 0 for every earlier step. The sweep against T finds the same factor per step.",
                641, rate=0.87, last=0.44, first=7e-180, f32_min=1.2e-38, t=2359),
           "gradients", Config(cell="simple", features=8, batch=8, seq_len=3000), sweep_cells=("simple",),
           sweep_lengths=(1000, 2000, 3000), sweep_weights="untrained",
           question=N_("How does the gradient shrink over 3000 steps back through a simple RNN, on a log axis?"),
           choices=(N_("One straight line: the same factor every step"), N_("Fast at first, then it levels off"),
                    N_("It stops at float32's smallest number")),
           answer=0),
    Preset("copy_gru", N_("The copy task against its baseline"),
           # TRANSLATORS: {n} is the number of data symbols (8); {baseline} is a formula, 10 ln 8 / (T + 20).
           MsgN("Predicting blanks and guessing the {n} symbol already reaches {baseline}; only a cell that "
                "remembers the symbols goes below that line, as this GRU does within a few hundred steps.",
                "Predicting blanks and guessing the {n} symbols already reaches {baseline}; only a cell that "
                "remembers the symbols goes below that line, as this GRU does within a few hundred steps.",
                8, baseline="10 ln 8 / (T + 20)"),
           "explore", Config(task="copy", seq_len=20, features=128, steps=600, lr=5e-3),
           question=N_("Can a GRU beat the copy task's baseline (blanks, then a guess among 8 symbols)?"),
           choices=(N_("Yes, within a few hundred steps"), N_("No, it stays on the baseline")), answer=0),
    Preset("noisy_carry_adding", N_("A noisy initial carry makes the model robust to where it starts"),
           # TRANSLATORS: N(0, {scale}) is a normal distribution of mean 0 and standard deviation {scale} (0.5).
           Msg("Redrawing the initial carry for every batch (the noisy-state trick) trains the cell to work from "
               "any start. Started from fresh N(0, {scale}) carries, its loss is about ten times lower than that "
               "of the same cell trained from a zero carry.",
               scale=0.5),
           "explore", Config(seq_len=10, carry_mode="noisy", carry_init="normal", carry_scale=0.5),
           compare_zero=True,
           question=N_("Started from fresh random carries, which cell does better?"),
           choices=(N_("The one trained with a noisy carry"), N_("The one trained from a zero carry"),
                    N_("Neither")),
           answer=0),
]

PRESETS_BY_KEY = {p.key: p for p in PRESETS}
