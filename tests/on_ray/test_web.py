"""Two web processes behind HAProxy (rnnlab.cluster.web), in a network namespace of their own, reached by browsers
without a browser (tests/on_ray/web_driver.py) inside it.

Embedded executor: a browser's page, probes and websocket reach one web process, fresh browsers are spread over
both, each gets a browser id of its own (and a share of its own: one job per person); one web process SIGKILLed
mid-run: the proxy takes it out within 10 s, its tabs reconnect through the proxy to the other and get their runs
back from the shared runs folder, and every run finishes. Ray executor (a head and two 1-CPU worker nodes too):
a tab trains on web1's Ray tasks; web1 SIGKILLed: Ray's CPUs are all free again within 10 s, and the tab gets its
run back on web2 and finishes it on the workers.

Skipped when HAProxy is missing or no network namespace can be made (root needed), the Ray test also without Ray;
always torn down."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qsl

import pytest

from rnnlab.cluster import local, web
from rnnlab.server.access.clients import BROWSER_COOKIE, BROWSER_ID

ROOT = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).with_name("web_driver.py")
NETNS = "rnnlab-web"  # not the Ray tests' namespace: both may be up in one test session
FOLDER = Path("/tmp/rnnlab-web")
RAY_NETNS = "rnnlab-webray"
RAY_FOLDER = Path("/tmp/rnnlab-webray")
STEPS = 1000  # long enough that the killed process's tabs train for more than one kept-run write (10 s) first
RAY_STEPS = 2000  # the same on the Ray tier, whose idle workers stay compiled and train faster
DRIVER_TIMEOUT_S = 560
SETTINGS = {"RNNLAB_MAX_TRAININGS": "2", "RNNLAB_MAX_JOBS_PER_CLIENT": "1"}  # one job per person: per-browser shares


def web_tier(folder: Path, netns: str, executor: str, settings: dict[str, str], **options):
    """Two web processes with ``executor`` and HAProxy (and with Ray, a head and two worker nodes) in ``netns``,
    with ``settings`` in their environment (``options``: more of :func:`rnnlab.cluster.web.up`'s); always torn
    down."""
    if shutil.which("haproxy") is None:
        pytest.skip("HAProxy is missing: apt-get install haproxy")
    why = local.can_create_netns()
    if why:
        pytest.skip(f"the web tier needs a network namespace of its own: {why}")
    if local.State.load(folder) is not None or local.netns_exists(netns):
        pytest.skip(f"a web tier is already up in {folder} (rnnlab.cluster.local.down({str(folder)!r}, "
                    f"{netns!r}) stops it)")
    with pytest.MonkeyPatch.context() as patch:
        for key, value in settings.items():
            patch.setenv(key, value)
        try:
            state = web.up(2, workers=2, executor=executor, folder=folder, netns=netns, host_port=None, **options)
        except local.ClusterError as e:
            local.down(folder, netns)
            pytest.fail(str(e))
    try:
        yield state
    finally:
        local.down(folder, netns)
        assert not local.netns_exists(netns)


@pytest.fixture(scope="module")
def tier():
    """Two web processes (embedded executor) and HAProxy in namespace ``rnnlab-web``."""
    yield from web_tier(FOLDER, NETNS, "embedded", SETTINGS)


@pytest.fixture(scope="module")
def ray_tier():
    """Two web processes (Ray executor), HAProxy, a Ray head and two worker nodes in namespace ``rnnlab-webray``."""
    pytest.importorskip("ray", reason="Ray is not installed: pip install -r requirements-ray.txt")
    yield from web_tier(RAY_FOLDER, RAY_NETNS, "ray", {"RNNLAB_MAX_TRAININGS": "2"})


def drive(state: local.State, mode: str, tmp_path: Path, folder: Path = FOLDER, steps: int = STEPS) -> dict:
    """``tests/on_ray/web_driver.py MODE`` run inside the namespace against the proxy; what it saw."""
    out = tmp_path / f"{mode}.pickle"
    given = {"pids": {n.role: n.pid for n in state.processes}, "stats": str(folder / web.STATS_SOCKET),
             "address": state.address, "direct": f"http://{local.HOST}:{web.WEB_PORT}", "runs": str(folder / "runs")}
    env = {**os.environ, "PYTHONPATH": str(ROOT), "WEB_TEST_STEPS": str(steps), **local.auth_env(folder)}
    done = subprocess.run(local.in_netns([sys.executable, str(DRIVER), mode, web.proxy_url(), json.dumps(given),
                                          str(out)], state.netns),
                          env=env, cwd=ROOT, capture_output=True, text=True, timeout=DRIVER_TIMEOUT_S)
    assert done.returncode == 0, done.stderr[-4000:]
    return pickle.loads(out.read_bytes())


def test_a_browser_stays_on_one_web_process_and_has_an_id_of_its_own(tier, tmp_path):
    got = drive(tier, "sticky", tmp_path)
    servers = [tab["servers"] for tab in got["tabs"]]
    for seen, jar in zip(servers, got["jars"]):
        assert len(seen) == 4 and len(set(seen)) == 1, servers  # the page, two probes and the websocket
        assert jar[web.SERVER_COOKIE] == seen[0], (jar, seen)
        browser, _, signature = jar[BROWSER_COOKIE].partition(".")  # the id and the proxy's signature of it
        assert BROWSER_ID.match(browser) and len(signature) == 64, jar
    assert {s[0] for s in servers} == {"web1", "web2"}, servers  # fresh browsers go round robin
    assert len({jar[BROWSER_COOKIE] for jar in got["jars"]}) == len(got["jars"]), got["jars"]  # an id each


def test_one_machine_minting_ids_and_forging_headers_holds_one_slot_and_a_student_trains_within_60_s(tier, tmp_path):
    got = drive(tier, "mint", tmp_path)  # runs of 1000 steps: long, not so long that the page asks first
    *machine, student = got["tabs"]
    assert student["first_progress_at"] is not None, student["infos"]
    assert student["first_progress_at"] - got["student_at"] < 60.0, student["first_progress_at"] - got["student_at"]
    assert got["trained_before_student"] == 1, [t["first_progress_at"] for t in machine]  # of 2 slots
    waited = [info for t in machine for info in t["infos"] if info.startswith("Your machine (its network address)")]
    assert waited, [t["infos"] for t in machine]  # held by the per-address share, whatever ids or headers
    assert all(s == "web1" for t in (*machine[:2], student) for s in t["servers"][:4]), [t["servers"] for t in machine]


def test_a_copied_sid_link_opened_on_another_web_process_forks_the_run(tier, tmp_path):
    got = drive(tier, "fork", tmp_path)
    owner, copier = got["tabs"]
    mine, theirs = dict(parse_qsl(owner["query"])).get("sid"), dict(parse_qsl(copier["query"])).get("sid")
    assert mine and theirs and mine != theirs, (owner["query"], copier["query"])
    assert set(owner["servers"][:4]) == {"web1"} and set(copier["servers"][:4]) == {"web2"}
    assert any(i.startswith("This address belongs to a tab that is still open") for i in copier["infos"]), \
        copier["infos"]
    assert not any(i.startswith("Your run is back") for i in copier["infos"]), copier["infos"]
    owners = {name: t for name, t in got["before"].items() if name.startswith(f"{mine}.")}
    assert owners and all(got["after"][name] == t for name, t in owners.items())  # the owner's file untouched
    assert any(name.startswith(f"{theirs}.") for name in got["after"]), got["after"]  # a file of its own


@pytest.mark.slow
def test_a_killed_web_processs_tabs_get_their_runs_back_through_the_proxy(tier, tmp_path):
    got = drive(tier, "kill", tmp_path)
    assert not got["errors"] and got["killed_at"] is not None, got
    assert got["down_at"] is not None and got["down_at"] - got["killed_at"] < 10.0, got
    tabs = got["tabs"]
    moved = [t for t in tabs if t["servers"][0] == "web1"]
    stayed = [t for t in tabs if t["servers"][0] == "web2"]
    assert moved and stayed, [t["servers"] for t in tabs]  # fresh browsers go round robin
    for tab in tabs:
        result = tab["result"]
        assert result["completed_s"] is not None and not result["errors"], (tab["name"], result["errors"],
                                                                            tab["connections"], tab["infos"],
                                                                            result["warnings"])
        assert result["finished_steps"] == STEPS, result
        assert not any(text.startswith("You already have") for text in tab["infos"]), tab["infos"]  # a share each
    for tab in stayed:
        assert tab["connections"] == ["done"] and set(tab["servers"]) == {"web2"}, tab
    for tab in moved:
        assert tab["lost_at"] is not None and tab["connections"][-1] == "done", tab["connections"]
        after = tab["servers"][4:]  # the first connection's page, probes and websocket were web1's
        assert after and set(after) == {"web2"}, tab["servers"]
        assert tab["trained_before_loss"] > 0 and tab["restored_step"] is not None, tab
        assert 0 < tab["restored_step"] < STEPS, tab  # a step it had trained on the killed process
        assert tab["restored_at"] - got["killed_at"] < 60.0, tab
    print(f"\nweb1 killed: out of the proxy after {got['down_at'] - got['killed_at']:.1f} s; its tabs' runs back at "
          + ", ".join(f"step {t['restored_step']} (trained to {t['trained_before_loss']}) after "
                      f"{t['restored_at'] - got['killed_at']:.1f} s" for t in moved))


@pytest.mark.slow
@pytest.mark.minutes  # its own Ray tier; the embedded tier's kill and test_ray_faults' kills run in every suite
def test_a_killed_web_processs_ray_work_ends_and_its_tab_gets_its_run_back(ray_tier, tmp_path):
    got = drive(ray_tier, "kill-ray", tmp_path, RAY_FOLDER, RAY_STEPS)
    assert got["killed_at"] is not None, got
    assert got["freed_at"] is not None and got["freed_at"] - got["killed_at"] < 10.0, got
    tab = got["tabs"][0]
    result = tab["result"]
    assert result["completed_s"] is not None and not result["errors"], (result["errors"], tab["connections"])
    assert result["finished_steps"] == RAY_STEPS, result
    assert tab["servers"][:4] == ["web1"] * 4 and set(tab["servers"][4:]) == {"web2"}, tab["servers"]
    assert tab["restored_step"] is not None and 0 < tab["restored_step"] < RAY_STEPS, tab
    print(f"\nweb1 killed: Ray's CPUs free after {got['freed_at'] - got['killed_at']:.1f} s (available before: "
          f"{got['available_before']}); the run back at step {tab['restored_step']} (trained to "
          f"{tab['trained_before_loss']}) after {tab['restored_at'] - got['killed_at']:.1f} s")
