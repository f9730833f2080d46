"""A class at several sizes against the web tier, one setup after another: the comparison in docs/scale-out.md.

Each setup (``EXECUTOR:WEB``: ``embedded:1`` is one web process with the embedded executor, ``ray:2`` two web
processes on a Ray head and two 1-CPU worker nodes) is started with :func:`rnnlab.cluster.web.up` in a network
namespace of its own, behind HAProxy; the protocol client (:mod:`tests.load.protocol_client`) runs inside the
namespace against the proxy. The preset's run is trained once first (one session); then each row opens N sessions
at once and prints one Markdown table row per group, with the whole machine's busy CPU seconds during the row and
in the 10 s from 2 s after its last session left (the machine doing nothing else). Needs root, Debian's haproxy and,
for Ray, requirements-ray.txt.

``python -m tests.load.tier_curve --setups embedded:1,ray:2 --rows 30:half,100:half``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from rnnlab.cluster import local, web

ROOT = Path(__file__).resolve().parents[2]
FOLDER = Path("/tmp/rnnlab-tier-curve")
NETNS = "rnnlab-curve"
COLUMNS = ("server_answer", "first_chart", "completion")
HEADER = ("| setup | N | mix | group | completed | queued | server answer p50 | p95 | first chart p50 | p95 | "
          "completion p50 | p95 | errors | machine CPU s | CPU s in 10 s after |\n|" + "---|" * 15)


def run_row(n: int, mix: str, first_seed: int, timeout_s: float) -> dict:
    command = [sys.executable, "-m", "tests.load.protocol_client", "--base", web.proxy_url(), "--sessions", str(n),
               "--mix", mix, "--first-seed", str(first_seed), "--machine-cpu", "--idle-window", "10",
               "--timeout", str(timeout_s)]
    out = subprocess.run(local.in_netns(command, NETNS), cwd=ROOT, capture_output=True, text=True, check=False,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        return json.loads(out.stdout)
    except json.JSONDecodeError:
        raise RuntimeError(f"the client failed: {out.stderr[-2000:]}") from None


def table_rows(setup: str, n: int, mix: str, summary: dict) -> list[str]:
    def cells(label: str, s: dict) -> str:
        times = " | ".join(f"{s.get(f'{c}_p50_s', '-')} | {s.get(f'{c}_p95_s', '-')}" for c in COLUMNS)
        return (f"| {setup} | {n} | {mix} | {label} | {s['completed']}/{s['sessions']} | {s['queued']} | {times} | "
                f"{s['with_errors']} |")
    rows = [cells("all", summary) + f" {summary.get('machine_cpu_s', '-')} | "
                                    f"{summary.get('machine_cpu_after_s', '-')} |"]
    for group, s in sorted(summary.get("groups", {}).items()) if mix == "half" else []:
        rows.append(cells(group, s) + " | |")
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--setups", default="embedded:1,ray:2", help="EXECUTOR:WEB, comma-separated")
    parser.add_argument("--rows", default="30:half", help="N:mix, comma-separated")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds each session may take")
    args = parser.parse_args(argv)
    setups = [(executor, int(count)) for executor, count in (s.split(":") for s in args.setups.split(","))]
    rows = [(int(n), mix) for n, mix in (r.split(":") for r in args.rows.split(","))]
    os.environ.setdefault("RNNLAB_MAX_TRAININGS", "2")
    print(HEADER, flush=True)
    for executor, count in setups:
        label = f"{count} web, {executor}"
        web.up(count, workers=2, executor=executor, folder=FOLDER, netns=NETNS, host_port=None)
        try:
            print("\n".join(table_rows(label, 1, "same (trains the run)", run_row(1, "same", 100, args.timeout))),
                  flush=True)
            seed = 1000
            for n, mix in rows:
                summary = run_row(n, mix, seed, args.timeout)
                seed += n
                print("\n".join(table_rows(label, n, mix, summary)), flush=True)
                if summary.get("errors"):
                    print(f"errors: {summary['errors'][:5]}", file=sys.stderr)
        finally:
            local.down(FOLDER, NETNS)
    return 0


if __name__ == "__main__":
    sys.exit(main())
