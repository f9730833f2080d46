"""The web tier's HAProxy configuration (rnnlab.cluster.web), checked by HAProxy itself when it is installed and a
network namespace can be made, and run in front of a stand-in web process that echoes the headers it receives: what
a client writes in the proxy's headers is dropped, ids carry their age and are signed for the address they were
made for (a made-up, re-signed, expired or moved one is replaced), one source address gets a bounded number of new
ids a minute and past it the page without one, and a page of another site is refused."""

from __future__ import annotations

import base64
import hashlib
import hmac
import http.client
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rnnlab.cluster import local, web
from rnnlab.server.access.clients import BROWSER_COOKIE, BROWSER_HEADER, BROWSER_ID, BROWSER_ID_TERM_S, PROXY_HEADER

UUID = "0b9d3e4a-5f6c-4d7e-8f90-a1b2c3d4e5f6"


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


def test_the_documented_haproxy_configuration_is_the_generated_one():
    doc = (Path(__file__).resolve().parents[2] / "docs" / "scale-out.md").read_text()
    rules = web.frontend_rules("<the proxy secret>", secure=True)
    lines = [line.split("#")[0].rstrip() for line in doc.splitlines()]
    for rule in rules.splitlines():
        assert rule in lines, rule  # every frontend rule, as generated, in the documented configuration
    for line in web.DEFAULTS.splitlines()[1:]:
        assert line in lines, line
    assert "    cookie rnnlab_server insert indirect nocache httponly secure" in lines
    assert f"the {web.ProxyBounds.new_ids_per_minute + 1}st browser from one address in a minute" in doc


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
        config.write_text(web.haproxy_config(2, netns, Path(tmp_path / "s.sock"), 8500, 8500, "x", "eHg="))
        checked = subprocess.run([haproxy, "-c", "-f", str(config)], capture_output=True, text=True, timeout=30)
        assert checked.returncode == 0, checked.stdout + checked.stderr
    finally:
        subprocess.run(["ip", "netns", "del", netns], capture_output=True, timeout=10)


ECHO = """
import http.server, json
class Echo(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps(dict(self.headers.items())).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", %d), Echo).serve_forever()
"""
KEY = base64.b64encode(b"k" * 32).decode()


def through(port: int, source: str, cookie: str = "", headers: dict[str, str] | None = None):
    """GET / through the proxy from ``source``: (status, the headers the web process got, the browser cookie set)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=(source, 0))
    jar = {"Cookie": f"{BROWSER_COOKIE}={cookie}"} if cookie else {}
    conn.request("GET", "/", headers={**(headers or {}), **jar})
    answer = conn.getresponse()
    body = answer.read()
    set_cookie = next((v.split(";")[0].partition("=")[2] for k, v in answer.getheaders()
                       if k.lower() == "set-cookie" and v.startswith(BROWSER_COOKIE)), "")
    conn.close()
    return answer.status, ({k.lower(): v for k, v in json.loads(body).items()} if answer.status == 200 else {}), \
        set_cookie


def signed(browser: str, source: str, key: bytes = b"k" * 32) -> str:
    """A cookie's value: ``browser`` and its signature for ``source`` under ``key``."""
    return f"{browser}.{hmac.new(key, f'{browser}.{source}'.encode(), hashlib.sha256).hexdigest()}"


def test_the_proxy_drops_forged_headers_signs_ids_and_bounds_new_ones(tmp_path):
    haproxy = shutil.which("haproxy")
    if haproxy is None:
        pytest.skip("HAProxy is missing: apt-get install haproxy")
    why = local.can_create_netns()
    if why:
        pytest.skip(why)
    netns, port = f"rnnlab-px-{tmp_path.name[-10:]}", 18600
    subprocess.run(["ip", "netns", "add", netns], check=True, capture_output=True, timeout=10)
    subprocess.run(["ip", "-n", netns, "link", "set", "lo", "up"], check=True, capture_output=True, timeout=10)
    config = tmp_path / "haproxy.cfg"
    config.write_text(web.haproxy_config(1, netns, tmp_path / "s.sock", 18500, port, "the-secret", KEY))
    echo = subprocess.Popen(local.in_netns([sys.executable, "-c", ECHO % web.WEB_PORT], netns))
    proxy = subprocess.Popen([haproxy, "-db", "-f", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while web.backends(tmp_path / "s.sock").get("web1") != "UP" and time.monotonic() < deadline:
            time.sleep(0.2)
        forged = {"X-Forwarded-For": "6.6.6.6", BROWSER_HEADER: UUID, PROXY_HEADER: "a-guess"}
        status, seen, cookie = through(port, "127.0.0.2", headers=forged)
        assert status == 200 and seen["x-forwarded-for"] == "127.0.0.2", seen  # one hop: the address it saw
        assert seen[PROXY_HEADER.lower()] == "the-secret" and seen[BROWSER_HEADER.lower()] != UUID, seen
        browser = cookie.partition(".")[0]
        assert seen[BROWSER_HEADER.lower()] == browser and BROWSER_ID.match(browser), browser  # SECONDS-UUID
        assert abs(int(browser.split("-")[0]) - time.time()) < 60  # it carries the time it was made
        assert cookie == signed(browser, "127.0.0.2")  # signed with the key for its address (computed here)
        assert through(port, "127.0.0.2", cookie)[1:] == (seen | {"cookie": f"{BROWSER_COOKIE}={cookie}"}, "")
        moved = through(port, "127.0.0.5", cookie)  # the same cookie from another address: a new person
        assert moved[2] and moved[1][BROWSER_HEADER.lower()] != browser
        made_up = f"{int(time.time())}-{UUID}.{hmac.new(b'guessed', UUID.encode(), hashlib.sha256).hexdigest()}"
        _, seen, new = through(port, "127.0.0.2", made_up)
        assert new and seen[BROWSER_HEADER.lower()] == new.partition(".")[0] != UUID  # a new person
        old = signed(f"{int(time.time()) - BROWSER_ID_TERM_S - 60}-{UUID}", "127.0.0.2")  # signed, past its term
        _, seen, new = through(port, "127.0.0.2", old)
        assert new and seen[BROWSER_HEADER.lower()] != old.partition(".")[0]
        bound = web.ProxyBounds.new_ids_per_minute
        answers = [through(port, "127.0.0.3") for _ in range(bound + 5)]  # cookie-less: a new browser each time
        assert [a[0] for a in answers] == [200] * (bound + 5)  # everyone gets the page ...
        assert sum(bool(a[2]) for a in answers) == bound and not any(a[2] for a in answers[-5:])  # ... ids: bound
        assert BROWSER_HEADER.lower() not in answers[-1][1]  # past it: no id, its address's share
        assert through(port, "127.0.0.3", answers[0][2])[1][BROWSER_HEADER.lower()] == answers[0][2].partition(".")[0]
        assert through(port, "127.0.0.4")[2]  # another machine still gets an id
        foreign = through(port, "127.0.0.2", headers={"Origin": "http://evil.example"})
        assert foreign[0] == 403  # a page of another site: refused before any web process sees it
        own = through(port, "127.0.0.2", headers={"Origin": f"http://127.0.0.1:{port}"})
        assert own[0] == 200
    finally:
        for process in (proxy, echo):
            process.kill()
            process.wait()
        subprocess.run(["ip", "netns", "del", netns], capture_output=True, timeout=10)
