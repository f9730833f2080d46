"""A class at several sizes against the web tier, one setup after another: the comparison in docs/scale-out.md.

Each setup (``EXECUTOR:WEB``: ``embedded:1`` is one web process with the embedded executor, ``ray:2`` two web
processes on a Ray head and two 1-CPU worker nodes) is started with :func:`rnnlab.cluster.web.up` in a network
namespace of its own, behind HAProxy; the protocol client (:mod:`tests.load.protocol_client`) runs inside the
namespace against the proxy. The preset's run is trained once first (one session); then each row opens N sessions
at once and prints one Markdown table row per group, with the whole machine's busy CPU seconds during the row and
in the 10 s from 2 s after its last session left (the machine doing nothing else). The setup writes a ledger
(:mod:`rnnlab.ledger`): after each row, a second table says how many training steps were computed, whether any
step of any run was computed twice, the most slots one browser held against its share, how many browsers were
admitted, and the CPU seconds each kind of process used in the 5 s from when the client returned (12 s or more after
the last session left), and a last line counts the whole setup (a step computed in one row and again in a later
one counts as computed twice). Needs root, Debian's haproxy and, for Ray, requirements-ray.txt.

``python -m tests.load.tier_curve --setups embedded:1,ray:2 --rows 30:half,100:half``
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from rnnlab import ledger
from rnnlab.cluster import local, web
from tests.load.protocol_client import cpu_seconds

ROOT = Path(__file__).resolve().parents[2]
FOLDER = Path("/tmp/rnnlab-tier-curve")
NETNS = "rnnlab-curve"
COLUMNS = ("server_answer", "first_chart", "completion")
HEADER = ("| setup | N | mix | group | completed | queued | server answer p50 | p95 | first chart p50 | p95 | "
          "completion p50 | p95 | errors | machine CPU s | CPU s in 10 s after |\n|" + "---|" * 15)
WORK_HEADER = ("| setup | N | runs trained | steps computed | steps computed twice | most slots one browser held "
               "(share) | browsers admitted | CPU s in 5 s after: web | Ray workers | Ray's own |\n|" + "---|" * 10)
LEDGER = FOLDER / "ledger.jsonl"
LOAD_BOUNDS = web.ProxyBounds(new_ids_per_minute=100_000, connections=100_000, new_connections=100_000,
                              sessions=100_000)  # every client here comes from one address: lift its bounds
AFTER_S = 5.0


def work_done(lines: list[dict]) -> dict:
    """What the ledger's ``lines`` say: runs trained, steps computed, steps computed more than once, the most slots
    one client held at once against its share, and how many clients were admitted."""
    computed: Counter = Counter()
    for line in lines:
        if line["kind"] == "call":
            for step in range(line["first"], line["first"] + line["steps"]):
                computed[(line["run"], step)] += 1
    admits = [line for line in lines if line["kind"] == "admit"]
    return {"runs": len({run for run, _ in computed}), "steps": sum(computed.values()),
            "twice": sum(1 for n in computed.values() if n > 1),
            "most_held": max((line["held"] for line in admits), default=0),
            "share": max((line["per_client"] for line in admits), default=0),
            "clients": len({line["client"] for line in admits})}


def netns_processes(netns: str) -> dict[int, str]:
    """The processes inside network namespace ``netns``: pid -> its command line."""
    try:
        inode = os.stat(f"/run/netns/{netns}").st_ino
    except OSError:
        return {}
    found = {}
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and os.stat(proc / "ns/net").st_ino == inode:
                found[int(proc.name)] = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
    return found


def role(command: str) -> str:
    if "streamlit" in command:
        return "web"
    if command.startswith("ray::") or "default_worker.py" in command:
        return "workers"
    return "ray"


def cpu_by_role(netns: str, window_s: float = AFTER_S) -> dict[str, float]:
    """CPU seconds per kind of process in the namespace over the next ``window_s`` seconds."""
    before = {pid: (role(cmd), cpu_seconds(pid)) for pid, cmd in netns_processes(netns).items()}
    time.sleep(window_s)
    used: dict[str, float] = {"web": 0.0, "workers": 0.0, "ray": 0.0}
    for pid, (kind, start) in before.items():
        end = cpu_seconds(pid)
        if start is not None and end is not None:
            used[kind] += end - start
    return {k: round(v, 2) for k, v in used.items()}


def work_row(setup: str, n: int | str, lines: list[dict], cpu: dict) -> str:
    w = work_done(lines)
    return (f"| {setup} | {n} | {w['runs']} | {w['steps']} | {w['twice']} | {w['most_held']} ({w['share']}) | "
            f"{w['clients']} | {cpu['web']} | {cpu['workers']} | {cpu['ray']} |")


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
    parser.add_argument("--keep-ledger", default="", help="a folder to copy each setup's ledger to")
    args = parser.parse_args(argv)
    setups = [(executor, int(count)) for executor, count in (s.split(":") for s in args.setups.split(","))]
    rows = [(int(n), mix) for n, mix in (r.split(":") for r in args.rows.split(","))]
    os.environ.setdefault("RNNLAB_MAX_TRAININGS", "2")
    os.environ.setdefault("RNNLAB_MAX_JOBS_PER_ADDRESS", os.environ["RNNLAB_MAX_TRAININGS"])  # a class on one address
    print(HEADER, flush=True)
    for executor, count in setups:
        label = f"{count} web, {executor}"
        FOLDER.mkdir(mode=0o700, parents=True, exist_ok=True)  # the state folder: private, as up requires
        LEDGER.unlink(missing_ok=True)
        os.environ[ledger.ENV_LEDGER] = str(LEDGER)
        web.up(count, workers=2, executor=executor, folder=FOLDER, netns=NETNS, host_port=None,
               bounds=LOAD_BOUNDS)
        try:
            works: list[str] = []
            seen = 0
            for n, mix, seed in [(1, "same", 100)] + [(n, mix, 1000 + sum(r[0] for r in rows[:i]))
                                                       for i, (n, mix) in enumerate(rows)]:
                summary = run_row(n, mix, seed, args.timeout)
                cpu = cpu_by_role(NETNS)
                lines = ledger.read(LEDGER)
                works.append(work_row(label, n, lines[seen:], cpu))
                seen = len(lines)
                shown = "same (trains the run)" if seed == 100 else mix
                print("\n".join(table_rows(label, n, shown, summary)), flush=True)
                if summary.get("errors"):
                    print(f"errors: {summary['errors'][:5]}", file=sys.stderr)
            works.append(work_row(label, "all rows", ledger.read(LEDGER), {"web": "", "workers": "", "ray": ""}))
            print("\n" + WORK_HEADER + "\n" + "\n".join(works) + "\n", flush=True)
            if args.keep_ledger:
                shutil.copy(LEDGER, Path(args.keep_ledger) / f"ledger-{executor}-{count}.jsonl")
        finally:
            local.down(FOLDER, NETNS)
    return 0


if __name__ == "__main__":
    sys.exit(main())
