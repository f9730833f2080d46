"""What one browser tab may send a web process, and who may open one, held at the process's ASGI boundary
(``serve.py`` wraps Streamlit's app in :class:`SessionBounds`), before Streamlit reads a byte of it.

- **Messages per tab.** A tab sends one message per click or slider move. Each websocket connection of the
  app's stream has a bucket of :attr:`Limits.burst` messages refilled at :attr:`Limits.rate` a second (a new one
  starts with :attr:`Limits.first`), and the tabs of one machine share a bucket of :attr:`Limits.address_burst`
  refilled at :attr:`Limits.address_rate` (on the server's own machine each tab counts alone). A message that
  finds its bucket empty waits for it, and while it waits nothing more is read from that connection: the sender
  is slowed by its own socket. A rerun that waits is replaced by newer reruns that arrive meanwhile (each carries
  the whole page's state, so only the last matters), at most :attr:`Limits.coalesce` for each one passed on. A tab
  that had :attr:`Limits.flood_messages` messages wait since its bucket was last full is closed (code 1008), and
  its client (:func:`rnnlab.server.access.clients.client_key`) may open no tab for :attr:`Limits.cooldown_s` seconds
  (doubling for each new flood, up to :attr:`Limits.max_cooldown_s`). A person's page says why (:func:`notice`):
  it was slowed, or its connection was closed.
- **Foreign pages.** A request whose ``Origin`` is another site's (not the ``Host`` it asks, not this machine's
  loopback names, not in ``allowed_origins``) is refused here (HTTP 403), before Streamlit's own check, which
  looks the machine's external address up with blocking HTTP requests on the event loop for every such handshake.
- **Forwarded addresses.** uvicorn takes a client's address from ``X-Forwarded-For`` when the connection comes
  from an address it trusts (``FORWARDED_ALLOW_IPS``, loopback by default); a request whose address is one its
  ``X-Forwarded-For`` names (any of them, with or without a port), without the proxy's secret
  (:func:`rnnlab.server.access.clients.from_proxy`), is refused (HTTP 400): only the proxy names addresses, whatever
  address a request comes from.
"""

from __future__ import annotations

import asyncio
import ipaddress
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from rnnlab.i18n import Msg, MsgN
from rnnlab.server.access.clients import client_key, from_proxy, header, is_loopback, vouched_address

STREAM_PATH = "/_stcore/stream"  # the app's websocket, under any base path
LOCAL_NAMES = frozenset({"localhost", "127.0.0.1", "0.0.0.0"})  # Streamlit allows these without a lookup
RERUN = "rerun_script"
DISCONNECT = {"type": "websocket.disconnect", "code": 1008}
MAX_REMEMBERED = 10_000  # clients in cooldown or with a notice to read, at most

Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


@dataclass(frozen=True)
class Limits:
    """The bounds of :class:`SessionBounds` (see the module's docstring)."""

    rate: float = 5.0
    burst: int = 30
    first: int = 5
    address_rate: float = 40.0
    address_burst: int = 200
    coalesce: int = 4
    flood_messages: int = 25
    cooldown_s: float = 10.0
    max_cooldown_s: float = 300.0
    notice_s: float = 600.0  # a closed tab's notice waits this long for its person to come back


class Bucket:
    """``capacity`` tokens refilled at ``rate`` a second, starting with ``tokens``."""

    def __init__(self, rate: float, capacity: float, tokens: float, clock: Callable[[], float]):
        self.rate, self.capacity, self.tokens, self.clock = rate, capacity, min(tokens, capacity), clock
        self.at = clock()

    def refill(self) -> float:
        now = self.clock()
        self.tokens, self.at = min(self.capacity, self.tokens + (now - self.at) * self.rate), now
        return self.tokens

    def wait_s(self) -> float:
        """Seconds until a token is there (0: now)."""
        return max(0.0, (1.0 - self.refill()) / self.rate)

    def take(self) -> None:
        self.refill()
        self.tokens -= 1.0


@dataclass
class Cooldown:
    until: float
    length_s: float


@dataclass
class Notice:
    """What a tab's page says about its bounds: slowed (messages that waited), or closed."""

    waited: int = 0
    closed: bool = False
    at: float = field(default_factory=time.monotonic)


class Registry:
    """What the connections of this process share: the machines' buckets, the clients in cooldown, and the notices
    the pages read (by websocket key while a tab is connected, by client once it was closed). Thread-safe: the
    event loop writes, the pages' script threads read."""

    def __init__(self, limits: Limits, clock: Callable[[], float] = time.monotonic):
        self.limits, self.clock = limits, clock
        self.lock = threading.Lock()
        self.addresses: OrderedDict[str, Bucket] = OrderedDict()
        self.cooldowns: OrderedDict[str, Cooldown] = OrderedDict()
        self.slowed: dict[str, Notice] = {}  # by Sec-WebSocket-Key, while connected
        self.closed: OrderedDict[str, Notice] = OrderedDict()  # by client, until read

    def address_bucket(self, address: str) -> Bucket:
        with self.lock:
            bucket = self.addresses.pop(address, None) or Bucket(
                self.limits.address_rate, self.limits.address_burst, self.limits.address_burst, self.clock)
            self.addresses[address] = bucket
            while len(self.addresses) > MAX_REMEMBERED:
                self.addresses.popitem(last=False)
            return bucket

    def cooling(self, client: str) -> float:
        """Seconds ``client`` must still wait before it may open a tab (0: none)."""
        with self.lock:
            cooldown = self.cooldowns.get(client)
            return max(0.0, cooldown.until - self.clock()) if cooldown else 0.0

    def flooded(self, client: str, key: str, waited: int) -> None:
        """``client``'s tab (websocket ``key``) was closed for flooding: a cooldown, and a notice for its page."""
        now = self.clock()
        with self.lock:
            last = self.cooldowns.pop(client, None)
            length = min(self.limits.max_cooldown_s, last.length_s * 2) if last else self.limits.cooldown_s
            self.cooldowns[client] = Cooldown(now + length, length)
            self.slowed.pop(key, None)
            self.closed.pop(client, None)
            self.closed[client] = Notice(waited, True, now)
            for kept in (self.cooldowns, self.closed):
                while len(kept) > MAX_REMEMBERED:
                    kept.popitem(last=False)

    def waited(self, key: str) -> None:
        with self.lock:
            notice = self.slowed.setdefault(key, Notice())
            notice.waited += 1

    def gone(self, key: str) -> None:
        with self.lock:
            self.slowed.pop(key, None)

    def notice(self, key: str, client: str) -> Notice | None:
        """The notice for a page on websocket ``key`` of ``client``: its tab was closed (read once), else it is
        being slowed; None when neither."""
        with self.lock:
            closed = self.closed.pop(client, None)
            if closed is not None and self.clock() - closed.at < self.limits.notice_s:
                return closed
            slowed = self.slowed.get(key)
            return Notice(slowed.waited) if slowed else None


class Connection:
    """One websocket of the app's stream: its bucket, the reruns it coalesced, and whether it was closed."""

    def __init__(self, bounds: SessionBounds, receive: Receive, key: str, client: str, address: str):
        limits = bounds.limits
        self.bounds, self.limits, self.inner, self.key, self.client = bounds, limits, receive, key, client
        self.bucket = Bucket(limits.rate, limits.burst, limits.first, bounds.clock)
        # the tabs of one machine share a bucket; on the server's own machine each counts alone, as its client does
        self.machine = None if is_loopback(address) else bounds.registry.address_bucket(address)
        self.ahead: asyncio.Future | None = None
        self.held: Message | None = None
        self.waited = self.coalesced = 0
        self.flooded = False

    async def next_message(self) -> Message:
        """The next message from the client."""
        if self.ahead is None:
            self.ahead = asyncio.ensure_future(self.inner())
        message = await self.ahead
        self.ahead = None
        return message

    async def next_within(self, timeout: float) -> Message | None:
        """The next message from the client if one comes within ``timeout`` seconds; else None (and it is still
        awaited, for :meth:`next_message`)."""
        if self.ahead is None:
            self.ahead = asyncio.ensure_future(self.inner())
        done, _ = await asyncio.wait({self.ahead}, timeout=timeout)
        return await self.next_message() if done else None

    def wait_s(self) -> float:
        return max(self.bucket.wait_s(), self.machine.wait_s() if self.machine else 0.0)

    def take(self) -> None:
        if self.bucket.refill() >= self.limits.burst:
            self.waited = 0  # the tab was quiet long enough to fill its bucket: it starts afresh
        self.bucket.take()
        if self.machine:
            self.machine.take()

    async def receive(self) -> Message:
        """The next message for the app, once its bucket allows it (see the module's docstring)."""
        if self.flooded:
            return DISCONNECT
        message, self.held = self.held or await self.next_message(), None
        if message.get("type") != "websocket.receive":
            return message
        if self.wait_s() <= 0.0:
            self.take()
            return message
        if self.bounds.is_rerun(message):
            message = await self.coalesce(message, self.wait_s())
        self.waited += 1
        self.bounds.registry.waited(self.key)
        if self.waited >= self.limits.flood_messages:
            self.flooded = True
            self.bounds.registry.flooded(self.client, self.key, self.waited)
            return DISCONNECT
        await asyncio.sleep(self.wait_s())
        self.take()
        return message

    async def coalesce(self, rerun: Message, wait_s: float) -> Message:
        """``rerun``, or the newest of the reruns that arrive within ``wait_s`` (at most ``coalesce`` of them, each
        counted as a message that waited); a message of another kind is kept for after it."""
        deadline = self.bounds.clock() + wait_s
        for _ in range(self.limits.coalesce):
            left = deadline - self.bounds.clock()
            following = await self.next_within(left) if left > 0 else None
            if following is None:
                break
            if following.get("type") != "websocket.receive" or not self.bounds.is_rerun(following):
                self.held = following
                break
            rerun = following
            self.coalesced += 1
            self.waited += 1
        return rerun

    def close(self) -> None:
        if self.ahead is not None and not self.ahead.done():
            self.ahead.cancel()
        self.bounds.registry.gone(self.key)


def same_origin(origin: str, host: str) -> bool:
    """Whether ``origin`` (``scheme://host[:port]``) is the page's own site for a request to ``host``."""
    try:
        parts = urlsplit(origin)
        name = (parts.hostname or "").lower()
    except ValueError:
        return False
    return bool(parts.netloc) and (parts.netloc.lower() == host.lower() or name in LOCAL_NAMES)


def request_client(headers: Mapping[str, str], address: str | None) -> tuple[str, str]:
    """(client key, machine address) of a request, as :mod:`rnnlab.server.access.clients` counts them, a tab on this
    machine by its address (a connection is not yet a session)."""
    machine = vouched_address(address, headers) or ""
    return client_key(address, "", headers) or f"ip:{machine}", machine


def forwarded_hosts(value: str) -> set[str]:
    """Every address an ``X-Forwarded-For`` value names, as a server that believes it would take one: each entry
    stripped, without a port (``host:port``, ``[v6]:port``), and its canonical form where it is an IP address."""
    hosts: set[str] = set()
    for entry in value.split(","):
        host = entry.strip()
        if host.startswith("[") and "]" in host:
            host = host[1:host.index("]")]
        elif host.count(":") == 1:
            host = host.rsplit(":", 1)[0]
        hosts.add(host)
        try:
            hosts.add(str(ipaddress.ip_address(host)))
        except ValueError:
            pass
    return hosts


def forged_address(client: str | None, headers: Mapping[str, str]) -> bool:
    """Whether the connection's address is one its ``X-Forwarded-For`` names (uvicorn took it from there: it takes
    the first address from the right that it does not trust, whichever that is) while the proxy does not vouch for
    the request."""
    given = header(headers, "x-forwarded-for")
    if not given or client is None or from_proxy(headers):
        return False
    named = forwarded_hosts(given)
    try:
        return client in named or str(ipaddress.ip_address(client)) in named
    except ValueError:
        return True  # not an address at all: a name only a header could have given


class SessionBounds:
    """ASGI middleware: the bounds of the module's docstring around ``app``. ``kind(data)`` names a websocket
    message's type (``rerun_script``, ...); ``allowed_origins`` are other sites allowed to open the app
    (``server.corsAllowedOrigins``), ``any_origin`` allows every site (``server.enableCORS`` off)."""

    def __init__(self, app: Callable[..., Awaitable[None]], kind: Callable[[bytes], str | None] = lambda _: None,
                 limits: Limits | None = None, allowed_origins: frozenset[str] = frozenset(),
                 any_origin: bool = False, registry: Registry | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self.app, self.kind, self.limits = app, kind, limits or Limits()
        self.allowed_origins, self.any_origin, self.clock = allowed_origins, any_origin, clock
        self.registry = registry or REGISTRY

    def is_rerun(self, message: Message) -> bool:
        data = message.get("bytes")
        if not data:
            return False
        try:
            return self.kind(data) == RERUN
        except Exception:  # noqa: BLE001 - a message that does not parse is not a rerun; Streamlit refuses it
            return False

    async def __call__(self, scope: dict, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope.get("headers", [])}
        address = (scope.get("client") or (None,))[0]
        refused = self.refusal(scope, headers, address)
        if refused is not None:
            await refuse(scope, receive, send, *refused)
            return
        if scope["type"] == "websocket" and scope.get("path", "").endswith(STREAM_PATH):
            await self.stream(scope, receive, send, headers, address)
            return
        await self.app(scope, receive, send)

    def refusal(self, scope: dict, headers: Mapping[str, str], address: str | None) -> tuple[int, str] | None:
        origin = header(headers, "origin")
        if origin and not self.any_origin and origin not in self.allowed_origins and not same_origin(
                origin, header(headers, "host")):
            return 403, "Refused: a page of another site may not open this app."
        if forged_address(address, headers):
            return 400, "Refused: a forwarded address counts only from the proxy in front of this server."
        if scope["type"] == "websocket" and scope.get("path", "").endswith(STREAM_PATH):
            wait = self.registry.cooling(request_client(headers, address)[0])
            if wait > 0:
                return 429, f"Refused: this browser sent too many messages; try again in {wait:.0f} s."
        return None

    async def stream(self, scope: dict, receive: Receive, send: Send, headers: Mapping[str, str],
                     address: str | None) -> None:
        client, machine = request_client(headers, address)
        connection = Connection(self, receive, header(headers, "sec-websocket-key"), client, machine)
        try:
            await self.app(scope, connection.receive, send)
        finally:
            connection.close()
        if connection.flooded:
            try:
                await send({"type": "websocket.close", "code": 1008, "reason": "too many messages"})
            except Exception:  # noqa: BLE001 - the connection was already gone
                pass


async def refuse(scope: dict, receive: Receive, send: Send, status: int, text: str) -> None:
    """Answer ``status`` with ``text``: an HTTP response, or for a websocket handshake the same response where the
    server supports it (else the handshake is closed, an HTTP 403)."""
    body = text.encode()
    start = {"status": status, "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                           (b"content-length", str(len(body)).encode())]}
    if scope["type"] == "http":
        await send({"type": "http.response.start", **start})
        await send({"type": "http.response.body", "body": body})
        return
    if (await receive()).get("type") != "websocket.connect":
        return
    if "websocket.http.response" in scope.get("extensions", {}):
        await send({"type": "websocket.http.response.start", **start})
        await send({"type": "websocket.http.response.body", "body": body})
    else:
        await send({"type": "websocket.close", "code": 1008})


def notice(address: str | None, headers: Mapping[str, str]) -> Msg | None:
    """What a page on this connection (its websocket handshake's ``headers`` and ``address``, as the page reads
    them) should say about its bounds: its earlier connection was closed for flooding, or it is being slowed;
    None when neither."""
    found = REGISTRY.notice(header(headers, "sec-websocket-key"), request_client(headers, address)[0])
    if found is None:
        return None
    limits = REGISTRY.limits
    if found.closed:
        # TRANSLATORS: {n} counts the messages this tab sent faster than the server takes them; {rate} is how many
        # a second it takes from one tab
        return MsgN("This tab sent {n} message faster than the server takes them ({rate:g} a second), so the server "
                    "closed its connection for a while. It is connected again; click a little more slowly.",
                    "This tab sent {n} messages faster than the server takes them ({rate:g} a second), so the server "
                    "closed its connection for a while. It is connected again; click a little more slowly.",
                    found.waited, rate=limits.rate)
    # TRANSLATORS: {n} counts the messages (clicks, moves of a control) that waited; {rate} is how many a second the
    # server takes from one tab
    return MsgN("This tab is sending faster than the server takes messages from one tab ({rate:g} a second): {n} "
                "message waited. Click a little more slowly, or the server will close the connection for a while.",
                "This tab is sending faster than the server takes messages from one tab ({rate:g} a second): {n} "
                "messages waited. Click a little more slowly, or the server will close the connection for a while.",
                found.waited, rate=limits.rate)


REGISTRY = Registry(Limits())  # this process's: every connection's bounds and the notices its pages read
