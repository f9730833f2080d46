"""A server stopped while it trains (SIGTERM, as systemd or a container stop sends it) exits within 10 s, and every
tab's run is on disk at least as far as the tab saw it trained, for a reload after the restart.

Two tabs on the first preset's link with seeds of their own each train a run of their own; once both have shown
training well past the run files' last throttled write, the server's process group gets SIGTERM. No browser: the tabs
speak Streamlit's websocket protocol (:mod:`tests.load.protocol_client`). A fresh disk cache, so the server is
still compiling its start-up warm-up when the tabs arrive.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs

import pytest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.asyncio.client import connect
from websockets.exceptions import WebSocketException

from rnnlab.server.storage.run_files import RunFolder, run_from_bytes
from rnnlab.server.storage.session_store import TOKEN_PARAM
from tests.e2e.conftest import streamlit_server
from tests.load import protocol_client as pc

EXIT_WITHIN_S = 10.0
TABS = 2
SHOWN_STEP = 60  # each tab has shown training past this step (the preset saves every 25 steps at most every 10 s)
TRAIN_TIMEOUT_S = 150.0


@dataclass
class Tab:
    """What a tab last saw: its token (from the URL the server wrote) and the last trained step shown."""

    token: str | None = None
    step: int = 0
    closed: bool = False
    error: str = ""


async def watch(base: str, seed: int, tab: Tab) -> None:
    """Open the first preset's link with ``seed`` and record what it shows until the server closes the connection."""
    from rnnlab.sharing.presets import PRESETS

    host, _, port, _ = pc.loopback_base(base)
    query = "&".join(f"{k}={v}" for k, v in {**PRESETS[0].query(), "seed": str(seed)}.items())
    url, page = f"{base}/explore?{query}", pc.Page()
    cookies: dict[str, str] = {}
    for where in (f"/explore?{query}", *(f"/{p}" for p in pc.PROBE_PATHS)):
        cookies.update((await pc.http_get(host, port, where, cookies))[1])
    try:
        async with connect(f"ws{base.removeprefix('http')}/{pc.STREAM_PATH}",
                           subprotocols=[pc.PROTOCOL, cookies.get(pc.XSRF_COOKIE, pc.NO_XSRF_TOKEN)], origin=base,
                           additional_headers={"Cookie": "; ".join(f"{k}={v}" for k, v in cookies.items())},
                           user_agent_header=pc.USER_AGENT, proxy=None, ping_interval=None,
                           max_size=pc.MAX_MESSAGE_BYTES) as socket:
            await socket.send(pc.rerun_message(query, "explore", url).SerializeToString())
            async for data in socket:
                msg = ForwardMsg.FromString(data)
                which = msg.WhichOneof("type")
                if which == "page_info_changed":
                    tab.token = parse_qs(msg.page_info_changed.query_string).get(TOKEN_PARAM, [tab.token])[-1]
                elif which == "delta" and (node := page.apply(msg)) is not None and node.kind == "progress":
                    shown = pc.TRAINED_STEP.search(node.proto.progress.text)
                    if shown:
                        tab.step = max(tab.step, int(re.sub("[^0-9]", "", next(g for g in shown.groups() if g))))
    except (OSError, WebSocketException) as e:
        tab.error = f"{type(e).__name__}: {e}"
    tab.closed = True


async def train_then_stop(base: str, server) -> tuple[list[Tab], float]:
    """Two training tabs; SIGTERM once both have shown :data:`SHOWN_STEP`; the tabs and seconds to the exit."""
    tabs = [Tab() for _ in range(TABS)]
    watchers = [asyncio.create_task(watch(base, 900 + i, tab)) for i, tab in enumerate(tabs)]
    deadline = time.monotonic() + TRAIN_TIMEOUT_S
    while min(tab.step for tab in tabs) < SHOWN_STEP:
        assert time.monotonic() < deadline and not any(tab.closed for tab in tabs), tabs
        await asyncio.sleep(0.1)
    os.killpg(server.pid, signal.SIGTERM)
    stopped = time.monotonic()
    while server.poll() is None and time.monotonic() - stopped < 3 * EXIT_WITHIN_S:
        await asyncio.sleep(0.05)
    exit_s = time.monotonic() - stopped
    await asyncio.wait(watchers, timeout=5)
    return tabs, exit_s


@pytest.mark.e2e
def test_sigterm_while_training_exits_quickly_and_keeps_every_run(artifacts: Path, tmp_path: Path,
                                                                  monkeypatch) -> None:
    runs = tmp_path / "runs"
    monkeypatch.setenv("RNNLAB_RUNS_DIR", str(runs))
    monkeypatch.setenv("RNNLAB_JAX_CACHE_DIR", str(tmp_path / "jax"))
    started: list = []
    with streamlit_server(artifacts / "streamlit-server-stop.log", started) as base:
        tabs, exit_s = pc.run_apart(train_then_stop(base, started[0]))
        code = started[0].poll()
    print(f"\nexited {exit_s:.2f} s after SIGTERM (code {code}); tabs saw steps {[tab.step for tab in tabs]}")
    assert exit_s <= EXIT_WITHIN_S, f"the server took {exit_s:.1f} s to exit after SIGTERM"
    assert code == 0, f"the server exited with {code}"
    folder = RunFolder(runs)
    for tab in tabs:
        assert tab.token, tab
        kept = folder.read(tab.token)
        assert kept is not None, f"no run kept on disk for {tab}"
        assert run_from_bytes(kept).step >= tab.step, (run_from_bytes(kept).step, tab)
