"""rnnlab: how recurrent cells behave in JAX/Flax (all logic of the app lives in this package)."""

import os

__version__ = "0.1.0"

# XLA:CPU's concurrency-optimised scheduler can deadlock a vmapped training program (jaxlib 0.10.2: the sweep's
# init + evaluate of 3 or more stacked runs never finished, every worker idle). Turning it off fixed every try
# and costs nothing measurable here. XLA reads XLA_FLAGS when JAX starts its backend, which is after this import.
_XLA_FLAG = "--xla_cpu_enable_concurrency_optimized_scheduler=false"
if "xla_cpu_enable_concurrency_optimized_scheduler" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {_XLA_FLAG}".strip()
