"""Which executor serves this process: ``$RNNLAB_EXECUTOR`` names it ('embedded', the default, or 'ray')."""

from __future__ import annotations

import importlib
import os

from rnnlab.server.embedded import EmbeddedExecutor
from rnnlab.server.executor import ENV_EXECUTOR, EXECUTORS, Executor

RAY_EXECUTOR = "rnnlab.server.on_ray.executor"  # imported by name, only when chosen: embedded mode never imports Ray

EMBEDDED = EmbeddedExecutor()


def current_executor() -> Executor:
    """The executor ``$RNNLAB_EXECUTOR`` names ('embedded' when unset); ValueError naming the allowed values."""
    name = os.environ.get(ENV_EXECUTOR, "").strip() or "embedded"
    if name not in EXECUTORS:
        raise ValueError(f"{ENV_EXECUTOR} must be one of {', '.join(EXECUTORS)}; got {name!r}")
    if name == "ray":
        return importlib.import_module(RAY_EXECUTOR).shared_executor()
    return EMBEDDED

