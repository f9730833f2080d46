"""The web tier's pieces that need no server: the per-browser id a proxy passes on (rnnlab.cluster.browser) and
the HAProxy configuration (rnnlab.cluster.web), checked by HAProxy itself when it is installed and a network
namespace can be made."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from rnnlab.cluster import local, web
from rnnlab.cluster.browser import BROWSER_HEADER, ENV_BROWSER_HEADER, browser_client, browser_of

UUID = "0b9d3e4a-5f6c-4d7e-8f90-a1b2c3d4e5f6"


def test_a_browser_id_counts_only_from_the_header_the_proxy_writes(monkeypatch):
    headers = {"x-rnnlab-browser": UUID, "X-Forwarded-For": "10.0.0.7"}
    monkeypatch.delenv(ENV_BROWSER_HEADER, raising=False)
    assert browser_of(headers) is None  # no proxy vouches for it
    monkeypatch.setenv(ENV_BROWSER_HEADER, BROWSER_HEADER)
    assert browser_of(headers) == UUID and browser_client(headers) == f"browser:{UUID}"
    for bad in ("", "short", "x" * 65, "a;b=c" + "0" * 20, "../../etc/passwd-0123456789"):
        assert browser_of({BROWSER_HEADER: bad}) is None, bad
    assert browser_of(None) is None and browser_client({}) is None


def test_the_haproxy_configuration(tmp_path):
    text = web.haproxy_config(3, "some-ns", tmp_path / "s.sock", 8500, 8600)
    assert "    bind 127.0.0.1:8500 namespace some-ns\n    bind 127.0.0.1:8600\n" in text
    assert "timeout tunnel 1h" in text and "option httpchk GET /_stcore/health" in text
    assert "timeout check 5s" in text  # a busy web process is not taken for a dead one
    assert f"cookie {web.SERVER_COOKIE} insert indirect nocache" in text
    assert f"http-request del-header {BROWSER_HEADER}" in text
    for i in range(3):
        assert f"server web{i + 1} 127.0.0.1:{8501 + i} cookie web{i + 1} namespace some-ns\n" in text
    assert "bind 127.0.0.1:8600" not in web.haproxy_config(1, "some-ns", tmp_path / "s.sock", 8500, None)


def test_haproxy_accepts_the_configuration(tmp_path):
    haproxy = shutil.which("haproxy")
    if haproxy is None:
        pytest.skip("HAProxy is missing: apt-get install haproxy")
    netns = f"rnnlab-cfg-{tmp_path.name[-12:]}"
    why = local.can_create_netns()
    if why:
        pytest.skip(why)
    subprocess.run(["ip", "netns", "add", netns], check=True, capture_output=True, timeout=10)
    try:
        config = tmp_path / "haproxy.cfg"
        config.write_text(web.haproxy_config(2, netns, Path(tmp_path / "s.sock"), 8500, 8500))
        checked = subprocess.run([haproxy, "-c", "-f", str(config)], capture_output=True, text=True, timeout=30)
        assert checked.returncode == 0, checked.stdout + checked.stderr
    finally:
        subprocess.run(["ip", "netns", "del", netns], capture_output=True, timeout=10)
