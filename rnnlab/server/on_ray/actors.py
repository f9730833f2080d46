"""What the cluster's shared actors have in common: Ray's namespace, the head node they live on, how one is made,
and the owner lease and poll interval of the web processes that use them (:mod:`.gate_actor`, :mod:`.registry`).

Each of these is written here once; an actor module keeps only what is its own (its name, its call timeout).
"""

from __future__ import annotations

from typing import Any

import ray

NAMESPACE = "rnnlab"  # Ray's namespace of every rnnlab driver and actor: named actors are found within it
HEAD = {"node:__internal_head__": 0.001}  # a resource only the head node has: the shared actors live there
LEASE_S = 6.0  # an owner (web process) not heard from for this long loses what it holds there: tickets, claims
POLL_S = 0.1  # a web process asks again this often while it waits on a shared actor (a ticket's place, a result)


def shared_actor(cls: type, name: str, *args: Any):
    """The cluster's actor ``name``, created from ``cls(*args)`` on the head node when none runs, detached (it
    outlives the web process that made it) and restarted by Ray when its process dies. Needs :func:`ray.init`
    first."""
    return ray.remote(cls).options(name=name, namespace=NAMESPACE, lifetime="detached", get_if_exists=True,
                                   max_restarts=-1, num_cpus=0, resources=HEAD).remote(*args)


def named_actor(name: str):
    """The running actor ``name`` in rnnlab's namespace (ValueError when there is none)."""
    return ray.get_actor(name, namespace=NAMESPACE)
