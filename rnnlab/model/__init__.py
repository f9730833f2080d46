"""The model and its parts, each a registry declared once.

- :mod:`.cells`: the recurrent cells and the carry initialisers.
- :mod:`.gates`: gate activations computed from a cell's own parameter tree.
- :mod:`.fused`: the vector cells run fused (Flax's functions and parameters, a hand-written backward pass).
- :mod:`.network`: the sequence model, its carry modes and its readout.
- :mod:`.tasks`: the synthetic tasks with their memoryless baselines.
- :mod:`.optimizers`: the optax optimisers, each with gradient clipping.
"""

from rnnlab.model.cells import CARRY_INITS, CELLS, CarryInitSpec, CellSpec
from rnnlab.model.network import CARRY_MODES, SeqModel
from rnnlab.model.optimizers import OPTIMIZERS, OptimizerSpec, make_optimizer
from rnnlab.model.tasks import TASKS, TaskSpec

__all__ = ["CARRY_INITS", "CARRY_MODES", "CELLS", "OPTIMIZERS", "TASKS", "CarryInitSpec", "CellSpec",
           "OptimizerSpec", "SeqModel", "TaskSpec", "make_optimizer"]
