"""The model and its parts, each a registry declared once.

- :mod:`.cells`: the registries of the recurrent cells (collected from :mod:`.cell_families`) and the carry
  initialisers.
- :mod:`.cell_families`: one file per cell family, holding its specs, its fused step with the hand-written
  derivative, its gates and its step as the log-scaled probe differentiates it.
- :mod:`.cell_spec`: what a cell is to every part of rnnlab (:class:`~.cell_spec.CellSpec`).
- :mod:`.fused`: the vector cells run fused over time (Flax's functions and parameters, a hand-written backward
  pass).
- :mod:`.probe_step`: a cell's step as the log-scaled probe differentiates it (derivatives that keep their size
  near saturation, factors kept with their exact logs).
- :mod:`.gates`: what a gated cell's gates are called, which keeps the carry, and where its fused step keeps them.
- :mod:`.network`: the sequence model, its carry modes and its readout.
- :mod:`.tasks`: the synthetic tasks with their memoryless baselines.
- :mod:`.optimizers`: the optax optimisers, each with gradient clipping.
"""

from rnnlab.model.cell_spec import CellSpec
from rnnlab.model.cells import CARRY_INITS, CELLS, CarryInitSpec
from rnnlab.model.network import CARRY_MODES, SeqModel
from rnnlab.model.optimizers import OPTIMIZERS, OptimizerSpec, make_optimizer
from rnnlab.model.tasks import TASKS, TaskSpec

__all__ = ["CARRY_INITS", "CARRY_MODES", "CELLS", "OPTIMIZERS", "TASKS", "CarryInitSpec", "CellSpec",
           "OptimizerSpec", "SeqModel", "TaskSpec", "make_optimizer"]
