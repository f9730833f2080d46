"""What a student with twenty lines of Python does to a class's server, over the real websocket (Streamlit's
protocol as :mod:`tests.load.protocol_client` speaks it), loopback only, each bounded in count and time: a tab that
floods reruns, oversized messages, handshakes from a foreign page, many held websockets, a hall arriving at once.

Each takes ``source``, the local address it comes from (127.0.0.0/8: one machine per address)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus, WebSocketException

from tests.load.protocol_client import (
    NO_XSRF_TOKEN,
    PROBE_PATHS,
    PROTOCOL,
    STREAM_PATH,
    USER_AGENT,
    XSRF_COOKIE,
    http_answer,
    loopback_base,
    rerun_message,
)

MAX_FLOOD_MESSAGES = 2_000_000  # per tab: what a tight loop sends in a minute, at most


@dataclass
class Flood:
    """What one flooding tab saw: messages sent, how long, how its connection ended, handshakes refused."""

    sent: int = 0
    seconds: float = 0.0
    connections: int = 0
    close_codes: list[int | None] = field(default_factory=list)
    refused: list[int] = field(default_factory=list)  # HTTP statuses of refused handshakes
    first_close_s: float | None = None
    errors: list[str] = field(default_factory=list)


async def page_cookies(base: str, source: str | None = None, page: str = "", query: str = "",
                       extra: dict[str, str] | None = None) -> dict[str, str]:
    """Load the page and its probes as a tab does; the cookies they set."""
    host, path, port, _ = loopback_base(base)
    cookies: dict[str, str] = {}
    for where in (f"{path}/{page}" + (f"?{query}" if query else ""), *(f"{path}/{p}" for p in PROBE_PATHS)):
        _, _, set_cookies = await http_answer(host, port, where, cookies, source, extra)
        cookies.update(set_cookies)
    return cookies


def open_stream(base: str, cookies: dict[str, str], source: str | None = None, origin: str | None = None,
                extra: dict[str, str] | None = None, max_size: int | None = 2**20):
    """The app's websocket as a tab opens it (``origin``: the page's own site unless given)."""
    _, path, _, full = loopback_base(base)
    jar = "; ".join(f"{k}={v}" for k, v in cookies.items())
    return connect(f"ws{full.removeprefix('http')}/{STREAM_PATH}",
                   subprotocols=[PROTOCOL, cookies.get(XSRF_COOKIE, NO_XSRF_TOKEN)],  # type: ignore[list-item]
                   origin=origin or full[:len(full) - len(path)],  # type: ignore[arg-type]
                   additional_headers={**(extra or {}), **({"Cookie": jar} if jar else {})},
                   user_agent_header=USER_AGENT, proxy=None, ping_interval=None, close_timeout=2, open_timeout=20,
                   max_size=max_size, local_addr=(source, 0) if source else None)


async def drain(ws: ClientConnection) -> None:
    """Read whatever the server sends, as a tab does, until the connection ends."""
    try:
        async for _ in ws:
            pass
    except (ConnectionClosed, OSError):
        pass


async def flood(base: str, seconds: float, source: str | None = None, page: str = "explore", query: str = "",
                reconnect: bool = True) -> Flood:
    """A tab that sends ``rerun_script`` as fast as its socket takes them for ``seconds``, reading what comes;
    when its connection is closed it opens a new one at once (``reconnect``), as a loop would."""
    result, start = Flood(), time.monotonic()
    message = rerun_message(query, page, f"{loopback_base(base)[3]}/{page}").SerializeToString()
    cookies = await page_cookies(base, source, page, query)
    while time.monotonic() - start < seconds and result.sent < MAX_FLOOD_MESSAGES:
        try:
            async with open_stream(base, cookies, source) as ws:
                result.connections += 1
                reader = asyncio.create_task(drain(ws))
                try:
                    while time.monotonic() - start < seconds and result.sent < MAX_FLOOD_MESSAGES:
                        await asyncio.wait_for(ws.send(message), timeout=max(0.01, seconds - (time.monotonic()
                                                                                                 - start)))
                        result.sent += 1
                except TimeoutError:
                    break
                except ConnectionClosed as e:
                    result.close_codes.append(e.rcvd.code if e.rcvd else None)
                    if result.first_close_s is None:
                        result.first_close_s = time.monotonic() - start
                finally:
                    reader.cancel()
        except InvalidStatus as e:
            result.refused.append(e.response.status_code)
            await asyncio.sleep(0.2)
        except (OSError, WebSocketException) as e:
            result.errors.append(f"{type(e).__name__}: {e}")
            await asyncio.sleep(0.2)
        if not reconnect:
            break
    result.seconds = time.monotonic() - start
    return result


async def oversized(base: str, size: int, source: str | None = None) -> tuple[int | None, float, str]:
    """One binary message of ``size`` bytes on a tab's websocket: (the close code the server sent, seconds from
    sending to the close, what happened)."""
    cookies = await page_cookies(base, source)
    async with open_stream(base, cookies, source) as ws:
        start = time.monotonic()
        try:
            await asyncio.wait_for(ws.send(b"\x00" * size), timeout=60)
            await asyncio.wait_for(drain(ws), timeout=60)
        except ConnectionClosed:
            pass
        except TimeoutError:
            return None, time.monotonic() - start, "no close within 60 s"
        code = ws.close_code
        return code, time.monotonic() - start, f"closed {code} {ws.close_reason!r}"


async def foreign_handshake(base: str, origin: str, source: str | None = None) -> tuple[str, float]:
    """A websocket handshake from a page of ``origin``: (how it ended, seconds)."""
    cookies = await page_cookies(base, source)
    start = time.monotonic()
    try:
        async with open_stream(base, cookies, source, origin=origin) as ws:
            try:
                await asyncio.wait_for(ws.recv(), timeout=5)
                return "accepted", time.monotonic() - start
            except ConnectionClosed as e:
                return f"closed {e.rcvd.code if e.rcvd else None}", time.monotonic() - start
            except TimeoutError:
                return "accepted", time.monotonic() - start
    except InvalidStatus as e:
        return f"HTTP {e.response.status_code}", time.monotonic() - start
    except (OSError, WebSocketException) as e:
        return f"{type(e).__name__}", time.monotonic() - start
