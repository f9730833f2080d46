"""A class on the Ray tier (30 students; ``RNNLAB_CLASS_STUDENTS=300`` for a class of 300, several minutes): two web
processes (Ray executor) behind HAProxy, in a network namespace of their own, reached by the class's browsers without
a browser (tests/on_ray/class_driver.py) inside it. The answers live
in the cluster's answers actor, not in a web process: web1 is SIGKILLed halfway through the answers, its tabs open
again through the proxy (on web2) and find their answers kept, every student is counted once and every answer is
counted, the teacher's chart shows them all, and every student's screen shows the run after Reveal.

Skipped when HAProxy, Ray or a network namespace (root) is missing; always torn down. Wrap a run in
``flock /tmp/rnnlab-ray.lock`` on a machine where others use the Ray tier too.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from rnnlab.cluster import local, web
from tests.on_ray.test_web import web_tier

ROOT = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).with_name("class_driver.py")
NETNS = "rnnlab-answers"
FOLDER = Path("/tmp/rnnlab-answers")
STUDENTS = int(os.environ.get("RNNLAB_CLASS_STUDENTS", "30"))
WINDOW_S = 10.0
PRESET = "noisy_carry_adding"  # ten time steps: the run that settles it is ready soon
DRIVER_TIMEOUT_S = 1500  # start-up and the run included; the lesson itself takes about a minute
# Every client comes from one address here, as a class behind one NAT does: the per-address bound is raised for it.
# Each student opens four connections at once (the page, two probes, the websocket), more when a tab comes back.
BOUNDS = web.ProxyBounds(new_ids_per_minute=STUDENTS + 60, sessions=max(web.ProxyBounds.sessions, 2 * STUDENTS),
                         connections=max(web.ProxyBounds.connections, 8 * STUDENTS),
                         new_connections=max(web.ProxyBounds.new_connections, 8 * STUDENTS))
SETTINGS = {"RNNLAB_MAX_TRAININGS": "2", "RNNLAB_CLASS_STUDENTS_PER_ADDRESS": str(STUDENTS + 10)}


@pytest.fixture(scope="module")
def ray_tier():
    """Two web processes (Ray executor), HAProxy (making as many browser ids for one address as the class needs), a
    Ray head and two worker nodes in namespace ``rnnlab-answers``; always torn down."""
    pytest.importorskip("ray", reason="Ray is not installed: pip install -r requirements-ray.txt")
    yield from web_tier(FOLDER, NETNS, "ray", SETTINGS, bounds=BOUNDS)


@pytest.mark.slow
def test_a_class_keeps_every_answer_when_a_web_process_is_killed(ray_tier, tmp_path):
    state = ray_tier
    out = tmp_path / "lesson.pickle"
    given = {"pids": {n.role: n.pid for n in state.processes}, "address": state.address, "students": STUDENTS,
             "window": WINDOW_S, "preset": PRESET,
             "direct": [f"http://{local.HOST}:{web.WEB_PORT + i}" for i in range(2)]}
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RNNLAB_RAY_ADDRESS": state.address, **local.auth_env(FOLDER),
           "CLASS_DRIVER_LOG": str(tmp_path / "lesson.log")}
    log = tmp_path / "lesson.log"
    try:
        done = subprocess.run(local.in_netns([sys.executable, str(DRIVER), web.proxy_url(), json.dumps(given),
                                              str(out)], state.netns), env=env, cwd=ROOT, capture_output=True,
                              text=True, timeout=DRIVER_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the lesson took over {DRIVER_TIMEOUT_S} s; it got to:\n{log.read_text() if log.exists() else ''}")
    assert done.returncode == 0, (log.read_text() if log.exists() else "") + done.stderr[-4000:]
    got = pickle.loads(out.read_bytes())
    students = got["students"]
    assert got["joined"] == STUDENTS
    moved = [s for s in students if s["servers"][0] == "web1"]
    assert moved and len(moved) < STUDENTS, Counter(s["servers"][0] for s in students)  # round robin over both
    assert all(s["servers"][-1] == "web2" for s in moved)  # back through the proxy, on the one left
    answered_before = [s for s in moved if s["clicked_s"] is not None and s["clicked_s"] < got["killed_s"] - 1.0]
    assert answered_before and all(s["kept_after_reconnect"] for s in answered_before)  # held in the actor
    assert not [s["errors"] for s in students if s["errors"]]
    picks = Counter(got["picks"])
    assert got["view"]["joined"] == STUDENTS  # a tab that came back is the same student (its browser id)
    assert got["view"]["counts"][0] == tuple(picks.get(i, 0) for i in range(3))  # nothing lost, nothing twice
    assert got["teacher_count"][0] == STUDENTS
    assert all(s["result_s"] is not None for s in students)  # every screen shows the run after Reveal
    after = sorted(s["result_s"] - got["reveal_s"] for s in students)
    print(f"\n{STUDENTS} students joined in {got['joined_s']:.1f} s; web1 killed at {got['killed_s']:.1f} s with "
          f"{len(moved)} of them on it ({len(answered_before)} had answered); every answer counted; the run on "
          f"every screen {after[len(after) // 2]:.1f} s (median) and {after[-1]:.1f} s (last) after Reveal")
