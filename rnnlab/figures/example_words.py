"""One example in words (:mod:`rnnlab.probing.example` looks at it): its gradient at each step at its true size or
why it is exactly 0, what reaches the initial carry, and what the keeper gate holds."""

from __future__ import annotations

import numpy as np

from rnnlab.figures.size_words import describe_zero
from rnnlab.i18n import join_clauses, join_sentences, localize_number, t, text
from rnnlab.model.gates import GateSpec
from rnnlab.probing import logscale
from rnnlab.probing.example import Look
from rnnlab.true_sizes import format_log10


def grad_text(look: Look, leaf: str, t: int) -> str:
    """'||dL/dh_3|| = 4.700e-54' for ``look``'s gradient at step ``t`` of carry leaf ``leaf``, or for an exact 0 why
    it is 0 (:func:`rnnlab.figures.size_words.describe_zero`)."""
    i = look.grads.leaves.index(leaf)
    cause = str(look.grads.zero_cause[i, t])
    if cause:
        return describe_zero(cause, int(look.grads.zero_at[i, t]), leaf, t, float(look.grads.log10[i, t]))
    return f"||dL/d{leaf}_{t}|| = {localize_number(format_log10(float(look.grads.log10[i, t])))}"  # notation


def _reached(look: Look, leaf: str) -> str:
    value = float(look.grad_log10[leaf][0])
    if np.isnan(value):
        # TRANSLATORS: {leaf} is a carry leaf's name (h or c): dL/dh_0 is NaN.
        return t("dL/d{leaf}_0 is not a number", leaf=leaf)
    return grad_text(look, leaf, 0).rstrip(".。")


def summary(now: Look, untrained: Look, index: int) -> str:
    """What example ``index`` shows, in numbers (Markdown): its loss now and untrained, and how much gradient
    reaches each leaf of the initial carry, at its true size (an exact 0 with its cause)."""
    reached = join_clauses([_reached(now, leaf) for leaf in now.grads.leaves])
    below = [leaf for leaf in now.grads.leaves if now.grad_log10[leaf][0] < logscale.F32_LOG10_FLOOR]
    # TRANSLATORS: {reached} is "||dL/dh_0|| = 4.7e-12" (one per carry leaf, or why it is exactly 0).
    said = t("**Example {number}:** its loss is {loss:.3g} at training step {step} ({untrained:.3g} untrained). "
             "What reaches the initial carry: {reached}.", number=index + 1, loss=now.loss, step=now.step,
             untrained=untrained.loss, reached=reached)
    # TRANSLATORS: {floor} is float32's smallest normal number, 1.2e-38.
    note = t("That is below float32's smallest number (about {floor:.2g}): float32 arithmetic would give 0 there; "
             "the probe carries the gradient's scale as a logarithm.", floor=1.2e-38) if below else ""
    return join_sentences(said, note)


def keeper_summary(now: Look, gates: GateSpec) -> str:
    """The keeper gate's mean over the example, the share of its values above 0.9, and what it keeps."""
    values = now.gates[gates.keeper]
    held = float(np.mean(values > 0.9))
    # TRANSLATORS: {gate} is a gate's name ("update gate z"); {keeps} a formula and what the gate keeps.
    return t("The {gate} averages {mean:.2f} over this example; {share:.0%} of its values are above 0.9. {keeps}.",
             gate=text(gates.names[gates.keeper]), mean=float(values.mean()), share=held, keeps=text(gates.keeps))
