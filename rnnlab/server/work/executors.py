"""Which executor serves this process: ``$RNNLAB_EXECUTOR`` names it ('embedded', the default: this process's; or
'ray': the cluster's, shared by its web processes)."""

from __future__ import annotations

import importlib

from rnnlab.server.work.embedded import EmbeddedExecutor
from rnnlab.server.work.executor import Executor, executor_name

RAY_EXECUTOR = "rnnlab.server.on_ray.executor"  # imported by name, only when chosen: embedded mode never imports Ray

EMBEDDED = EmbeddedExecutor()


def current_executor() -> Executor:
    """The executor ``$RNNLAB_EXECUTOR`` names ('embedded' when unset); ValueError naming the allowed values."""
    if executor_name() == "ray":
        return importlib.import_module(RAY_EXECUTOR).shared_executor()
    return EMBEDDED
