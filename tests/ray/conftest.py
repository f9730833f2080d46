"""The Ray tests: each module is skipped when ``ray`` is not installed (pip install -r requirements-ray.txt); those
that need the local cluster (:func:`cluster`) are skipped when this process cannot create a network namespace (root
needed) or a local cluster is already up."""

from __future__ import annotations

import pytest

from rnnlab.cluster import local


@pytest.fixture(scope="session")
def cluster():
    """A head and two 1-CPU worker nodes on loopback in the namespace ``rnnlab``; always torn down."""
    why = local.can_create_netns()
    if why:
        pytest.skip(f"the local Ray cluster needs a network namespace of its own: {why}")
    if local.State.load(local.STATE_DIR) is not None or local.netns_exists():
        pytest.skip("a local Ray cluster is already up on this machine (python -m rnnlab.cluster down stops it)")
    try:
        state = local.up(workers=2)
    except local.ClusterError as e:
        pytest.fail(str(e))
    try:
        yield state
    finally:
        local.down()

