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
    error = (f"no error: nn.RNN's second field is now time_major, so time_major={bad.time_major!r}. On x of shape "
             f"(batch=2, time=5, features=3) axis 0 is scanned as time: initialize_carry got "
             f"{seen_bad['init_input_shape']} (should be {seen_good['init_input_shape']}), the final carry has shapes "
             f"{shapes(carry_bad)} instead of {shapes(carry_good)}, the output keeps shape {tuple(y_bad.shape)} "
             f"so nothing looks wrong, but changing sample 0's input changes sample 1's output by {leak_bad:.3g}: "
             "the two samples are chained as two time steps")
    fix = (f"initialize_carry got {seen_good['init_input_shape']}, final carry {shapes(carry_good)}, output "
           f"{tuple(y_good.shape)}; changing sample 0 changes sample 1's output by {leak_good:.3g} (independent)")
    return error, fix


def _init_and_apply(rnn: nn.Module, x: jax.Array) -> Any:
    return rnn.apply(rnn.init(jax.random.key(0), x), x)


def accepted_time_major(values: tuple[Any, ...] = (4, 0, -1, "x")) -> list[Any]:
    """The values nn.RNN's second positional field takes without an error (built and applied live)."""
    x = jnp.ones((2, 5, 3))
    ok = []
    for value in values:
        rnn = _old_nn.RNN(nn.LSTMCell(4), value)
        _, err = attempt(partial(_init_and_apply, rnn, x))
        if err is None:
            ok.append(value)
    return ok


def upgrade_breakages() -> list[Breakage]:
    """The errors flax 0.6.x code meets on current Flax, each reproduced live, with the fix run live too."""
    key = jax.random.key(0)
    x = jnp.ones((2, 5, 3))  # (batch, time, in_features)
    out: list[Breakage] = []

    _, err = attempt(lambda: _old_nn.LSTMCell())
    cell = nn.LSTMCell(features=4)
    params = cell.init(key, cell.initialize_carry(key, (2, 3)), jnp.ones((2, 3)))
    out.append(Breakage(
        "Cells need features", "cell = nn.LSTMCell()", err or "no error", "cell = nn.LSTMCell(features=4)",
        f"builds; init on a (2, 3) step gives {param_count(params)} parameters, num_feature_axes = "
        f"{cell.num_feature_axes}", False,
        "0.6.x cells read the hidden size off the carry; from 0.7 the cell holds it, so features is required."))

    _, err = attempt(lambda: _old_nn.LSTMCell.initialize_carry(jax.random.PRNGKey(0), (2,), 4))
    carry = nn.LSTMCell(features=4).initialize_carry(key, (2, 3))
    out.append(Breakage(
        "initialize_carry is an instance method",
        "carry = nn.LSTMCell.initialize_carry(jax.random.PRNGKey(0), (2,), 4)  # (rng, batch_dims, size)",
        err or "no error",
        "carry = nn.LSTMCell(features=4).initialize_carry(jax.random.key(0), (2, 3))  # (batch, in_features)",
        f"carry: tuple (c, h) with shapes {shapes(carry)}, dtype {carry[0].dtype.name}", False,
        "Called on the class, the key lands in self, (2,) in rng and 4 in input_shape; input_shape[:-1] then "
        "fails on the int. The new call takes the shape of one time step of input."))

    _, err = attempt(lambda: _old_nn.RNN(nn.LSTMCell(features=4), cell_size=4))
    rnn = nn.RNN(nn.LSTMCell(features=4))
    y = output(rnn, rnn.init(key, x), x)
    out.append(Breakage(
        "nn.RNN no longer takes cell_size",
        "rnn = nn.RNN(nn.LSTMCell(features=4), cell_size=4)", err or "no error",
        "rnn = nn.RNN(nn.LSTMCell(features=4))  # the cell knows its size",
        f"on x of shape {tuple(x.shape)} the output has shape {tuple(y.shape)}", False,
        "cell_size fed the old static initialize_carry; the cell's features replace it."))

    error, fix = _silent_time_major()
    accepted = ", ".join(repr(v) for v in accepted_time_major())
    out.append(Breakage(
        "nn.RNN(cell, 4) now sets time_major=4",
        "rnn = nn.RNN(nn.LSTMCell(features=4), 4)  # 0.6.x: nn.RNN(cell, cell_size)", error,
        "rnn = nn.RNN(nn.LSTMCell(features=4))", fix, True,
        f"In 0.6.x the second field of nn.RNN was cell_size; since flax {TIME_MAJOR_VERSION} it is time_major "
        f"(0.7.0-0.7.4 refused it with an error). Any value is accepted there without an error ({accepted}): "
        "a truthy one scans axis 0 as time."))
    return out
