"""The web tier on this machine: N ``streamlit run serve.py`` processes behind HAProxy with sticky sessions, beside
the local Ray cluster of :mod:`.local` (or without one: ``executor="embedded"``).

- Web process i listens on 127.0.0.1:``WEB_PORT + i`` inside the cluster's network namespace, with
  ``RNNLAB_EXECUTOR`` (``ray``: ``RNNLAB_RAY_ADDRESS`` = the head), one shared ``RNNLAB_RUNS_DIR`` (a tab's kept
  run is found by whichever process its reconnection reaches), one ``server.cookieSecret`` for all (Streamlit's
  XSRF cookie made by one is accepted by the others), and the proxy's headers trusted
  (``RNNLAB_CLIENT_HEADER=X-Forwarded-For``, ``RNNLAB_BROWSER_HEADER``: :mod:`rnnlab.server.access.clients`) only on
  requests that carry the proxy's secret; uvicorn trusts no forwarded header (``FORWARDED_ALLOW_IPS`` empty).
- HAProxy (Debian's package) runs in this machine's own namespace, reaches the web processes inside the cluster's
  (its ``namespace`` keyword) and listens on 127.0.0.1:``PROXY_PORT`` there too, for clients in the namespace;
  with ``host_port`` also on this machine's 127.0.0.1, for a browser. A cookie it inserts
  (:data:`SERVER_COOKIE`) keeps a browser on one web process: the page, its probes and its websocket. A web
  process that fails its health check (``/_stcore/health``, every second) twice is out: a dead one within about
  2 s (its port refuses at once); a busy one has 5 s to answer each check, since a single process serving a class
  that arrives at once answers late, and marking it out would turn every new browser away (HTTP 503). Its
  browsers' reconnections go to another (``option redispatch``). Each answer names its web process
  (:data:`SERVER_HEADER`).
- HAProxy bounds what one source address may hold (:class:`ProxyBounds`): its connections at once and new ones
  each 10 s, its websockets (tabs) at once, and the browser ids made for it each minute (past that bound a browser
  gets the page without an id, and counts as its address); a request from a page of another site (its
  ``Origin``) is refused before any web process sees it.

Every process is recorded in the state of :mod:`.local` (a process group each), so ``python -m rnnlab.cluster
down`` stops them with the Ray nodes.
"""

from __future__ import annotations

import base64
import csv
import io
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from rnnlab.cluster import local
from rnnlab.server.access.clients import (
    BROWSER_COOKIE,
    BROWSER_HEADER,
    BROWSER_ID_TERM_S,
    ENV_BROWSER_HEADER,
    ENV_CLIENT_HEADER,
    ENV_PROXY_SECRET,
    ID_PATTERN,
    PROXY_HEADER,
)

ROOT = Path(__file__).resolve().parents[2]  # where app.py and .streamlit/config.toml are
PROXY_PORT = 8500
WEB_PORT = 8501
SERVER_COOKIE = "rnnlab_server"
SERVER_HEADER = "X-Rnnlab-Server"
EXECUTORS = ("ray", "embedded")
WEB_START_TIMEOUT_S = 120.0
STATS_SOCKET = "haproxy.sock"
STREAM = "/_stcore/stream"  # a tab's websocket
SESSIONS_TABLE = "sessions_per_address"


@dataclass(frozen=True)
class ProxyBounds:
    """What one source address may hold at the proxy (``python -m rnnlab.cluster up`` options of the same names).
    The defaults let a hall of 150 browsers behind one NAT address in within a minute."""

    new_ids_per_minute: int = 120  # browser ids made for it a minute; past that, the page without an id
    connections: int = 1000  # TCP connections at once (a browser opens up to 6-8 while a page loads)
    new_connections: int = 1000  # TCP connections opened in 10 s
    sessions: int = 200  # websockets (open tabs) at once




class WebError(local.ClusterError):
    """The web tier could not be started; the message says why."""


def haproxy_command() -> str:
    found = shutil.which("haproxy")
    if found is None:
        raise WebError("HAProxy is missing: apt-get install haproxy")
    return found


def web_name(i: int) -> str:
    return f"web{i + 1}"


def haproxy_config(web: int, netns: str, stats_socket: Path, proxy_port: int = PROXY_PORT,
                   host_port: int | None = None, proxy_secret: str = "", sign_key: str = "",
                   secure: bool = False, bounds: ProxyBounds = ProxyBounds()) -> str:
    """HAProxy's configuration for ``web`` web processes on ports ``WEB_PORT``.. in namespace ``netns``.

    The proxy writes ``proxy_secret`` in :data:`PROXY_HEADER` on every request, replaces the client's
    ``X-Forwarded-For`` with the address it sees, and gives each browser an id that carries the time it was made
    (``SECONDS-UUID``), signed with ``sign_key`` (base64; an HMAC-SHA256 of the id and the address it was made for,
    beside the id in the cookie): a cookie whose signature does not match (made up, edited, or from another
    address) or older than :data:`rnnlab.server.access.clients.BROWSER_ID_TERM_S` gets a new id. ``bounds``: what one
    source address may hold (:class:`ProxyBounds`). ``secure``: the cookies are sent over HTTPS only (a site whose
    ``bind`` line has ``ssl``)."""
    host_bind = f"    bind 127.0.0.1:{host_port}\n" if host_port else ""
    servers = "".join(f"    server {web_name(i)} 127.0.0.1:{WEB_PORT + i} cookie {web_name(i)} namespace {netns}\n"
                      for i in range(web))  # on each server line: HAProxy 2.6 ignores a default-server's namespace
    return f"""global
    maxconn 4096
    stats socket {stats_socket} mode 600 level admin
    set-var proc.browser_key str({sign_key})

namespace_list
    namespace {netns}

{DEFAULTS}
frontend web
    bind 127.0.0.1:{proxy_port} namespace {netns}
{host_bind}{frontend_rules(proxy_secret, secure, bounds)}    default_backend streamlit

{SESSIONS_BACKEND}
backend streamlit
    balance roundrobin
    cookie {SERVER_COOKIE} insert indirect nocache httponly{" secure" if secure else ""}
    option httpchk GET /_stcore/health
    http-check expect status 200
    http-response set-header {SERVER_HEADER} %s
    default-server check inter 1s fall 2 rise 1
{servers}"""


DEFAULTS = """defaults
    mode http
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    timeout http-request 10s
    timeout tunnel 1h
    timeout client-fin 5s
    timeout check 5s
    option redispatch
    retries 2
"""


SESSIONS_BACKEND = f"""backend {SESSIONS_TABLE}
    stick-table type ip size 100k expire 60s store conn_cur
"""


def frontend_rules(proxy_secret: str, secure: bool, bounds: ProxyBounds = ProxyBounds()) -> str:
    """The frontend's rules (see :func:`haproxy_config`): the source's connections and tabs bounded, a foreign
    page's requests refused, the client's copies of the proxy's headers dropped, the browser id checked (its
    signature for this address, its age) or made and signed while the source's new ids allow, the proxy's headers
    written."""
    fresh = "{ var(txn.fresh) -m found }"
    flags = "; Secure" if secure else ""
    set_cookie = (f"{BROWSER_COOKIE}=%[var(txn.fresh)].%[var(txn.fresh_sig)]; Path=/; Max-Age={BROWSER_ID_TERM_S}; "
                  f"HttpOnly; SameSite=Lax{flags}")
    sign = "hmac(sha256,proc.browser_key),hex,lower"
    return f"""    stick-table type ip size 100k expire 60s store gpc0_rate(60s),conn_cur,conn_rate(10s)
    tcp-request connection track-sc0 src
    tcp-request connection reject if {{ sc0_conn_cur gt {bounds.connections} }}
    tcp-request connection reject if {{ sc0_conn_rate gt {bounds.new_connections} }}
    http-request set-var(txn.host) req.hdr(host),lower
    http-request set-var(txn.origin) req.hdr(origin),lower,regsub(^[a-z]+://,)
    http-request deny deny_status 403 if {{ req.hdr(origin) -m found }} !{{ var(txn.origin),strcmp(txn.host) eq 0 }}
    acl tab path_end {STREAM}
    http-request track-sc1 src table {SESSIONS_TABLE} if tab
    http-request deny deny_status 429 if tab {{ sc1_conn_cur({SESSIONS_TABLE}) gt {bounds.sessions} }}
    http-request del-header {BROWSER_HEADER}
    http-request del-header {PROXY_HEADER}
    http-request del-header X-Forwarded-For
    option forwardfor
    http-request set-var(txn.src) src
    http-request set-var(txn.id) req.cook({BROWSER_COOKIE}),field(1,.)
    http-request set-var(txn.sig) req.cook({BROWSER_COOKIE}),field(2,.)
    http-request set-var(txn.want) var(txn.id),concat(.,txn.src),{sign} if {{ var(txn.id) -m found }}
    acl browser_ok var(txn.id) -m reg {ID_PATTERN}
    acl browser_len var(txn.id),length 27:64
    acl browser_signed var(txn.want),strcmp(txn.sig) eq 0
    http-request set-var(txn.born) var(txn.id),field(1,-) if browser_ok
    acl browser_young date,sub(txn.born) lt {BROWSER_ID_TERM_S}
    http-request set-var(txn.browser) var(txn.id) if browser_ok browser_len browser_signed browser_young
    acl ids_left sc0_gpc0_rate lt {bounds.new_ids_per_minute}
    http-request set-var(txn.uuid) uuid if !{{ var(txn.browser) -m found }} ids_left
    http-request set-var(txn.fresh) date,concat(-,txn.uuid) if {{ var(txn.uuid) -m found }}
    http-request sc-inc-gpc0(0) if {fresh}
    http-request set-var(txn.fresh_sig) var(txn.fresh),concat(.,txn.src),{sign} if {fresh}
    http-request set-var(txn.browser) var(txn.fresh) if {fresh}
    http-request set-header {BROWSER_HEADER} %[var(txn.browser)] if {{ var(txn.browser) -m found }}
    http-request set-header {PROXY_HEADER} {proxy_secret}
    http-response add-header Set-Cookie "{set_cookie}" if {fresh}
"""


def web_env(executor: str, address: str, runs_dir: Path, cookie_secret: str, proxy_secret: str,
            folder: Path = local.STATE_DIR) -> dict[str, str]:
    """A web process's environment: this process's, with the executor (Ray's: the cluster's token in ``folder``),
    the shared runs folder, the proxy's headers trusted on requests that carry ``proxy_secret``, and uvicorn's own
    trust in forwarded headers off (``FORWARDED_ALLOW_IPS`` empty: the app reads them, with the secret)."""
    env = {**os.environ, "RNNLAB_EXECUTOR": executor, "RNNLAB_RUNS_DIR": str(runs_dir),
           ENV_CLIENT_HEADER: "X-Forwarded-For", ENV_BROWSER_HEADER: BROWSER_HEADER,
           ENV_PROXY_SECRET: proxy_secret, "FORWARDED_ALLOW_IPS": "",
           "STREAMLIT_SERVER_COOKIE_SECRET": cookie_secret, "STREAMLIT_SERVER_HEADLESS": "true",
           "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false", "RAY_USAGE_STATS_ENABLED": "0",
           "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}
    if executor == "ray":
        env |= {"RNNLAB_RAY_ADDRESS": address, **local.auth_env(folder)}
    else:
        env.pop("RNNLAB_RAY_ADDRESS", None)
    return env


def web_command(port: int) -> list[str]:
    return [sys.executable, "-m", "streamlit", "run", str(ROOT / "serve.py"), "--server.address", local.HOST,
            "--server.port", str(port)]


def start_process(role: str, command: list[str], folder: Path, env: dict[str, str] | None = None) -> local.Node:
    """``command`` in a process group of its own, its output in ``folder/ROLE.log``."""
    log = folder / f"{role}.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   start_new_session=True, env=env, cwd=ROOT)
    return local.Node(role, process.pid, str(log))


def backends(stats_socket: Path) -> dict[str, str]:
    """Each web process's state as HAProxy sees it (``UP``, ``DOWN``, ...); empty when HAProxy does not answer."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(2.0)
            s.connect(str(stats_socket))
            s.sendall(b"show stat\n")
            data = b""
            while chunk := s.recv(65536):
                data += chunk
    except OSError:
        return {}
    rows = csv.DictReader(io.StringIO(data.decode(errors="replace").lstrip("# ")))
    return {r["svname"]: r["status"].split()[0] for r in rows
            if r.get("pxname") == "streamlit" and r.get("svname") not in ("BACKEND", None) and r.get("status")}


def wait_up(state: local.State, folder: Path, web: int, deadline: float) -> None:
    """Wait until HAProxy sees every web process UP; WebError when one of them exits or the deadline passes."""
    names = {web_name(i) for i in range(web)}
    seen: dict[str, str] = {}
    while time.monotonic() < deadline:
        for node in state.processes:
            if not local.alive(node.pid):
                raise WebError(f"{node.role} exited while starting; its log:\n"
                               f"{local.tail(Path(node.log).read_text(errors='replace'))}")
        seen = backends(folder / STATS_SOCKET)
        if all(seen.get(n) == "UP" for n in names):
            return
        time.sleep(0.5)
    raise WebError(f"the web processes were not all up within {WEB_START_TIMEOUT_S:.0f} s (HAProxy sees {seen})")


def start_web(state: local.State, web: int, executor: str = "ray", folder: Path = local.STATE_DIR,
              runs_dir: Path | None = None, host_port: int | None = None,
              timeout_s: float = WEB_START_TIMEOUT_S, bounds: ProxyBounds = ProxyBounds()) -> local.State:
    """Start ``web`` web processes and HAProxy in front of them beside the cluster of ``state``, and wait until
    HAProxy sees them all up; ``state`` with them recorded. ``bounds``: see :func:`haproxy_config` (a load test
    whose clients all come from one address raises them)."""
    if executor not in EXECUTORS:
        raise WebError(f"unknown executor {executor!r}: one of {', '.join(EXECUTORS)}")
    if web < 1:
        raise WebError("at least one web process is needed")
    haproxy = haproxy_command()
    runs = runs_dir or folder / "runs"
    runs.mkdir(mode=0o700, parents=True, exist_ok=True)
    config = local.private_folder(folder) / "haproxy.cfg"
    proxy_secret, sign_key = secrets.token_urlsafe(32), base64.b64encode(secrets.token_bytes(32)).decode()
    local.write_private(config, haproxy_config(web, state.netns, folder / STATS_SOCKET, PROXY_PORT, host_port,
                                               proxy_secret, sign_key, bounds=bounds))
    checked = subprocess.run([haproxy, "-c", "-q", "-f", str(config)], capture_output=True, text=True, timeout=30)
    if checked.returncode != 0:
        raise WebError(f"HAProxy rejects {config}: {(checked.stderr or checked.stdout).strip()}")
    env = web_env(executor, state.address, runs, secrets.token_urlsafe(32), proxy_secret, folder)
    for i in range(web):
        node = start_process(web_name(i), local.in_netns(web_command(WEB_PORT + i), state.netns), folder, env)
        state.processes.append(node)
        state.save(folder)
    state.processes.append(start_process("proxy", [haproxy, "-db", "-f", str(config)], folder))
    state.save(folder)
    wait_up(state, folder, web, time.monotonic() + timeout_s)
    return state


def up(web: int = 2, workers: int = 2, executor: str = "ray", folder: Path = local.STATE_DIR,
       netns: str = local.NETNS, runs_dir: Path | None = None, host_port: int | None = PROXY_PORT,
       bounds: ProxyBounds = ProxyBounds()) -> local.State:
    """The whole local setup: the namespace, with ``executor="ray"`` the Ray head and ``workers`` worker nodes,
    ``web`` web processes and HAProxy; its state. What started is stopped again when a part fails."""
    if executor not in EXECUTORS:
        raise WebError(f"unknown executor {executor!r}: one of {', '.join(EXECUTORS)}")
    haproxy_command()
    state = local.up(workers, folder, netns=netns) if executor == "ray" else local.open_namespace(folder, netns)
    try:
        return start_web(state, web, executor, folder, runs_dir, host_port, bounds=bounds)
    except BaseException:
        local.down(folder, netns)
        raise


def proxy_url(port: int = PROXY_PORT) -> str:
    return f"http://{local.HOST}:{port}"
