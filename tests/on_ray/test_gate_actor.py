"""The gate as a named detached actor on the head node (rnnlab.server.on_ray.gate_actor), shared by two web processes:
one holds the only slot, the other queues behind it with the usual message, and is admitted within the lease
once the holder is SIGKILLed (a dead web process's tickets are released)."""

from __future__ import annotations

import pytest

pytest.importorskip("ray", reason="Ray is not installed: pip install -r requirements-ray.txt")


def test_a_dead_web_processs_slot_goes_to_the_next_in_the_queue(driver):
    got = driver("gate")
    assert got["holder"] == "held", got
    assert (got["position"], got["reason"]) == (1, "slots"), got
    assert got["message"].startswith("All 1 slots of this server are busy (1 running, 1 waiting)"), got
    assert not got["admitted_while_held"], got
    assert got["admitted"] and got["admitted_after_s"] < 3 * 2.0, got
    assert got["after_release"]["running"] == 0 and got["after_release"]["waiting"] == 0, got
