"""A student inside the class with twenty lines of Python, against the teacher's laptop: one real server
(``streamlit run serve.py``) on loopback, attacked over the real websocket as an outsider would
(tests/load/attacks.py), each attack bounded in count and time (most of it the server's start, the link's first
training and the 14 s of the floods).

- Two tabs (two machines: 127.0.0.2 and 127.0.0.3) send reruns as fast as their sockets take them, reconnecting
  at once when closed; meanwhile students open the class's link, four as the floods start and four as they come
  back: the students' first chart's p50 stays under 3 s, and the flooders are slowed, closed (1008) and refused
  (HTTP 429) while they cool down.
- Messages far over ``server.maxMessageSize`` are refused at their frame's header (1009): the server does not
  read them into memory.
- Handshakes from a page of another site, with the machine's outward requests dropped (a proxy that never
  answers): refused at once, no external-address lookup made, the server's event loop never stalls.
- A request whose forwarded address nobody vouched for (``X-Forwarded-For`` from a loopback sender, which uvicorn
  would believe) is refused.
- The server is started as a teacher might misconfigure it, with a proxy's header named but no proxy secret: its
  log says so once, at start (that the header then counts for nothing: tests/server/test_clients.py).
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import pytest

from rnnlab.server.access.clients import ENV_CLIENT_HEADER, ENV_PROXY_SECRET
from rnnlab.sharing.presets import PRESETS
from tests.load.attacks import flood, foreign_handshake, oversized, page_cookies
from tests.load.protocol_client import open_session, run_apart

ROOT = Path(__file__).resolve().parents[2]
ENTRY = "serve.py"  # the server a class uses
START_TIMEOUT_S = 120.0
FLOOD_S = 14.0
STUDENTS = 4  # at a time
STUDENTS_AT_S = (0.5, 11.0)  # seconds after the floods began: as they start, and as they come back
FIRST_CHART_P50_S = 3.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Blackhole:
    """A proxy that accepts connections and never answers: what a firewall that drops outward packets does to
    an HTTP request (it waits for its timeout). Counts the connections made to it."""

    def __init__(self) -> None:
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(64)
        self.port, self.connections, self.held = self.server.getsockname()[1], 0, []
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            self.connections += 1
            self.held.append(conn)

    def close(self) -> None:
        self.server.close()
        for conn in self.held:
            conn.close()


def healthy(base: str, timeout: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(f"{base}/_stcore/health", timeout=timeout) as answer:
            return answer.status == 200
    except OSError:
        return False


@pytest.fixture(scope="module")
def blackhole() -> Iterator[Blackhole]:
    hole = Blackhole()
    yield hole
    hole.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory, blackhole) -> Iterator[tuple[str, int, Path]]:
    """``streamlit run serve.py`` on a free loopback port, its outward HTTP going to :class:`Blackhole`, a proxy's
    header named without the proxy's secret; (its base URL, its pid, its log)."""
    folder = tmp_path_factory.mktemp("class-attacks")
    port, log = free_port(), folder / "server.log"
    hole = f"http://127.0.0.1:{blackhole.port}"
    env = {**os.environ, "RNNLAB_RUNS_DIR": str(folder / "runs"), "RNNLAB_JAX_CACHE_DIR": str(folder / "jax"),
           "HTTP_PROXY": hole, "HTTPS_PROXY": hole, "http_proxy": hole, "https_proxy": hole, "NO_PROXY": "",
           "RNNLAB_MAX_TRAININGS": "2", "PYTHONUNBUFFERED": "1", ENV_CLIENT_HEADER: "X-Forwarded-For"}
    env.pop(ENV_PROXY_SECRET, None)
    with open(log, "w") as out:
        process = subprocess.Popen([sys.executable, "-m", "streamlit", "run", ENTRY, "--server.headless", "true",
                                    "--server.port", str(port), "--server.address", "127.0.0.1"], cwd=ROOT,
                                   stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not healthy(base):
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the server did not start; its log:\n{log.read_text()[-4000:]}")
            time.sleep(0.5)
        yield base, process.pid, log
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


def link() -> tuple[str, str]:
    """The class's link (the first preset, a short run): (page, query)."""
    preset = PRESETS[0]
    return preset.page, urlencode({**preset.query(), "steps": "50"})


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def test_two_flooding_tabs_are_slowed_and_closed_while_the_class_gets_its_charts(server):
    base, _, _ = server
    page, query = link()
    warm = run_apart(open_session(base, query, page, 600))  # the teacher opens the link first: its run trains
    assert warm.ok, warm.errors

    async def lesson():
        floods = [asyncio.create_task(flood(base, FLOOD_S, source)) for source in ("127.0.0.2", "127.0.0.3")]
        students = []
        for at in STUDENTS_AT_S:  # as the floods start, and as they come back after their first cooldown
            await asyncio.sleep(at - (time.monotonic() - started))
            students += await asyncio.gather(*(open_session(base, query, page, 60) for _ in range(STUDENTS)))
        return await asyncio.gather(*floods), students

    started = time.monotonic()

    floods, students = run_apart(lesson())
    answers = [s.server_answer_s for s in students]
    assert all(s.ok for s in students), [s.errors for s in students]
    p50 = statistics.median(a for a in answers if a is not None)
    print(f"\nfirst chart with two flooding tabs: p50 {p50:.2f} s, all {answers}; floods: "
          + "; ".join(f"{f.sent} sent, closed after {f.first_close_s} s, {len(f.refused)} handshakes refused"
                      for f in floods) + f"; load average {os.getloadavg()[0]:.1f}")
    assert p50 < FIRST_CHART_P50_S, answers
    for tab in floods:
        assert tab.first_close_s is not None and tab.first_close_s < 10.0, tab  # slowed, then closed
        assert tab.close_codes[0] == 1008 and set(tab.refused) == {429}, tab  # then it waits its cooldown
        assert tab.connections <= 3, tab  # one flood, a retry after each cooldown at most


def test_an_oversized_message_is_refused_at_its_header_and_never_read(server):
    base, pid, _ = server
    before = rss_mb(pid)

    async def four():
        return await asyncio.gather(*(oversized(base, 150 * 2**20, f"127.0.0.{4 + i}") for i in range(4)))

    closes = run_apart(four())
    grew = rss_mb(pid) - before
    print(f"\nfour 150 MB messages: {closes}; the server's memory grew by {grew:.0f} MB")
    assert all(code == 1009 for code, _, _ in closes), closes  # message too big
    assert all(seconds < 10 for _, seconds, _ in closes), closes
    assert grew < 100, grew  # none of the 600 MB was read (before: about 300 MB each)


def test_foreign_pages_handshakes_are_refused_at_once_without_an_outward_lookup(server, blackhole):
    base, _, _ = server
    stalls: list[float] = []
    done = threading.Event()

    def watch() -> None:  # the event loop's latency, as /_stcore/health shows it
        while not done.is_set():
            start = time.monotonic()
            healthy(base, timeout=10)
            stalls.append(time.monotonic() - start)
            time.sleep(0.05)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        ends = [run_apart(foreign_handshake(base, "http://evil.example", "127.0.0.8")) for _ in range(5)]
    finally:
        done.set()
        watcher.join()
    print(f"\nfive foreign handshakes: {ends}; health latency max {max(stalls):.2f} s; "
          f"outward lookups started: {blackhole.connections}")
    assert all(end == "HTTP 403" and seconds < 1.0 for end, seconds in ends), ends
    assert blackhole.connections == 0  # no external-address lookup was made
    assert max(stalls) < 1.0, stalls


def test_a_forwarded_address_nobody_vouched_for_is_refused(server):
    base, _, _ = server
    for forwarded in ("10.9.9.9", "10.9.9.9, 127.0.0.1", "10.9.9.9:4444"):  # uvicorn believed each: the app not
        request = urllib.request.Request(f"{base}/_stcore/health", headers={"X-Forwarded-For": forwarded})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        assert refused.value.code == 400, forwarded
    assert run_apart(page_cookies(base, "127.0.0.9"))  # the same request without it: served


def test_a_proxy_header_named_without_the_secret_is_said_once_at_start(server):
    base, _, log = server
    assert run_apart(page_cookies(base, "127.0.0.10"))  # served, after every attack above
    said = [line for line in log.read_text().splitlines() if f"set without {ENV_PROXY_SECRET}" in line]
    assert len(said) == 1, said
    assert ENV_CLIENT_HEADER in said[0] and "ignored" in said[0]
