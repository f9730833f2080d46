"""A freshly started server's very first requests: deep links to every page, in Chinese and Russian, opened at once
while two CPU-bound processes keep the machine busy, each get the page through app.py (its language, its sidebar
links and the language selector), on every one of many fresh starts.

Streamlit runs a folder named ``pages/`` next to the entry point as its legacy multipage app (each page file alone,
without app.py) until some session has called ``st.navigation``; that is exactly what these first requests would
meet, under the race of several sessions starting at once on a busy machine. The page scripts live in app_pages/
to avoid it (docs/architecture.md); this test holds that, whatever the order of the first requests.

No browser: each tab speaks Streamlit's websocket protocol (:mod:`tests.load.protocol_client`) and stops reading
at its page's title, which is all this needs (the title comes before any heavy work). ``RNNLAB_COLD_STARTS``
sets the number of fresh starts (20 unless set).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pytest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.asyncio.client import connect
from websockets.exceptions import WebSocketException

from tests.app_pages import PAGES
from tests.e2e.conftest import streamlit_server
from tests.e2e.test_browser import HEADINGS
from tests.load import protocol_client as pc

STARTS = int(os.environ.get("RNNLAB_COLD_STARTS", "20"))
LANGS = ("zh", "ru")
HOGS = 2  # CPU-bound processes beside the server, as on a teacher's busy laptop
TITLE_TIMEOUT_S = 90.0  # from a fresh start to a page's title, on a loaded 2-core machine
SELECTOR_LABEL = "Language · 语言 · Язык"
MAIN, SIDEBAR = 0, 1  # the root containers of a delta's path


@dataclass
class FirstLook:
    """What a tab saw up to its page's first title: that title, the sidebar's page links, whether the language
    selector was there, and what went wrong (a timeout, a lost connection, an exception on the page)."""

    url: str
    title: str | None = None
    links: list[str] = field(default_factory=list)
    selector: bool = False
    seconds: float = 0.0
    errors: list[str] = field(default_factory=list)


def in_language(message: str, lang: str) -> str:
    from rnnlab.i18n import _, using

    with using(lang):
        return _(message)


def expected(page, lang: str) -> tuple[str, list[str]]:
    """The title ``page`` shows in ``lang``, and the sidebar's page links in ``lang``."""
    return in_language(HEADINGS[page.name], lang), [in_language(p.title, lang) for p in PAGES]


def read(look: FirstLook, page: pc.Page, msg: ForwardMsg) -> bool:
    """Take one message; True once the main area has its first title (or the script run ended without one)."""
    which = msg.WhichOneof("type")
    if which == "new_session":
        page.new_run()
    elif which == "script_finished" and msg.script_finished == ForwardMsg.FINISHED_SUCCESSFULLY:
        look.errors.append("the script run ended without a title")
        return True
    elif which == "page_not_found":
        look.errors.append(f"page not found: {msg.page_not_found.page_name!r}")
        return True
    if which != "delta":
        return False
    node = page.apply(msg)
    if node is None:
        return False
    if node.kind == "exception":
        look.errors.append(f"exception: {node.proto.exception.message}")
        return True
    if node.kind != "heading" or msg.metadata.delta_path[0] != MAIN:
        return False
    look.title = node.proto.heading.body
    sidebar = [page.nodes[p] for p in sorted(page.nodes) if p[0] == SIDEBAR]
    look.links = [n.proto.page_link.label for n in sidebar if n.kind == "page_link"]
    look.selector = any(n.kind == "selectbox" and n.proto.selectbox.label == SELECTOR_LABEL for n in sidebar)
    return True


async def first_look(base: str, path: str, query: str, timeout_s: float) -> FirstLook:
    """Open ``path?query`` on ``base`` as a tab does, reading until its page's first title."""
    host, _, port, _ = pc.loopback_base(base)
    url = f"{base}/{path}?{query}"
    look, page, start = FirstLook(url), pc.Page(), time.monotonic()
    try:
        async with asyncio.timeout(timeout_s):
            cookies: dict[str, str] = {}
            for where in (f"/{path}?{query}", *(f"/{p}" for p in pc.PROBE_PATHS)):
                status, set_cookies = await pc.http_get(host, port, where, cookies)
                cookies.update(set_cookies)
                if status != 200:
                    look.errors.append(f"GET {where} answered {status}")
            headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in cookies.items())} if cookies else {}
            async with connect(f"ws{base.removeprefix('http')}/{pc.STREAM_PATH}",
                               subprotocols=[pc.PROTOCOL, cookies.get(pc.XSRF_COOKIE, pc.NO_XSRF_TOKEN)],
                               origin=base, additional_headers=headers, user_agent_header=pc.USER_AGENT, proxy=None,
                               ping_interval=None, close_timeout=1, max_size=pc.MAX_MESSAGE_BYTES) as socket:
                await socket.send(pc.rerun_message(query, path, url).SerializeToString())
                while True:
                    data = await socket.recv()
                    if isinstance(data, bytes) and read(look, page, ForwardMsg.FromString(data)):
                        break
    except TimeoutError:
        look.errors.append(f"no title within {timeout_s:.0f} s")
    except (OSError, WebSocketException) as e:
        look.errors.append(f"connection: {type(e).__name__}: {e}")
    look.seconds = round(time.monotonic() - start, 2)
    return look


async def first_requests(base: str) -> list[tuple[object, str, FirstLook]]:
    """Every page in every language of :data:`LANGS`, opened at once: (page, language, what it showed)."""
    links = [(page, lang) for lang in LANGS for page in PAGES]
    looks = await asyncio.gather(*(first_look(base, page.url_path, f"lang={lang}", TITLE_TIMEOUT_S)
                                   for page, lang in links))
    return [(page, lang, look) for (page, lang), look in zip(links, looks)]


@contextmanager
def busy_cpu(n: int) -> Iterator[None]:
    """``n`` CPU-bound processes for the ``with`` body."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


def wrong(page, lang: str, look: FirstLook) -> str | None:
    """What is wrong with ``look`` for ``page`` in ``lang`` (None: the page came through app.py, in ``lang``)."""
    title, links = expected(page, lang)
    if look.errors:
        return "; ".join(look.errors)
    if look.title != title or look.links != links or not look.selector:
        return (f"title {look.title!r} (expected {title!r}), sidebar links {look.links} (expected {links}), "
                f"language selector {'shown' if look.selector else 'missing'}")
    return None


@pytest.mark.e2e
def test_the_first_deep_links_of_fresh_servers_run_through_app_py(artifacts: Path, tmp_path: Path,
                                                                  monkeypatch) -> None:
    assert set(HEADINGS) == {page.name for page in PAGES}
    monkeypatch.setenv("RNNLAB_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("RNNLAB_JAX_CACHE_DIR", str(tmp_path / "jax"))
    monkeypatch.setenv("RNNLAB_WARM", "presets")  # as a real server: a worker compiles every preset meanwhile
    failures, record = [], []
    with busy_cpu(HOGS):
        for start in range(STARTS):
            started: list = []
            with streamlit_server(artifacts / "streamlit-server-cold-start.log", started) as base:
                began = time.monotonic()
                seen = pc.run_apart(first_requests(base))
                os.killpg(started[0].pid, signal.SIGKILL)  # no graceful stop: the next start comes sooner
                record.append({"start": start, "seconds": round(time.monotonic() - began, 2),
                               "pages": [{"page": page.name, "lang": lang, **asdict(look)}
                                         for page, lang, look in seen]})
                failures += [f"start {start}, {look.url}: {why}" for page, lang, look in seen
                             if (why := wrong(page, lang, look))]
    (artifacts / "cold-start.json").write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    print(f"\n{STARTS} fresh starts, slowest title after {max(p['seconds'] for r in record for p in r['pages'])} s")
    assert not failures, f"{len(failures)} of {STARTS * len(LANGS) * len(PAGES)} first pages went wrong:\n" + \
        "\n".join(failures)
