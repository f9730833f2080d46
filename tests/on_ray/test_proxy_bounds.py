"""The web tier as ``python -m rnnlab.cluster up --web 2`` deploys it (two web processes running serve.py, embedded
executor, HAProxy with its default bounds), in a namespace of its own (``rnnlab-bounds``), attacked through the real
proxy by a student inside the class (tests/on_ray/proxy_attacks.py), loopback only; most of its time is the
tier's start and the class link's first training on each web process.

- A lecture hall of 150 browsers behind one address, arriving within 10 s: every one gets the page and its
  tab; 120 get a browser id, the rest share their address's share (no HTTP 429).
- One address holding 300 tabs: the proxy lets it hold 200 at once.
- A page of another site opening a tab: refused by the proxy (403), no web process sees it.
- Two tabs flooding reruns through the proxy while students open the class's link: the flooders are closed and
  cooled down by their web process, HAProxy never sees a web process down, and the students' first chart's p50
  stays under 3 s.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlencode

import pytest

from rnnlab.cluster import local, web
from rnnlab.sharing.presets import PRESETS
from tests.on_ray.test_web import web_tier

ROOT = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).with_name("proxy_attacks.py")
NETNS, FOLDER = "rnnlab-bounds", Path("/tmp/rnnlab-bounds")
DRIVER_TIMEOUT_S = 400


@pytest.fixture(scope="module")
def tier():
    """Two web processes (embedded executor) and HAProxy with its default bounds, in namespace ``rnnlab-bounds``."""
    yield from web_tier(FOLDER, NETNS, "embedded", {"RNNLAB_MAX_TRAININGS": "2"})


def attack(state: local.State, mode: str, **given) -> dict:
    """``proxy_attacks.py MODE`` inside the tier's namespace, against the proxy; what it saw."""
    done = subprocess.run(local.in_netns([sys.executable, str(DRIVER), mode, web.proxy_url(), json.dumps(given)],
                                         state.netns),
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT, capture_output=True, text=True,
                          timeout=DRIVER_TIMEOUT_S)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_hall_of_150_behind_one_address_all_get_the_page(tier):
    got = attack(tier, "hall", n=150, source="127.0.0.2")
    browsers = got["browsers"]
    print(f"\nhall of 150 behind one address: {sum(b['page'] == 200 for b in browsers)} pages, "
          f"{sum(b['socket'] == 101 for b in browsers)} tabs, {sum(b['id'] for b in browsers)} ids, all open after "
          f"{got['seconds']} s; load average {os.getloadavg()[0]:.1f}")
    assert [b["page"] for b in browsers] == [200] * 150 and [b["socket"] for b in browsers] == [101] * 150, browsers
    assert sum(b["id"] for b in browsers) == web.ProxyBounds.new_ids_per_minute, browsers
    assert got["seconds"] < 60, got["seconds"]


def test_one_address_holds_at_most_its_tabs(tier):
    got = attack(tier, "hold", n=300, source="127.0.0.3")
    assert got["held"] == web.ProxyBounds.sessions and set(got["refused"]) == {429}, got


def test_a_page_of_another_site_is_refused_at_the_proxy(tier):
    got = attack(tier, "foreign", source="127.0.0.6")
    assert got == {"status": 403, "server": ""}, got  # no web process answered


def test_flooding_tabs_through_the_proxy_take_no_web_process_down(tier):
    preset = PRESETS[0]
    query = urlencode({**preset.query(), "steps": "50"})
    assert all(attack(tier, "warm", page=preset.page, query=query, n=2)["ok"])  # the link trained on each process
    got = attack(tier, "flood", page=preset.page, query=query, seconds=14.0, stats=str(FOLDER / web.STATS_SOCKET))
    answers = [s["answer"] for s in got["students"]]
    assert all(s["ok"] for s in got["students"]), got["students"]
    p50 = statistics.median(a for a in answers if a is not None)
    print(f"\nthrough the proxy, two flooding tabs: students' first chart p50 {p50:.2f} s ({answers}); floods: "
          + "; ".join(f"{f['sent']} sent, closed after {f['first_close_s']} s, {len(f['refused'])} refused"
                      for f in got["floods"]) + f"; load average {os.getloadavg()[0]:.1f}")
    assert not got["down"] and got["watched"] > 50, got["down"]  # HAProxy saw every web process up throughout
    for tab in got["floods"]:
        assert tab["first_close_s"] is not None and tab["close_codes"][0] == 1008, tab
        assert set(tab["refused"]) == {429}, tab
    assert p50 < 3.0, answers
