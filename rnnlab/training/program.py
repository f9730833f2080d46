"""Compiled programs: everything jitted for one static configuration, built once and cached.

A :class:`Program` holds the model and the jitted functions for one ``Config.static_key()``. Learning rate,
clip, seed, carry scale and the number of active steps are arguments, so changing them reuses the program.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from functools import cached_property
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

from rnnlab.config import Config, Static, static_part
from rnnlab.device import env_float
from rnnlab.memory import give_back_free_memory
from rnnlab.model.cells import CELLS
from rnnlab.model.network import SeqModel, learned_carry, sample_carry
from rnnlab.model.optimizers import make_optimizer
from rnnlab.model.tasks import TASKS
from rnnlab.norms import scaled_norm, tree_norm
from rnnlab.training.compiled import compile_count

# Keys derived from the run's seed: one stream per purpose, so runs are reproducible piece by piece.
PARAMS, FIXED_CARRY, BATCH, NOISY_CARRY, EVAL_BATCH, EVAL_CARRY = range(6)


def stream(root: jax.Array, purpose: int, index=None) -> jax.Array:
    """The key for ``purpose`` (and step ``index``) derived from the run's root key."""
    key = jax.random.fold_in(root, purpose)
    return key if index is None else jax.random.fold_in(key, index)


def tree_all_finite(tree) -> jax.Array:
    leaves = jax.tree_util.tree_leaves(tree)
    return jnp.all(jnp.stack([jnp.all(jnp.isfinite(x)) for x in leaves]))


def leaf_norms(spec_leaves: tuple[str, ...], carry_tuple) -> dict[str, jax.Array]:
    """The norm of each carry leaf (scaled, so that tiny gradients keep their size)."""
    return {name: scaled_norm(leaf) for name, leaf in zip(spec_leaves, carry_tuple)}


class Program:
    """Model, task, optimiser and the jitted init / train-steps / evaluate functions for one static config."""

    def __init__(self, static: Static, fused: bool = True, hand_backward: bool = True):
        self.static = static
        self.fused = fused  # False runs Flax's own cells (what the fused ones are measured against)
        self.task = TASKS[static.task]
        self.spec = CELLS[static.cell]
        self.steps = self.task.steps(static.seq_len)
        kwargs: dict[str, Any] = dict(cell=static.cell, task=static.task, features=static.features,
                                      carry_mode=static.carry_mode, carry_init=static.carry_init,
                                      kernel_size=static.kernel_size, fused=fused, hand_backward=hand_backward)
        self.model = SeqModel(**kwargs)
        self.probe_model = SeqModel(**kwargs, probe=True)
        self.tx = make_optimizer(static.optimizer)
        self.init = jax.jit(self.plain_init)
        self.train_steps = jax.jit(self.plain_train_steps, donate_argnums=(0,))
        self.evaluate = jax.jit(self.plain_evaluate)
        self._extra: dict[str, Callable] = {}
        self._extra_lock = threading.Lock()

    def jitted(self, name: str, make: Callable[[Program], Callable]) -> Callable:
        """A further jitted function of this program (a probe), built by ``make(self)`` once and kept."""
        with self._extra_lock:
            if name not in self._extra:
                self._extra[name] = jax.jit(make(self))
            return self._extra[name]

    def is_compiled(self, name: str | None = None) -> bool:
        """Whether :attr:`train_steps` (or the further function ``name``) has been compiled in this process."""
        if name is None:
            return compile_count(self.train_steps) > 0
        with self._extra_lock:
            fn = self._extra.get(name)
        return fn is not None and compile_count(fn) > 0

    # ---- pieces ----------------------------------------------------------------------------------
    def batch_for(self, root: jax.Array, purpose: int, index=None):
        return self.task.generate(stream(root, purpose, index), self.static.batch, self.static.seq_len)

    @cached_property
    def example_inputs(self) -> jax.ShapeDtypeStruct:
        x, _ = jax.eval_shape(lambda k: self.task.generate(k, self.static.batch, self.static.seq_len),
                              jax.random.PRNGKey(0))
        return x

    def carry_shapes(self) -> tuple[tuple[int, ...], ...]:
        """Shape of each carry leaf for a batch: (batch, features) or (batch, side, side, features)."""
        x = self.example_inputs
        inner = x.shape[2:-1] if self.spec.spatial else ()
        return tuple((self.static.batch, *inner, self.static.features) for _ in self.spec.leaves)

    def zero_carry(self):
        return self.spec.carry_from_tuple(tuple(jnp.zeros(s) for s in self.carry_shapes()))

    def carry_key(self, root: jax.Array, step) -> jax.Array:
        """Key the fixed (one per run) or noisy (one per step) carry is drawn from."""
        if self.static.carry_mode == "noisy":
            return stream(root, NOISY_CARRY, step)
        return stream(root, FIXED_CARRY)

    def loss_fn(self, params, eps0, x, y, carry_key, scale):
        preds = self.model.apply(params, x, carry_key, scale, eps0=eps0)
        return self.task.loss(preds, y), preds

    def initial_carry(self, params, carry_key, scale) -> tuple[jax.Array, ...]:
        """The carry at t = 0 of the first example of a batch (what the carry-evolution charts show)."""
        learned = learned_carry(params, self.static.cell)
        if learned is not None:
            return tuple(learned[name] for name in self.spec.leaves)
        x = self.example_inputs
        carry = sample_carry(self.model, carry_key, scale, x.shape[:1] + x.shape[2:])
        return tuple(leaf[0] for leaf in self.spec.carry_as_tuple(carry))

    # ---- the functions jitted above (plain, so that a caller can vmap them first) -----------------
    def plain_init(self, seed, scale, lr, clip):
        root = jax.random.PRNGKey(seed)
        x, _ = self.batch_for(root, BATCH, 0)
        params = self.model.init(stream(root, PARAMS), x, self.carry_key(root, 0), scale)
        opt_state = self.tx.init(params)
        opt_state.hyperparams["learning_rate"] = jnp.asarray(lr, jnp.float32)
        opt_state.hyperparams["max_norm"] = jnp.asarray(clip, jnp.float32)
        return {"params": params, "opt_state": opt_state, "step": jnp.zeros((), jnp.int32),
                "diverged": jnp.zeros((), bool), "root": root}

    def plain_train_steps(self, state, lr, clip, scale, n_active):
        """``n_active`` optimiser steps in one compiled call, at most a chunk's (``chunk``): a loop of that many steps,
        so a caller bounds the time of a call by the steps it asks for. Records past ``n_active`` are zeros.

        Returns the new state, per-step records (loss, metric, grad_norm, h0 grad norm per leaf, applied,
        bad) and the evaluation after the last step (carry snapshot, per-timestep loss), which the run keeps at a
        chunk's end.
        """
        state = dict(state)
        opt_state = state["opt_state"]
        opt_state.hyperparams["learning_rate"] = jnp.asarray(lr, jnp.float32)
        opt_state.hyperparams["max_norm"] = jnp.asarray(clip, jnp.float32)
        root = state["root"]
        eps0 = self.zero_carry()
        grad_fn = jax.value_and_grad(self.loss_fn, argnums=(0, 1), has_aux=True)

        def step(carry):
            params, opt_state, step, diverged = carry
            x, y = self.batch_for(root, BATCH, step)
            (loss, preds), (g_params, g_eps0) = grad_fn(params, eps0, x, y, self.carry_key(root, step), scale)
            updates, new_opt = self.tx.update(g_params, opt_state, params)
            new_params = optax.apply_updates(params, updates)
            grad_norm = tree_norm(g_params)
            live = ~diverged
            finite = jnp.isfinite(loss) & jnp.isfinite(grad_norm) & tree_all_finite(new_params)
            apply = live & finite
            pick = lambda new, old: jax.tree_util.tree_map(lambda a, b: jnp.where(apply, a, b), new, old)  # noqa: E731
            record = {"loss": loss, "metric": self.task.metric(preds, y), "grad_norm": grad_norm,
                      "applied": apply, "bad": live & ~finite}
            for name, norm in leaf_norms(self.spec.leaves, self.spec.carry_as_tuple(g_eps0)).items():
                record[f"h0_grad_{name}"] = norm
            carry = (pick(new_params, params), pick(new_opt, opt_state), step + apply.astype(jnp.int32),
                     diverged | (live & ~finite))
            return carry, record

        def body(i, loop):
            carry, records = loop
            carry, record = step(carry)
            return carry, jax.tree_util.tree_map(lambda buf, v: buf.at[i].set(v), records, record)

        init = (state["params"], opt_state, state["step"], state["diverged"])
        empty = jax.tree_util.tree_map(lambda s: jnp.zeros((self.static.chunk, *s.shape), s.dtype),
                                       jax.eval_shape(step, init)[1])
        (params, opt_state, count, diverged), records = jax.lax.fori_loop(
            0, jnp.minimum(n_active, self.static.chunk), body, (init, empty))
        state.update(params=params, opt_state=opt_state, step=count, diverged=diverged)
        return state, records, self.plain_evaluate(params, root, scale)

    def plain_evaluate(self, params, root, scale):
        """Loss, metric and per-timestep loss on the run's fixed evaluation batch, and the initial carry."""
        x, y = self.batch_for(root, EVAL_BATCH)
        carry_key = stream(root, EVAL_CARRY) if self.static.carry_mode == "noisy" else self.carry_key(root, 0)
        preds = self.model.apply(params, x, carry_key, scale)
        return {"loss": self.task.loss(preds, y), "metric": self.task.metric(preds, y),
                "per_step_loss": self.task.per_step_loss(preds, y),
                "carry0": self.initial_carry(params, carry_key, scale)}


# Compiled programs kept for reuse, least recently used first out. Each holds about 40 MB on a CPU server
# (measured: a process training one new configuration after another grows by 35-45 MB per configuration until
# programs are dropped, and stays level from then on once their memory is given back to the system) and about
# 20 memory mappings (a process may have 65,530), so the cache is small: a dropped program is compiled again, or
# read from the disk cache, when asked for. ``$RNNLAB_MAX_PROGRAMS`` changes the bound.
MAX_PROGRAMS = int(env_float("RNNLAB_MAX_PROGRAMS", 4))
_PROGRAMS: OrderedDict[Static, Program] = OrderedDict()
_LOCK = threading.Lock()


def get_program(config: Config) -> Program:
    """The cached :class:`Program` for ``config``'s static part (one per static configuration, thread-safe).

    Setting up a new one first gives the memory of dropped programs and of earlier compiles back to the system.
    """
    static = static_part(config)
    with _LOCK:
        program = _PROGRAMS.get(static)
        new = program is None
        if program is None:
            program = _PROGRAMS[static] = Program(static)
        _PROGRAMS.move_to_end(static)
        while len(_PROGRAMS) > MAX_PROGRAMS:
            _PROGRAMS.popitem(last=False)
    if new:
        give_back_free_memory()
    return program


def is_compiled(config: Config, name: str | None = None) -> bool:
    """Whether ``config``'s kept program has compiled its ``train_steps`` (or the function ``name``); False when no
    program of it is kept. Unlike :func:`get_program`, asking sets nothing up (a new program would drop a kept one
    and give memory back to the system, hundreds of ms)."""
    with _LOCK:
        program = _PROGRAMS.get(static_part(config))
    return program is not None and program.is_compiled(name)


def hyper_args(config: Config) -> tuple[np.float32, np.float32, np.float32]:
    """lr, clip and carry scale as float32 scalars (fixed dtypes, so no recompilation)."""
    return (np.float32(config.lr), np.float32(config.clip), np.float32(config.carry_scale))
