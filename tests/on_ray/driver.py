"""A Ray driver for the tests of this folder, run inside the local cluster's network namespace
(``ip netns exec rnnlab python tests/on_ray/driver.py MODE OUT``); it writes what it saw to OUT (a pickle).

- ``train PRESET``: the preset's run trained call by call through :class:`RayExecutor` (Work of ``jobs.call_job``,
  as the Explore page submits it): the history's tables and arrays.
- ``kill PRESET``: the same, SIGKILLing the worker process of the first call once it has run for a moment.
- ``cancel PRESET`` / ``force PRESET``: a training call cancelled (gently / with force) while its task runs: how long
  the job took to end, and whether the task's worker stopped running it.
- ``probe PRESET``: a probe of the preset's untrained run (plain arguments, run on a worker whole): its table.
- ``gate -``: two web processes share the gate actor (one slot): this one queues behind another that holds the
  slot and is then SIGKILLed; what this one's ticket said and how soon it was admitted. ``holder -`` is the other.
- ``restart -``: the gate actor's process SIGKILLed while one owner's ticket is admitted and another's queued:
  what both tickets and the restarted gate said, and when the queued one was admitted.
- ``node PRESET``: ``train``, stopping the worker node of the first call's task (SIGTERM to its process group)
  mid-call.
- ``noworker PRESET``: a run trained under a lease of the gate actor, both worker nodes stopped during its third
  call: the job's error, how soon it came, the run's step and history, and the gate once the lease was released.
- ``stop PRESET``: a page's loop of calls (``poll`` every 0.25 s) stopped mid-call: when calls were submitted and
  seen starting on a worker, relative to Stop. ``probestop PRESET``: a probe cancelled gently while its task runs:
  how soon its task stopped.
- ``once PRESET``: this process and another (``oncehelper PRESET``) ask at once for the same keyed probe under the
  cluster's results actor: both tables, and how many times it was computed.
- ``progress PRESET``: a decay sweep (two cells, three lengths) run on a worker: the progress and notes its job
  showed while it ran.
- ``affinity PRESET``: the preset's run trained call by call, then two runs of it with seeds of their own trained at
  once: the node of each call.
- ``callsonce PRESET``: this process and another (``callshelper PRESET``), as two web processes, train the preset's
  run at once under the cluster's results actor; then a third run of it is started here: both histories, the
  steps each computed (from the ledger, :mod:`rnnlab.ledger`), and the started run.
"""

from __future__ import annotations

import dataclasses
import os
import pickle
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import ray

from rnnlab import ledger
from rnnlab.cluster import local
from rnnlab.config import Config
from rnnlab.server.on_ray import executor as ray_executor
from rnnlab.server.on_ray import gate_actor as ray_actors
from rnnlab.server.on_ray import registry as ray_registry
from rnnlab.server.on_ray.actors import NAMESPACE
from rnnlab.server.on_ray.executor import RayExecutor
from rnnlab.server.work import jobs
from rnnlab.server.work.executor import CANCELLED, FAILED, Work
from rnnlab.server.work.gate import JobGate, queue_message
from rnnlab.server.work.results import Results
from rnnlab.server.work.shared_runs import SharedRuns
from rnnlab.sharing.presets import PRESETS_BY_KEY
from rnnlab.training.train import Run

CALL_TITLE = "ray::compute_call_on_node"
POLL_S = 0.1
DEADLINE_S = 240.0
LEASE_S = 2.0


def tasks_running(title: str = CALL_TITLE) -> list[int]:
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


def worker_nodes() -> list[local.Node]:
    state = local.State.load(local.STATE_DIR)
    return [n for n in state.nodes if n.role != "head"] if state else []


def node_of(pid: int) -> local.Node | None:
    """The worker node whose ``ray start`` process ``pid`` descends from."""
    nodes = {n.pid: n for n in worker_nodes()}
    while pid > 1:
        if pid in nodes:
            return nodes[pid]
        try:
            pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            return None
    return None


def stop_node(node: local.Node) -> None:
    """The node removed: SIGTERM to its process group, as a machine shutting down does."""
    local.signal_group(node.pid, signal.SIGTERM)


def train(config: Config, fault: str = "") -> dict:
    ex, deadline = executor(), time.monotonic() + DEADLINE_S
    run, killed, calls = Run(config), [], 0

    def killer() -> None:
        while not killed and time.monotonic() < deadline:
            pids = tasks_running()
            if pids:
                time.sleep(0.5)
                if fault == "node":
                    node = node_of(pids[0])
                    if node is not None:
                        stop_node(node)
                        killed.append(node.role)
                else:
                    os.kill(pids[0], signal.SIGKILL)
                    killed.append(pids[0])
            time.sleep(0.05)

    if fault:
        threading.Thread(target=killer, daemon=True).start()
    while not run.done:
        job = ex.submit(Work(jobs.call_job, (run, None), kind="train call", client="test"))
        finish(job, deadline)
        job.result()
        calls += 1
    return {"history": history_of(run), "killed": killed, "calls": calls}


def no_worker(config: Config) -> dict:
    ex, deadline = ray_executor.RayExecutor(os.environ["RNNLAB_RAY_ADDRESS"], runs=SharedRuns(),
                                            results=Results()), time.monotonic() + DEADLINE_S
    gate = ex.gate
    lease = ex.run_lease(Run(config), "training", "test")
    while not lease.poll(POLL_S):
        assert time.monotonic() < deadline
    stopped: list[float] = []

    def stop_all() -> None:
        while not tasks_running() and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.3)
        for node in worker_nodes():
            stop_node(node)
        stopped.append(time.monotonic())

    error, calls, step_before, job = None, 0, 0, None
    try:
        while not lease.run.done:
            if calls == 2:
                threading.Thread(target=stop_all, daemon=True).start()
            step_before = lease.run.step
            job = ex.submit(Work(jobs.call_job, (lease.run, None), kind="train call", client="test"), lease=lease)
            finish(job, deadline)
            try:
                job.result()
            except Exception as e:  # noqa: BLE001 - what the page would show
                error = e
                break
            calls += 1
    finally:
        failed = time.monotonic()
        run = lease.release()
    gate.sync_once()
    result = {"error": f"{type(error).__name__}: {error}", "status": job.status if job else "", "calls": calls,
              "step": run.step, "step_before": step_before, "history": history_of(run),
              "failed_after_s": failed - stopped[0] if stopped else None, "gate": gate.summary(),
              "failed": job is not None and job.status == FAILED}
    ray.kill(ray.get_actor(ray_actors.GATE_NAME, namespace=NAMESPACE))
    return result


class CallStarts:
    """Samples which workers run a training call every few milliseconds: when each was first seen running one."""

    def __init__(self) -> None:
        self.starts: list[float] = []
        self.last_seen = 0.0
        self.done = threading.Event()
        threading.Thread(target=self.sample, daemon=True).start()

    def sample(self) -> None:
        before: set[int] = set()
        while not self.done.is_set():
            now_running = set(tasks_running())
            now = time.monotonic()
            self.starts.extend(now for _ in now_running - before)
            if now_running:
                self.last_seen = now
            before = now_running
            time.sleep(0.005)


def stop_latency(config: Config) -> dict:
    ex, deadline = executor(), time.monotonic() + DEADLINE_S
    run, submitted, stop, asked_at = Run(config), [], threading.Event(), []
    original = ray_executor.call_on_ray

    def press_stop() -> None:
        asked_at.append(time.monotonic())
        stop.set()

    def recorded(*args):
        submitted.append(time.monotonic())
        if len(submitted) == 3:
            threading.Timer(0.15, press_stop).start()
        return original(*args)

    ray_executor.call_on_ray = recorded
    seen = CallStarts()
    while not run.done:  # a page's loop: poll, draw, and Stop raises in the script thread between polls
        job = ex.submit(Work(jobs.call_job, (run, 0.25), kind="train call", client="test"))
        try:
            while not job.poll(0.25):
                assert time.monotonic() < deadline
                if stop.is_set():
                    break
        finally:
            job.cancel()
        if stop.is_set():
            break
        job.result()
    ended = time.monotonic()
    asked = asked_at[0] if asked_at else ended
    gone = time.monotonic() + 30
    while tasks_running() and time.monotonic() < gone:
        time.sleep(0.05)
    time.sleep(1.0)
    seen.done.set()
    return {"stopped": stop.is_set(), "done": run.done, "submitted_after_s": [t - asked for t in submitted],
            "starts_after_s": [t - asked for t in seen.starts], "loop_ended_s": ended - asked,
            "last_call_seen_s": seen.last_seen - asked, "step": run.step}


def probe_stop(config: Config) -> dict:
    ex, deadline = executor(), time.monotonic() + DEADLINE_S
    job = ex.submit(Work(jobs.robustness, (jobs.Model.of(Run(config)),), kind="probe", client="test"))
    while not tasks_running("ray::call"):
        assert not job.poll(POLL_S) and time.monotonic() < deadline, job.status
    time.sleep(0.3)
    asked = time.monotonic()
    job.cancel()
    finish(job, deadline)
    ended = time.monotonic() - asked
    gone = time.monotonic() + 30
    while tasks_running("ray::call") and time.monotonic() < gone:
        time.sleep(0.02)
    return {"status": job.status, "ended_s": ended, "task_left_s": time.monotonic() - asked,
            "task_running": bool(tasks_running("ray::call"))}


def cancel(config: Config, force: bool) -> dict:
    ex, deadline = executor(), time.monotonic() + DEADLINE_S
    run = Run(config)
    job = ex.submit(Work(jobs.call_job, (run, None), kind="train call", client="test"))
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
    ray.init(address=os.environ["RNNLAB_RAY_ADDRESS"], namespace=NAMESPACE, log_to_driver=False)
    ticket = ray_actors.RemoteGate(ray.get_actor(ray_actors.GATE_NAME)).ticket(2**20, "training", client="a")
    print("held" if ticket.wait(10) else "waiting", flush=True)
    time.sleep(DEADLINE_S)


def gate() -> dict:
    ray.init(address=os.environ["RNNLAB_RAY_ADDRESS"], namespace=NAMESPACE, log_to_driver=False)
    actor = ray_actors.gate_actor(limit=1, budget_bytes=8 * 2**30, per_client=1, lease_s=LEASE_S)
    other = subprocess.Popen([sys.executable, __file__, "holder", "-", "-"], stdout=subprocess.PIPE, text=True)
    try:
        said = other.stdout.readline().strip() if other.stdout else ""
        remote = ray_actors.RemoteGate(actor)
        ticket = remote.ticket(2**20, "training", client="b")
        queued = {"position": ticket.position, "reason": remote.waiting_reason(ticket),
                  "message": str(queue_message(ticket, remote)), "admitted_while_held": ticket.wait(1.0)}
    finally:
        other.kill()
        other.wait(10)
    killed = time.monotonic()
    admitted = ticket.wait(4 * LEASE_S)
    result = {"holder": said, **queued, "admitted": admitted, "admitted_after_s": time.monotonic() - killed}
    ticket.release()
    remote.sync_once()  # a release reaches the gate with the next sync: this one
    result["after_release"] = ray.get(actor.summary.remote(), timeout=10)
    ray.kill(actor)
    return result


def keyed_probe(config: Config, nonce: str):
    ex, deadline = ray_executor.RayExecutor(os.environ["RNNLAB_RAY_ADDRESS"], runs=SharedRuns()), \
        time.monotonic() + DEADLINE_S
    work = Work(jobs.robustness, (jobs.Model.of(Run(config)),), kind="probe", client=f"p{os.getpid()}",
                key=("robustness", config, 0, nonce))
    return ex, work, deadline


def once_helper(config: Config, out: str) -> None:
    ex, work, deadline = keyed_probe(config, Path(out).name)
    print("ready", flush=True)
    sys.stdin.readline()
    job = ex.submit(work)
    finish(job, deadline)
    Path(out).write_bytes(pickle.dumps(job.result()))


def once(config: Config, preset: str, out: str) -> dict:
    theirs_at = Path(f"{out}.other")
    ex, work, deadline = keyed_probe(config, theirs_at.name)
    actor = ray_registry.results_actor()
    before = ray.get(actor.summary.remote(), timeout=10)
    other = subprocess.Popen([sys.executable, __file__, "oncehelper", preset, str(theirs_at)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE)
    assert other.stdout is not None and other.stdin is not None
    while other.stdout.readline().strip() != b"ready":
        assert other.poll() is None and time.monotonic() < deadline, "the other web process did not start"
    other.stdin.write(b"go\n")
    other.stdin.flush()
    job = ex.submit(work)
    finish(job, deadline)
    assert other.wait(DEADLINE_S) == 0
    theirs = pickle.loads(theirs_at.read_bytes())
    after = ray.get(actor.summary.remote(), timeout=10)
    ray.kill(actor)
    ray.kill(ray.get_actor(ray_actors.GATE_NAME, namespace=NAMESPACE))
    return {"mine": job.result(), "theirs": theirs, "computed": after["granted"] - before["granted"]}


def progress(config: Config) -> dict:
    ex, deadline = executor(), time.monotonic() + DEADLINE_S
    job = ex.submit(Work(jobs.decay_sweep, (config, ["gru", "simple"], [20, 40, 80], "untrained"),
                         kind="sweep", client="test"))
    seen = []
    while not job.poll(POLL_S):
        assert time.monotonic() < deadline, job.status
        seen.append((job.progress, job.note))
    table, _ = job.result()
    return {"seen": seen, "rows": len(table), "status": job.status}


AFFINITY_STEPS = 100  # four calls of the preset's 25 steps on each run


def affinity(config: Config) -> dict:
    ex, deadline = executor(), time.monotonic() + DEADLINE_S
    nodes: dict[int, list[str]] = {}
    original = ray_executor.remember_node

    def recorded(config: Config | None, node: str) -> None:
        if config is not None:
            nodes.setdefault(config.seed, []).append(node)
        original(config, node)

    ray_executor.remember_node = recorded

    def train_one(run: Run) -> None:
        while not run.done:
            job = ex.submit(Work(jobs.call_job, (run, None), kind="train call", client=f"c{run.config.seed}"))
            finish(job, deadline)
            job.result()

    config = dataclasses.replace(config, steps=AFFINITY_STEPS)
    train_one(Run(config))
    alone = nodes.pop(config.seed)
    threads = [threading.Thread(target=train_one, args=(Run(dataclasses.replace(config, seed=seed)),), name=str(seed))
               for seed in (101, 102)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(DEADLINE_S)
    return {"alone": alone, "together": nodes, "workers": [n["NodeID"] for n in ray.nodes()
                                                           if n.get("Alive") and n["Resources"].get("CPU", 0) > 0]}


def train_shared(config: Config) -> Run:
    """The preset's run trained call by call as a web process on the cluster trains it: its calls shared with every
    other web process through the cluster's results actor."""
    ex, deadline = ray_executor.RayExecutor(os.environ["RNNLAB_RAY_ADDRESS"], runs=SharedRuns()), \
        time.monotonic() + DEADLINE_S
    run = Run(config)
    while not run.done:
        job = ex.submit(Work(jobs.call_job, (run, None), kind="train call", client=f"p{os.getpid()}"))
        finish(job, deadline)
        job.result()
    return run


def calls_helper(config: Config, out: str) -> None:
    ray_executor.connect()
    print("ready", flush=True)
    sys.stdin.readline()
    Path(out).write_bytes(pickle.dumps(history_of(train_shared(config))))


def calls_once(config: Config, preset: str, out: str) -> dict:
    os.environ[ledger.ENV_LEDGER] = f"{out}.ledger"  # before connecting: the workers write to it too
    ray_executor.connect()
    gone = time.monotonic() + 30
    while time.monotonic() < gone:  # nothing kept from before: a results actor of its own
        try:
            ray.kill(ray.get_actor(ray_registry.RESULTS_NAME, namespace=NAMESPACE))
        except ValueError:
            break
        time.sleep(0.2)
    theirs_at = Path(f"{out}.other")
    other = subprocess.Popen([sys.executable, __file__, "callshelper", preset, str(theirs_at)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE)
    assert other.stdout is not None and other.stdin is not None
    deadline = time.monotonic() + DEADLINE_S
    while other.stdout.readline().strip() != b"ready":
        assert other.poll() is None and time.monotonic() < deadline, "the other web process did not start"
    other.stdin.write(b"go\n")
    other.stdin.flush()
    mine = train_shared(config)
    assert other.wait(DEADLINE_S) == 0
    ex = ray_executor.shared_executor()
    job = ex.submit(Work(jobs.start_run, (config,), kind="start run", client="test", slot=False))
    finish(job, deadline)
    started = job.result()
    lines = [line for line in ledger.read(f"{out}.ledger") if line["kind"] == "call"]
    ray.kill(ray.get_actor(ray_registry.RESULTS_NAME, namespace=NAMESPACE))
    return {"mine": history_of(mine), "theirs": pickle.loads(theirs_at.read_bytes()),
            "computed": [(line["first"], line["steps"]) for line in lines if line["run"] == ledger.digest(config)],
            "started": history_of(started), "started_done": started.done}


def restart() -> dict:
    ray.init(address=os.environ["RNNLAB_RAY_ADDRESS"], namespace=NAMESPACE, log_to_driver=False)
    actor = ray_actors.gate_actor(limit=1, budget_bytes=8 * 2**30, per_client=1, lease_s=3 * LEASE_S)
    first, second = ray_actors.RemoteGate(actor), ray_actors.RemoteGate(actor)
    running = first.ticket(2**20, "training", client="a")
    queued = second.ticket(2**20, "training", client="b")
    before = {"running_admitted": running.wait(10), "queued_admitted": queued.wait(1.0), "gate": first.summary()}
    os.kill(before["gate"]["pid"], signal.SIGKILL)
    killed = time.monotonic()
    while first.summary()["pid"] == before["gate"]["pid"] or second.summary()["pid"] == before["gate"]["pid"]:
        assert time.monotonic() - killed < 60, "the gate actor did not come back"
        time.sleep(0.05)
    back = time.monotonic() - killed
    watched_until = time.monotonic() + 2 * ray_actors.RECOVER_S + 1.0
    admitted_early = False
    while time.monotonic() < watched_until:
        admitted_early |= queued.admitted
        time.sleep(0.02)
    after = {"back_s": back, "running_admitted": running.admitted and not running.released,
             "queued_admitted_before_release": admitted_early or queued.admitted, "gate": first.summary()}
    running.release()
    released = time.monotonic()
    after["queued_admitted_after_release"] = queued.wait(5.0)
    after["admitted_after_release_s"] = time.monotonic() - released
    first.sync_once()
    after["gate_after_release"] = first.summary()
    queued.release()
    ray.kill(actor)
    return {"before": before, "after": after}


def main(mode: str, preset: str, out: str) -> None:
    if mode == "holder":
        return holder()
    if mode in ("gate", "restart"):
        Path(out).write_bytes(pickle.dumps(gate() if mode == "gate" else restart()))
        return
    config = PRESETS_BY_KEY[preset].config
    if mode in ("cancel", "force"):
        result = cancel(config, force=mode == "force")
    elif mode == "probe":
        result = probe(config)
    elif mode == "noworker":
        result = no_worker(config)
    elif mode == "stop":
        result = stop_latency(config)
    elif mode == "probestop":
        result = probe_stop(config)
    elif mode == "oncehelper":
        return once_helper(config, out)
    elif mode == "once":
        result = once(config, preset, out)
    elif mode == "progress":
        result = progress(config)
    elif mode == "affinity":
        result = affinity(config)
    elif mode == "callshelper":
        return calls_helper(config, out)
    elif mode == "callsonce":
        result = calls_once(config, preset, out)
    else:
        result = train(config, fault={"kill": "kill", "node": "node"}.get(mode, ""))
    Path(out).write_bytes(pickle.dumps(result))


if __name__ == "__main__":
    main(*sys.argv[1:4])
