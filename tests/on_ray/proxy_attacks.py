"""Attacks on the web tier through its real proxy, for tests/on_ray/test_proxy_bounds.py, run inside the tier's
network namespace: ``python tests/on_ray/proxy_attacks.py MODE BASE JSON`` prints what it saw as JSON.

Modes: ``hall`` (N browsers without cookies from one address, arriving within a minute: each loads the page and its
probes and opens its websocket, held until all have come); ``hold`` (one address opens N websockets with one
browser's cookies, as a script would); ``foreign`` (a websocket handshake from a page of another site); ``flood``
(two flooding tabs through the proxy while students open the class's link, HAProxy's view of the web processes
watched all along)."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from dataclasses import asdict
from pathlib import Path

from websockets.exceptions import InvalidStatus, WebSocketException

from rnnlab.cluster.web import SERVER_HEADER, backends
from rnnlab.server.access.clients import BROWSER_COOKIE
from tests.load.attacks import flood, open_stream, page_cookies
from tests.load.protocol_client import http_answer, loopback_base, open_session

HALL_WITHIN_S = 60.0
HALL_ARRIVES_S = 10.0  # the hall comes in this long: 150 browsers, more than a minute's new ids
COME_BACK_S = 11.0  # a flooding tab's first cooldown is over (closed after 1-2 s, then 10 s)


async def arrive(base: str, source: str, held: list, release: asyncio.Event) -> dict:
    """One browser without cookies: its page's status, whether it got an id, and whether its websocket opened (held
    until ``release``)."""
    host, path, port, _ = loopback_base(base)
    status, _, cookies = await http_answer(host, port, f"{path}/", {}, source)
    jar = dict(cookies)
    for probe in ("_stcore/health", "_stcore/host-config"):
        _, _, more = await http_answer(host, port, f"{path}/{probe}", jar, source)
        jar.update(more)
    try:
        ws = await open_stream(base, jar, source)
    except InvalidStatus as e:
        return {"page": status, "id": BROWSER_COOKIE in cookies, "socket": e.response.status_code}
    except (OSError, WebSocketException) as e:
        return {"page": status, "id": BROWSER_COOKIE in cookies, "socket": type(e).__name__}
    held.append(ws)
    await release.wait()
    return {"page": status, "id": BROWSER_COOKIE in cookies, "socket": 101}


async def hall(base: str, n: int, source: str) -> dict:
    held: list = []
    release = asyncio.Event()
    start = time.monotonic()
    tasks = []
    for _ in range(n):  # arriving one after another within HALL_ARRIVES_S
        tasks.append(asyncio.create_task(arrive(base, source, held, release)))
        await asyncio.sleep(HALL_ARRIVES_S / n)
    while time.monotonic() - start < HALL_WITHIN_S and sum(t.done() for t in tasks) + len(held) < n:
        await asyncio.sleep(0.2)
    opened_by = time.monotonic() - start
    release.set()
    seen = await asyncio.gather(*tasks)
    for ws in held:
        await ws.close()
    return {"browsers": seen, "seconds": round(opened_by, 1)}


async def hold(base: str, n: int, source: str) -> dict:
    cookies = await page_cookies(base, source)
    held, refused = [], []
    for _ in range(n):
        try:
            held.append(await open_stream(base, cookies, source))
        except InvalidStatus as e:
            refused.append(e.response.status_code)
        except (OSError, WebSocketException) as e:
            refused.append(type(e).__name__)
    for ws in held:
        await ws.close()
    return {"held": len(held), "refused": refused}


async def foreign(base: str, source: str) -> dict:
    cookies = await page_cookies(base, source)
    try:
        async with open_stream(base, cookies, source, origin="http://evil.example"):
            return {"status": 101, "server": "?"}
    except InvalidStatus as e:
        return {"status": e.response.status_code, "server": e.response.headers.get(SERVER_HEADER, "")}


async def lesson(base: str, stats: str, page: str, query: str, seconds: float) -> dict:
    """Two flooding tabs (127.0.0.4, 127.0.0.5) for ``seconds`` while students open ``page?query``, four as the
    floods start and four as they come back from their first cooldown; HAProxy's view of the web processes, every
    0.2 s."""
    states: list[dict[str, str]] = []

    async def watch() -> None:
        while True:
            states.append(backends(Path(stats)))
            await asyncio.sleep(0.2)

    watcher = asyncio.create_task(watch())
    floods = [asyncio.create_task(flood(base, seconds, source)) for source in ("127.0.0.4", "127.0.0.5")]
    students = []
    started = time.monotonic()
    for at in (0.5, COME_BACK_S):
        await asyncio.sleep(max(0.0, at - (time.monotonic() - started)))
        students += await asyncio.gather(*(open_session(base, query, page, 60) for _ in range(4)))
    flooded = await asyncio.gather(*floods)
    watcher.cancel()
    return {"floods": [asdict(f) for f in flooded],
            "students": [{"answer": s.server_answer_s, "ok": s.ok, "errors": s.errors} for s in students],
            "down": sorted({name for state in states for name, up in state.items() if up != "UP"}),
            "watched": len(states)}


def main() -> None:
    mode, base, given = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    if mode == "hall":
        got = asyncio.run(hall(base, given["n"], given["source"]))
    elif mode == "hold":
        got = asyncio.run(hold(base, given["n"], given["source"]))
    elif mode == "foreign":
        got = asyncio.run(foreign(base, given["source"]))
    elif mode == "warm":
        got = {"ok": [asyncio.run(open_session(base, given["query"], given["page"], 600)).ok
                      for _ in range(given["n"])]}
    elif mode == "flood":
        got = asyncio.run(lesson(base, given["stats"], given["page"], given["query"], given["seconds"]))
    else:
        raise SystemExit(f"unknown mode {mode!r}")
    print(json.dumps(got))


if __name__ == "__main__":
    main()
