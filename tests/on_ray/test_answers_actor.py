"""The classes' answers in the cluster's answers actor (rnnlab.server.on_ray.answers_actor), asked by two web processes
in turn inside the local cluster's namespace: the first opens a class, takes three answers and is SIGKILLed; the
second finds them all, counts a student who answers again once, reveals with the teacher's key, and gets the
store's refusals (a closed question, a wrong key, a bad code) as the same messages the page shows. Also: a web
process asks the actor for a class's view at most every half second however many of its students look."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ray", reason="Ray is not installed: pip install -r requirements-ray.txt")

from rnnlab.cluster import local

ROOT = Path(__file__).resolve().parents[2]
FIRST = """
import json, os, signal
from rnnlab.server.answers import current_answers
store = current_answers()
opened = store.open(["gru_adding"], "ip:10.0.0.1")
for i, choice in enumerate((1, 1, 2)):
    store.answer(opened.code, f"browser:{i:032d}@10.0.0.7", 0, 1, choice)
print(json.dumps({"code": opened.code, "secret": opened.secret}), flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""
SECOND = """
import json, sys, time
from rnnlab.server.answers import current_answers
from rnnlab.server.answers.class_book import ClassGone, NotTeacher, AnswerRefused
given = json.loads(sys.argv[1])
store, code, key, out = current_answers(), given["code"], given["secret"], {}
out["kept"] = list(store.view(code).question.counts[0])
store.answer(code, "browser:00000000000000000000000000000000@10.0.0.7", 0, 1, 1)  # the same answer again
store.answer(code, "browser:00000000000000000000000000000002@10.0.0.7", 0, 1, 0)  # a changed one
store.answer(code, "browser:00000000000000000000000000000009@10.0.0.8", 0, 1, 1)  # a new student
time.sleep(0.6)
view = store.view(code)
out["after"], out["joined"] = list(view.question.counts[0]), view.joined
for name, call in {"wrong key": lambda: store.teach(code, key[:-1] + "x", "reveal"),
                   "bad code": lambda: store.view("ZZZZZZ")}.items():
    try:
        call()
    except AnswerRefused as e:
        out[name] = [type(e).__name__, e.message.message]
out["revealed"] = store.teach(code, key, "reveal").question.revealed
try:
    store.answer(code, "browser:00000000000000000000000000000009@10.0.0.8", 0, 1, 2)
except AnswerRefused as e:
    out["closed"] = e.message.message
calls = []
actor_call = type(store).call
type(store).call = lambda self, method, *args: calls.append(method) or actor_call(self, method, *args)
start = time.monotonic()
while time.monotonic() - start < 2.0:
    store.view(code)
out["views_asked_in_2_s"] = calls.count("view")
print(json.dumps(out), flush=True)
"""


def run_inside(cluster, code: str, *args: str) -> subprocess.CompletedProcess:
    """``code`` run by this Python inside the cluster's namespace as a web process would run there."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RNNLAB_EXECUTOR": "ray", "RNNLAB_RAY_ADDRESS": cluster.address,
           **local.auth_env()}
    return subprocess.run(local.in_netns([sys.executable, "-c", code, *args], cluster.netns), env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=180)


def test_answers_outlive_the_web_process_that_took_them(cluster):
    first = run_inside(cluster, FIRST)
    assert first.returncode == -9, first.stderr[-3000:]  # it died, SIGKILLed, after writing its answers
    given = json.loads(first.stdout.strip().splitlines()[-1])
    second = run_inside(cluster, SECOND, json.dumps(given))
    assert second.returncode == 0, second.stderr[-3000:]
    got = json.loads(second.stdout.strip().splitlines()[-1])
    assert got["kept"] == [0, 2, 1]
    assert got["after"] == [1, 3, 0] and got["joined"] == 4  # one answer each: the same, a changed one, a new one
    assert got["wrong key"][0] == "NotTeacher" and got["bad code"][0] == "ClassGone"
    assert got["revealed"] is True and got["closed"].startswith("This question no longer takes answers")
    assert got["views_asked_in_2_s"] <= 5  # at most every 0.5 s, however often the pages look
