"""One-click experiments, each chosen to teach one thing. Each is a URL query for a page."""

from __future__ import annotations

from dataclasses import dataclass, field

from rnnlab.config import Config
from rnnlab.grids import DEFAULT_SWEEP_CELLS, DEFAULT_SWEEP_LENGTHS, SWEEP_WEIGHTS
from rnnlab.sharing.urlstate import UrlState, to_query


@dataclass(frozen=True)
class Preset:
    """An experiment as a short lesson: predict (a question and its choices), run (the link), explain."""

    key: str
    title: str
    lesson: str  # the explanation: what the run shows (the slow tests check each claim in numbers)
    page: str  # "explore" or "gradients"
    config: Config = field(default_factory=Config)
    question: str = ""
    choices: tuple[str, ...] = ()
    answer: int = 0  # the index of the choice the lesson confirms
    sweep_cells: tuple[str, ...] = DEFAULT_SWEEP_CELLS
    sweep_lengths: tuple[int, ...] = DEFAULT_SWEEP_LENGTHS
    compare_zero: bool = False
    sweep_weights: str = SWEEP_WEIGHTS[0]

    def query(self) -> dict[str, str]:
        """Query parameters that open this preset and start it."""
        return to_query(UrlState(config=self.config, sweep_cells=self.sweep_cells,
                               sweep_lengths=self.sweep_lengths, compare_zero=self.compare_zero,
                               sweep_weights=self.sweep_weights, autorun=True))


PRESETS: list[Preset] = [
    Preset("gru_adding", "A GRU solves the adding problem (T = 100)",
           "Gates let a GRU carry two numbers across 100 steps: the loss falls far below the 1/6 baseline "
           "within a few hundred steps.", "explore", Config(),
           question="After 300 training steps, where is the GRU's evaluation loss?",
           choices=("At the 1/6 baseline: it cannot remember", "Far below the baseline", "Above the baseline"),
           answer=1),
    Preset("simple_adding", "A simple RNN fails at the same task",
           "Without gates the gradient vanishes through 100 tanh steps: the simple cell stays at the "
           "baseline, predicting the mean.", "explore", Config(cell="simple"),
           question="Same task, same 300 steps, no gates: where is the simple RNN's evaluation loss?",
           choices=("At the baseline: it predicts the mean", "Far below the baseline, like the GRU"), answer=0),
    Preset("sine_zero_vs_learned", "Zero versus learned initial carry (sine)",
           "The phase is nearly the same in every sequence, so a learned carry can encode it: over the first "
           "steps its loss is several times lower than a zero carry's (the number is under the chart). After "
           "one period of input the cell continues the curve alone, far below the memoryless line.",
           "explore", Config(task="sine", cell="lstm", seq_len=40, features=32, steps=200, lr=5e-3),
           compare_zero=True,
           question="Over the first few time steps, which initial carry gives the lower loss?",
           choices=("The zero carry", "The learned carry", "No difference: the carry is forgotten at once"),
           answer=1),
    Preset("gates_keep_the_gradient", "Gates keep the gradient alive: GRU and LSTM against a simple RNN",
           "Each cell learns the adding problem for a moment, then the gradient reaching its initial carry is "
           "measured at T = 10 to 160: the gated cells keep almost all of it per step back, the simple cell "
           "loses a third of it at every step.",
           "gradients", Config(), sweep_lengths=(10, 20, 40, 80, 160),
           question="Going back through time, which cell loses the largest share of its gradient at every step?",
           choices=("GRU", "LSTM", "Simple RNN"), answer=2),
    Preset("lstm_h0_50_vs_500", "An untrained LSTM's gradient to the initial carry: T = 50 vs T = 500",
           "The gradient that reaches the initial carry is the last term of a product of Jacobians, one per step: "
           "before training it is about 1.6e-07 at T = 50 and about 5.5e-54 at T = 500, 46 orders of magnitude "
           "smaller and far below float32's smallest normal number (1.2e-38), where a float32 backward pass gives "
           "exactly 0. The probe keeps its size as a logarithm, so the chart and the table show it.",
           "gradients", Config(cell="lstm", seq_len=50), sweep_cells=("lstm",), sweep_lengths=(50, 500),
           sweep_weights="untrained",
           question="Before training, how large is the gradient that reaches an LSTM's initial carry at T = 500?",
           choices=("About the same as at T = 50", "Dozens of orders of magnitude smaller: below float32's range",
                    "Larger than at T = 50"), answer=1),
    Preset("simple_3000_steps", "A simple RNN's gradient across 3000 steps: one straight line",
           "Each step back multiplies the gradient by the same factor on average, so on a log axis it is one "
           "straight line: ×0.87 per step back for this untrained simple cell, from about 0.44 at the last step "
           "down to about 7e-180 at the initial carry. It falls below float32's smallest normal number "
           "(1.2e-38) at t = 2359, 641 steps before the last: a float32 backward pass gives exactly 0 for every "
           "earlier step. The sweep against T finds the same factor per step.",
           "gradients", Config(cell="simple", features=8, batch=8, seq_len=3000), sweep_cells=("simple",),
           sweep_lengths=(1000, 2000, 3000), sweep_weights="untrained",
           question="How does the gradient shrink over 3000 steps back through a simple RNN, on a log axis?",
           choices=("One straight line: the same factor every step", "Fast at first, then it levels off",
                    "It stops at float32's smallest number"), answer=0),
    Preset("copy_gru", "The copy task against its baseline",
           "Predicting blanks and guessing the 8 symbols already reaches 10 ln 8 / (T + 20); only a cell that "
           "remembers the symbols goes below that line, as this GRU does within a few hundred steps.", "explore",
           Config(task="copy", seq_len=20, features=128, steps=600, lr=5e-3),
           question="Can a GRU beat the copy task's baseline (blanks, then a guess among 8 symbols)?",
           choices=("Yes, within a few hundred steps", "No, it stays on the baseline"), answer=0),
    Preset("noisy_carry_adding", "A noisy initial carry makes the model robust to where it starts",
           "Redrawing the initial carry for every batch (the noisy-state trick) trains the cell to work from any "
           "start. Started from fresh N(0, 0.5) carries, its loss is about ten times lower than that of the same "
           "cell trained from a zero carry (the table under the carry charts gives the numbers).", "explore",
           Config(seq_len=10, carry_mode="noisy", carry_init="normal", carry_scale=0.5), compare_zero=True,
           question="Started from fresh random carries, which cell does better?",
           choices=("The one trained with a noisy carry", "The one trained from a zero carry", "Neither"),
           answer=0),
]

PRESETS_BY_KEY = {p.key: p for p in PRESETS}
