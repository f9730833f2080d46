"""A class of students without browsers: each session speaks Streamlit's websocket protocol as a browser tab does.

What a tab does, as streamlit 1.67's server and frontend bundle show it: it loads the page's HTML, probes
``/_stcore/health`` (whose answer sets the XSRF cookie) and ``/_stcore/host-config``, opens the websocket
``/_stcore/stream`` with the cookie and the subprotocols ``streamlit`` and the XSRF token
(``PLACEHOLDER_AUTH_TOKEN`` when it has none; a third entry, the last session id, only on a reconnect), and sends
one ``BackMsg.rerun_script`` whose ``ClientState`` carries the query string (``location.search`` without ``?``),
``page_name`` = the URL path under the base (``explore``; an empty ``page_script_hash`` the first time) and
``context_info`` (time zone, locale, the page's URL). Everything after that comes from the server as
``ForwardMsg``: ``new_session`` starts each script run, ``delta`` messages build the page at their
``metadata.delta_path`` (a placeholder's new element replaces the old one), ``script_finished`` ends a run (a
successful finish drops what the run did not redraw, as the frontend's stale-node cleanup), ``page_info_changed``
rewrites the URL. A tab answers nothing while nobody clicks: ``st.rerun`` reruns on the server with the session's
own widget state, the frontend sends app heartbeats only when a host frame asks, and the websocket's pings are
answered by the transport. Streamlit 1.67 serves with Starlette and uvicorn; the client is the ``websockets``
package that ships with it.

:func:`open_session` runs one tab until its page shows "Finished N steps." (on Gradient flow and Compare: the chart
that carries the page's result, :data:`RESULT_CHARTS`) and its script run has ended;
:func:`run_class` runs many at once; :func:`summarise` gives p50/p95. Only loopback servers are accepted.

``python -m tests.load.protocol_client --base http://127.0.0.1:8501 --sessions 30 --mix same|half``
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import ipaddress
import json
import os
import re
import sys
import time
from collections.abc import Coroutine, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any, TypeVar
from urllib.parse import urlencode, urlsplit

import numpy as np
from google.protobuf.message import DecodeError
from streamlit.proto.Alert_pb2 import Alert
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.asyncio.client import connect
from websockets.exceptions import WebSocketException

T = TypeVar("T")

STREAM_PATH = "_stcore/stream"
PROBE_PATHS = ("_stcore/health", "_stcore/host-config")  # what the frontend asks before it opens the websocket
PROTOCOL = "streamlit"
NO_XSRF_TOKEN = "PLACEHOLDER_AUTH_TOKEN"  # the frontend's second subprotocol when it has no XSRF cookie
XSRF_COOKIE = "_streamlit_xsrf"  # set by /_stcore/health
def in_every_language(message: str) -> set[str]:
    """``message`` as the app shows it in each of its languages."""
    from rnnlab.i18n import LANGUAGES, _, using

    out = set()
    for lang in LANGUAGES:
        with using(lang):
            out.add(_(message))
    return out


LOSS_TITLES = in_every_language("Loss")
TRAINING_LOSS = in_every_language("training loss")
COUNT = "[0-9][0-9\u00a0,]*"  # a count as each language writes it
TRAINED_STEP = re.compile("|".join(
    re.escape(f).replace(re.escape("{step}"), f"({COUNT})").replace(re.escape("{steps}"), COUNT)
    for f in sorted(in_every_language("step {step} / {steps}"))))


def finished_pattern() -> re.Pattern[str]:
    """The "Finished N steps." alert in every language of the app (its count's group: digits and separators)."""
    from rnnlab.i18n import LANGUAGES, ngettext, using

    forms = set()
    for lang in LANGUAGES:
        with using(lang):
            forms.update(ngettext("Finished {n} step.", "Finished {n} steps.", n) for n in (1, 2, 5))
    number = "([0-9][0-9\u00a0,]*)"
    return re.compile("|".join(re.escape(f).replace(re.escape("{n}"), number) for f in sorted(forms)))


FINISHED = finished_pattern()


def finished_steps(match: re.Match[str]) -> int:
    """The count of a :data:`FINISHED` match."""
    digits = next(g for g in match.groups() if g is not None)
    return int(re.sub("[^0-9]", "", digits))
# The chart that carries a page's result, by page (its URL path): a sweep's line on Gradient flow, the loss curves on
# Compare. Explore's is the first chart with a trained step, and its end "Finished N steps.".
RESULT_CHARTS = {
    "gradients": in_every_language("Gradient reaching the initial carry against sequence length"),
    "compare": in_every_language("Training loss: mean and spread over seeds"),
}
QUEUE_TEXTS = ("slots of this server are busy", "Waiting for", "in the queue")
MAX_MESSAGES = 200_000  # per session: far above a 300-step run's few thousand
MAX_MESSAGE_BYTES = 200 * 2**20  # the server's default server.maxMessageSize
MAX_HEADER_LINES = 100
MAX_BODY_READS = 256  # of up to 64 KiB: the page's HTML is a few KiB
MAX_NOTES = 20  # errors, warnings and queue texts kept per session
USER_AGENT = "rnnlab-protocol-client"
PRESET_DEFAULT = "the first preset"


# ---- addresses ------------------------------------------------------------------------------------------------
def is_loopback(host: str) -> bool:
    """Whether ``host`` is this machine's loopback: ``localhost``, 127.0.0.0/8 or ::1."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def loopback_base(base_url: str) -> tuple[str, str, int, str]:
    """``(host, path, port, base without a trailing slash)`` of an http URL on a loopback address; ValueError for
    any other host (this client loads only a server on its own machine)."""
    parts = urlsplit(base_url)
    host = parts.hostname or ""
    if parts.scheme != "http" or not is_loopback(host):
        raise ValueError(f"Refusing {base_url!r}: the load client only connects to a server on this machine over "
                         "http (localhost, 127.0.0.0/8 or [::1]).")
    port = parts.port or 80
    path = parts.path.rstrip("/")
    netloc = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    return host, path, port, f"http://{netloc}{path}"


def split_link(base_url: str, url: str) -> tuple[str, str]:
    """A link on the server at ``base_url`` as ``(page, query)``: the URL path under the base and the query."""
    loopback_base(url)
    base_path = urlsplit(base_url).path.rstrip("/")
    parts = urlsplit(url)
    page = parts.path[len(base_path):] if parts.path.startswith(base_path) else parts.path
    return page.strip("/"), parts.query


# ---- what the tab sends ---------------------------------------------------------------------------------------
def rerun_message(query: str | Mapping[str, str], page: str, url: str = "", page_script_hash: str = "") -> BackMsg:
    """The ``rerun_script`` a tab sends when it opens ``page`` (its URL path, '' for the main page) with
    ``query``: before it knows the page's hash it names the page by its URL path, as the frontend does."""
    text = query if isinstance(query, str) else urlencode(query)
    msg = BackMsg()
    state = msg.rerun_script
    state.query_string = text.removeprefix("?")
    state.page_script_hash = page_script_hash
    state.page_name = "" if page_script_hash else page.strip("/")
    state.widget_states.SetInParent()
    info = state.context_info
    info.timezone, info.timezone_offset, info.locale = "UTC", 0, "en-US"
    info.url, info.is_embedded, info.color_scheme = url, False, "light"
    return msg


# ---- what the tab receives ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Chart:
    """A Plotly chart as drawn: its title (tags removed, as the browser test reads it), each trace's number of
    points and its last y value (None when it has none)."""

    title: str
    points: dict[str, int]
    last: dict[str, float | None] = field(default_factory=dict, compare=False)


def trace_values(values: Any) -> np.ndarray:
    """A trace's ``x`` or ``y`` as numbers: a list, or Plotly's base64 typed array ``{dtype, bdata[, shape]}``
    (rows of a 2-D one)."""
    if isinstance(values, list):
        return np.array([v if isinstance(v, (int, float)) else np.nan for v in values], dtype=float)
    if isinstance(values, dict) and isinstance(values.get("bdata"), str):
        array = np.frombuffer(base64.b64decode(values["bdata"]), dtype=np.dtype(values.get("dtype", "f8")))
        shape = values.get("shape")
        if shape:
            array = array.reshape([int(d) for d in (shape if isinstance(shape, list) else str(shape).split(","))])
        return array
    return np.zeros(0)


def read_chart(spec: str) -> Chart:
    """The title and traces of a ``plotly_chart`` element's JSON ``spec``."""
    figure = json.loads(spec) if spec else {}
    title = (figure.get("layout") or {}).get("title") or ""
    text = title if isinstance(title, str) else str(title.get("text") or "")
    text = re.sub(r"<[^>]*>", "", text.replace("<br>", " ")).strip()
    points: dict[str, int] = {}
    last: dict[str, float | None] = {}
    for i, trace in enumerate(figure.get("data") or []):
        name = str(trace.get("name") or f"trace {i}")
        x, y = trace_values(trace.get("x")), trace_values(trace.get("y"))
        points[name] = max(points.get(name, 0), len(x) if len(x) else len(y))
        last[name] = float(y.reshape(-1)[-1]) if y.size else None
    return Chart(text, points, last)


@dataclass
class Node:
    """One element or block of the page, and the script run that last drew it."""

    kind: str  # the element's type ('plotly_chart', 'alert', ...) or 'block:<type>'
    proto: Any
    run: int


class Page:
    """The page as the frontend builds it: nodes by delta path. A node drawn again replaces what was below it (a
    block of the same type keeps its children); a successful finish drops the nodes its run did not draw."""

    def __init__(self) -> None:
        self.nodes: dict[tuple[int, ...], Node] = {}
        self.run = 0

    def new_run(self) -> None:
        self.run += 1

    def apply(self, msg: ForwardMsg) -> Node | None:
        """Apply one ``delta`` message; the node it drew (None for a transient or a path-less delta)."""
        delta, path = msg.delta, tuple(msg.metadata.delta_path)
        which = delta.WhichOneof("type")
        if not path or which not in ("new_element", "add_block"):
            return None
        if which == "new_element":
            node = Node(delta.new_element.WhichOneof("type") or "", delta.new_element, self.run)
            self._drop_below(path)
        else:
            node = Node("block:" + (delta.add_block.WhichOneof("type") or ""), delta.add_block, self.run)
            old = self.nodes.get(path)
            if old is None or old.kind != node.kind:
                self._drop_below(path)
        self.nodes[path] = node
        return node

    def _drop_below(self, path: tuple[int, ...]) -> None:
        n = len(path)
        for below in [p for p in self.nodes if len(p) > n and p[:n] == path]:
            del self.nodes[below]

    def clear_stale(self) -> None:
        self.nodes = {p: node for p, node in self.nodes.items() if node.run == self.run}

    def charts(self) -> list[Chart]:
        """The Plotly charts on the page, top to bottom."""
        return [read_chart(self.nodes[p].proto.plotly_chart.spec) for p in sorted(self.nodes)
                if self.nodes[p].kind == "plotly_chart"]


@dataclass
class SessionResult:
    """One tab's timings (seconds from its start; None when it never happened) and what it saw."""

    url: str
    group: str = ""
    started_s: float = 0.0  # when it started, from the class's start
    connected_s: float | None = None  # the websocket was open (after the two probes)
    first_progress_s: float | None = None  # a progress text "step k / N" with k > 0 arrived
    first_chart_s: float | None = None  # the first Plotly chart with a trained step arrived
    finished_s: float | None = None  # "Finished N steps." (or the page's result chart) arrived
    completed_s: float | None = None  # then a script run ended: the page is what the student keeps
    total_s: float = 0.0
    finished_steps: int | None = None
    script_runs: int = 0
    messages: int = 0
    bytes_received: int = 0
    charts_received: int = 0
    queued: bool = False
    queue_texts: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    final_charts: list[Chart] = field(default_factory=list)

    @property
    def server_answer_s(self) -> float | None:
        """From the connection to the first chart with a trained step: the server's part."""
        if self.first_chart_s is None or self.connected_s is None:
            return None
        return self.first_chart_s - self.connected_s

    @property
    def ok(self) -> bool:
        return self.completed_s is not None and not self.errors

    def chart(self, title: str) -> Chart | None:
        """The final page's chart titled ``title``."""
        return next((c for c in self.final_charts if c.title == title), None)


def note(notes: list[str], text: str) -> None:
    if text not in notes and len(notes) < MAX_NOTES:
        notes.append(text)


class Recorder:
    """Reads a tab's ForwardMsgs into its :class:`SessionResult`; :meth:`feed` says when the tab is done."""

    def __init__(self, result: SessionResult, result_titles: frozenset[str] | set[str] = frozenset()) -> None:
        self.result, self.page, self.trained = result, Page(), False
        self.result_titles = result_titles  # a page whose result is one chart: its titles (RESULT_CHARTS)
        self.query_string: str | None = None  # the URL the server wrote (page_info_changed)

    def feed(self, msg: ForwardMsg, at_s: float, size: int = 0) -> bool:
        """Take one message that arrived ``at_s`` seconds after the start; True once the session is over: a
        script run ended after "Finished", or without it and with nothing left to run, or the server failed."""
        r = self.result
        r.messages += 1
        r.bytes_received += size
        which = msg.WhichOneof("type")
        if which == "new_session":
            r.script_runs += 1
            self.page.new_run()
        elif which == "delta":
            self._delta(msg, at_s)
        elif which == "script_finished":
            return self._finished(msg.script_finished, at_s)
        elif which == "page_info_changed":
            self.query_string = msg.page_info_changed.query_string
        elif which == "page_not_found":
            note(r.errors, f"page not found: {msg.page_not_found.page_name!r}")
        elif which == "session_event":
            event = msg.session_event
            if event.HasField("script_compilation_exception"):
                note(r.errors, f"script compilation error: {event.script_compilation_exception.message}")
            elif event.script_was_manually_stopped:
                note(r.errors, "the script was stopped")
        elif which == "ref_hash":
            note(r.errors, "a cached-message reference arrived, though this tab announced no cached messages")
        elif which == "auto_rerun":
            note(r.warnings, "the page asked for automatic fragment reruns, which this client does not send")
        return False

    def _finished(self, status: int, at_s: float) -> bool:
        r = self.result
        if status == ForwardMsg.FINISHED_WITH_COMPILE_ERROR:
            note(r.errors, "the script did not compile")
            return True
        if status != ForwardMsg.FINISHED_SUCCESSFULLY:
            return False  # ended early for a rerun, or a fragment's run: more comes
        self.page.clear_stale()
        r.final_charts = self.page.charts()
        if r.finished_s is not None:
            r.completed_s = at_s
        elif not r.errors:
            note(r.errors, "the script run ended and the page shows no result chart" if self.result_titles else
                 "the script run ended and the page shows no 'Finished N steps.'")
        return True

    def _delta(self, msg: ForwardMsg, at_s: float) -> None:
        node = self.page.apply(msg)
        if node is None:
            return
        r, element = self.result, node.proto
        if node.kind == "progress":
            step = TRAINED_STEP.search(element.progress.text)
            if step and int(re.sub("[^0-9]", "", next(g for g in step.groups() if g))) > 0:
                self.trained = True
                if r.first_progress_s is None:
                    r.first_progress_s = at_s
        elif node.kind == "plotly_chart":
            r.charts_received += 1
            if self.result_titles:
                self._result_chart(read_chart(element.plotly_chart.spec), at_s)
            elif r.first_chart_s is None:
                chart = read_chart(element.plotly_chart.spec)
                losses = any(chart.points.get(name, 0) > 0 for name in TRAINING_LOSS)
                if self.trained or (chart.title in LOSS_TITLES and losses):
                    r.first_chart_s = at_s
        elif node.kind == "alert":
            self._alert(element.alert, at_s)
        elif node.kind == "exception":
            note(r.errors, f"exception {element.exception.type}: {element.exception.message}")

    def _result_chart(self, chart: Chart, at_s: float) -> None:
        """On a page whose result is one chart, that chart with points is both its first chart and its end."""
        r = self.result
        if r.first_chart_s is None and chart.title in self.result_titles and any(chart.points.values()):
            r.first_chart_s = r.finished_s = at_s

    def _alert(self, alert: Alert, at_s: float) -> None:
        r, body = self.result, alert.body
        if alert.format == Alert.ERROR:
            note(r.errors, f"error shown: {body}")
        elif alert.format == Alert.WARNING:
            note(r.warnings, body)
        elif alert.format == Alert.INFO and any(t in body for t in QUEUE_TEXTS):
            r.queued = True
            note(r.queue_texts, body)
        elif alert.format == Alert.SUCCESS and (done := FINISHED.search(body)):
            if r.finished_s is None:
                r.finished_s, r.finished_steps = at_s, finished_steps(done)


# ---- sessions -------------------------------------------------------------------------------------------------
async def http_answer(host: str, port: int, path: str, cookies: Mapping[str, str], source: str | None = None,
                      extra: Mapping[str, str] | None = None) -> tuple[int, dict[str, str], dict[str, str]]:
    """GET ``path`` with ``cookies`` (from the local address ``source`` when given, with the headers ``extra``):
    the HTTP status, the answer's headers (lower-case names) and the cookies it sets."""
    reader, writer = await asyncio.open_connection(host, port, local_addr=(source, 0) if source else None)
    cookie = "; ".join(f"{k}={v}" for k, v in cookies.items())
    more = "".join(f"{k}: {v}\r\n" for k, v in (extra or {}).items())
    try:
        writer.write((f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUser-Agent: {USER_AGENT}\r\n{more}"
                     + (f"Cookie: {cookie}\r\n" if cookie else "") + "Connection: close\r\n\r\n").encode())
        await writer.drain()
        status = (await reader.readline()).split()
        headers: dict[str, str] = {}
        set_cookies: dict[str, str] = {}
        for _ in range(MAX_HEADER_LINES):
            line = (await reader.readline()).decode("latin-1").strip()
            if not line:
                break
            name, _, value = line.partition(":")
            name, value = name.strip().lower(), value.strip()
            headers[name] = value
            if name == "set-cookie" and "=" in value:
                key, _, rest = value.partition("=")
                set_cookies[key] = rest.split(";")[0]
        for _ in range(MAX_BODY_READS):
            if not await reader.read(65536):
                break
    finally:
        writer.close()
        await writer.wait_closed()
    return (int(status[1]) if len(status) > 1 and status[1].isdigit() else 0), headers, set_cookies


async def http_get(host: str, port: int, path: str, cookies: Mapping[str, str]) -> tuple[int, dict[str, str]]:
    """GET ``path`` as the page does before it connects: the HTTP status and the cookies the answer sets."""
    status, _, set_cookies = await http_answer(host, port, path, cookies)
    return status, set_cookies


async def open_session(base_url: str, query: str | Mapping[str, str], page: str, timeout_s: float, *,
                       group: str = "", headers: Mapping[str, str] | None = None) -> SessionResult:
    """One tab opening ``page`` (its URL path: 'explore') with ``query`` on the loopback server ``base_url``, until
    its page shows "Finished N steps." (or its result chart, :data:`RESULT_CHARTS`) and the script run has ended, an
    error, or ``timeout_s``. ``headers`` are
    sent with the websocket's handshake (e.g. an X-Forwarded-For that a proxy would add)."""
    host, path, port, base = loopback_base(base_url)
    origin = base[:len(base) - len(path)]
    text = (query if isinstance(query, str) else urlencode(query)).removeprefix("?")
    url = f"{base}/{page.strip('/')}" + (f"?{text}" if text else "")
    result = SessionResult(url=url, group=group)
    recorder = Recorder(result, RESULT_CHARTS.get(page.strip("/"), frozenset()))
    start = time.monotonic()
    try:
        async with asyncio.timeout(timeout_s):
            cookies: dict[str, str] = {}
            for where in (url[len(origin):], *(f"{path}/{p}" for p in PROBE_PATHS)):  # the page, then the probes
                status, set_cookies = await http_get(host, port, where, cookies)
                cookies.update(set_cookies)
                if status != 200:
                    note(result.errors, f"GET {where} answered {status}")
            handshake = {**(headers or {})}
            if cookies:
                handshake["Cookie"] = "; ".join(f"{k}={v}" for k, v in cookies.items())
            async with connect(f"ws{base.removeprefix('http')}/{STREAM_PATH}",
                               subprotocols=[PROTOCOL, cookies.get(XSRF_COOKIE, NO_XSRF_TOKEN)],
                               origin=origin, additional_headers=handshake,
                               user_agent_header=USER_AGENT, proxy=None, ping_interval=None, close_timeout=2,
                               max_size=MAX_MESSAGE_BYTES, open_timeout=timeout_s) as socket:
                result.connected_s = time.monotonic() - start
                await socket.send(rerun_message(text, page, url).SerializeToString())
                for _ in range(MAX_MESSAGES):
                    data = await socket.recv()
                    if not isinstance(data, bytes):
                        note(result.errors, "a text frame arrived; Streamlit sends binary protobufs")
                        break
                    if recorder.feed(ForwardMsg.FromString(data), time.monotonic() - start, len(data)):
                        break
                else:
                    note(result.errors, f"more than {MAX_MESSAGES} messages")
    except TimeoutError:
        state = ("never connected" if result.connected_s is None else "no trained chart" if
                 result.first_chart_s is None else "no 'Finished'" if result.finished_s is None else
                 "the last script run did not end")
        note(result.errors, f"timed out after {timeout_s:.0f} s: {state}")
    except (OSError, WebSocketException, DecodeError) as e:
        note(result.errors, f"connection: {type(e).__name__}: {e}")
    result.total_s = time.monotonic() - start
    return result


async def run_class(base_url: str, urls: Sequence[str], concurrency: int, timeout_s: float,
                    groups: Sequence[str] | None = None) -> list[SessionResult]:
    """One session per link in ``urls`` (all on the loopback server ``base_url``), at most ``concurrency`` at
    a time (all at once when it is at least their number); ``groups`` labels them for :func:`summarise`."""
    loopback_base(base_url)
    links = [split_link(base_url, url) for url in urls]
    gate = asyncio.Semaphore(max(1, int(concurrency)))
    zero = time.monotonic()

    async def one(i: int) -> SessionResult:
        async with gate:
            began = time.monotonic() - zero
            page, query = links[i]
            result = await open_session(base_url, query, page, timeout_s, group=groups[i] if groups else "")
            result.started_s = began
            return result

    return list(await asyncio.gather(*(one(i) for i in range(len(links)))))


# ---- summary and command line ---------------------------------------------------------------------------------
def percentile(values: Sequence[float | None], q: float) -> float | None:
    known = [v for v in values if v is not None]
    return round(float(np.percentile(known, q)), 2) if known else None


def group_summary(results: Sequence[SessionResult]) -> dict[str, Any]:
    """Counts, and p50/p95 of each time (seconds; null when no session reached it)."""
    row: dict[str, Any] = {
        "sessions": len(results), "completed": sum(r.ok for r in results),
        "finished": sum(r.finished_s is not None for r in results),
        "with_errors": sum(bool(r.errors) for r in results), "queued": sum(r.queued for r in results),
        "charts_received_mean": round(float(np.mean([r.charts_received for r in results])), 1) if results else 0,
        "mb_received": round(sum(r.bytes_received for r in results) / 2**20, 2)}
    times = {"connect": [r.connected_s for r in results], "server_answer": [r.server_answer_s for r in results],
             "first_chart": [r.first_chart_s for r in results], "finished": [r.finished_s for r in results],
             "completion": [r.completed_s for r in results]}
    for name, values in times.items():
        row[f"{name}_p50_s"], row[f"{name}_p95_s"] = percentile(values, 50), percentile(values, 95)
    row["errors"] = sorted({e for r in results for e in r.errors})[:MAX_NOTES]
    return row


def summarise(results: Sequence[SessionResult]) -> dict[str, Any]:
    """The whole class, and each group (when there are several) on its own."""
    summary = group_summary(results)
    labels = sorted({r.group for r in results})
    if len(labels) > 1:
        summary["groups"] = {g: group_summary([r for r in results if r.group == g]) for g in labels}
    return summary


def run_apart(coroutine: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coroutine)`` in a thread of its own, so that it also works where the calling thread already
    runs an event loop (a test process that drives a browser with Playwright's sync API does)."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def session_urls(base_url: str, n: int, mix: str, preset_key: str | None = None,
                 first_seed: int = 100, lang: str | None = None) -> tuple[list[str], list[str]]:
    """``n`` links and their groups: 'same' puts every session on the preset's link; 'half' the even ones, the
    others on the preset with a seed of their own (``first_seed`` + the session's number: a distinct run each), as
    tests/e2e/test_load.py does. ``lang`` ('zh', 'ru') opens the links in that language."""
    base = loopback_base(base_url)[3]
    from rnnlab.sharing.presets import PRESETS

    preset = next((p for p in PRESETS if p.key == preset_key), None) if preset_key else PRESETS[0]
    if preset is None:
        raise ValueError(f"no preset {preset_key!r}; known: {', '.join(p.key for p in PRESETS)}")
    urls, groups = [], []
    for i in range(n):
        own = mix == "half" and i % 2 == 1
        query = {**preset.query(lang), "seed": str(first_seed + i)} if own else preset.query(lang)
        urls.append(f"{base}/{preset.page}?{urlencode(query)}")
        groups.append("distinct" if own else "same")
    return urls, groups


def link_urls(base_url: str, n: int, link: str, lang: str | None = None) -> tuple[list[str], list[str]]:
    """``n`` sessions on one ``link`` (a page and its query under the base: 'compare?run=1'), in ``lang`` when
    given, all in the group 'same'."""
    base = loopback_base(base_url)[3]
    page, _, query = link.lstrip("/").partition("?")
    if lang:
        query = "&".join([q for q in query.split("&") if q and not q.startswith("lang=")] + [f"lang={lang}"])
    url = f"{base}/{page}" + (f"?{query}" if query else "")
    return [url] * n, ["same"] * n


def cpu_seconds(pid: int) -> float | None:
    """The user and system CPU seconds process ``pid`` has used (its threads included), from /proc; None when
    it cannot be read."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def machine_busy_seconds() -> float:
    """CPU seconds the whole machine has been busy (every core, all but idle and I/O wait), from /proc/stat."""
    with open("/proc/stat") as stat:
        ticks = [int(v) for v in stat.readline().split()[1:9]]  # user nice system idle iowait irq softirq steal
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="http://127.0.0.1:8501", help="the server (loopback only)")
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--mix", choices=("same", "half"), default="same")
    parser.add_argument("--concurrency", type=int, default=0, help="sessions open at a time (0: all)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds each session may take")
    parser.add_argument("--preset", default=None, help="a preset's key (default: the first)")
    parser.add_argument("--link", default=None,
                        help="instead of a preset: every session on this page and query, e.g. 'compare?run=1'")
    parser.add_argument("--server-pid", type=int, default=0, help="also report this server process's CPU seconds")
    parser.add_argument("--first-seed", type=int, default=100,
                        help="seeds of the distinct runs (mix half) start here: another value gives new runs")
    parser.add_argument("--idle-window", type=float, default=0.0,
                        help="with --server-pid: also report the server's CPU seconds in this many seconds, from 2 s "
                             "after the last session left")
    parser.add_argument("--machine-cpu", action="store_true",
                        help="also report the whole machine's busy CPU seconds, less this client's (for servers of "
                             "several processes, on a machine doing nothing else); with --idle-window also after")
    parser.add_argument("--lang", choices=("en", "zh", "ru"), default=None, help="open the links in this language")
    parser.add_argument("--details", action="store_true", help="also print every session's result")
    args = parser.parse_args(argv)
    try:
        if args.link:
            urls, groups = link_urls(args.base, max(0, args.sessions), args.link, args.lang)
        else:
            urls, groups = session_urls(args.base, max(0, args.sessions), args.mix, args.preset, args.first_seed,
                                        args.lang)
    except ValueError as e:
        print(e, file=sys.stderr)
        return 2
    server_before = cpu_seconds(args.server_pid) if args.server_pid else None
    machine_before = machine_busy_seconds() if args.machine_cpu else 0.0
    started, client_before = time.monotonic(), time.process_time()
    results = run_apart(run_class(args.base, urls, args.concurrency or len(urls), args.timeout, groups))
    summary: dict[str, Any] = {"base": args.base, "mix": args.mix, "lang": args.lang,
                               "preset": args.link or args.preset or PRESET_DEFAULT,
                               "wall_s": round(time.monotonic() - started, 2),
                               "client_cpu_s": round(time.process_time() - client_before, 2)}
    server_after = cpu_seconds(args.server_pid) if args.server_pid else None
    if server_before is not None and server_after is not None:
        summary["server_cpu_s"] = round(server_after - server_before, 2)
    if args.machine_cpu:
        summary["machine_cpu_s"] = round(machine_busy_seconds() - machine_before - summary["client_cpu_s"], 2)
        if args.idle_window > 0:
            time.sleep(2.0)
            idle_before = machine_busy_seconds()
            time.sleep(args.idle_window)
            summary["machine_cpu_after_s"] = round(machine_busy_seconds() - idle_before, 2)
    if server_after is not None and args.idle_window > 0:
        time.sleep(2.0)
        idle_before = cpu_seconds(args.server_pid)
        time.sleep(args.idle_window)
        idle_after = cpu_seconds(args.server_pid)
        if idle_before is not None and idle_after is not None:
            summary["server_cpu_after_s"] = round(idle_after - idle_before, 2)
    summary.update(summarise(results))
    if args.details:
        summary["details"] = [{**asdict(r), "server_answer_s": r.server_answer_s} for r in results]
    print(json.dumps(summary, indent=2))
    return 0 if all(r.ok for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
