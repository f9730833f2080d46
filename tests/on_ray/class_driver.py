"""A class of N students through the proxy to two web processes on the Ray executor, for
tests/on_ray/test_class_answers.py, run inside the tier's network namespace with the repository on ``PYTHONPATH``:
``python tests/on_ray/class_driver.py BASE JSON OUT`` (JSON: ``{"pids": {name: pid}, "address": Ray's head,
"students": N, "window": seconds, "direct": [each web process's own address], "preset": the question's preset (by
default, Explore's defaults')}``).

Each web process serves a first page (straight to it) before the lesson. The teacher opens a class through Explore's
share dialog and its screen from the teacher's link; once the run that settles the question is ready, N students
(each a browser with a cookie jar of its own: the proxy's browser id and web process) join and answer at random
moments of the window; halfway through it, web1 is SIGKILLed. Every tab that was on web1 opens again through the
proxy with its cookies, as a reconnecting browser does (the proxy sends it to web2), and finds its answer still
taken, or gives it now. Then the teacher reveals, and every student's screen shows the run. The class's view is
finally read from the cluster's answers actor itself. What it saw is pickled to OUT.
"""

from __future__ import annotations

import asyncio
import json
import os
import pickle
import random
import signal
import sys
import time
from pathlib import Path

from rnnlab.cluster.web import SERVER_COOKIE
from tests.load.class_answers import READY, RESULT_TITLES, Tab, answer_buttons, open_class, spread_totals

TIMEOUT_S = 240.0
WARM_TIMEOUT_S = 600.0  # a web process's first page waits for its start-up (JAX, the first compile on a worker)
PROGRESS = Path(os.environ.get("CLASS_DRIVER_LOG", "/dev/null"))  # where the lesson says how far it got


def say(what: str, zero: float) -> None:
    with PROGRESS.open("a") as f:
        f.write(f"{time.monotonic() - zero:7.1f} s  {what}\n")


class Student:
    def __init__(self, i: int, link: str, base: str) -> None:
        self.i, self.link, self.base, self.jar = i, link, base, {}
        self.tab: Tab | None = None
        self.reader: asyncio.Task | None = None
        self.servers: list[str] = []
        self.pick: int | None = None
        self.clicked_s: float | None = None
        self.kept_after_reconnect: bool | None = None
        self.result_s: float | None = None
        self.errors: list[str] = []

    async def connect(self, zero: float) -> Tab:
        if self.tab is not None:
            await self.tab.close()
        if self.reader is not None:
            self.reader.cancel()
        self.tab = Tab(self.base, self.link, jar=self.jar)
        await self.tab.open(TIMEOUT_S)
        self.reader = asyncio.create_task(self.tab.read(zero))
        self.servers.append(self.jar.get(SERVER_COOKIE, "?"))
        return self.tab

    def lost(self) -> bool:
        return self.tab is not None and any(e.startswith("connection") for e in self.tab.errors)


async def answer(me: Student, moment: float, zero: float) -> None:
    """Wait for ``moment``, then click the planned choice (once) and wait for it to be taken."""
    await asyncio.sleep(max(0.0, moment - (time.monotonic() - zero)))
    tab = me.tab
    buttons = await tab.until(lambda: answer_buttons(tab, 1) or tab.socket is None or me.lost(), TIMEOUT_S)
    if me.lost() or not isinstance(buttons, list):
        return  # its web process went away first: it answers after reconnecting
    me.clicked_s = time.monotonic() - zero
    await tab.send(buttons[me.pick])
    await tab.until(lambda: me.lost() or ((b := answer_buttons(tab, 1)) and b[me.pick].type == "primary"), TIMEOUT_S)


async def come_back(me: Student, zero: float) -> None:
    """A tab whose web process died: open the class again with the same cookies; its answer is still there, or it
    gives it now."""
    tab = await me.connect(zero)
    buttons = await tab.until(lambda: answer_buttons(tab, 1), TIMEOUT_S)
    if not buttons:
        me.errors.append(f"no choices after reconnecting: {tab.errors}")
        return
    me.kept_after_reconnect = buttons[me.pick].type == "primary"
    if not me.kept_after_reconnect:
        if me.clicked_s is not None and any(b.type == "primary" for b in buttons):
            me.errors.append("another answer than the one clicked was kept")
        me.clicked_s = time.monotonic() - zero
        await tab.send(buttons[me.pick])
        if not await tab.until(lambda: (b := answer_buttons(tab, 1)) and b[me.pick].type == "primary", TIMEOUT_S):
            me.errors.append("the answer after reconnecting was not taken")


async def warm(direct: list[str], zero: float) -> None:
    """Each web process's first page, straight to it: the lesson then meets web processes that have started."""
    async def first_page(url: str) -> None:
        tab = Tab(url, f"{url}/")
        await tab.open(WARM_TIMEOUT_S)
        reader = asyncio.create_task(tab.read(zero))
        if not await tab.until(lambda: tab.full_runs > 0, WARM_TIMEOUT_S):
            raise RuntimeError(f"{url} served no page within {WARM_TIMEOUT_S:.0f} s: {tab.errors}")
        await tab.close()
        reader.cancel()

    await asyncio.gather(*(first_page(url) for url in direct))
    say("every web process has served a page", zero)


async def lesson(base: str, pids: dict[str, int], n: int, window_s: float, direct: list[str],
                 preset: str | None = None) -> dict:
    zero = time.monotonic()
    rng = random.Random(7)
    await warm(direct, zero)
    student_link, teacher_link = await open_class(base, TIMEOUT_S, zero, preset)
    say(f"class opened: {student_link}", zero)
    teacher_jar: dict[str, str] = {}
    teacher = Tab(base, teacher_link, jar=teacher_jar)
    await teacher.open(TIMEOUT_S)
    teacher_reader = asyncio.create_task(teacher.read(zero))
    if not await teacher.until(lambda: teacher.button("class_reveal"), TIMEOUT_S):
        raise RuntimeError(f"no teacher's screen: {teacher.errors}; {teacher.texts()}")
    say("the teacher's screen is up", zero)
    if not await teacher.until(lambda: any(text in READY for text in teacher.texts()), WARM_TIMEOUT_S):
        raise RuntimeError(f"the run was not ready ahead of the reveal: {teacher.texts()}")
    say("the run that settles the question is ready", zero)
    students = [Student(i, student_link, base) for i in range(n)]
    for me in students:
        me.pick = rng.choice((0, 1, 1, 2))
    await asyncio.gather(*(me.connect(zero) for me in students))
    joined = await asyncio.gather(*(me.tab.until(lambda me=me: answer_buttons(me.tab, 1), TIMEOUT_S)
                                    for me in students))
    joined_s = time.monotonic() - zero
    say(f"{sum(bool(j) for j in joined)} of {n} joined", zero)
    opened = time.monotonic() - zero
    moments = [opened + rng.uniform(0, window_s) for _ in students]
    answering = asyncio.gather(*(answer(me, moment, zero) for me, moment in zip(students, moments)))
    await asyncio.sleep(window_s / 2)
    killed_s = time.monotonic() - zero
    os.kill(pids["web1"], signal.SIGKILL)
    say("web1 killed", zero)
    await answering
    moved = [me for me in students if me.servers[0] == "web1"]
    say(f"answers given; {len(moved)} tabs were on web1", zero)
    await asyncio.gather(*(come_back(me, zero) for me in moved))
    say("they came back", zero)
    if teacher_jar.get(SERVER_COOKIE) == "web1" or teacher.socket is None or any(
            e.startswith("connection") for e in teacher.errors):
        await teacher.close()
        teacher_reader.cancel()
        teacher = Tab(base, teacher_link, jar=teacher_jar)
        await teacher.open(TIMEOUT_S)
        teacher_reader = asyncio.create_task(teacher.read(zero))
    counted = await teacher.until(lambda: (t := spread_totals(teacher)) and t[0] >= n and t, 30.0)
    reveal = await teacher.until(lambda: teacher.button("class_reveal"), TIMEOUT_S)
    reveal_s = time.monotonic() - zero
    say(f"the teacher's chart counts {counted}; Reveal", zero)
    await teacher.send(reveal)
    for me in students:
        tab = me.tab
        me.result_s = await tab.until(lambda tab=tab: next((t for t, title, _ in tab.chart_seen
                                                            if title in RESULT_TITLES and t >= reveal_s), None),
                                      TIMEOUT_S)
    say("every screen has the run", zero)
    code = student_link.rsplit("code=", 1)[1]
    view = class_view(code)
    for me in students:
        await me.tab.close()
        me.reader.cancel()
    await teacher.close()
    teacher_reader.cancel()
    return {"students": [vars(me) | {"tab": None, "reader": None} for me in students], "joined": sum(bool(j) for j in
            joined), "joined_s": joined_s, "killed_s": killed_s, "reveal_s": reveal_s, "teacher_count": counted,
            "teacher_server": teacher_jar.get(SERVER_COOKIE), "view": view, "picks": [me.pick for me in students]}


def class_view(code: str) -> dict:
    """The class as the cluster's answers actor holds it."""
    from rnnlab.server.on_ray.answers_actor import shared_answers

    view = shared_answers().view(code)
    return {"joined": view.joined, "counts": view.question.counts, "revealed": view.question.revealed}


def main() -> None:
    base, given, out = sys.argv[1], json.loads(sys.argv[2]), Path(sys.argv[3])
    got = asyncio.run(asyncio.wait_for(lesson(base, given["pids"], int(given["students"]), float(given["window"]),
                                              given["direct"], given.get("preset")), WARM_TIMEOUT_S + TIMEOUT_S * 3))
    out.write_bytes(pickle.dumps(got))


if __name__ == "__main__":
    main()
