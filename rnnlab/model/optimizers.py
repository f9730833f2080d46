"""Registry of optax optimisers, each wrapped with gradient clipping by global norm.

The learning rate and the clip value are injected hyperparameters (``optax.inject_hyperparams``), so they
are numbers in the optimiser state and changing them does not recompile the training step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import optax

from rnnlab.i18n import N_, _


@dataclass(frozen=True)
class OptimizerSpec:
    name: str
    label_en: str  # English, marked for the catalog where it has words: see ``label``
    make: Callable[[float], optax.GradientTransformation]
    description: str = ""  # English, marked for the catalog: translate where shown

    @property
    def label(self) -> str:
        """The readable name in the reader's language."""
        return _(self.label_en)


OPTIMIZERS: dict[str, OptimizerSpec] = {
    spec.name: spec
    for spec in [
        OptimizerSpec("adam", "Adam", lambda lr: optax.adam(lr), N_("Adam (b1=0.9, b2=0.999).")),
        OptimizerSpec("sgd", N_("SGD + momentum"), lambda lr: optax.sgd(lr, momentum=0.9),
                      N_("Stochastic gradient descent with momentum 0.9.")),
        OptimizerSpec("rmsprop", "RMSProp", lambda lr: optax.rmsprop(lr), N_("RMSProp (decay 0.9).")),
    ]
}


def make_optimizer(name: str) -> optax.GradientTransformation:
    """Clip by global norm, then the named optimiser; ``learning_rate`` and ``max_norm`` are injected.

    A ``max_norm`` of 0 or less means no clipping.
    """
    spec = OPTIMIZERS[name]

    def chain(learning_rate, max_norm):
        clip = optax.clip_by_global_norm(max_norm)
        return optax.chain(_clip_if_positive(clip, max_norm), spec.make(learning_rate))

    return optax.inject_hyperparams(chain)(learning_rate=1e-3, max_norm=1.0)


def _clip_if_positive(clip: optax.GradientTransformation, max_norm) -> optax.GradientTransformation:
    def update(updates, state, params=None):
        clipped, state = clip.update(updates, state, params)
        on = max_norm > 0
        return jax.tree_util.tree_map(lambda c, u: jnp.where(on, c, u), clipped, updates), state

    return optax.GradientTransformation(clip.init, update)
