"""The executor for more machines: heavy work computed on a Ray cluster (``RNNLAB_EXECUTOR=ray``,
``RNNLAB_RAY_ADDRESS``). Ray is imported by these modules only, and they only when that executor is chosen
(:func:`rnnlab.server.work.executors.current_executor` imports :mod:`.executor` by name); this file imports nothing.

- :mod:`.executor`: :class:`~.executor.RayExecutor`, work admitted at the cluster's gate and computed on its
  workers, with Ray's token checked at connection.
- :mod:`.actors`: what the shared actors have in common (Ray's namespace, the head node, the owners' lease and
  poll interval) and how one is made.
- :mod:`.gate_actor`: the gate as a named actor shared by a cluster's web processes, and the web process's view
  of it.
- :mod:`.registry`: results computed once for every web process of a cluster, kept in an actor; the progress of
  work on a worker.
- :mod:`.cluster_runs`: a pristine run's compiled calls computed once for every web process, and its finished run
  kept.
- :mod:`.answers_actor`: the classes' answers in one actor that every web process asks.
"""
