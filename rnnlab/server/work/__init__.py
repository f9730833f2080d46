"""The heavy-work seam and what runs behind it. Every piece of heavy work a user starts is a :class:`Work` that
the process's executor (:func:`current_executor`) turns into a :class:`Job`: queued at the gate, run, reporting
its progress, cancellable. The door's names (``DOOR``) are all a page needs; the rest is behind it.

- :mod:`.executor`: the seam's interface (Work, Job, leases, the queue's words) and which executor is named.
- :mod:`.reporting`: what work calls between its pieces (progress, where a cancel stops it).
- :mod:`.embedded`: the default executor, work in worker threads of this process; :mod:`.executors` picks it or
  Ray's (:mod:`rnnlab.server.on_ray`).
- :mod:`.jobs`: the heavy work a user can start, as module-level functions of plain arguments.
- :mod:`.gate`: the server's slots, their fair queue and memory budget, and what a waiting user reads.
- :mod:`.shared_runs`: identical runs trained once, for every session watching them; :mod:`.results`:
  deterministic results (probes, sweeps) computed once for everyone.
- :mod:`.precompile`: long first compiles in a worker process that can be killed.
- :mod:`.warm`: what a class needs, ready before it arrives: the pages' imports and every preset's compiled
  programs (``python -m rnnlab warm``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rnnlab.server.doors import opener

if TYPE_CHECKING:
    from rnnlab.server.work import jobs
    from rnnlab.server.work.executor import (
        CANCELLED,
        DONE,
        FAILED,
        Cancelled,
        Job,
        Lease,
        QueueInfo,
        RunLease,
        Work,
    )
    from rnnlab.server.work.executors import current_executor
    from rnnlab.server.work.warm import fill_cache, wait_imported, warm_server

EXECUTOR = "rnnlab.server.work.executor"
DOOR = {
    "jobs": "rnnlab.server.work.jobs",
    **{name: EXECUTOR for name in ("CANCELLED", "DONE", "FAILED", "Cancelled", "Job", "Lease", "QueueInfo",
                                   "RunLease", "Work")},
    "current_executor": "rnnlab.server.work.executors",
    **{name: "rnnlab.server.work.warm" for name in ("fill_cache", "wait_imported", "warm_server")},
}
__all__ = [
    "CANCELLED", "Cancelled", "DONE", "FAILED", "Job", "Lease", "QueueInfo", "RunLease", "Work", "current_executor",
    "fill_cache", "jobs", "wait_imported", "warm_server",
]
__getattr__ = opener(__name__, DOOR)
