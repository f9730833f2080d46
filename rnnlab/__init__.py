"""rnnlab: how recurrent cells behave in JAX/Flax (all logic of the app lives in this package)."""

__version__ = "0.1.0"
