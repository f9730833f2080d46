"""A class answering, without browsers: the teacher's tab and N students' tabs speaking Streamlit's websocket protocol.

Each :class:`Tab` opens its page as :mod:`tests.load.protocol_client` does (the page's HTML, the two probes, the
websocket, one ``rerun_script``), then also does what answering needs, as streamlit 1.67's frontend does it: a click on
a button is a ``rerun_script`` carrying that widget's ``trigger_value`` (and the fragment it was drawn in, so that a
click in a dialog reruns the dialog), the page's URL as the server last wrote it, and the page's script hash; a
fragment drawn with ``run_every`` sent an ``auto_rerun`` message, and the tab reruns that fragment at that interval
(``is_auto_rerun``), as the frontend's timer does, until the fragment is gone.

:func:`run_lesson`: the teacher opens Explore, clicks "Share with the class", then "Open a class" in the dialog (its
default question: the preset of Explore's settings), and opens the teacher's link from the dialog's button; N students
open the students' link and, once all have joined, each clicks a choice at a random moment of a window (default
10 s); with ``second``, the teacher opens a second round and they answer again; then the teacher clicks Reveal.
Measured (seconds): each student's answer from its click to the page that shows it taken (*ack*), the last answer
taken after the window opened, the teacher's chart behind the answers (*lag*: from each answer taken to the
teacher's chart first counting that many), each student's first chart of the run after Reveal (*reveal*), and with
``--server-pid`` the server's CPU. Only loopback servers are accepted.

``python -m tests.load.class_answers --base http://127.0.0.1:8501 --students 30 --server-pid PID``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import numpy as np
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.asyncio.client import connect

from rnnlab.sharing.presets import PRESETS, PRESETS_BY_KEY
from rnnlab.sharing.urlstate import UrlState, to_query
from tests.load.protocol_client import (
    LOSS_TITLES,
    MAX_MESSAGE_BYTES,
    NO_XSRF_TOKEN,
    PROBE_PATHS,
    PROTOCOL,
    RESULT_CHARTS,
    STREAM_PATH,
    USER_AGENT,
    XSRF_COOKIE,
    Page,
    http_get,
    in_every_language,
    loopback_base,
    percentile,
    read_chart,
    rerun_message,
    trace_values,
)

SPREAD_TITLES = in_every_language("The class's answers") | in_every_language(
    "The class's answers, before and after the discussion")
RESULT_TITLES = LOSS_TITLES | RESULT_CHARTS["gradients"]
READY = in_every_language("The run that settles this question is ready.")
ANSWER_PREFIX = "answer_"


def cpu_seconds(pid: int | None) -> float | None:
    """User and system CPU seconds of process ``pid`` (Linux), or None."""
    if not pid:
        return None
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    import os

    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class Widget:
    """A button on the page: its id, the fragment it was drawn in ('' for none), its type and label."""

    id: str
    fragment: str
    type: str = ""
    label: str = ""


class Tab:
    """One browser tab on a page of the server, its page rebuilt from the deltas, its buttons clickable."""

    def __init__(self, base_url: str, link: str, lang: str | None = None, jar: dict[str, str] | None = None) -> None:
        self.host, self.path, self.port, self.base = loopback_base(base_url)
        parts = urlsplit(link)
        self.page_name = parts.path[len(self.path):].strip("/") if parts.path.startswith(self.path) else ""
        query = parts.query
        if lang:  # the tab's reader's language, in place of the link's
            query = "&".join([q for q in query.split("&") if q and not q.startswith("lang=")] + [f"lang={lang}"])
        self.query, self.page_hash, self.url = query, "", f"{self.base}/{self.page_name}"
        self.page, self.fragments_of = Page(), {}  # delta path -> the fragment that drew it
        self.changed = asyncio.Event()
        self.timers: dict[str, asyncio.Task] = {}
        self.full_runs, self.errors, self.socket = 0, [], None
        self.chart_seen: list[tuple[float, str, dict]] = []  # (time, title, spec) of every chart that arrived
        self.origin = self.base[:len(self.base) - len(self.path)]
        self.jar = jar if jar is not None else {}  # the browser's cookies (a proxy's browser id and web process)

    async def open(self, timeout_s: float) -> None:
        cookies = self.jar
        for where in (f"{self.path}/{self.page_name}?{self.query}", *(f"{self.path}/{p}" for p in PROBE_PATHS)):
            status, set_cookies = await http_get(self.host, self.port, where, cookies)
            cookies.update(set_cookies)
            if status != 200:
                self.errors.append(f"GET {where} answered {status}")
        handshake = {"Cookie": "; ".join(f"{k}={v}" for k, v in cookies.items())} if cookies else {}
        self.socket = await connect(f"ws{self.base.removeprefix('http')}/{STREAM_PATH}",
                                    subprotocols=[PROTOCOL, cookies.get(XSRF_COOKIE, NO_XSRF_TOKEN)],
                                    origin=self.origin, additional_headers=handshake, user_agent_header=USER_AGENT,
                                    proxy=None, ping_interval=None, close_timeout=2, max_size=MAX_MESSAGE_BYTES,
                                    open_timeout=timeout_s)
        await self.socket.send(rerun_message(self.query, self.page_name, self.url).SerializeToString())

    async def read(self, zero: float) -> None:
        """Read the server's messages until the socket closes."""
        try:
            async for data in self.socket:
                if isinstance(data, bytes):
                    self.feed(ForwardMsg.FromString(data), time.monotonic() - zero)
        except Exception as e:  # noqa: BLE001 - a lost connection is an error of this tab
            self.errors.append(f"connection: {type(e).__name__}: {e}")
        finally:
            self.changed.set()

    def feed(self, msg: ForwardMsg, at_s: float) -> None:
        which = msg.WhichOneof("type")
        if which == "new_session":
            self.page.new_run()
        elif which == "navigation":  # the page this run shows: the frontend names it in every later rerun
            self.page_hash = msg.navigation.page_script_hash or self.page_hash
        elif which == "delta":
            node = self.page.apply(msg)
            if node is not None:
                self.fragments_of[tuple(msg.metadata.delta_path)] = msg.delta.fragment_id
                if node.kind == "plotly_chart":
                    spec = json.loads(node.proto.plotly_chart.spec or "{}")
                    self.chart_seen.append((at_s, read_chart(node.proto.plotly_chart.spec).title, spec))
                elif node.kind == "exception":
                    self.errors.append(f"exception: {node.proto.exception.message}")
        elif which == "script_finished":
            if msg.script_finished == ForwardMsg.FINISHED_SUCCESSFULLY:
                self.page.clear_stale()
                self.full_runs += 1
            self.changed.set()
        elif which == "page_info_changed":
            self.query = msg.page_info_changed.query_string
        elif which == "auto_rerun":
            self.every(msg.auto_rerun.fragment_id, msg.auto_rerun.interval)
        elif which == "stop_auto_rerun":
            for fragment in msg.stop_auto_rerun.fragment_ids:
                self.stop_timer(fragment)

    def every(self, fragment: str, interval: float) -> None:
        """Rerun ``fragment`` every ``interval`` seconds, as the frontend's timer does."""
        self.stop_timer(fragment)

        async def tick() -> None:
            while self.socket is not None:
                await asyncio.sleep(interval)
                await self.send(fragment=fragment, auto=True)

        self.timers[fragment] = asyncio.get_running_loop().create_task(tick())

    def stop_timer(self, fragment: str) -> None:
        task = self.timers.pop(fragment, None)
        if task is not None:
            task.cancel()

    def widgets(self) -> dict[str, Widget]:
        """The buttons on the page by id."""
        found = {}
        for path, node in self.page.nodes.items():
            for kind in ("button", "link_button", "download_button"):
                if node.kind == kind:
                    element = getattr(node.proto, kind)
                    wid = getattr(element, "id", "") or getattr(element, "url", "")
                    found[wid] = Widget(wid, self.fragments_of.get(path, ""), getattr(element, "type", ""),
                                        getattr(element, "label", ""))
        return found

    def button(self, key: str) -> Widget | None:
        """The button whose key is ``key`` (Streamlit's id of a keyed widget ends with '-KEY')."""
        return next((w for w in self.widgets().values() if w.id.endswith(f"-{key}")), None)

    def texts(self) -> list[str]:
        """The Markdown (captions too) and alerts on the page."""
        found = []
        for node in self.page.nodes.values():
            if node.kind == "markdown":
                found.append(node.proto.markdown.body)
            elif node.kind == "alert":
                found.append(node.proto.alert.body)
        return found

    def charts(self) -> dict[str, dict]:
        out = {}
        for p in sorted(self.page.nodes):
            node = self.page.nodes[p]
            if node.kind == "plotly_chart":
                out[read_chart(node.proto.plotly_chart.spec).title] = json.loads(node.proto.plotly_chart.spec)
        return out

    async def send(self, widget: Widget | None = None, fragment: str = "", auto: bool = False) -> None:
        msg = rerun_message(self.query, self.page_name, self.url, self.page_hash)
        state = msg.rerun_script
        if widget is not None:
            clicked = state.widget_states.widgets.add()
            clicked.id, clicked.trigger_value = widget.id, True
            fragment = widget.fragment
        state.fragment_id, state.is_auto_rerun = fragment, auto
        try:
            await self.socket.send(msg.SerializeToString())
        except Exception as e:  # noqa: BLE001
            self.errors.append(f"send: {type(e).__name__}: {e}")

    async def until(self, ready: Callable[[], Any], timeout_s: float) -> Any:
        """Wait until ``ready()`` is true after a script run ended (its value), or ``timeout_s``: None."""
        deadline = time.monotonic() + timeout_s
        while True:
            value = ready()
            if value:
                return value
            left = deadline - time.monotonic()
            if left <= 0 or self.socket is None:
                return None
            self.changed.clear()
            try:
                await asyncio.wait_for(self.changed.wait(), left)
            except TimeoutError:
                return None

    async def close(self) -> None:
        for fragment in list(self.timers):
            self.stop_timer(fragment)
        if self.socket is not None:
            socket, self.socket = self.socket, None
            await socket.close()


def spread_totals(tab: Tab) -> tuple[int, ...] | None:
    """The answers the teacher's chart counts now, per round."""
    spec = next((s for title, s in tab.charts().items() if title in SPREAD_TITLES), None)
    if spec is None:
        return None
    return tuple(int(np.nansum(trace_values(t.get("x")))) for t in spec.get("data", []))


def answer_buttons(tab: Tab, round_: int) -> list[Widget]:
    """A student's choice buttons for ``round_``, in order."""
    found = [w for w in tab.widgets().values() if f"-{ANSWER_PREFIX}" in w.id and w.id.split("_")[-2] == str(round_)]
    return sorted(found, key=lambda w: int(w.id.rsplit("_", 1)[1]))


@dataclass
class Student:
    """One student's times (seconds from the lesson's start) and what they saw."""

    joined_s: float | None = None
    clicks: list[float] = field(default_factory=list)
    acks: list[float | None] = field(default_factory=list)
    result_s: float | None = None
    errors: list[str] = field(default_factory=list)


async def open_class(base_url: str, timeout_s: float, zero: float, preset: str | None = None) -> tuple[str, str]:
    """The teacher's way to a class: Explore (at ``preset``'s settings, not started, else its defaults), "Share with
    the class", "Open a class" (its question); (students' link, teacher's)."""
    query = "" if preset is None else "?" + urlencode(to_query(UrlState(config=PRESETS_BY_KEY[preset].config)))
    tab = Tab(base_url, f"{loopback_base(base_url)[3]}/explore{query}")
    await tab.open(timeout_s)
    reader = asyncio.create_task(tab.read(zero))
    try:
        share = await tab.until(lambda: tab.button("share_class"), timeout_s)
        await tab.send(share)
        opener = await tab.until(lambda: tab.button("share_class_open"), timeout_s)
        await tab.send(opener)
        link = await tab.until(lambda: next((w.id for w in tab.widgets().values() if "teacher=" in w.id), None),
                               timeout_s)
        if not link:
            raise RuntimeError(f"no teacher's link in the share dialog: {tab.errors}; the page says {tab.texts()}")
        parts = urlsplit(link)
        code = parse_qs(parts.query)["code"][0]
        return f"{parts.scheme}://{parts.netloc}{parts.path}?{urlencode({'code': code})}", link
    finally:
        await tab.close()
        reader.cancel()


@dataclass
class Lesson:
    """What one lesson measured (seconds from its start)."""

    students: list[Student]
    windows: list[float] = field(default_factory=list)  # when each round opened for answers
    ready_s: float | None = None  # the run that settles the question was ready (the teacher's screen said so)
    reveal_s: float | None = None
    teacher_result_s: float | None = None
    teacher_charts: list[tuple[float, tuple[int, ...]]] = field(default_factory=list)  # the chart's totals per round
    teacher_errors: list[str] = field(default_factory=list)
    server_cpu_s: float | None = None
    wall_s: float = 0.0
    server_pid: int | None = None
    idle_s: float = 0.0  # the class sits, joined, this long before the window opens
    cpu_marks: list[tuple[str, float, float | None]] = field(default_factory=list)  # (what, when, server CPU-s)

    def mark(self, what: str, zero: float) -> None:
        self.cpu_marks.append((what, time.monotonic() - zero, cpu_seconds(self.server_pid)))


class Plan:
    """When each student answers what: a random moment of each round's window, and a choice."""

    def __init__(self, n: int, rounds: int, window_s: float, seed: int) -> None:
        rng = random.Random(seed)
        self.rounds = rounds
        self.moments = [[rng.uniform(0, window_s) for _ in range(n)] for _ in range(rounds)]
        self.picks = [[rng.choice((0, 1, 1, 2)) for _ in range(n)] for _ in range(rounds)]
        self.joined, self.taken = 0, [0] * rounds
        self.all_joined = asyncio.Event()
        self.opened = [asyncio.Event() for _ in range(rounds)]
        self.progress = asyncio.Event()


async def student_lesson(tab: Tab, me: Student, lesson: Lesson, plan: Plan, i: int, n: int, timeout_s: float,
                         zero: float) -> None:
    """One student: join, answer at the planned moment of each round, then wait for the run after Reveal."""
    if await tab.until(lambda: answer_buttons(tab, 1), timeout_s) is None:
        me.errors.append("no choices to pick")
    me.joined_s = time.monotonic() - zero
    plan.joined += 1
    if plan.joined >= n:
        plan.all_joined.set()
    for r in range(plan.rounds):
        await plan.opened[r].wait()
        await asyncio.sleep(plan.moments[r][i])
        buttons = await tab.until(lambda r=r: answer_buttons(tab, r + 1), timeout_s) or []
        if buttons:
            pick = plan.picks[r][i] % len(buttons)
            me.clicks.append(time.monotonic() - zero)
            await tab.send(buttons[pick])
            taken = await tab.until(lambda r=r, k=pick: (b := answer_buttons(tab, r + 1)) and len(b) > k
                                    and b[k].type == "primary", timeout_s)
            me.acks.append(time.monotonic() - zero if taken else None)
        else:
            me.errors.append(f"no choices in round {r + 1}")
        plan.taken[r] += 1
        plan.progress.set()
    me.result_s = await tab.until(lambda: next((t for t, title, _ in tab.chart_seen if title in RESULT_TITLES
                                                and lesson.reveal_s is not None and t >= lesson.reveal_s), None),
                                  timeout_s)


async def teacher_lesson(tab: Tab, lesson: Lesson, plan: Plan, n: int, timeout_s: float, zero: float) -> None:
    """The teacher: once the class has joined, open each round's window, then Reveal once every answer is in."""
    await tab.until(lambda: tab.button("class_reveal"), timeout_s)
    await plan.all_joined.wait()
    lesson.mark("joined", zero)
    if lesson.idle_s:
        await asyncio.sleep(lesson.idle_s)
        lesson.mark("sat idle", zero)
    for r in range(plan.rounds):
        if r > 0:
            await tab.send(await tab.until(lambda: tab.button("class_second"), timeout_s))
        lesson.windows.append(time.monotonic() - zero)
        plan.opened[r].set()
        while plan.taken[r] < n:
            plan.progress.clear()
            await asyncio.wait_for(plan.progress.wait(), timeout_s)
        await tab.until(lambda r=r: (t := spread_totals(tab)) is not None and len(t) > r and t[r] >= n, 10.0)
        lesson.mark(f"round {r + 1} answered", zero)
    if await tab.until(lambda: any(text in READY for text in tab.texts()), timeout_s):
        lesson.ready_s = time.monotonic() - zero
    reveal = await tab.until(lambda: tab.button("class_reveal"), timeout_s)
    lesson.reveal_s = time.monotonic() - zero
    await tab.send(reveal)
    lesson.mark("run ready", zero)
    lesson.teacher_result_s = await tab.until(lambda: next((t for t, title, _ in tab.chart_seen
                                                            if title in RESULT_TITLES and t >= lesson.reveal_s),
                                                           None), timeout_s)
    await tab.until(lambda: all(s.result_s is not None or s.errors for s in lesson.students), timeout_s)
    lesson.mark("every student shown the run", zero)


async def run_lesson(base_url: str, n: int, window_s: float = 10.0, rounds: int = 1, timeout_s: float = 300.0,
                     lang: str | None = None, server_pid: int | None = None, seed: int = 0,
                     links: tuple[str, str] | None = None, idle_s: float = 0.0, preset: str | None = None) -> Lesson:
    """A lesson of ``n`` students on the server at ``base_url`` (see the module's docstring); ``links``: a class's
    (students' link, teacher's link) to use instead of opening one through the share dialog; ``preset``: the
    question asked (the preset Explore opens at), else Explore's defaults' (the first preset's)."""
    zero = time.monotonic()
    student_link, teacher_link = links or await open_class(base_url, timeout_s, zero, preset)
    cpu_before = cpu_seconds(server_pid)
    lesson, plan = Lesson([Student() for _ in range(n)]), Plan(n, rounds, window_s, seed)
    lesson.server_pid, lesson.idle_s = server_pid, idle_s
    teacher = Tab(base_url, teacher_link, lang)
    tabs = [Tab(base_url, student_link, lang) for _ in range(n)]
    readers = []
    try:
        for tab in (teacher, *tabs):
            await tab.open(timeout_s)
            readers.append(asyncio.create_task(tab.read(zero)))
        await asyncio.gather(teacher_lesson(teacher, lesson, plan, n, timeout_s, zero),
                             *(student_lesson(tab, lesson.students[i], lesson, plan, i, n, timeout_s, zero)
                               for i, tab in enumerate(tabs)))
    finally:
        for tab in (teacher, *tabs):
            await tab.close()
        for reader in readers:
            reader.cancel()
    for me, tab in zip(lesson.students, tabs):
        me.errors.extend(tab.errors)
    lesson.teacher_errors = teacher.errors
    lesson.teacher_charts = [(t, tuple(int(np.nansum(trace_values(tr.get("x")))) for tr in spec.get("data", [])))
                             for t, title, spec in teacher.chart_seen if title in SPREAD_TITLES]
    cpu_after = cpu_seconds(server_pid)
    lesson.server_cpu_s = None if cpu_before is None or cpu_after is None else round(cpu_after - cpu_before, 2)
    lesson.wall_s = time.monotonic() - zero
    return lesson


def teacher_lags(lesson: Lesson, r: int) -> list[float]:
    """For the k-th click on a choice in round r (in time order), from that click to the teacher's chart first
    counting at least k answers in that round (seconds)."""
    clicked = sorted(s.clicks[r] for s in lesson.students if len(s.clicks) > r)
    lags = []
    for k, at in enumerate(clicked, start=1):
        shown = next((t for t, totals in lesson.teacher_charts if len(totals) > r and totals[r] >= k), None)
        lags.append(float("inf") if shown is None else shown - at)
    return lags


def summarise(lesson: Lesson) -> dict[str, Any]:
    """The lesson's numbers: p50/p95 (and the worst) of each time, in seconds, and what went wrong."""
    out: dict[str, Any] = {"students": len(lesson.students), "wall_s": round(lesson.wall_s, 1),
                           "server_cpu_s": lesson.server_cpu_s}
    for r, opened in enumerate(lesson.windows):
        acks = [s.acks[r] - s.clicks[r] for s in lesson.students if len(s.acks) > r and s.acks[r] is not None]
        last = max((s.acks[r] for s in lesson.students if len(s.acks) > r and s.acks[r] is not None), default=None)
        lags = teacher_lags(lesson, r)
        out[f"round{r + 1}"] = {
            "answers_taken": len(acks), "ack_p50_s": percentile(acks, 50), "ack_p95_s": percentile(acks, 95),
            "ack_max_s": round(max(acks), 2) if acks else None,
            "last_taken_after_window_opened_s": None if last is None else round(last - opened, 2),
            "teacher_lag_p50_s": percentile(lags, 50), "teacher_lag_p95_s": percentile(lags, 95),
            "teacher_lag_max_s": round(max(lags), 2) if lags else None,
            "teacher_final_count": max((t[r] for _, t in lesson.teacher_charts if len(t) > r), default=0)}
    if lesson.reveal_s is not None:
        after = [s.result_s - lesson.reveal_s for s in lesson.students if s.result_s is not None]
        ready = None if lesson.ready_s is None or not lesson.windows else round(lesson.ready_s - lesson.windows[0], 2)
        out["reveal"] = {"run_ready_after_window_opened_s": ready, "students_with_result": len(after),
                         "first_chart_p50_s": percentile(after, 50),
                         "first_chart_p95_s": percentile(after, 95),
                         "teacher_chart_s": None if lesson.teacher_result_s is None
                         else round(lesson.teacher_result_s - lesson.reveal_s, 2)}
    marks = [(what, at, cpu) for what, at, cpu in lesson.cpu_marks if cpu is not None]
    out["server_cpu_s_by_phase"] = {f"{what} ({at1 - at0:.1f} s)": round(cpu1 - cpu0, 2)
                                    for (_, at0, cpu0), (what, at1, cpu1) in zip(marks, marks[1:])}
    joined = [s.joined_s for s in lesson.students if s.joined_s is not None]
    out["joined_p50_s"], out["joined_p95_s"] = percentile(joined, 50), percentile(joined, 95)
    out["errors"] = sorted({e for s in lesson.students for e in s.errors} | set(lesson.teacher_errors))[:20]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="http://127.0.0.1:8501")
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--window", type=float, default=10.0, help="seconds over which the students answer")
    parser.add_argument("--second", action="store_true", help="a second round before the reveal")
    parser.add_argument("--lang", choices=("en", "zh", "ru"))
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--server-pid", type=int)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--idle", type=float, default=0.0, help="seconds the class sits, joined, before answering")
    parser.add_argument("--details", action="store_true", help="every student's times too")
    parser.add_argument("--preset", choices=[p.key for p in PRESETS if p.page == "explore" and p.question],
                        help="the question asked (default: Explore's defaults, the first preset's)")
    args = parser.parse_args(argv)
    lesson = asyncio.run(run_lesson(args.base, args.students, args.window, 2 if args.second else 1, args.timeout,
                                    args.lang, args.server_pid, args.seed, idle_s=args.idle,
                                    preset=args.preset))
    summary = summarise(lesson)
    if args.details:
        summary["details"] = [asdict(s) for s in lesson.students]
    print(json.dumps(summary, indent=2))
    return 0 if not summary["errors"] and summary.get("reveal", {}).get("students_with_result") == args.students \
        else 1


if __name__ == "__main__":
    sys.exit(main())
