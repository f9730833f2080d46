"""The sequence model: one shared cell scanned with ``nn.RNN``, a carry mode, and a per-step readout.

Carry modes (the heart of the app):

- ``fixed``: ``cell.initialize_carry(key, input_shape)`` with the chosen ``carry_init``, from one key per run;
- ``noisy``: the same, but from a fresh key for every batch (the "noisy initial state" trick);
- ``learnable``: the initial carry is a parameter per carry leaf (``c0``/``h0``), initialised by
  ``carry_init`` and broadcast over the batch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import flax.linen as nn
import jax
import jax.numpy as jnp

from rnnlab.i18n import N_, Msg, tp
from rnnlab.model.cell_spec import CellSpec
from rnnlab.model.cells import CELLS, carry_init_fn
from rnnlab.model.fused import fused_scan
from rnnlab.model.tasks import TASKS

CARRY_MODES: dict[str, str] = {  # id -> description (English, marked for the catalog: translate where shown)
    "fixed": N_("sampled once per run from carry_init (not trained)"),
    "noisy": N_("resampled from carry_init for every batch (not trained)"),
    "learnable": N_("a parameter initialised by carry_init and trained with the weights"),
}


def carry_mode_label(mode: str) -> str:
    """A carry mode's name in the reader's language ('learnable', '可学习', 'обучаемое'); the id stays in links."""
    labels = {
        # TRANSLATORS: a carry mode (how the initial carry h_0 is made), shown as an option; the id stays 'fixed'.
        "fixed": tp("carry mode", "fixed"),
        # TRANSLATORS: a carry mode: redrawn for every batch; the id stays 'noisy'.
        "noisy": tp("carry mode", "noisy"),
        # TRANSLATORS: a carry mode: a parameter trained with the weights; the id stays 'learnable'.
        "learnable": tp("carry mode", "learnable"),
    }
    return labels.get(mode, mode)


CARRY_MODE_PHRASES: dict[str, str] = {  # a run's carry in words (English, marked: translate where shown)
    "fixed": N_("fixed carry"), "noisy": N_("noisy carry"), "learnable": N_("learnable carry"),
}


def carry_mode_phrase(mode: str) -> Msg:
    """A run's carry in words, 'learnable carry', kept as a message (said in the reader's language when shown)."""
    if mode in CARRY_MODE_PHRASES:
        return Msg(CARRY_MODE_PHRASES[mode])
    # TRANSLATORS: {mode} is a carry mode's id (fixed, noisy, learnable) that has no words of its own.
    return Msg("{mode} carry", mode=mode)


class ProbedCell(nn.RNNCellBase):
    """Wraps a cell; with ``probe=True`` the last input channels are added to the new carry.

    The perturbation ``eps_t`` (zero in practice) is added to every carry leaf after step t, and the
    perturbed hidden state is also the step's output, so ``dL/deps_t`` is exactly the total ``dL/dh_t``.
    """

    cell: nn.RNNCellBase
    spec_name: str
    in_features: int
    probe: bool = False

    @nn.compact
    def __call__(self, carry, inputs):
        if not self.probe:
            return self.cell(carry, inputs)
        spec = CELLS[self.spec_name]
        x, eps = inputs[..., : self.in_features], inputs[..., self.in_features :]
        new_carry, _ = self.cell(carry, x)
        eps_leaves = jnp.split(eps, len(spec.leaves), axis=-1)
        leaves = tuple(c + e for c, e in zip(spec.carry_as_tuple(new_carry), eps_leaves))
        return spec.carry_from_tuple(leaves), leaves[spec.output_leaf]

    @nn.nowrap
    def initialize_carry(self, rng, input_shape):
        return self.cell.initialize_carry(rng, input_shape)

    @property
    def num_feature_axes(self) -> int:
        return self.cell.num_feature_axes


class SeqModel(nn.Module):
    """Cell + carry mode + ``nn.RNN`` + a dense readout at every step. Returns (batch, steps, out)."""

    cell: str
    task: str
    features: int
    carry_mode: str = "learnable"
    carry_init: str = "zeros"
    kernel_size: int = 3
    probe: bool = False
    unroll: int = 1
    fused: bool = True  # run the cell's fused form (its spec's: rnnlab.model.fused) where it has one
    hand_backward: bool = True  # differentiate the fused form with its hand-written backward pass

    @property
    def spec(self) -> CellSpec:
        return CELLS[self.cell]

    if TYPE_CHECKING:  # what __call__ returns (Flax types apply's result as a union with mutable='s pair)
        def apply(self, variables: Any, *args: Any, **kwargs: Any) -> Any: ...

    @nn.compact
    def __call__(self, x, carry_key, carry_scale, eps0=None, eps=None, carry=None, steps=None, start_only=False):
        """Run the model.

        Args:
          x: inputs, (batch, steps, features) or (batch, steps, side, side, channels) for spatial tasks.
          carry_key: key the fixed/noisy carry is drawn from (unused by the learnable mode).
          carry_scale: the carry initialiser's parameter (stddev, scale or value).
          eps0: optional perturbation added to the initial carry (a carry-shaped pytree).
          eps: with ``probe=True``, perturbations added after every step: (batch, steps, ..., leaves*features).
          carry: continue from this carry (a piece of a longer sequence) instead of the initial one; the call
            then returns ``(carry after step `steps`, predictions)``.
          steps: with ``carry``, how many of x's steps are real (the rest is padding); all by default.
          start_only: return the initial carry (plus ``eps0``) and nothing else.
        """
        spec = self.spec
        cell = spec.build(self.features, carry_init_fn(self.carry_init, carry_scale), self.kernel_size)
        step_shape = x.shape[:1] + x.shape[2:]
        carry0 = self.initial_carry(cell, carry_key, carry_scale, step_shape) if carry is None else carry
        if eps0 is not None:
            carry0 = jax.tree_util.tree_map(jnp.add, carry0, eps0)
        if start_only:
            return carry0
        if self.fused and spec.fused is not None and not self.is_initializing():
            final, outputs = fused_scan(spec.fused, self.variables["params"][str(cell.name)],
                                        spec.carry_as_tuple(carry0), x, eps if self.probe else None,
                                        None if carry is None else steps, self.unroll, self.hand_backward)
            return self.readout(outputs, carry is None, spec.carry_from_tuple(final))
        inputs = x if eps is None else jnp.concatenate([x, eps], axis=-1)
        rnn = nn.RNN(ProbedCell(cell, self.cell, x.shape[-1], self.probe), unroll=self.unroll, name="rnn")
        if carry is None:
            outputs = cast(jax.Array, rnn(inputs, initial_carry=carry0))
        else:
            lengths = None if steps is None else jnp.full(x.shape[:1], steps, jnp.int32)
            final, outputs = rnn(inputs, initial_carry=carry0, seq_lengths=lengths, return_carry=True)
        return self.readout(outputs, carry is None, None if carry is None else final)

    def readout(self, outputs: jax.Array, whole: bool, final: Any):
        """Predictions at every step from the cell's outputs: ``preds``, or ``(final, preds)`` for a piece."""
        if self.spec.spatial:
            logits = nn.Dense(1, name="readout")(outputs)[..., 0]
            preds = logits.reshape(logits.shape[:2] + (-1,))
        else:
            preds = nn.Dense(TASKS[self.task].out_features, name="readout")(outputs)
        return preds if whole else (final, preds)

    def initial_carry(self, cell: nn.RNNCellBase, key, scale, step_shape: tuple[int, ...]) -> Any:
        """The carry at t = 0 for this model's carry mode, with batch axis ``step_shape[0]``."""
        if self.carry_mode != "learnable":
            return cell.initialize_carry(key, step_shape)
        init = carry_init_fn(self.carry_init, scale)
        leaf_shape = carry_leaf_shape(self.cell, self.features, step_shape[1:])
        leaves = tuple(
            jnp.broadcast_to(self.param(f"{name}0", init, leaf_shape), step_shape[:1] + leaf_shape)
            for name in self.spec.leaves
        )
        return self.spec.carry_from_tuple(leaves)


def carry_leaf_shape(cell: str, features: int, step_shape_no_batch: tuple[int, ...]) -> tuple[int, ...]:
    """Shape of one carry leaf for one example: (features,), or spatial + (features,) for ConvLSTM."""
    if CELLS[cell].spatial:
        return tuple(step_shape_no_batch[:-1]) + (features,)
    return (features,)


def learned_carry(params: dict, cell: str) -> dict[str, jax.Array] | None:
    """The learnable initial carry leaves in ``params`` (``{'h': ...}`` or ``{'c': ..., 'h': ...}``)."""
    p = params.get("params", params)
    names = CELLS[cell].leaves
    if f"{names[0]}0" not in p:
        return None
    return {name: p[f"{name}0"] for name in names}


def sample_carry(model: SeqModel, key, scale, step_shape: tuple[int, ...]) -> Any:
    """A fixed/noisy carry for ``model``: ``cell.initialize_carry`` with the scaled ``carry_init``."""
    cell = model.spec.build(model.features, carry_init_fn(model.carry_init, scale), model.kernel_size)
    return cell.initialize_carry(key, step_shape)
