"""Task generators follow their definitions, and each baseline is the loss of the memoryless predictor."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from rnnlab.model import tasks
from rnnlab.model.tasks import TASKS

KEY = jax.random.PRNGKey(7)


@pytest.mark.parametrize("name", list(TASKS))
def test_shapes_and_steps(name):
    task = TASKS[name]
    T = max(task.min_T, 12)
    x, y = jax.jit(task.generate, static_argnums=(1, 2))(KEY, 5, T)
    assert x.shape[:2] == (5, task.steps(T))
    assert x.shape[-1] == task.in_features
    preds = jnp.zeros((5, task.steps(T), task.out_features))
    assert task.per_step_loss(preds, y).shape == (task.steps(T),)
    assert task.loss(preds, y).shape == ()
    assert np.isfinite(float(task.metric(preds, y)))


def test_adding_layout_and_baseline():
    x, y = tasks.adding_generate(KEY, 20000, 50)
    marks = np.asarray(x[..., 1])
    assert (marks.sum(1) == 2).all()
    assert (marks[:, :25].sum(1) == 1).all() and (marks[:, 25:].sum(1) == 1).all()
    np.testing.assert_allclose(np.asarray(y[:, 0]), (np.asarray(x[..., 0]) * marks).sum(1), rtol=1e-6)


@pytest.mark.parametrize("T", [4, 10, 50])
def test_adding_baseline_is_the_best_memoryless_prediction_monte_carlo(T):
    """Monte Carlo: the best prediction from the last input alone (value, mark), estimated as the mean target
    in fine bins of the value for each mark, scores the baseline on held-out sequences; so does its closed
    form (1, or value + 0.5 when the last value is marked)."""
    n = 400_000
    x, y = tasks.adding_generate(jax.random.PRNGKey(T), n, T)
    value, mark, target = (np.asarray(a, np.float64) for a in (x[:, -1, 0], x[:, -1, 1], y[:, 0]))
    train, test = slice(0, n // 2), slice(n // 2, n)
    cell = np.minimum((value * 50).astype(int), 49) + 50 * mark.astype(int)
    sums = np.bincount(cell[train], target[train], minlength=100)
    counts = np.bincount(cell[train], minlength=100)
    learned = np.where(counts > 0, sums / np.maximum(counts, 1), 1.0)[cell[test]]
    closed = np.where(mark[test] == 1, value[test] + 0.5, 1.0)
    baseline = TASKS["adding"].baseline(T)
    assert np.mean((target[test] - closed) ** 2) == pytest.approx(baseline, rel=0.02)
    assert np.mean((target[test] - learned) ** 2) == pytest.approx(baseline, rel=0.02)
    assert baseline < 1 / 6 and TASKS["adding"].scored_steps(T).tolist() == [False] * (T - 1) + [True]


def test_copy_layout_and_baseline():
    T = 30
    x, y = tasks.copy_generate(KEY, 64, T)
    symbols = np.asarray(jnp.argmax(x, -1))
    y = np.asarray(y)
    assert symbols.shape == (64, T + 20)
    assert (symbols[:, :10] < 8).all() and (symbols[:, 10:T + 9] == 8).all()
    assert (symbols[:, T + 9] == 9).all() and (symbols[:, T + 10:] == 8).all()
    assert (y[:, :T + 10] == 8).all() and (y[:, T + 10:] == symbols[:, :10]).all()
    # memoryless predictor: blanks with certainty, then uniform over the 8 data symbols
    logits = np.full((64, T + 20, 10), -1e9, np.float32)
    logits[:, :T + 10, 8] = 0
    logits[:, T + 10:, :8] = 0
    measured = float(TASKS["copy"].loss(jnp.asarray(logits), jnp.asarray(y)))
    assert measured == pytest.approx(TASKS["copy"].baseline(T), rel=1e-5)
    assert TASKS["copy"].baseline(100) == pytest.approx(0.1733, abs=1e-4)
    assert TASKS["copy"].baseline(1000) == pytest.approx(0.0204, abs=1e-4)


def test_temporal_order_layout_and_baseline():
    T = 100
    x, y = tasks.order_generate(KEY, 8000, T)
    seq = np.asarray(jnp.argmax(x, -1))
    label = np.asarray(y[:, 0])
    assert (seq[:, 0] == 7).all() and (seq[:, -1] == 6).all()  # E first, B last
    xy = seq >= 4
    xy[:, [0, -1]] = False
    assert (xy.sum(1) == 2).all()
    (lo1, hi1), (lo2, hi2) = tasks.order_positions(T)
    pos = np.argwhere(xy)[:, 1].reshape(-1, 2)
    assert ((lo1 <= pos[:, 0]) & (pos[:, 0] < hi1)).all() and ((lo2 <= pos[:, 1]) & (pos[:, 1] < hi2)).all()
    first, second = seq[np.arange(len(seq)), pos[:, 0]] - 4, seq[np.arange(len(seq)), pos[:, 1]] - 4
    assert (label == 2 * first + second).all()
    freq = np.bincount(label, minlength=4) / len(label)
    entropy = -np.sum(freq * np.log(freq))  # CE of the best constant predictor
    assert abs(entropy - TASKS["temporal_order"].baseline(T)) < 0.002
    assert TASKS["temporal_order"].baseline(T) == pytest.approx(math.log(4))


@pytest.mark.parametrize("T", [2, 10, 40, 100])
def test_sine_baseline_is_the_best_memoryless_prediction_monte_carlo(T):
    """Monte Carlo: at every step, the best prediction from the position and the current input alone (the
    mean target in fine bins of the input, fitted on half the sequences) scores the step's baseline on the
    other half; the baseline is their mean over the steps, as the loss is."""
    n = 200_000
    x, y = tasks.sine_generate(jax.random.PRNGKey(T), n, T)
    x, y = np.asarray(x[..., 0], np.float64), np.asarray(y[..., 0], np.float64)
    prompt = tasks.sine_prompt(T)
    assert (x[:, 0] == 0).all() and (x[:, prompt:] == 0).all()
    np.testing.assert_allclose(x[:, 1:prompt], y[:, :prompt - 1], rtol=1e-6)
    train, test = slice(0, n // 2), slice(n // 2, n)
    measured = []
    for t in range(T):
        cell = np.clip(((x[:, t] + 1) * 1000).astype(int), 0, 1999)
        sums = np.bincount(cell[train], y[train, t], minlength=2000)
        counts = np.bincount(cell[train], minlength=2000)
        guess = np.where(counts > 0, sums / np.maximum(counts, 1), y[train, t].mean())[cell[test]]
        measured.append(np.mean((y[test, t] - guess) ** 2))
    steps = TASKS["sine"].step_baselines(T)
    np.testing.assert_allclose(measured, steps, atol=3e-4)
    assert TASKS["sine"].baseline(T) == pytest.approx(np.mean(steps))
    assert abs(np.mean(measured) - TASKS["sine"].baseline(T)) < 2e-4


def test_moving_dot_moves_and_baseline():
    x, cells = tasks.dot_generate(KEY, 500, 8)
    side = tasks.DOT_SIDE
    frames = np.asarray(x[..., 0]).reshape(500, 8, side * side)
    assert (frames.sum(-1) == 1).all()
    pos = frames.argmax(-1)
    cells = np.asarray(cells)
    assert (cells[:, :-1] == pos[:, 1:]).all()  # the target is the next frame's dot
    # the move between consecutive steps is constant and one of the 8 neighbours
    r, c = pos // side, pos % side
    dr, dc = (np.diff(r, axis=1) + 1) % side - 1, (np.diff(c, axis=1) + 1) % side - 1
    assert (dr == dr[:, :1]).all() and (dc == dc[:, :1]).all()
    assert ((dr != 0) | (dc != 0)).all()
    # memoryless predictor: uniform over the 8 neighbours of the current dot gives exactly ln 8
    logits = np.full((500, 8, side * side), -1e9, np.float32)
    for b in range(500):
        for t in range(8):
            for i in (-1, 0, 1):
                for j in (-1, 0, 1):
                    if (i, j) != (0, 0):
                        logits[b, t, ((r[b, t] + i) % side) * side + (c[b, t] + j) % side] = 0
    measured = float(TASKS["moving_dot"].loss(jnp.asarray(logits), jnp.asarray(cells)))
    assert measured == pytest.approx(TASKS["moving_dot"].baseline(8), rel=1e-5)


def test_generators_are_deterministic_per_key():
    for task in TASKS.values():
        a = task.generate(KEY, 3, max(task.min_T, 10))
        b = task.generate(KEY, 3, max(task.min_T, 10))
        c = task.generate(jax.random.PRNGKey(8), 3, max(task.min_T, 10))
        assert all((np.asarray(u) == np.asarray(v)).all() for u, v in zip(a, b))
        assert not (np.asarray(a[0]) == np.asarray(c[0])).all()


def test_per_step_baselines_are_the_memoryless_loss_where_the_task_scores():
    """Where a task scores a step, its step baseline is what the memoryless predictor scores there."""
    adding = TASKS["adding"]
    _, y = adding.generate(KEY, 20000, 10)
    per_step = np.asarray(adding.per_step_loss(jnp.ones((20000, 10, 1)), y))
    assert np.abs(per_step[-1] - 1 / 6).max() < 0.006  # always 1 (no look at the last value): 1/6
    order = TASKS["temporal_order"]
    _, y = order.generate(KEY, 100, 20)
    np.testing.assert_allclose(order.per_step_loss(jnp.zeros((100, 20, 4)), y)[-1], math.log(4), rtol=1e-6)
    assert order.scored_steps(20).tolist() == [False] * 19 + [True]
    assert TASKS["moving_dot"].scored_steps(5).all() and TASKS["copy"].scored_steps(5).all()
    assert TASKS["sine"].scored_steps(5).all()
    for task in TASKS.values():
        for T in (task.min_T, 37):
            assert task.step_baselines(T).shape == (task.steps(T),)
