"""Browsers without a browser, for tests/on_ray/test_web.py, run inside the cluster's network namespace (as a lecture
hall's browsers would reach the proxy), with the repository on ``PYTHONPATH``:
``python tests/on_ray/web_driver.py MODE BASE JSON OUT`` (JSON: ``{"pids": {name: pid}, "stats": HAProxy's socket}``).

Each :class:`Browser` keeps a cookie jar and opens tabs as :mod:`tests.load.protocol_client` does (the page, the
two probes, the websocket, one ``rerun_script``), noting which web process answered each request (the proxy's
``X-Rnnlab-Server``), every info message, and the URL the page wrote (its ``sid``). A tab whose connection is
lost opens again through the proxy with the URL it had, as a reconnecting browser does, plus ``run=1`` (Train); when
the page asks before a long run ("Start it anyway?"), the tab presses Start anyway.

Modes: ``mint`` (one machine, 127.0.0.2, opens three long runs: two browsers through the proxy that mint ids and
forge ``X-Forwarded-For``, and one sent straight to web1 with made-up proxy headers; a student at 127.0.0.3 then
trains a run of its own; all on web1); ``fork`` (a tab's address, its ``sid`` included, opened in another browser on
web2 while the tab is still connected on web1); ``sticky`` (fresh browsers: the page, the probes and the websocket
of each reach one web process, and fresh browsers are spread over both); ``kill`` (one browser per tab, each
training a run of its own; once the tabs of the first web process have trained a while it is SIGKILLed; its tabs
come back through the proxy and continue their runs from the shared runs folder); ``kill-ray`` (the same for one tab
with the Ray executor, which reconnects only once Ray's CPUs are all free again). What it saw is pickled to OUT.
"""

from __future__ import annotations

import asyncio
import json
import os
import pickle
import re
import signal
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, urlencode

from google.protobuf.message import DecodeError
from streamlit.proto.Alert_pb2 import Alert
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.asyncio.client import connect
from websockets.exceptions import WebSocketException

from rnnlab.cluster.web import SERVER_COOKIE, SERVER_HEADER, backends
from rnnlab.sharing.presets import PRESETS
from tests.load.protocol_client import (
    MAX_MESSAGE_BYTES,
    NO_XSRF_TOKEN,
    PROBE_PATHS,
    PROTOCOL,
    STREAM_PATH,
    USER_AGENT,
    XSRF_COOKIE,
    Recorder,
    SessionResult,
    http_answer,
    loopback_base,
    rerun_message,
)

RESTORED = re.compile(r"Your run is back after the page was reloaded, at step ([0-9]+)")
TRAINED = re.compile(r"step ([0-9]+) / ([0-9]+)")
CONFIRM_KEY = "confirm_go"  # the key of the page's "Start anyway" button (ui/explore_controls.py)
SESSION_TIMEOUT_S = 420.0


async def get(host: str, port: int, path: str, cookies: dict[str, str], source: str | None = None,
              extra: dict[str, str] | None = None) -> tuple[int, dict[str, str]]:
    """GET ``path`` with the jar ``cookies`` (updated from the answer's Set-Cookie); the status and the answer's
    headers (lower-case names)."""
    status, headers, set_cookies = await http_answer(host, port, path, cookies, source, extra)
    cookies.update(set_cookies)
    return status, headers


@dataclass
class Tab:
    """One tab's story: which web process answered what, its info messages, and each connection's end."""

    name: str
    servers: list[str] = field(default_factory=list)  # per request: the page, the probes, the websocket
    infos: list[str] = field(default_factory=list)
    connections: list[str] = field(default_factory=list)  # how each connection ended
    first_progress_at: float | None = None  # time.monotonic()
    lost_at: float | None = None
    restored_step: int | None = None
    restored_at: float | None = None
    trained_before_loss: int = 0
    result: SessionResult | None = None
    query: str = ""
    page_hash: str = ""  # the page's script hash, from the connection's last navigation message
    confirm_id: str | None = None  # the "Start anyway" button on the page now (a long run asks first)
    confirmed: int = 0  # how many times the tab pressed it


class Browser:
    """A cookie jar, and tabs opened with it through the proxy at ``base``."""

    def __init__(self, base: str, source: str | None = None, extra: dict[str, str] | None = None):
        self.host, self.path, self.port, self.base = loopback_base(base)
        self.cookies: dict[str, str] = {}
        self.source, self.extra = source, extra or {}  # the local address it comes from; headers it adds

    async def load(self, tab: Tab, page: str, query: str) -> None:
        for where in (f"{self.path}/{page}?{query}", *(f"{self.path}/{p}" for p in PROBE_PATHS)):
            status, headers = await get(self.host, self.port, where, self.cookies, self.source, self.extra)
            tab.servers.append(headers.get(SERVER_HEADER.lower(), f"status {status}"))

    def socket(self):
        jar = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        return connect(f"ws{self.base.removeprefix('http')}/{STREAM_PATH}",
                       subprotocols=[PROTOCOL, self.cookies.get(XSRF_COOKIE, NO_XSRF_TOKEN)],
                       origin=self.base[:len(self.base) - len(self.path)],
                       additional_headers={**self.extra, "Cookie": jar}, user_agent_header=USER_AGENT, proxy=None,
                       ping_interval=None, close_timeout=2, max_size=MAX_MESSAGE_BYTES, open_timeout=60,
                       local_addr=(self.source, 0) if self.source else None)

    async def touch(self, tab: Tab, page: str, query: str) -> None:
        """The page, the probes and the websocket's handshake, then close: which web process answered each."""
        await self.load(tab, page, query)
        async with self.socket() as ws:
            tab.servers.append(ws.response.headers.get(SERVER_HEADER, "none"))

    async def run(self, tab: Tab, page: str, query: str, reconnects: int = 3,
                  hold: asyncio.Event | None = None, keep_open: asyncio.Event | None = None) -> Tab:
        """Open the tab and follow it until its page says Finished (see :class:`Recorder`), then keep it connected
        until ``keep_open`` is set, when given; when its connection is lost, open it again (once ``hold`` is set,
        when given) with the URL it had and ``run=1``."""
        start = time.monotonic()
        tab.result = result = SessionResult(url=f"{self.base}/{page}?{query}", group=tab.name)
        recorder = Recorder(result)
        for attempt in range(reconnects + 1):
            try:
                await self.load(tab, page, query)
                async with self.socket() as ws:
                    tab.servers.append(ws.response.headers.get(SERVER_HEADER, "none"))
                    result.connected_s = time.monotonic() - start
                    await ws.send(rerun_message(query, page, f"{self.base}/{page}?{query}").SerializeToString())
                    while True:
                        data = await ws.recv()
                        msg = ForwardMsg.FromString(data)
                        self.watch(tab, msg)
                        if self.asked_first(tab, msg, result):  # as its reader would, it starts the run anyway
                            tab.confirmed += 1
                            pressed = self.confirm_message(tab, recorder.query_string or query, page)
                            await ws.send(pressed.SerializeToString())
                            continue
                        if recorder.feed(msg, time.monotonic() - start, len(data)):
                            tab.connections.append("done")
                            if keep_open is not None:
                                await keep_open.wait()
                            return tab
            except (OSError, WebSocketException, DecodeError) as e:
                tab.connections.append(f"{type(e).__name__}: {e}")
                if tab.lost_at is None:
                    tab.lost_at = time.monotonic()
                written = dict(parse_qsl(recorder.query_string or query))
                query = urlencode({**written, "run": "1"})
                if hold is not None:
                    await hold.wait()
                await asyncio.sleep(0.5 * (attempt + 1))
        return tab

    @staticmethod
    def asked_first(tab: Tab, msg: ForwardMsg, result: SessionResult) -> bool:
        """Whether a script run ended asking "Start it anyway?" (a run the page estimates at over a minute, as it
        may on a busy machine) before the tab's run finished."""
        return (msg.WhichOneof("type") == "script_finished" and msg.script_finished == ForwardMsg.FINISHED_SUCCESSFULLY
                and tab.confirm_id is not None and result.finished_s is None)

    def confirm_message(self, tab: Tab, query: str, page: str):
        """The ``rerun_script`` of a press on "Start anyway"."""
        msg = rerun_message(query, page, f"{self.base}/{page}?{query}", tab.page_hash)
        pressed = msg.rerun_script.widget_states.widgets.add()
        pressed.id, pressed.trigger_value = tab.confirm_id, True
        tab.confirm_id = None
        return msg

    @staticmethod
    def watch(tab: Tab, msg: ForwardMsg) -> None:
        if msg.WhichOneof("type") == "page_info_changed":
            tab.query = msg.page_info_changed.query_string
        if msg.WhichOneof("type") == "new_session":
            tab.confirm_id = None
        if msg.WhichOneof("type") == "navigation":
            tab.page_hash = msg.navigation.page_script_hash or tab.page_hash
        if msg.WhichOneof("type") != "delta" or msg.delta.WhichOneof("type") != "new_element":
            return
        element = msg.delta.new_element
        if element.WhichOneof("type") == "button" and element.button.id.endswith(CONFIRM_KEY):
            tab.confirm_id = element.button.id
        if element.WhichOneof("type") == "alert" and element.alert.format == Alert.INFO:
            body = element.alert.body
            if body not in tab.infos:
                tab.infos.append(body)
            back = RESTORED.search(body)
            if back and tab.restored_step is None:
                tab.restored_step, tab.restored_at = int(back[1]), time.monotonic()
        elif element.WhichOneof("type") == "progress":
            step = TRAINED.search(element.progress.text)
            if step and int(step[1]) > 0:
                if tab.first_progress_at is None:
                    tab.first_progress_at = time.monotonic()
                if tab.lost_at is None:
                    tab.trained_before_loss = max(tab.trained_before_loss, int(step[1]))


async def sticky(base: str, browsers: int) -> dict:
    tabs = [Tab(f"browser{i}") for i in range(browsers)]
    jars = []
    for tab in tabs:  # one after another: round robin spreads fresh browsers over the web processes
        browser = Browser(base)
        await browser.touch(tab, "explore", "")
        jars.append(dict(browser.cookies))
    return {"tabs": tabs, "jars": jars}


async def kill(base: str, pids: dict[str, int], stats: Path, tabs_n: int, steps: int, trained_s: float) -> dict:
    """``tabs_n`` browsers, one tab each on a run of its own (``steps`` steps); web1 is SIGKILLed once each of
    its tabs showed training ``trained_s`` seconds ago (a kept run is written at most every 10 s). Also when the
    proxy saw it down (its ``stats`` socket)."""
    preset = PRESETS[0]
    tabs = [Tab(f"tab{i}") for i in range(tabs_n)]
    queries = [urlencode({**preset.query(), "seed": str(500 + i), "steps": str(steps)}) for i in range(tabs_n)]
    runs = [asyncio.create_task(Browser(base, f"127.0.0.{10 + i}").run(tab, preset.page, q))  # a machine each
            for i, (tab, q) in enumerate(zip(tabs, queries))]
    victim, killed_at, down_at, deadline = "web1", None, None, time.monotonic() + SESSION_TIMEOUT_S
    while time.monotonic() < deadline and not all(r.done() for r in runs):
        mine = [t for t in tabs if victim in t.servers]
        if killed_at is None and mine and all(t.first_progress_at and time.monotonic() - t.first_progress_at
                                              > trained_s for t in mine):
            os.kill(pids[victim], signal.SIGKILL)
            killed_at = time.monotonic()
        if killed_at is not None and down_at is None and backends(stats).get(victim) == "DOWN":
            down_at = time.monotonic()
        await asyncio.sleep(0.2)
    done = await asyncio.wait_for(asyncio.gather(*runs, return_exceptions=True), timeout=30)
    return {"tabs": [t for t in done if isinstance(t, Tab)],
            "errors": [repr(t) for t in done if not isinstance(t, Tab)],
            "killed_at": killed_at, "down_at": down_at, "victim": victim}


async def mint(base: str, direct: str, steps: int) -> dict:
    """A machine (127.0.0.2) with three long runs, as three people if it could: two browsers through the proxy
    (each a fresh cookie jar, so a new id each) with a forged ``X-Forwarded-For``, and one sent straight to web1 (at
    ``direct``) with a made-up browser id, forwarded address and proxy secret; once the first of them trains, a
    student (127.0.0.3) trains a short run of its own. All on web1 (its gate). When the student saw its first
    chart with a trained step, and what each of the machine's tabs read."""
    preset = PRESETS[0]
    forged = [{"X-Forwarded-For": f"10.9.9.{i}"} for i in (1, 2)]
    browsers = [Browser(base, "127.0.0.2", forged[0]), Browser(base, "127.0.0.2", forged[1]),
                Browser(direct, "127.0.0.2", {"X-Rnnlab-Browser": "made-up-0123456789abcdef",
                                              "X-Forwarded-For": "10.9.9.3", "X-Rnnlab-Proxy": "a-guess"})]
    for browser in browsers[:2]:
        browser.cookies[SERVER_COOKIE] = "web1"
    machine = [Tab(f"machine{i}") for i in range(3)]
    queries = [urlencode({**preset.query(), "seed": str(800 + i), "steps": str(steps)}) for i in range(3)]
    runs = [asyncio.create_task(b.run(t, preset.page, q, reconnects=0)) for b, t, q in zip(browsers, machine, queries)]
    deadline = time.monotonic() + SESSION_TIMEOUT_S
    while time.monotonic() < deadline and not any(t.first_progress_at for t in machine):
        await asyncio.sleep(0.2)
    await asyncio.sleep(3.0)  # every tab of the machine has asked for its slot
    student, tab = Browser(base, "127.0.0.3"), Tab("student")
    student.cookies[SERVER_COOKIE] = "web1"
    student_at = time.monotonic()
    studying = asyncio.create_task(student.run(tab, preset.page, urlencode({**preset.query(), "seed": "900",
                                                                             "steps": "100"}), reconnects=0))
    while time.monotonic() < deadline and tab.first_progress_at is None and not studying.done():
        await asyncio.sleep(0.2)
    for running in runs:
        running.cancel()
    await asyncio.gather(*runs, return_exceptions=True)
    await asyncio.wait_for(studying, timeout=120)
    return {"tabs": [*machine, tab], "errors": [], "student_at": student_at,
            "trained_before_student": sum(1 for t in machine if t.first_progress_at is not None
                                          and t.first_progress_at < (tab.first_progress_at or deadline))}


async def fork(base: str, runs: Path) -> dict:
    """A tab trains a short run on web1 and stays connected; its address (its ``sid`` too) is opened by another
    browser on web2. Both tabs' URLs and infos, and the kept files before and after."""
    preset, owner, copier, keep = PRESETS[0], Tab("owner"), Tab("copier"), asyncio.Event()
    first, second = Browser(base), Browser(base)
    first.cookies[SERVER_COOKIE], second.cookies[SERVER_COOKIE] = "web1", "web2"
    query = urlencode({**preset.query(), "seed": "950", "steps": "60"})
    owning = asyncio.create_task(first.run(owner, preset.page, query, keep_open=keep))
    deadline = time.monotonic() + SESSION_TIMEOUT_S
    while time.monotonic() < deadline and not owner.connections:
        await asyncio.sleep(0.2)
    await asyncio.sleep(1.0)  # the finished run is written and web1 lists the tab as live
    before = {p.name: p.stat().st_mtime_ns for p in runs.glob("*.run")}
    copied = dict(parse_qsl(owner.query))
    try:
        await asyncio.wait_for(second.run(copier, preset.page, urlencode(copied), reconnects=0), 90)
    except TimeoutError:
        copier.connections.append("timed out")
    after = {p.name: p.stat().st_mtime_ns for p in runs.glob("*.run")}
    keep.set()
    await asyncio.wait_for(owning, timeout=30)
    return {"tabs": [owner, copier], "errors": [], "before": before, "after": after}


def ray_cpus(address: str) -> tuple[float, float]:
    """(available, total) CPUs of the Ray cluster at ``address``, as its scheduler counts them."""
    import ray

    if not ray.is_initialized():
        ray.init(address=address, logging_level="ERROR", log_to_driver=False)
    return ray.available_resources().get("CPU", 0.0), ray.cluster_resources().get("CPU", 0.0)


async def kill_ray(base: str, pids: dict[str, int], address: str, steps: int, trained_s: float) -> dict:
    """One tab on web1 training a run of its own through the Ray executor; web1 SIGKILLed once it trained
    ``trained_s`` seconds; when Ray's CPUs were all free again (its task ended with its driver); only then does
    the tab reconnect through the proxy and finish its run on web2."""
    preset, tab, hold = PRESETS[0], Tab("tab0"), asyncio.Event()
    browser = Browser(base)
    browser.cookies[SERVER_COOKIE] = "web1"  # as if its first page had come from web1
    query = urlencode({**preset.query(), "seed": "700", "steps": str(steps)})
    running = asyncio.create_task(browser.run(tab, preset.page, query, hold=hold))
    killed_at = freed_at = None
    busy: list[float] = []
    deadline = time.monotonic() + SESSION_TIMEOUT_S
    while time.monotonic() < deadline and not running.done():
        if killed_at is None and tab.first_progress_at and time.monotonic() - tab.first_progress_at > trained_s:
            busy.append((await asyncio.to_thread(ray_cpus, address))[0])
            os.kill(pids["web1"], signal.SIGKILL)
            killed_at = time.monotonic()
        elif killed_at is not None and freed_at is None:
            available, total = await asyncio.to_thread(ray_cpus, address)
            if available >= total or time.monotonic() - killed_at > 30:
                freed_at = time.monotonic() if available >= total else None
                hold.set()
        await asyncio.sleep(0.2)
    await asyncio.wait_for(running, timeout=30)
    return {"tabs": [tab], "errors": [], "killed_at": killed_at, "freed_at": freed_at, "available_before": busy}


def main() -> None:
    mode, base, given, out = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), Path(sys.argv[4])
    if mode == "sticky":
        got = asyncio.run(sticky(base, 4))
    elif mode == "kill":
        steps = int(os.environ.get("WEB_TEST_STEPS", "1000"))
        got = asyncio.run(asyncio.wait_for(kill(base, given["pids"], Path(given["stats"]), 4, steps, 12.0),
                                           SESSION_TIMEOUT_S + 60))
    elif mode == "mint":
        got = asyncio.run(asyncio.wait_for(mint(base, given["direct"], int(os.environ.get("WEB_TEST_STEPS", "1000"))),
                                           SESSION_TIMEOUT_S + 60))
    elif mode == "fork":
        got = asyncio.run(asyncio.wait_for(fork(base, Path(given["runs"])), SESSION_TIMEOUT_S + 60))
    elif mode == "kill-ray":
        steps = int(os.environ.get("WEB_TEST_STEPS", "1000"))
        got = asyncio.run(asyncio.wait_for(kill_ray(base, given["pids"], given["address"], steps, 12.0),
                                           SESSION_TIMEOUT_S + 60))
    else:
        raise SystemExit(f"unknown mode {mode!r}")
    got["tabs"] = [asdict(t) for t in got["tabs"]]  # plain dicts: Tab lives in __main__ here
    out.write_bytes(pickle.dumps(got))


if __name__ == "__main__":
    main()
