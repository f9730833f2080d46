"""One compiled call of a run's training (the rest of the current chunk, or as many of its steps as fit in the time
given) as a pure function, and its bytes forms for work that runs elsewhere.

:func:`compute_call` computes ``(config, state, n_active) -> (state, records, evaluation)`` and holds no
:class:`~rnnlab.training.train.Run`: the run applies the result to its history
(:meth:`~rnnlab.training.train.Run.apply_call`). The bytes forms use flax.serialization's msgpack, as the run
files do: :func:`compute_call_bytes` takes the state as bytes and returns the new state, the records and the
evaluation as bytes, so that a call can be computed in another process or on another machine.
"""

from __future__ import annotations

import threading
from typing import Any

import flax.serialization
import jax
import jax.numpy as jnp
import numpy as np

from rnnlab import ledger
from rnnlab.config import Config
from rnnlab.training.program import get_program, hyper_args

CallResult = tuple[dict, dict, dict]  # (new state, records of the steps, evaluation at the end)


def compute_call(config: Config, state: dict, n_active: int) -> CallResult:
    """Train ``n_active`` steps of ``config`` from ``state``: the new state (on the device), and the records and
    evaluation (on the host). ``state``'s buffers are donated: use the returned state from then on."""
    lr, clip, scale = hyper_args(config)
    first = int(state["step"]) if ledger.enabled() else 0  # read before the call donates the state
    state, records, evaluation = get_program(config).train_steps(state, lr, clip, scale, np.int32(n_active))
    records, evaluation = jax.device_get((records, evaluation))
    if ledger.enabled():
        ledger.record("call", run=ledger.digest(config), first=first, steps=int(records["applied"].sum()))
    return state, records, evaluation


def state_template(config: Config) -> dict:
    """The structure, shapes and dtypes of ``config``'s training state (nothing computed; traced once per compiled
    settings and kept)."""
    key = config.static_key()
    with _templates_lock:
        found = _templates.get(key)
    if found is None:
        lr, clip, scale = hyper_args(config)
        found = jax.eval_shape(get_program(config).init, np.int32(config.seed), scale, lr, clip)
        with _templates_lock:
            _templates[key] = found
            while len(_templates) > MAX_TEMPLATES:
                _templates.pop(next(iter(_templates)))
    return found


MAX_TEMPLATES = 64
_templates: dict[tuple, dict] = {}
_templates_lock = threading.Lock()


def state_to_bytes(state: dict) -> bytes:
    """A training state as msgpack bytes."""
    return flax.serialization.msgpack_serialize(flax.serialization.to_state_dict(jax.device_get(state)))


def state_from_bytes(config: Config, data: bytes) -> dict:
    """``config``'s training state from :func:`state_to_bytes`' bytes, on the device."""
    restored = flax.serialization.from_state_dict(state_template(config), flax.serialization.msgpack_restore(data))
    return jax.tree_util.tree_map(jnp.asarray, restored)


def result_to_bytes(result: CallResult) -> bytes:
    """A call's result (state, records, evaluation) as msgpack bytes."""
    state, records, evaluation = jax.device_get(result)
    record = {"state": flax.serialization.to_state_dict(state), "records": dict(records),
              "evaluation": {"loss": evaluation["loss"], "metric": evaluation["metric"],
                             "carry0": {str(i): leaf for i, leaf in enumerate(evaluation["carry0"])},
                             "per_step_loss": evaluation["per_step_loss"]}}
    return flax.serialization.msgpack_serialize(record)


def result_from_bytes(config: Config, data: bytes) -> CallResult:
    """:func:`result_to_bytes`' (state on the device, records and evaluation on the host)."""
    record: Any = flax.serialization.msgpack_restore(data)
    state = flax.serialization.from_state_dict(state_template(config), record["state"])
    evaluation = dict(record["evaluation"])
    carry0 = evaluation["carry0"]
    evaluation["carry0"] = tuple(np.asarray(carry0[str(i)]) for i in range(len(carry0)))
    records = {k: np.asarray(v) for k, v in record["records"].items()}
    return jax.tree_util.tree_map(jnp.asarray, state), records, evaluation


def compute_call_bytes(config: Config, state: bytes, n_active: int) -> bytes:
    """:func:`compute_call` with the state given and everything returned as bytes."""
    return result_to_bytes(compute_call(config, state_from_bytes(config, state), n_active))


def through_bytes(config: Config, state: dict, n_active: int) -> CallResult:
    """:func:`compute_call` computed from and returned as bytes, as work elsewhere would (a drop-in for it)."""
    return result_from_bytes(config, compute_call_bytes(config, state_to_bytes(state), n_active))
