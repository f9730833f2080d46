"""What breaks or silently changes when code written for Flax <= 0.6 runs on the installed Flax (run live)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

import flax.linen as nn
import jax
import jax.numpy as jnp

from rnnlab.flaxapi.legacy import TIME_MAJOR_VERSION
from rnnlab.flaxapi.trees import attempt, output, param_count, recording_cell, shapes
from rnnlab.i18n import _, t, tn

_old_nn: Any = nn  # called the 0.6.x way on purpose: the errors it meets are the subject


@dataclass(frozen=True)
class Breakage:
    """Old code run on current Flax: the error it meets (or what silently happens), the fix and its result."""

    title: str
    old_code: str
    error: str  # "TypeError: ..." or "no error: <what silently happened>"
    fix_code: str
    fix_result: str
    silent: bool
    explanation: str = ""


def _silent_time_major() -> tuple[str, str]:
    """Run ``nn.RNN(nn.LSTMCell(4), 4)`` next to ``nn.RNN(nn.LSTMCell(4))`` on (batch=2, time=5, features=3)."""
    x = jax.random.normal(jax.random.key(1), (2, 5, 3))
    seen_bad: dict[str, Any] = {}
    seen_good: dict[str, Any] = {}
    bad = _old_nn.RNN(recording_cell(seen_bad)(nn.LSTMCell(4)), 4, return_carry=True)
    good = nn.RNN(recording_cell(seen_good)(nn.LSTMCell(4)), return_carry=True)
    params = good.init(jax.random.key(0), x)
    carry_bad, y_bad = bad.apply(params, x)
    carry_good, y_good = output(good, params, x)
    x2 = x.at[0].add(1.0)  # change sample 0 only
    leak_bad = float(jnp.max(jnp.abs(bad.apply(params, x2)[1][1] - y_bad[1])))
    leak_good = float(jnp.max(jnp.abs(output(good, params, x2)[1][1] - y_good[1])))
    # TRANSLATORS: {value} the time_major nn.RNN got; {got}, {want}: shapes initialize_carry got and should get;
    # {bad}, {good}: the final carry's shapes; {output}: the output's shape; {leak}: how much sample 1's output moved
    error = t("no error: nn.RNN's second field is now time_major, so time_major={value}. On x of shape "
              "(batch=2, time=5, features=3) axis 0 is scanned as time: initialize_carry got {got} (should be "
              "{want}), the final carry has shapes {bad} instead of {good}, the output keeps shape {output} so "
              "nothing looks wrong, but changing sample 0's input changes sample 1's output by {leak:.3g}: the two "
              "samples are chained as two time steps", value=repr(bad.time_major), got=seen_bad["init_input_shape"],
              want=seen_good["init_input_shape"], bad=shapes(carry_bad), good=shapes(carry_good),
              output=tuple(y_bad.shape), leak=leak_bad)
    # TRANSLATORS: {got} the shape initialize_carry got; {carry}, {output}: shapes; {leak}: how much sample 1's
    # output moved when sample 0's input changed (0: the samples are independent)
    fix = t("initialize_carry got {got}, final carry {carry}, output {output}; changing sample 0 changes sample "
            "1's output by {leak:.3g} (independent)", got=seen_good["init_input_shape"], carry=shapes(carry_good),
            output=tuple(y_good.shape), leak=leak_good)
    return error, fix


def _init_and_apply(rnn: nn.Module, x: jax.Array) -> Any:
    return rnn.apply(rnn.init(jax.random.key(0), x), x)


def accepted_time_major(values: tuple[Any, ...] = (4, 0, -1, "x")) -> list[Any]:
    """The values nn.RNN's second positional field takes without an error (built and applied live)."""
    x = jnp.ones((2, 5, 3))
    ok = []
    for value in values:
        rnn = _old_nn.RNN(nn.LSTMCell(4), value)
        err = attempt(partial(_init_and_apply, rnn, x))[1]
        if err is None:
            ok.append(value)
    return ok


def upgrade_breakages() -> list[Breakage]:
    """The errors flax 0.6.x code meets on current Flax, each reproduced live, with the fix run live too."""
    key = jax.random.key(0)
    x = jnp.ones((2, 5, 3))  # (batch, time, in_features)
    out: list[Breakage] = []

    err = attempt(lambda: _old_nn.LSTMCell())[1]
    cell = nn.LSTMCell(features=4)
    params = cell.init(key, cell.initialize_carry(key, (2, 3)), jnp.ones((2, 3)))
    out.append(Breakage(
        _("Cells need features"), "cell = nn.LSTMCell()", err or _("no error"), "cell = nn.LSTMCell(features=4)",
        # TRANSLATORS: {n} parameters of the cell; {axes} its num_feature_axes
        tn("builds; init on a (2, 3) step gives {n} parameter, num_feature_axes = {axes}",
           "builds; init on a (2, 3) step gives {n} parameters, num_feature_axes = {axes}", param_count(params),
           axes=cell.num_feature_axes), False,
        _("0.6.x cells read the hidden size off the carry; from 0.7 the cell holds it, so features is required.")))

    err = attempt(lambda: _old_nn.LSTMCell.initialize_carry(jax.random.PRNGKey(0), (2,), 4))[1]
    carry = nn.LSTMCell(features=4).initialize_carry(key, (2, 3))
    out.append(Breakage(
        _("initialize_carry is an instance method"),
        "carry = nn.LSTMCell.initialize_carry(jax.random.PRNGKey(0), (2,), 4)  # (rng, batch_dims, size)",
        err or _("no error"),
        "carry = nn.LSTMCell(features=4).initialize_carry(jax.random.key(0), (2, 3))  # (batch, in_features)",
        t("carry: tuple (c, h) with shapes {shapes}, dtype {dtype}", shapes=shapes(carry), dtype=carry[0].dtype.name),
        False,
        _("Called on the class, the key lands in self, (2,) in rng and 4 in input_shape; input_shape[:-1] then "
          "fails on the int. The new call takes the shape of one time step of input.")))

    err = attempt(lambda: _old_nn.RNN(nn.LSTMCell(features=4), cell_size=4))[1]
    rnn = nn.RNN(nn.LSTMCell(features=4))
    y = output(rnn, rnn.init(key, x), x)
    out.append(Breakage(
        _("nn.RNN no longer takes cell_size"),
        "rnn = nn.RNN(nn.LSTMCell(features=4), cell_size=4)", err or _("no error"),
        # TRANSLATORS: a comment in a code snippet
        "rnn = nn.RNN(nn.LSTMCell(features=4))  # " + _("the cell knows its size"),
        t("on x of shape {input} the output has shape {output}", input=tuple(x.shape), output=tuple(y.shape)), False,
        _("cell_size fed the old static initialize_carry; the cell's features replace it.")))

    error, fix = _silent_time_major()
    accepted = ", ".join(repr(v) for v in accepted_time_major())
    out.append(Breakage(
        _("nn.RNN(cell, 4) now sets time_major=4"),
        "rnn = nn.RNN(nn.LSTMCell(features=4), 4)  # 0.6.x: nn.RNN(cell, cell_size)", error,
        "rnn = nn.RNN(nn.LSTMCell(features=4))", fix, True,
        # TRANSLATORS: {version} a flax version; {accepted} the values tried, as Python writes them
        t("In 0.6.x the second field of nn.RNN was cell_size; since flax {version} it is time_major "
          "(0.7.0-0.7.4 refused it with an error). Any value is accepted there without an error ({accepted}): "
          "a truthy one scans axis 0 as time.", version=TIME_MAJOR_VERSION, accepted=accepted)))
    return out
