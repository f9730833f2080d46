"""rnnlab: how recurrent cells behave in JAX/Flax (all logic of the app lives in this package).

Imports go one way, from the base up (tests/test_layout.py checks it):

- base: :mod:`.i18n` (the interface's language: catalogs, messages, numbers as each language writes them), :mod:`.text`
  (user-facing text helpers), :mod:`.true_sizes` (the true size's vocabulary: float32's and float64's floors, the words
  for a zero, a size written from its log10), :mod:`.device` (what JAX runs on, the memory runs may use), :mod:`.norms`
  (norms that survive float32's range), :mod:`.memory` (freed memory given back to the system), :mod:`.ledger` (an
  optional record of the heavy work done, for load measurements);
- :mod:`.model`: cells, tasks, the sequence model and the optimisers;
- :mod:`.config` (the settings table and the experiment record) and :mod:`.grids` (what grids of runs vary);
- :mod:`.training`: compiled programs and runs trained in chunks, one compiled call at a time;
- :mod:`.probing`: gradients through time, tables of a run, one example unrolled;
- :mod:`.sweep`: grids of runs trained at once (vmapped), with their verdicts;
- :mod:`.figures` (Plotly figures), :mod:`.files` (downloads and uploads), :mod:`.flaxapi` (the Old vs new API
  lesson);
- :mod:`.sharing` (an experiment in a URL, a preset or a class link) and :mod:`.session` (what a page session
  decides, without Streamlit);
- :mod:`.server`: one server shared by many users;
- :mod:`.cli` (``python -m rnnlab``, see :mod:`.__main__`), :mod:`.bench` (the benchmark suite) and
  :mod:`.cluster` (a local Ray cluster: ``python -m rnnlab.cluster``).
"""

import os

__version__ = "0.1.0"

# XLA:CPU's concurrency-optimised scheduler can deadlock a vmapped training program (jaxlib 0.10.2: the sweep's
# init + evaluate of 3 or more stacked runs never finished, every worker idle). Turning it off fixed every try
# and costs nothing measurable here. XLA reads XLA_FLAGS when JAX starts its backend, which is after this import.
# The flag is XLA:CPU's own: an accelerator's backend reads it and ignores it.
_XLA_FLAG = "--xla_cpu_enable_concurrency_optimized_scheduler=false"
if "xla_cpu_enable_concurrency_optimized_scheduler" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {_XLA_FLAG}".strip()

# On a GPU, JAX takes 75% of the device's memory for itself when it starts. The server shares its GPU with the
# worker processes of long compiles (and a Ray node with its workers), so each process takes only what it uses, and
# the memory budget (rnnlab.device) reads what the device has free. No effect on a CPU. An operator's own
# setting wins.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
