"""Registry of synthetic sequence tasks.

Each task is a jittable batch generator (a fresh batch from a key, any sequence length T), a loss on the
model's per-step predictions, a readable metric, the loss at every time step and its memoryless baseline
as a function of T.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import jax
import jax.numpy as jnp
import numpy as np
import optax

from rnnlab.i18n import N_, _

Batch = tuple[jax.Array, jax.Array]


@dataclass(frozen=True)
class SequenceView:
    """One example of a task drawn plainly, per scanned step: what the model reads and what it should answer."""

    values: np.ndarray  # (steps,) the input as a number: a value, or the index of a symbol in ``symbols``
    marked: np.ndarray  # (steps,) bool: the steps the answer depends on (markers, X/Y, the data to copy)
    target: np.ndarray  # (steps,) the answer at each scored step (a value or a class index), NaN elsewhere
    symbols: tuple[str, ...] | None = None  # names of the input symbols (None: values are numbers)
    classes: tuple[str, ...] | None = None  # names of the answer's classes (None: the answer is a number)
    input_name: str = N_("input")  # English, marked for the catalog: translate where shown


@dataclass(frozen=True)
class TaskSpec:
    """One synthetic task. ``preds`` always has shape (batch, steps, out_features)."""

    name: str
    label_en: str  # the readable name in English, marked for the catalog: see ``label``
    in_features: int
    out_features: int
    generate: Callable[[jax.Array, int, int], Batch]  # (key, batch, T) -> (inputs, targets)
    per_step_loss: Callable[[jax.Array, jax.Array], jax.Array]  # -> (steps,), batch mean at each step
    loss: Callable[[jax.Array, jax.Array], jax.Array]  # -> scalar
    metric: Callable[[jax.Array, jax.Array], jax.Array]  # -> scalar
    metric_name: str  # English, marked for the catalog: translate where shown
    higher_is_better: bool
    step_baselines: Callable[[int], np.ndarray]  # T -> (steps,): memoryless loss per step, NaN where not scored
    baseline_text: str  # English, marked for the catalog: translate where shown
    min_T: int = 2
    spatial: bool = False  # inputs (batch, steps, side, side, channels)
    extra_steps: int = 0  # the input holds T + extra_steps steps
    description: str = ""  # English, marked for the catalog: translate where shown
    metric_is_loss: bool = False  # the readable metric is the loss itself (MSE tasks): no chart of its own
    view: Callable[[np.ndarray, np.ndarray], SequenceView] | None = None  # (one example's x, y) -> what to draw
    noun_en: str = ""  # the task named inside a sentence ("the adding task"), marked for the catalog: see ``noun``

    @property
    def label(self) -> str:
        """The readable name in the reader's language ('Adding problem', '加法问题', 'Задача сложения')."""
        return _(self.label_en)

    @property
    def noun(self) -> str:
        """The task named inside a sentence, in the reader's language: 'adding' in "on the adding task"."""
        return _(self.noun_en) if self.noun_en else self.name

    def steps(self, T: int) -> int:
        """Number of scanned time steps for sequence length T."""
        return T + self.extra_steps

    def baseline(self, T: int) -> float:
        """The memoryless baseline: the loss of the best prediction that sees, at each step, only the position
        and the current input (no memory of earlier inputs). Below it, a model uses what it remembers."""
        return float(np.nanmean(self.step_baselines(T)))

    def scored_steps(self, T: int) -> np.ndarray:
        """Which time steps the task's loss scores (adding and temporal order: only the last)."""
        return np.isfinite(self.step_baselines(T))


def _mse_steps(preds: jax.Array, targets: jax.Array) -> jax.Array:
    return jnp.mean((preds - targets) ** 2, axis=(0, 2))


def _ce_steps(preds: jax.Array, labels: jax.Array) -> jax.Array:
    return jnp.mean(optax.softmax_cross_entropy_with_integer_labels(preds, labels), axis=0)


# --- adding problem -----------------------------------------------------------------------------------

def adding_generate(key: jax.Array, batch: int, T: int) -> Batch:
    """Values U[0,1] in channel 0; markers at one step in each half in channel 1; target their sum."""
    kv, k1, k2 = jax.random.split(key, 3)
    values = jax.random.uniform(kv, (batch, T))
    half = T // 2
    i1 = jax.random.randint(k1, (batch,), 0, half)
    i2 = jax.random.randint(k2, (batch,), half, T)
    steps = jnp.arange(T)
    marks = ((steps == i1[:, None]) | (steps == i2[:, None])).astype(jnp.float32)
    target = jnp.sum(values * marks, axis=1)
    x = jnp.stack([values, marks], axis=-1)
    return x, target[:, None]


def _adding_steps(preds, target):
    return jnp.mean((preds[..., 0] - target) ** 2, axis=0)


def _adding_loss(preds, target):
    return jnp.mean((preds[:, -1, 0] - target[:, 0]) ** 2)


def adding_step_baselines(T: int) -> np.ndarray:
    """Only the last step is scored. Without memory the best guess there is 1 (the mean of U + U, MSE 1/6),
    unless the last value is itself marked (probability 1 / (T - T // 2)): then value + 0.5 (MSE 1/12)."""
    marked_last = 1 / (T - T // 2)
    out = np.full(T, np.nan)
    out[-1] = (1 - marked_last) / 6 + marked_last / 12
    return out


def adding_view(x: np.ndarray, y: np.ndarray) -> SequenceView:
    """The values, the two marked steps, and their sum as the answer at the last step."""
    target = np.full(len(x), np.nan)
    target[-1] = float(y[0])
    return SequenceView(x[:, 0].astype(float), x[:, 1] > 0, target, input_name=N_("value"))


# --- copy memory --------------------------------------------------------------------------------------

COPY_SYMBOLS, COPY_DATA, COPY_LEN = 10, 8, 10
COPY_BLANK, COPY_DELIM = 8, 9


def copy_generate(key: jax.Array, batch: int, T: int) -> Batch:
    """10 data symbols, T-1 blanks, the delimiter, 10 blanks; target: T+10 blanks then the data."""
    data = jax.random.randint(key, (batch, COPY_LEN), 0, COPY_DATA)
    blank = jnp.full((batch, T - 1), COPY_BLANK)
    inputs = jnp.concatenate(
        [data, blank, jnp.full((batch, 1), COPY_DELIM), jnp.full((batch, COPY_LEN), COPY_BLANK)], axis=1)
    targets = jnp.concatenate([jnp.full((batch, T + COPY_LEN), COPY_BLANK), data], axis=1)
    return jax.nn.one_hot(inputs, COPY_SYMBOLS), targets


def copy_step_baselines(T: int) -> np.ndarray:
    """Blanks until the output (known from the position: CE 0), then uniform over the 8 data symbols (ln 8)."""
    out = np.zeros(T + 2 * COPY_LEN)
    out[-COPY_LEN:] = math.log(COPY_DATA)
    return out


COPY_NAMES = tuple(str(i) for i in range(COPY_DATA)) + ("_", ":")  # blank "_", delimiter ":"


def copy_view(x: np.ndarray, y: np.ndarray) -> SequenceView:
    """The symbols read (the first 10 are the data), and the symbol to write at every step."""
    symbols = np.argmax(x, axis=-1)
    marked = np.zeros(len(x), bool)
    marked[:COPY_LEN] = True
    return SequenceView(symbols.astype(float), marked, np.asarray(y, float), COPY_NAMES, COPY_NAMES, N_("symbol"))


def _copy_accuracy(preds, labels):
    return jnp.mean(jnp.argmax(preds[:, -COPY_LEN:], -1) == labels[:, -COPY_LEN:])


# --- temporal order -----------------------------------------------------------------------------------

ORDER_SYMBOLS = ("a", "b", "c", "d", "X", "Y", "B", "E")


def order_positions(T: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """Ranges [lo, hi) of the two X/Y positions: 10-20% and 50-60% of the sequence (the 1997 layout)."""
    def rng(a: float, b: float) -> tuple[int, int]:
        lo = max(1, int(a * T))
        return lo, max(lo + 1, int(b * T))
    return rng(0.1, 0.2), rng(0.5, 0.6)


def order_generate(key: jax.Array, batch: int, T: int) -> Batch:
    """E, distractors a-d, X/Y at an early and a middle position, B last; class = the ordered X/Y pair."""
    kd, kp1, kp2, ks = jax.random.split(key, 4)
    (lo1, hi1), (lo2, hi2) = order_positions(T)
    seq = jax.random.randint(kd, (batch, T), 0, 4)
    p1 = jax.random.randint(kp1, (batch,), lo1, hi1)
    p2 = jax.random.randint(kp2, (batch,), lo2, hi2)
    s = jax.random.randint(ks, (batch, 2), 0, 2)  # 0 = X, 1 = Y
    steps = jnp.arange(T)
    seq = jnp.where(steps == p1[:, None], 4 + s[:, :1], seq)
    seq = jnp.where(steps == p2[:, None], 4 + s[:, 1:], seq)
    seq = seq.at[:, 0].set(7).at[:, -1].set(6)
    label = 2 * s[:, 0] + s[:, 1]
    return jax.nn.one_hot(seq, len(ORDER_SYMBOLS)), label[:, None]


ORDER_CLASSES = ("XX", "XY", "YX", "YY")


def order_view(x: np.ndarray, y: np.ndarray) -> SequenceView:
    """The symbols read, the X/Y steps marked, and the ordered pair as the answer at the last step."""
    symbols = np.argmax(x, axis=-1)
    target = np.full(len(x), np.nan)
    target[-1] = float(y[0])
    return SequenceView(symbols.astype(float), (symbols == 4) | (symbols == 5), target, ORDER_SYMBOLS,
                        ORDER_CLASSES, N_("symbol"))


def order_step_baselines(T: int) -> np.ndarray:
    """Only the last step (B, which says nothing) is scored: chance over the 4 classes, ln 4."""
    out = np.full(T, np.nan)
    out[-1] = math.log(4)
    return out


def _order_steps(preds, label):
    labels = jnp.broadcast_to(label, preds.shape[:2])
    return _ce_steps(preds, labels)


# --- sine continuation --------------------------------------------------------------------------------

SINE_OMEGA = 2 * math.pi / 16  # one period every 16 steps
SINE_PHI0 = 1.0
SINE_SPREAD = 0.3  # phi ~ U[phi0 - spread, phi0 + spread]
SINE_PROMPT = 16  # steps of the curve shown as input (one period) before the model continues alone


def sine_prompt(T: int) -> int:
    """How many steps show the curve as input: one period, at most half the sequence, at least 1."""
    return min(SINE_PROMPT, max(1, T // 2))


def sine_generate(key: jax.Array, batch: int, T: int) -> Batch:
    """y_t = sin(w t + phi) with phi near phi0. The input at t is y_{t-1} for the prompt's steps (0 at t = 0),
    then 0: after the prompt the model continues the curve from what it remembers."""
    phi = SINE_PHI0 + jax.random.uniform(key, (batch, 1), minval=-SINE_SPREAD, maxval=SINE_SPREAD)
    y = jnp.sin(SINE_OMEGA * jnp.arange(T) + phi)
    previous = jnp.concatenate([jnp.zeros((batch, 1)), y[:, :-1]], axis=1)
    x = jnp.where(jnp.arange(T) < sine_prompt(T), previous, 0.0)
    return x[..., None], y[..., None]


def sine_view(x: np.ndarray, y: np.ndarray) -> SequenceView:
    """The prompt (the previous value, then 0) and the curve to predict at every step."""
    marked = np.arange(len(x)) < sine_prompt(len(x))
    return SequenceView(x[:, 0].astype(float), marked, y[:, 0].astype(float), input_name=N_("previous value"))


@lru_cache(maxsize=1)
def _sine_variances(grid: int = 20_001) -> tuple[np.ndarray, np.ndarray]:
    """Per step phase r = t mod 16: the variance of y_t left when the previous value is seen (E[Var(y_t | y_{t-1})])
    and when nothing is seen (Var(y_t)), with phi uniform: exact up to the midpoint grid over phi.

    Seeing y_{t-1} = sin(theta) leaves theta one of at most two angles in the phase interval (theta and
    pi - theta); each is weighted by the density of y_{t-1} there, 1 / |cos theta|.
    """
    phi = SINE_PHI0 - SINE_SPREAD + (np.arange(grid) + 0.5) * (2 * SINE_SPREAD / grid)
    seen, unseen = np.zeros(16), np.zeros(16)
    for r in range(16):
        y = np.sin(SINE_OMEGA * r + phi)
        unseen[r] = np.mean((y - y.mean()) ** 2)
        theta = SINE_OMEGA * (r - 1) + phi
        lo, hi = theta[0] - 0.5 * (theta[1] - theta[0]), theta[-1] + 0.5 * (theta[1] - theta[0])
        best = y.copy()
        w = 1 / np.abs(np.cos(theta))
        for k in range(-2, 3):
            other = math.pi - theta + 2 * math.pi * k
            inside = (other >= lo) & (other <= hi) & (np.abs(other - theta) > 1e-9)
            w_other = 1 / np.abs(np.cos(other))
            best = np.where(inside, (w * y + w_other * np.sin(other + SINE_OMEGA)) / (w + w_other), best)
        seen[r] = np.mean((y - best) ** 2)
    return seen, unseen


def sine_step_baselines(T: int) -> np.ndarray:
    """Every step is scored. Without memory, a prompt step t >= 1 sees y_{t-1}, which leaves almost no doubt;
    t = 0 and every step after the prompt see 0, so the best guess is the mean of y_t over phi."""
    seen, unseen = _sine_variances()
    t = np.arange(T)
    return np.where((t >= 1) & (t < sine_prompt(T)), seen[t % 16], unseen[t % 16])


# --- moving dot (spatial) -----------------------------------------------------------------------------

DOT_SIDE = 6


def dot_generate(key: jax.Array, batch: int, T: int) -> Batch:
    """A dot moving with a constant velocity on a 6x6 torus; target: where it is at the next step."""
    kp, kv = jax.random.split(key)
    pos = jax.random.randint(kp, (batch, 2), 0, DOT_SIDE)
    moves = jnp.array([(i, j) for i in (-1, 0, 1) for j in (-1, 0, 1) if (i, j) != (0, 0)])
    vel = moves[jax.random.randint(kv, (batch,), 0, len(moves))]
    path = (pos[:, None, :] + jnp.arange(T + 1)[None, :, None] * vel[:, None, :]) % DOT_SIDE
    cells = path[..., 0] * DOT_SIDE + path[..., 1]  # (batch, T+1)
    frames = jax.nn.one_hot(cells[:, :T], DOT_SIDE * DOT_SIDE).reshape(batch, T, DOT_SIDE, DOT_SIDE, 1)
    return frames, cells[:, 1:]


# TRANSLATORS: a cell of the moving dot's 6 x 6 grid, e.g. 'row 2, column 5'.
DOT_NAME = N_("row {r}, column {c}")  # translate where shown: t(DOT_NAME, r=..., c=...)
DOT_NAMES = tuple(DOT_NAME.format(r=r, c=c) for r in range(DOT_SIDE) for c in range(DOT_SIDE))


def dot_view(x: np.ndarray, y: np.ndarray) -> SequenceView:
    """The dot's cell in each frame, and its cell in the next frame as the answer."""
    cells = np.argmax(x.reshape(len(x), -1), axis=-1)
    return SequenceView(cells.astype(float), np.zeros(len(x), bool), np.asarray(y, float), DOT_NAMES, DOT_NAMES,
                        N_("dot's cell"))


def _dot_accuracy(preds, cells):
    return jnp.mean(jnp.argmax(preds, -1) == cells)


TASKS: dict[str, TaskSpec] = {
    spec.name: spec
    for spec in [
        TaskSpec(
            "adding", N_("Adding problem"), 2, 1, adding_generate, _adding_steps, _adding_loss,
            lambda p, t: _adding_loss(p, t), "MSE", False,
            step_baselines=adding_step_baselines,
            baseline_text=N_("guess 1 (the last value + 0.5 when it is marked): about 1/6"),
            min_T=4, metric_is_loss=True, view=adding_view,
            description=N_("Add the two marked numbers of a long sequence; the answer is read at the last step."),
            # TRANSLATORS: a task named inside a sentence: "trained on the {task} task".
            noun_en=N_("adding"),
        ),
        TaskSpec(
            "copy", N_("Copy memory"), COPY_SYMBOLS, COPY_SYMBOLS, copy_generate, _ce_steps,
            lambda p, t: jnp.mean(_ce_steps(p, t)), _copy_accuracy, N_("accuracy (10 recalled symbols)"), True,
            step_baselines=copy_step_baselines,
            baseline_text=N_("blanks, then uniform over 8 symbols: 10 ln 8 / (T + 20)"),
            min_T=1, extra_steps=20, view=copy_view,
            description=N_("Read 10 symbols, wait T steps, then write them back after the delimiter."),
            # TRANSLATORS: a task named inside a sentence: "trained on the {task} task".
            noun_en=N_("copy"),
        ),
        TaskSpec(
            "temporal_order", N_("Temporal order"), len(ORDER_SYMBOLS), 4, order_generate, _order_steps,
            lambda p, t: jnp.mean(
                optax.softmax_cross_entropy_with_integer_labels(p[:, -1], t[:, 0])),
            lambda p, t: jnp.mean(jnp.argmax(p[:, -1], -1) == t[:, 0]), N_("accuracy"), True,
            step_baselines=order_step_baselines, baseline_text=N_("chance over 4 classes: ln 4"),
            min_T=10, view=order_view,
            description=N_("Classify the order of two X/Y symbols hidden among distractors (XX, XY, YX, YY)."),
            # TRANSLATORS: a task named inside a sentence: "trained on the {task} task".
            noun_en=N_("temporal order"),
        ),
        TaskSpec(
            "sine", N_("Sine continuation"), 1, 1, sine_generate, _mse_steps,
            lambda p, t: jnp.mean((p - t) ** 2), lambda p, t: jnp.mean((p - t) ** 2), "MSE", False,
            step_baselines=sine_step_baselines,
            baseline_text=N_("the best guess from the position and the current input alone"),
            min_T=2, metric_is_loss=True, view=sine_view,
            description=N_("See one period of sin(w t + phi) (each step's input is the previous value), then "
                           "continue the curve alone (input 0); phi is near a fixed phase, so a learned initial "
                           "carry can know the start."),
            # TRANSLATORS: a task named inside a sentence: "trained on the {task} task".
            noun_en=N_("sine"),
        ),
        TaskSpec(
            "moving_dot", N_("Moving dot (spatial)"), 1, DOT_SIDE * DOT_SIDE, dot_generate, _ce_steps,
            lambda p, t: jnp.mean(_ce_steps(p, t)), _dot_accuracy, N_("accuracy"), True,
            step_baselines=lambda T: np.full(T, math.log(8)),
            baseline_text=N_("sees only the current frame: uniform over the 8 moves, ln 8"),
            min_T=2, spatial=True, view=dot_view,
            description=N_("A dot moves on a 6x6 torus at a constant velocity; predict its next position."),
            # TRANSLATORS: a task named inside a sentence: "trained on the {task} task".
            noun_en=N_("moving dot"),
        ),
    ]
}


def compatible(cell_spatial: bool, task: TaskSpec) -> bool:
    """Whether a cell (spatial or not) can run a task."""
    return cell_spatial == task.spatial
