"""A class arriving at once, at several sizes, against one fresh server: the rows of docs/load-test.md.

Starts ``streamlit run app.py`` (the app's own configuration) on a free loopback port, trains the preset's run
once (one session), then for every row opens N protocol-client sessions at once (:mod:`tests.load.protocol_client`)
and prints one Markdown table row per group, with the server's CPU seconds during the row and in the 10 s from 2 s
after its last session left. The distinct runs of each 'half' row get seeds no earlier row used.

``python -m tests.load.class_curve --rows 10:same,30:same,100:same,30:half``
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
COLUMNS = ("server_answer", "first_chart", "completion")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int, env: dict[str, str]) -> subprocess.Popen:
    """The app on ``port`` (loopback), once it answers its health check."""
    server = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
                               "--server.port", str(port), "--server.address", "127.0.0.1"],
                              cwd=ROOT, env={**os.environ, **env}, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as answer:
                if answer.status == 200:
                    return server
        except OSError:
            time.sleep(0.5)
    server.kill()
    raise RuntimeError("the server did not start within 60 s")


def run_row(base: str, pid: int, n: int, mix: str, first_seed: int, timeout_s: float) -> dict:
    out = subprocess.run([sys.executable, "-m", "tests.load.protocol_client", "--base", base, "--sessions", str(n),
                          "--mix", mix, "--server-pid", str(pid), "--first-seed", str(first_seed),
                          "--idle-window", "10", "--timeout", str(timeout_s)],
                         cwd=ROOT, capture_output=True, text=True, check=False)
    return json.loads(out.stdout)


def table_rows(n: int, mix: str, summary: dict) -> list[str]:
    """Markdown rows: the class, then each group of a mixed class."""
    def cells(label: str, s: dict) -> str:
        times = " | ".join(f"{s.get(f'{c}_p50_s', '-')} | {s.get(f'{c}_p95_s', '-')}" for c in COLUMNS)
        return (f"| {n} | {mix} | {label} | {s['completed']}/{s['sessions']} | {s['queued']} | {times} | "
                f"{s['with_errors']} |")
    rows = [cells("all", summary) + f" {summary.get('server_cpu_s', '-')} | {summary.get('server_cpu_after_s', '-')} |"]
    for group, s in sorted(summary.get("groups", {}).items()) if mix == "half" else []:
        rows.append(cells(group, s) + " | |")
    return rows


HEADER = ("| N | mix | group | completed | queued | server answer p50 | p95 | first chart p50 | p95 | completion p50 | "
          "p95 | errors | server CPU s | CPU s in 10 s after |\n|" + "---|" * 14)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="10:same,30:same,100:same,30:half", help="N:mix, comma-separated")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds each session may take")
    args = parser.parse_args(argv)
    rows = [(int(n), mix) for n, mix in (r.split(":") for r in args.rows.split(","))]
    port = free_port()
    server = start_server(port, {"RNNLAB_MAX_TRAININGS": "2"})
    base = f"http://127.0.0.1:{port}"
    try:
        warm = run_row(base, server.pid, 1, "same", 100, args.timeout)
        print(HEADER)
        print("\n".join(table_rows(1, "same (trains the run)", warm)), flush=True)
        seed = 1000
        for n, mix in rows:
            summary = run_row(base, server.pid, n, mix, seed, args.timeout)
            seed += n
            print("\n".join(table_rows(n, mix, summary)), flush=True)
            if summary.get("errors"):
                print(f"errors: {summary['errors'][:5]}", file=sys.stderr)
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
