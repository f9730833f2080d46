"""Which executor serves this process: ``$RNNLAB_EXECUTOR`` names it ('embedded', the default, or 'ray'), and who
is asking for work (a person, for fair shares)."""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping

from rnnlab.server import gate as gates
from rnnlab.server.embedded import EmbeddedExecutor
from rnnlab.server.executor import ENV_EXECUTOR, EXECUTORS, Executor

RAY_EXECUTOR = "rnnlab.server.ray_executor"  # imported by name, only when chosen: embedded mode never imports Ray

EMBEDDED = EmbeddedExecutor()


def current_executor() -> Executor:
    """The executor ``$RNNLAB_EXECUTOR`` names ('embedded' when unset); ValueError naming the allowed values."""
    name = os.environ.get(ENV_EXECUTOR, "").strip() or "embedded"
    if name not in EXECUTORS:
        raise ValueError(f"{ENV_EXECUTOR} must be one of {', '.join(EXECUTORS)}; got {name!r}")
    if name == "ray":
        return importlib.import_module(RAY_EXECUTOR).shared_executor()
    return EMBEDDED


def client_of(address: str | None, session: str, headers: Mapping[str, str] | None = None) -> str:
    """Who is asking, for fair shares: :func:`rnnlab.server.gate.client_of`."""
    return gates.client_of(address, session, headers)
