"""A Ray driver for the tests of this folder, run inside the local cluster's network namespace
(``ip netns exec rnnlab python tests/ray/driver.py MODE OUT``); it writes what it saw to OUT (a pickle).

- ``train PRESET``: the preset's run trained part by part through :class:`RayExecutor` (Work of ``jobs.train_part``,
  as the Explore page submits it): the history's tables and arrays.
- ``kill PRESET``: the same, SIGKILLing the worker process of the first part once it has run for a moment.
- ``cancel PRESET`` / ``force PRESET``: a part cancelled (gently / with force) while its task runs: how long the job
  took to end, and whether the task's worker stopped running it.
- ``probe PRESET``: a probe of the preset's untrained run (plain arguments, run on a worker whole): its table.
- ``gate -``: two web processes share the gate actor (one slot): this one queues behind another that holds the
  slot and is then SIGKILLed; what this one's ticket said and how soon it was admitted. ``holder -`` is the other.
"""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import ray

from rnnlab.config import Config
from rnnlab.server import jobs, ray_actors
from rnnlab.server.executor import CANCELLED, Work
from rnnlab.server.gate import JobGate, queue_message
from rnnlab.server.ray_executor import RayExecutor
from rnnlab.server.results import Results
from rnnlab.server.shared_runs import SharedRuns
from rnnlab.sharing.presets import PRESETS_BY_KEY
from rnnlab.training.train import Run

PART_TITLE = "ray::train_part_bytes"
POLL_S = 0.1
DEADLINE_S = 240.0
LEASE_S = 2.0


def tasks_running(title: str = PART_TITLE) -> list[int]:
    """Pids of processes in this network namespace whose title says they run ``title``."""
    mine = os.readlink("/proc/self/ns/net")
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and os.readlink(proc / "ns/net") == mine and \
                    (proc / "cmdline").read_bytes().startswith(title.encode()):
                found.append(int(proc.name))
        except OSError:
            continue
    return found


def history_of(run: Run) -> dict:
    h = run.history
    return {"steps": h.steps_df(), "chunks": h.chunks_df(), "carry": {k: list(v) for k, v in h.carry.items()},
            "per_step_loss": list(h.per_step_loss), "stop_reason": h.stop_reason}


def executor() -> RayExecutor:
    return RayExecutor(os.environ["RNNLAB_RAY_ADDRESS"], gate=JobGate(limit=2, budget=lambda: 8 * 2**30),
                       runs=SharedRuns(), results=Results())


def finish(job, deadline: float) -> None:
    while not job.poll(POLL_S):
        if time.monotonic() > deadline:
            raise TimeoutError(f"job still {job.status}")


def train(config: Config, kill: bool) -> dict:
    ex, deadline = executor(), time.monotonic() + DEADLINE_S
    run, killed, parts = Run(config), [], 0

    def killer() -> None:
        while not killed and time.monotonic() < deadline:
            pids = tasks_running()
            if pids:
                time.sleep(0.5)
                os.kill(pids[0], signal.SIGKILL)
                killed.append(pids[0])
            time.sleep(0.05)

    if kill:
        threading.Thread(target=killer, daemon=True).start()
    while not run.done:
        job = ex.submit(Work(jobs.train_part, (run, None), kind="train part", client="test"))
        finish(job, deadline)
        job.result()
        parts += 1
    return {"history": history_of(run), "killed": killed, "parts": parts}


def cancel(config: Config, force: bool) -> dict:
    ex, deadline = executor(), time.monotonic() + DEADLINE_S
    run = Run(config)
    job = ex.submit(Work(jobs.train_part, (run, None), kind="train part", client="test"))
    while not tasks_running():
        job.poll(POLL_S)
        assert time.monotonic() < deadline and not job.poll(0), job.status
    time.sleep(0.3)
    asked = time.monotonic()
    job.cancel(force=force)
    finish(job, deadline)
    ended_s = time.monotonic() - asked
    gone = time.monotonic() + 60
    while tasks_running() and time.monotonic() < gone:
        time.sleep(0.1)
    return {"status": job.status, "cancelled": job.status == CANCELLED, "ended_s": ended_s,
            "task_left_s": time.monotonic() - asked, "task_running": bool(tasks_running()), "step": run.step}


def probe(config: Config) -> dict:
    ex, deadline = executor(), time.monotonic() + DEADLINE_S
    job = ex.submit(Work(jobs.robustness, (jobs.Model.of(Run(config)),), kind="probe", client="test"))
    finish(job, deadline)
    return {"table": job.result()}


def holder() -> None:
    ray.init(address=os.environ["RNNLAB_RAY_ADDRESS"], namespace=ray_actors.NAMESPACE, log_to_driver=False)
    ticket = ray_actors.RemoteGate(ray.get_actor(ray_actors.GATE_NAME)).ticket(2**20, "training", client="a")
    print("held" if ticket.wait(10) else "waiting", flush=True)
    time.sleep(DEADLINE_S)


def gate() -> dict:
    ray.init(address=os.environ["RNNLAB_RAY_ADDRESS"], namespace=ray_actors.NAMESPACE, log_to_driver=False)
    actor = ray_actors.gate_actor(limit=1, budget_bytes=8 * 2**30, per_client=1, lease_s=LEASE_S)
    other = subprocess.Popen([sys.executable, __file__, "holder", "-", "-"], stdout=subprocess.PIPE, text=True)
    try:
        said = other.stdout.readline().strip() if other.stdout else ""
        remote = ray_actors.RemoteGate(actor)
        ticket = remote.ticket(2**20, "training", client="b")
        queued = {"position": ticket.position, "reason": remote.waiting_reason(ticket),
                  "message": queue_message(ticket, remote), "admitted_while_held": ticket.wait(1.0)}
    finally:
        other.kill()
        other.wait(10)
    killed = time.monotonic()
    admitted = ticket.wait(4 * LEASE_S)
    result = {"holder": said, **queued, "admitted": admitted, "admitted_after_s": time.monotonic() - killed}
    ticket.release()
    result["after_release"] = ray.get(actor.summary.remote(), timeout=10)
    ray.kill(actor)
    return result


def main(mode: str, preset: str, out: str) -> None:
    if mode == "holder":
        return holder()
    if mode == "gate":
        Path(out).write_bytes(pickle.dumps(gate()))
        return
    config = PRESETS_BY_KEY[preset].config
    if mode in ("cancel", "force"):
        result = cancel(config, force=mode == "force")
    elif mode == "probe":
        result = probe(config)
    else:
        result = train(config, kill=mode == "kill")
    Path(out).write_bytes(pickle.dumps(result))


if __name__ == "__main__":
    main(*sys.argv[1:4])
