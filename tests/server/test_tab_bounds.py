"""The bounds at a web process's ASGI boundary (rnnlab.server.access.tab_bounds), around a stand-in app that reads
messages as Streamlit's websocket handler does: a tab within its bucket passes at once, beyond it waits, its
superseded reruns coalesce, a flood is closed and its client cooled down (and told), a page of another site and a
forwarded address nobody vouched for are refused. The same over a real server: tests/server/test_class_attacks.py."""

from __future__ import annotations

import asyncio
import time

import pytest

from rnnlab.server.access.clients import ENV_CLIENT_HEADER, ENV_PROXY_SECRET, PROXY_HEADER
from rnnlab.server.access.tab_bounds import Limits, Registry, SessionBounds, notice, same_origin
from tests.load.protocol_client import run_apart

RERUN, STOP = b"rerun", b"stop"
FAST = Limits(rate=50.0, burst=10, first=3, address_rate=1000.0, address_burst=1000, coalesce=4,
              flood_messages=12, cooldown_s=0.5, max_cooldown_s=2.0)


def kind(data: bytes) -> str:
    return "rerun_script" if data.startswith(RERUN) else "stop_script"


class Tab:
    """A websocket handshake and then ``messages`` (each already sent, as a flooding socket's are), fed to the
    middleware; what the app received, when, and what the middleware sent."""

    def __init__(self, messages: list[bytes], headers: dict[str, str] | None = None, client: str = "10.0.0.7",
                 path: str = "/_stcore/stream", kind: str = "websocket"):
        self.incoming: asyncio.Queue = asyncio.Queue()
        self.incoming.put_nowait({"type": "websocket.connect"} if kind == "websocket" else {"type": "http.request"})
        for data in messages:
            self.incoming.put_nowait({"type": "websocket.receive", "bytes": data})
        self.incoming.put_nowait({"type": "websocket.disconnect", "code": 1000})
        raw = {"host": "rnnlab.example:8501", "sec-websocket-key": f"key-{id(self)}", **(headers or {})}
        self.scope = {"type": kind, "path": path, "client": (client, 50000),
                      "headers": [(k.lower().encode(), v.encode()) for k, v in raw.items()]}
        self.got: list[tuple[float, bytes]] = []
        self.sent: list[dict] = []
        self.ended_by: dict | None = None

    async def receive(self) -> dict:
        return await self.incoming.get()

    async def send(self, message: dict) -> None:
        self.sent.append(message)

    async def app(self, scope, receive, send) -> None:
        """Streamlit's handler, as far as the bounds see it: accept, then read until a disconnect."""
        await receive()  # websocket.connect
        start = time.monotonic()
        while True:
            message = await receive()
            if message["type"] != "websocket.receive":
                self.ended_by = message
                return
            self.got.append((time.monotonic() - start, message["bytes"]))


def run(tab: Tab, registry: Registry, limits: Limits = FAST, **kwargs) -> Tab:
    bounds = SessionBounds(tab.app, kind=kind, limits=limits, registry=registry, **kwargs)
    run_apart(asyncio.wait_for(bounds(tab.scope, tab.receive, tab.send), timeout=10))
    return tab


def test_a_tab_within_its_bucket_passes_at_once_and_beyond_it_waits():
    tab = run(Tab([STOP] * 8), Registry(FAST))
    times = [at for at, _ in tab.got]
    assert len(times) == 8 and tab.ended_by == {"type": "websocket.disconnect", "code": 1000}
    assert times[2] < 0.01  # its first three tokens
    assert times[-1] >= (8 - 3) / FAST.rate * 0.9  # the rest at the rate: slowed, not dropped
    assert not [m for m in tab.sent if m["type"] == "websocket.close"]


def test_reruns_that_wait_coalesce_to_the_newest_and_other_messages_keep_their_order():
    reruns = [RERUN + bytes([i]) for i in range(10)]
    tab = run(Tab([*reruns[:3], *reruns[3:9], STOP, reruns[9]]), Registry(FAST))
    got = [data for _, data in tab.got]
    assert got[:3] == reruns[:3]  # within the bucket: each at once
    assert got[-2:] == [STOP, reruns[9]] and reruns[8] in got  # the newest before the stop, then the last
    assert len(got) < 12 and set(got) <= {*reruns, STOP}  # superseded reruns dropped, nothing reordered


def test_a_flooding_tab_is_closed_its_client_cooled_down_and_its_page_told(monkeypatch):
    monkeypatch.delenv(ENV_PROXY_SECRET, raising=False)
    registry = Registry(FAST)
    flood = run(Tab([RERUN] * 400), registry)
    assert flood.ended_by == {"type": "websocket.disconnect", "code": 1008}  # Streamlit ends the session
    assert {"type": "websocket.close", "code": 1008, "reason": "too many messages"} in flood.sent
    assert len(flood.got) < 40  # of 400: the rest never reached the app
    again = run(Tab([STOP]), registry)  # the same machine opens a tab at once: refused while it cools down
    assert again.got == [] and again.sent[0]["type"] == "websocket.close"
    assert run(Tab([STOP], client="10.0.0.8"), registry).got  # another machine is not held
    said = registry.notice("another key", "ip:10.0.0.7")
    assert said is not None and said.closed and said.waited >= FAST.flood_messages
    assert registry.notice("another key", "ip:10.0.0.7") is None  # told once
    time.sleep(FAST.cooldown_s + 0.1)
    assert run(Tab([STOP]), registry).got  # after its cooldown it comes in again


def test_the_page_of_a_slowed_tab_says_so_in_its_language():
    from rnnlab.i18n import using
    from rnnlab.server.access import tab_bounds

    registry = tab_bounds.REGISTRY
    registry.waited("key-slowed")
    try:
        said = notice("10.0.0.9", {"Sec-WebSocket-Key": "key-slowed"})
        assert said is not None and "1 message waited" in str(said)
        with using("ru"):
            assert "1 сообщение" in str(said)
    finally:
        registry.gone("key-slowed")
    assert notice("10.0.0.9", {"Sec-WebSocket-Key": "key-slowed"}) is None


@pytest.mark.parametrize("origin, allowed", [
    ("http://rnnlab.example:8501", True), ("http://localhost:8501", True), ("http://127.0.0.1:9999", True),
    ("http://evil.example", False), ("http://rnnlab.example:8502", False), ("null", False),
    ("http://rnnlab.example.evil.example:8501", False)])
def test_a_page_of_another_site_is_refused_before_the_app(origin, allowed):
    assert same_origin(origin, "rnnlab.example:8501") == allowed
    for kind_ in ("websocket", "http"):
        tab = Tab([STOP], {"origin": origin}, kind=kind_, path="/_stcore/stream" if kind_ == "websocket" else "/")
        if kind_ == "http":
            tab.app = lambda scope, receive, send: send({"type": "http.response.start", "status": 200})
        run(tab, Registry(FAST))
        refused = any(m.get("status") == 403 or m.get("type") == "websocket.close" for m in tab.sent)
        assert refused != allowed, (origin, kind_, tab.sent)
    assert run(Tab([STOP], {"origin": "http://evil.example"}), Registry(FAST),
               allowed_origins=frozenset({"http://evil.example"})).got  # named in server.corsAllowedOrigins


def test_a_forwarded_address_counts_only_from_the_proxy(monkeypatch):
    monkeypatch.setenv(ENV_CLIENT_HEADER, "X-Forwarded-For")
    monkeypatch.setenv(ENV_PROXY_SECRET, "s3cret")
    forged = Tab([STOP], {"x-forwarded-for": "10.9.9.9"}, client="10.9.9.9")  # uvicorn took it from the header
    assert run(forged, Registry(FAST)).got == [] and forged.sent[0]["type"] == "websocket.close"
    vouched = Tab([STOP], {"x-forwarded-for": "10.9.9.9", PROXY_HEADER: "s3cret"}, client="10.9.9.9")
    assert run(vouched, Registry(FAST)).got
    mine = Tab([STOP], {"x-forwarded-for": "10.9.9.9"}, client="127.0.0.1")  # not believed, not harmful
    assert run(mine, Registry(FAST)).got


@pytest.mark.parametrize("trusted", ["127.0.0.1", "*", "127.0.0.1,10.9.9.2"])
@pytest.mark.parametrize("forwarded", [
    "10.9.9.1", "10.9.9.1, 127.0.0.1", "10.9.9.1:4444", "10.9.9.1:4444, 127.0.0.1:80", "[::ffff:a09:901]:80",
    "10.9.9.1,127.0.0.1,127.0.0.1", "10.9.9.2, 10.9.9.1", "not-an-address, 127.0.0.1", " 10.9.9.1 ", "010.9.9.1"])
def test_no_address_uvicorn_takes_from_a_header_counts_without_the_proxy(monkeypatch, trusted, forwarded):
    """Through uvicorn's own ProxyHeadersMiddleware (as Streamlit's server runs it, trusting loopback by default,
    or whatever FORWARDED_ALLOW_IPS says), a tab on the server's machine that writes any X-Forwarded-For either
    keeps its own address or is refused: it never counts as another machine."""
    from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

    monkeypatch.setenv(ENV_CLIENT_HEADER, "X-Forwarded-For")
    monkeypatch.setenv(ENV_PROXY_SECRET, "s3cret")
    tab = Tab([STOP], {"x-forwarded-for": forwarded}, client="127.0.0.1")
    seen: list[str] = []

    async def app(scope, receive, send):
        seen.append(scope["client"][0])
        await tab.app(scope, receive, send)

    bounds = SessionBounds(app, kind=kind, limits=FAST, registry=Registry(FAST))
    outer = ProxyHeadersMiddleware(bounds, trusted_hosts=trusted)
    run_apart(asyncio.wait_for(outer(tab.scope, tab.receive, tab.send), timeout=10))
    assert seen in ([], ["127.0.0.1"]), (seen, tab.sent)
    assert bool(tab.got) == bool(seen)
