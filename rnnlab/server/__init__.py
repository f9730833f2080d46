"""One server, many users.

- :mod:`.executor`: the seam every piece of heavy work goes through, its interface: a :class:`~.executor.Work`
  becomes a job that is queued, runs, reports its progress and can be cancelled.
- :mod:`.reporting`: what work calls between its pieces (progress, where a cancel stops it).
- :mod:`.embedded`: the default executor, work in worker threads of this process.
- :mod:`.executors`: which executor serves this process (``RNNLAB_EXECUTOR``).
- :mod:`.on_ray`: the same seam with the computing on a Ray cluster (``RNNLAB_EXECUTOR=ray``): its executor,
  the gate and the results as actors shared by a cluster's web processes, a pristine run's compiled calls computed once.
- :mod:`.jobs`: the heavy work a user can start, as module-level functions of plain arguments.
- :mod:`.gate`: the server's slots, their fair queue and memory budget, and what a waiting user reads.
- :mod:`.shared_runs`: identical runs trained once, for every session watching them.
- :mod:`.results`: deterministic results (probes, sweeps) computed once for everyone.
- :mod:`.precompile`: long first compiles in a worker process that can be killed.
- :mod:`.session_store`, :mod:`.run_files`: runs kept for a browser reload (all written at exit); :mod:`.tab_token`:
  the token's name in a page's URL; :mod:`.folders`: the checks a folder of private files passes.
- :mod:`.clients`: who is asking (a browser, a machine), for every per-person and per-address bound.
- :mod:`.session_bounds`: what one tab may send, and which pages may open it, at the web process's ASGI boundary.
- :mod:`.warm`: what a class needs, ready before it arrives: the pages' imports and every preset's compiled
  programs (``python -m rnnlab warm``).
- :mod:`.turns`: page runs one at a time, in the order they came, so that a class opening one link gets its pages
  in turn instead of all at the end.
- :mod:`.votes`: the classes that predict together and their answers (this process's book, or the cluster's).
"""
