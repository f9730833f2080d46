"""Where CI asks for the Ray tier (``RNNLAB_REQUIRE_RAY=1``), everything its tests need is here, so that none of
them can pass by being skipped: Ray itself (the package, not a folder of that name), HAProxy and the right to make
network namespaces."""

from __future__ import annotations

import importlib.util
import os
import shutil

import pytest

from rnnlab.cluster import local


@pytest.mark.skipif(os.environ.get("RNNLAB_REQUIRE_RAY") != "1", reason="only where RNNLAB_REQUIRE_RAY=1 (CI)")
def test_the_ray_tier_can_run_here():
    spec = importlib.util.find_spec("ray")
    assert spec is not None and spec.origin is not None, "Ray is not installed: pip install -r requirements-ray.txt"
    assert shutil.which("haproxy"), "HAProxy is missing: apt-get install haproxy"
    assert local.can_create_netns() is None, local.can_create_netns()
    local.ray_command()
