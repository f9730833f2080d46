"""When a run stops by itself: a step that went non-finite (it diverged) or a loss driven far up (it blew up), and
the sentence that says where, why, what is kept and what to change."""

from __future__ import annotations

import math

import numpy as np

from rnnlab.config import Config
from rnnlab.training.history import History

BLOW_UP_FACTOR = 10.0  # an evaluation loss this many times above both its start and the baseline has blown up


def blown_up(eval_loss: float, start_loss: float, baseline: float) -> bool:
    """Whether a finite loss has blown up: far above both where it started and the memoryless baseline.

    A run that learns stays below its start; one that learns nothing stays near the baseline. An evaluation
    loss more than :data:`BLOW_UP_FACTOR` times the larger of the two has been driven up by the updates.
    """
    return math.isfinite(eval_loss) and eval_loss > BLOW_UP_FACTOR * max(start_loss, baseline)


def _tips(config: Config) -> str:
    lr, clip = config.lr, config.clip
    tips = [f"lower the learning rate (try lr={lr / 10:g}; now {lr:g})"]
    if clip == 0:
        tips.append("turn on gradient clipping, which caps the size of each update (try clip=1; now 0, off)")
    elif clip > 1:
        tips.append(f"clip the gradient harder (try clip=1; now {clip:g})")
    return f"To fix it, {' or '.join(tips)}."


def divergence_reason(config: Config, first: int, records: dict) -> str:
    """Where and why a run of ``config`` went non-finite in the call after step ``first``; what is kept; what
    to do. (The page adds how to start again: its buttons differ.)"""
    i = int(np.argmax(records["bad"]))
    step = first + i + 1
    loss, gnorm = float(records["loss"][i]), float(records["grad_norm"][i])
    if not np.isfinite(loss):
        what = f"the training loss became {loss:g}"
    elif not np.isfinite(gnorm):
        what = f"the gradient norm became {gnorm:g} (the loss was {loss:.4g})"
    else:
        what = f"the update made the parameters non-finite (the gradient norm was {gnorm:.4g})"
    kept = (f"Steps 1 to {step - 1} are kept, on the charts and in the downloads, with the parameters "
            f"after step {step - 1}." if step > 1 else "It diverged on the first step, so nothing was trained.")
    return f"Stopped at step {step}: {what}. {kept} {_tips(config)}"


def blow_up_step(first: int, records: dict, start_loss: float, baseline: float, applied: int) -> int:
    """The first step of a call (after step ``first``) whose training loss had blown up, else its last step."""
    losses = np.asarray(records["loss"][:applied], float)
    over = np.flatnonzero(losses > BLOW_UP_FACTOR * max(start_loss, baseline))
    return first + (int(over[0]) + 1 if len(over) else applied)


def blow_up_reason(config: Config, step: int, eval_loss: float, start_loss: float, baseline: float) -> str:
    """Why a run whose loss blew up (see :func:`blown_up`) was stopped, with the numbers, and what to do."""
    return (f"Stopped at step {step}: the loss blew up. The evaluation loss is {eval_loss:.4g}, "
            f"{eval_loss / baseline:,.0f} times the memoryless baseline ({baseline:.4g}) and "
            f"{eval_loss / start_loss:,.0f} times where it started ({start_loss:.4g}): the updates are too large, "
            f"so each step makes the model worse. Every step is kept on the charts. {_tips(config)}")


def check_call(history: History, config: Config, baseline: float, first: int, applied: int, records: dict) -> None:
    """After a call of ``config``'s run: mark the history diverged (step and reason) when a step went
    non-finite, or when the loss blew up (:func:`blown_up`)."""
    if history.stop_reason:
        return
    if records["bad"].any():
        history.diverged_at = first + applied + 1
        history.stop_reason = divergence_reason(config, first, records)
        return
    start, now = history.chunks[0]["eval_loss"], history.chunks[-1]["eval_loss"]
    if applied and history.chunks[-1]["step"] == first + applied and blown_up(now, start, baseline):
        history.diverged_at = blow_up_step(first, records, start, baseline, applied)
        history.stop_reason = blow_up_reason(config, history.diverged_at, now, start, baseline)
