"""One server, many users: the layer above the core, in packages by what a page may touch. Pages and ``ui/``
import only their doors (:mod:`.work`, :mod:`.access`, :mod:`.storage`, :mod:`.answers`); each door hands out the
names of its table and loads its modules when a name is first asked for (:mod:`.doors`).

- :mod:`.work`: the heavy-work seam and what runs behind it: the executor's interface, the embedded executor and
  the choice of one, the jobs, the gate, shared runs, results computed once, first compiles in a worker, the
  warm-up.
- :mod:`.access`: who is asking (a browser, a machine) and what one tab may send, at the web process's ASGI
  boundary; page runs taking turns.
- :mod:`.storage`: what is kept for a reload: a tab's runs under its token, their files, the checks a folder of
  private files passes.
- :mod:`.answers`: the classes that predict together and their answers (this process's book, or the cluster's).
- :mod:`.on_ray`: the Ray wing: the same seam with the computing on a Ray cluster (``RNNLAB_EXECUTOR=ray``), and
  the state a cluster's web processes share as actors (the gate, results, runs, the classes' answers).
- :mod:`.doors`: how a door hands out its names.
"""
