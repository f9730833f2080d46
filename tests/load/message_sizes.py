"""The largest websocket messages a page sends a tab, so that ``server.maxMessageSize`` (.streamlit/config.toml)
bounds what a tab may send without cutting what the app sends.

``python -m tests.load.message_sizes --base http://127.0.0.1:8501 'explore?seq_len=2000&steps=25&run=1' ...``
opens each link as a tab (until nothing came for ``--quiet`` seconds, or ``--timeout``) and prints its largest
messages: bytes, the element's type and a chart's title."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time

from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from tests.load.attacks import open_stream, page_cookies
from tests.load.protocol_client import loopback_base, read_chart, rerun_message

KEPT = 5


def describe(msg: ForwardMsg) -> str:
    """A message's type, an element's type and a chart's title."""
    which = msg.WhichOneof("type") or ""
    if which == "delta" and msg.delta.WhichOneof("type") == "new_element":
        element = msg.delta.new_element
        kind = element.WhichOneof("type") or ""
        if kind == "plotly_chart":
            return f"plotly_chart {read_chart(element.plotly_chart.spec).title!r}"
        return kind
    return which


async def largest(base: str, link: str, timeout_s: float, quiet_s: float) -> dict:
    """Open ``link`` ('page?query') as a tab; its largest messages until nothing came for ``quiet_s``."""
    page, _, query = link.partition("?")
    cookies = await page_cookies(base, None, page, query)
    sizes: list[tuple[int, str]] = []
    start = time.monotonic()
    async with open_stream(base, cookies, max_size=None) as ws:
        await ws.send(rerun_message(query, page, f"{loopback_base(base)[3]}/{link}").SerializeToString())
        while time.monotonic() - start < timeout_s:
            try:
                data = await asyncio.wait_for(ws.recv(), timeout=quiet_s)
            except TimeoutError:
                break
            sizes.append((len(data), describe(ForwardMsg.FromString(data))))
    sizes.sort(reverse=True)
    return {"link": link, "seconds": round(time.monotonic() - start, 1), "messages": len(sizes),
            "largest": [{"bytes": n, "what": what} for n, what in sizes[:KEPT]]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="http://127.0.0.1:8501")
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--quiet", type=float, default=20.0)
    parser.add_argument("links", nargs="+")
    args = parser.parse_args(argv)
    for link in args.links:
        print(json.dumps(asyncio.run(largest(args.base, link, args.timeout, args.quiet))), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
