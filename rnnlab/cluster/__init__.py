"""Running the server's heavy work on a Ray cluster.

- :mod:`.local`: a Ray cluster on this machine for tests and load runs (a head with no CPUs and 1-CPU worker
  nodes), on loopback only, inside a network namespace of its own.
- :mod:`.web`: web processes (``streamlit run serve.py``) behind HAProxy with sticky sessions and per-address bounds,
  beside that cluster; the per-browser id the proxy writes (:mod:`rnnlab.server.access.clients` reads it).
- :mod:`.__main__`: ``python -m rnnlab.cluster up|down|status``.

The web process reaches a cluster through :class:`rnnlab.server.on_ray.executor.RayExecutor`
(``RNNLAB_EXECUTOR=ray``, ``RNNLAB_RAY_ADDRESS=HOST:PORT``).
"""
