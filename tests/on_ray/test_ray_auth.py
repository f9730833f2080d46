"""The local cluster behind Ray's token authentication (rnnlab.cluster.local): a client that has the head's
address but not the token, or a wrong token, is refused by Ray itself and runs nothing; a web process's executor
without the token, or with a wrong one, stops with one clear message; with the token, the app's work trains on the
cluster (the driver below, as a web process drives it)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ray", reason="Ray is not installed: pip install -r requirements-ray.txt")

from rnnlab.cluster import local

ROOT = Path(__file__).resolve().parents[2]
MARK = "ran-on-the-cluster"
OUTSIDER = f"""
import ray
try:
    ray.init(address="{local.ADDRESS}", log_to_driver=False)
    print(ray.get(ray.remote(lambda: "{MARK}").remote(), timeout=30))
except BaseException as e:
    print("refused:", type(e).__name__, e)
"""
WEB_PROCESS = """
from rnnlab.config import ConfigError
from rnnlab.server.work import executors
try:
    executors.current_executor()
    print("connected")
except ConfigError as e:
    print("message:", "; ".join(e.messages))
"""


def run_inside(cluster, code: str, env: dict[str, str], tmp_path: Path) -> str:
    """``code`` run by this Python inside the cluster's namespace with ``env`` and an empty home (no
    ~/.ray/auth_token); its output."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    keep = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}
    done = subprocess.run(local.in_netns([sys.executable, "-c", code], cluster.netns),
                          env={**keep, "HOME": str(home), "PYTHONPATH": str(ROOT), **env}, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    return done.stdout + done.stderr[-2000:]


def test_the_token_is_kept_private(cluster):
    folder, token = local.STATE_DIR, local.STATE_DIR / local.TOKEN_FILE
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(token.stat().st_mode) == 0o600 and len(token.read_text()) == 64
    assert stat.S_IMODE((folder / "state.json").stat().st_mode) == 0o600


@pytest.mark.parametrize("who", ["tokenless", "wrong token"])
def test_a_client_without_the_token_is_refused(cluster, tmp_path, who):
    wrong = tmp_path / "wrong_token"
    wrong.write_text("0" * 64)
    env = {} if who == "tokenless" else {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(wrong)}
    seen = run_inside(cluster, OUTSIDER, env, tmp_path)
    assert "refused:" in seen and MARK not in seen.replace(f'"{MARK}"', ""), seen
    assert "InvalidAuthToken" in seen or "Authentication token is missing or incorrect" in seen, seen


@pytest.mark.parametrize("who", ["tokenless", "token mode, no token", "wrong token"])
def test_a_web_process_without_the_token_says_so_at_start(cluster, tmp_path, who):
    wrong = tmp_path / "wrong_token"
    wrong.write_text("f" * 64)
    env = {"RNNLAB_EXECUTOR": "ray", "RNNLAB_RAY_ADDRESS": cluster.address}
    env |= {"tokenless": {}, "token mode, no token": {"RAY_AUTH_MODE": "token"},
            "wrong token": {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(wrong)}}[who]
    seen = run_inside(cluster, WEB_PROCESS, env, tmp_path)
    lines = [line for line in seen.splitlines() if line.startswith("message:")]
    assert len(lines) == 1, seen
    assert f"the Ray cluster at RNNLAB_RAY_ADDRESS={cluster.address} refused this process" in lines[0], seen
    assert "RAY_AUTH_MODE=token and RAY_AUTH_TOKEN_PATH" in lines[0], seen


def test_with_the_token_the_app_trains_on_the_cluster(driver):
    got = driver("train", "noisy_carry_adding")  # 300 steps, call by call on the workers
    steps = got["history"]["steps"]
    assert got["calls"] >= 1 and not got["killed"], got["calls"]
    assert list(steps["step"]) == list(range(1, 301)) or list(steps["step"]) == list(range(300)), steps["step"]
    assert steps["loss"].notna().all()


@pytest.fixture(scope="module")
def open_cluster(tmp_path_factory):
    """A Ray head with token authentication off, alone in a namespace of its own (``rnnlab-noauth``): what a web
    process must refuse to join."""
    import shutil
    import signal
    import time

    why = local.can_create_netns()
    if why:
        pytest.skip(f"a Ray head of its own needs a network namespace: {why}")
    netns, folder = "rnnlab-noauth", Path("/tmp/rnnlab-noauth")
    if local.netns_exists(netns):
        pytest.skip(f"the namespace {netns} is in use")
    folder.mkdir(mode=0o700, exist_ok=True)
    subprocess.run(["ip", "netns", "add", netns], check=True, capture_output=True, timeout=10)
    subprocess.run(["ip", "-n", netns, "link", "set", "lo", "up"], check=True, capture_output=True, timeout=10)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")} | {"RAY_USAGE_STATS_ENABLED": "0"}
    log = folder / "head.log"
    with open(log, "wb") as out:
        head = subprocess.Popen(local.in_netns(local.node_command("head", folder / "ray", local.OBJECT_STORE_BYTES),
                                               netns), stdout=out, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True)
    try:
        local.wait_started(local.Node("head", head.pid, str(log)), time.monotonic() + local.START_TIMEOUT_S)
        yield netns
    finally:
        local.signal_group(head.pid, signal.SIGKILL)
        head.wait(timeout=30)
        for pid in local.netns_pids(netns):
            os.kill(pid, signal.SIGKILL)
        subprocess.run(["ip", "netns", "del", netns], capture_output=True, timeout=10)
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("told", [False, True])
def test_a_web_process_refuses_a_cluster_without_token_auth_unless_told(open_cluster, tmp_path, told):
    env = {"RNNLAB_EXECUTOR": "ray", "RNNLAB_RAY_ADDRESS": local.ADDRESS, "RAY_AUTH_MODE": "token",
           "RAY_AUTH_TOKEN": "f" * 64}  # this process has a token; the cluster checks none
    if told:
        env["RNNLAB_RAY_NO_AUTH"] = "1"
    seen = run_inside(type("Cluster", (), {"netns": open_cluster}), WEB_PROCESS, env, tmp_path)
    if told:
        assert "connected" in seen, seen
    else:
        lines = [line for line in seen.splitlines() if line.startswith("message:")]
        assert len(lines) == 1 and "lets in any process without a token" in lines[0], seen
        assert "RNNLAB_RAY_NO_AUTH=1" in lines[0], seen
