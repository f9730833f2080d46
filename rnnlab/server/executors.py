"""Which executor serves this process, and which store keeps its classes' answers: ``$RNNLAB_EXECUTOR`` names
both ('embedded', the default: this process's; or 'ray': the cluster's, shared by its web processes)."""

from __future__ import annotations

import importlib
import os

from rnnlab.server.embedded import EmbeddedExecutor
from rnnlab.server.executor import ENV_EXECUTOR, EXECUTORS, Executor
from rnnlab.server.votes import BOOK, VoteStore

RAY_EXECUTOR = "rnnlab.server.on_ray.executor"  # imported by name, only when chosen: embedded mode never imports Ray
RAY_VOTES = "rnnlab.server.on_ray.votes_actor"

EMBEDDED = EmbeddedExecutor()


def executor_name() -> str:
    """``$RNNLAB_EXECUTOR`` ('embedded' when unset); ValueError naming the allowed values."""
    name = os.environ.get(ENV_EXECUTOR, "").strip() or "embedded"
    if name not in EXECUTORS:
        raise ValueError(f"{ENV_EXECUTOR} must be one of {', '.join(EXECUTORS)}; got {name!r}")
    return name


def current_executor() -> Executor:
    """The executor ``$RNNLAB_EXECUTOR`` names ('embedded' when unset); ValueError naming the allowed values."""
    if executor_name() == "ray":
        return importlib.import_module(RAY_EXECUTOR).shared_executor()
    return EMBEDDED


def current_votes() -> VoteStore:
    """Where this process's classes and their answers are kept: this process's book, or with the Ray executor the
    cluster's actor, which every web process asks (a class outlives any one of them)."""
    if executor_name() == "ray":
        return importlib.import_module(RAY_VOTES).shared_votes()
    return BOOK
