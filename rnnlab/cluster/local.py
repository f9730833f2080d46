"""A Ray cluster on this machine, on loopback only: a head node with no CPUs and 1-CPU worker nodes, all inside a
network namespace of its own (:data:`NETNS`) whose only interface is loopback.

Ray replaces 127.0.0.1 by the machine's address whenever a route out exists, so a cluster meant to stay on this
machine lives in a namespace without one; every driver of it (a web process, a test's helper) runs there too:
``ip netns exec rnnlab python ...`` (:func:`in_netns`). Needs root (``ip netns add``).

Each node is one ``ray start --block`` in a process group of its own, its pid kept in the state folder;
:func:`down` stops those groups (SIGTERM, then SIGKILL), then whatever else still runs in the namespace, then
deletes the namespace. It never runs ``ray stop``, which stops every Ray process on the machine. The nodes
inherit this process's environment (``RNNLAB_*``, ``XLA_FLAGS``), as the web processes should have it too.

Ray's token authentication is on: :func:`up` makes a random token in the state folder (:data:`TOKEN_FILE`, readable
by its owner only) and hands it to every node and driver through Ray's own variables (:func:`auth_env`); a client
without it, or with another, is refused. The state folder is created private (0700) and checked before each use
(:func:`private_folder`): owned by this user, not a link, not open to others, so that nobody else on the machine
can plant a state, a token or a proxy configuration in it. Each node's ports are pinned (:func:`port_flags`).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import stat
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from rnnlab.server.storage import ownership_problem

NETNS = "rnnlab"
HOST, PORT = "127.0.0.1", 6379
ADDRESS = f"{HOST}:{PORT}"
STATE_DIR = Path("/tmp/rnnlab-cluster")  # short: Ray's socket paths under it must stay under 108 characters
OBJECT_STORE_BYTES = 100 * 2**20
START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 5.0
STARTED = "Ray runtime started"
TOKEN_FILE = "ray_token"
PRIVATE_MODE = 0o700


class ClusterError(RuntimeError):
    """The local cluster could not be started, reached or stopped; the message says why."""


@dataclass
class Node:
    """One ``ray start --block`` process (its pid is also its process group) and its log."""

    role: str
    pid: int
    log: str


@dataclass
class State:
    """What :func:`up` started, kept in ``STATE_DIR/state.json``: the Ray nodes, and the other processes
    (:mod:`.web`: web processes and the proxy), each also in a process group of its own."""

    netns: str
    address: str
    nodes: list[Node] = field(default_factory=list)
    processes: list[Node] = field(default_factory=list)

    def save(self, folder: Path) -> None:
        write_private(private_folder(folder) / "state.json", json.dumps(asdict(self), indent=1))

    @classmethod
    def load(cls, folder: Path) -> State | None:
        """The state kept in ``folder``; None when there is none. ClusterError when the folder fails
        :func:`private_folder`'s checks."""
        if not folder.exists() and not folder.is_symlink():
            return None
        path = private_folder(folder, create=False) / "state.json"
        if not path.exists():
            return None
        data = json.loads(path.read_text())
        return cls(data["netns"], data["address"], [Node(**n) for n in data["nodes"]],
                   [Node(**n) for n in data.get("processes", [])])


def private_folder(folder: Path, create: bool = True) -> Path:
    """``folder``, created 0700 when absent (``create``); ClusterError unless it is a real folder (not a link)
    owned by this user and closed to everyone else."""
    if create and not folder.exists() and not folder.is_symlink():
        folder.parent.mkdir(parents=True, exist_ok=True)
        try:
            folder.mkdir(mode=PRIVATE_MODE)
        except FileExistsError:
            pass  # made by someone else meanwhile: checked below
    problem = ownership_problem(folder)  # the same checks as the runs folder's
    if problem:
        raise ClusterError(f"the state folder {problem}")
    info = folder.lstat()
    if info.st_mode & 0o077:
        raise ClusterError(f"the state folder {folder} is open to other users (mode {stat.S_IMODE(info.st_mode):o}, "
                           f"{PRIVATE_MODE:o} needed): remove it and try again")
    return folder


def write_private(path: Path, text: str) -> None:
    """``text`` into ``path``, readable and writable by its owner only (0600), replaced whole."""
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(text)
    os.replace(partial, path)


def make_token(folder: Path) -> Path:
    """A new random Ray authentication token in ``folder/TOKEN_FILE`` (0600); its path."""
    path = private_folder(folder) / TOKEN_FILE
    write_private(path, secrets.token_hex(32))
    return path


def auth_env(folder: Path = STATE_DIR) -> dict[str, str]:
    """Ray's own variables that make a process (a node or a driver) use the token of the cluster in ``folder``."""
    return {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(folder / TOKEN_FILE)}


def in_netns(command: list[str], netns: str = NETNS) -> list[str]:
    """``command`` run inside the cluster's network namespace."""
    return ["ip", "netns", "exec", netns, *command]


def netns_exists(netns: str = NETNS) -> bool:
    return Path("/var/run/netns", netns).exists() or Path("/run/netns", netns).exists()


def netns_pids(netns: str = NETNS) -> list[int]:
    """Every process inside the namespace."""
    out = subprocess.run(["ip", "netns", "pids", netns], capture_output=True, text=True, timeout=10)
    return [int(p) for p in out.stdout.split()]


def can_create_netns() -> str | None:
    """None when this process may create network namespaces, else why not (in words)."""
    if shutil.which("ip") is None:
        return "the 'ip' command (iproute2) is missing"
    probe = f"rnnlab-probe-{os.getpid()}"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True, timeout=10)
    if made.returncode != 0:
        return f"cannot create a network namespace: {made.stderr.strip() or made.returncode}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True, timeout=10)
    return None


def ray_command() -> str:
    """The ``ray`` script of this Python environment."""
    found = Path(sys.executable).with_name("ray")
    if found.exists():
        return str(found)
    which = shutil.which("ray")
    if which is None:
        raise ClusterError("the 'ray' command is missing: pip install -r requirements-ray.txt")
    return which


WORKERS_KEPT = 4  # idle Ray workers a node keeps: one per web process (Ray job) it serves, and a spare
IDLE_WORKER_KEPT_MS = 600_000


NODE_PORTS = {"node-manager-port": 6380, "object-manager-port": 6381, "runtime-env-agent-port": 6382,
              "dashboard-agent-grpc-port": 6383, "dashboard-agent-listen-port": 6384,
              "metrics-export-port": 6385}  # per node, as docs/scale-out.md pins them
WORKER_PORTS = (20000, 20999)  # the node's worker processes' ports
HEAD_PORTS = {"dashboard-port": 8265}  # Ray Client (ray[client], port 10001) is not used


def port_flags(index: int) -> list[str]:
    """``ray start``'s port options for the node with ``index`` (0: the head): every port pinned, none left for Ray
    to pick, so that one firewall rule covers them. Nodes sharing one machine (here) are moved apart: node i's
    ports are the pinned ones plus 10 i, its workers' plus 1000 i."""
    ports = {name: port + 10 * index for name, port in NODE_PORTS.items()}
    ports |= {"min-worker-port": WORKER_PORTS[0] + 1000 * index, "max-worker-port": WORKER_PORTS[1] + 1000 * index}
    if index == 0:
        ports |= HEAD_PORTS
    return [f"--{name}={port}" for name, port in ports.items()]


def node_command(role: str, temp_dir: Path, object_store_bytes: int, index: int = 0) -> list[str]:
    common = [ray_command(), "start", "--block", "--disable-usage-stats", f"--node-ip-address={HOST}",
              f"--object-store-memory={object_store_bytes}", *port_flags(index)]
    if role == "head":
        return [*common, "--head", f"--port={PORT}", "--num-cpus=0", "--include-dashboard=false",
                f"--temp-dir={temp_dir}"]
    return [*common, f"--address={ADDRESS}", "--num-cpus=1"]


def node_index(role: str) -> int:
    """0 for the head, i for ``worker<i>``."""
    return int(role.removeprefix("worker")) if role.startswith("worker") else 0


def start_node(role: str, folder: Path, object_store_bytes: int, netns: str) -> Node:
    log = folder / f"{role}.log"
    command = node_command(role, folder / "ray", object_store_bytes, node_index(role))
    with open(log, "wb") as out:
        process = subprocess.Popen(in_netns(command, netns), stdout=out, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True, env=node_env(folder))
    return Node(role, process.pid, str(log))


def node_env(folder: Path = STATE_DIR) -> dict[str, str]:
    """The nodes' environment: this process's, with the cluster's token (:func:`auth_env`), Ray's usage statistics
    off, and idle workers kept (each web process is a Ray job of its own with workers of its own; with one worker
    per CPU, Ray kills one job's idle worker whenever the other's task comes, and the next task starts a new one,
    which loads JAX and compiles again)."""
    return {**os.environ, **auth_env(folder), "RAY_USAGE_STATS_ENABLED": "0",
            "RAY_num_workers_soft_limit": str(WORKERS_KEPT),
            "RAY_idle_worker_killing_time_threshold_ms": str(IDLE_WORKER_KEPT_MS)}


def wait_started(node: Node, deadline: float) -> None:
    """Wait until ``node``'s log says Ray started; ClusterError when it exits or the deadline passes first."""
    while time.monotonic() < deadline:
        text = Path(node.log).read_text(errors="replace")
        if STARTED in text:
            return
        if not alive(node.pid):
            raise ClusterError(f"the {node.role} node exited while starting; its log:\n{tail(text)}")
        time.sleep(0.2)
    raise ClusterError(f"the {node.role} node did not start within {START_TIMEOUT_S:.0f} s; its log:\n"
                       f"{tail(Path(node.log).read_text(errors='replace'))}")


def tail(text: str, lines: int = 20) -> str:
    return "\n".join(text.splitlines()[-lines:])


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie (exited, not yet reaped by its parent) is not alive
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[-1][:1] != "Z"
    except OSError:
        return False


def open_namespace(folder: Path = STATE_DIR, netns: str = NETNS) -> State:
    """Create the namespace (loopback up) and the state folder; the empty state. ClusterError when a cluster is
    already up or the namespace cannot be made."""
    if State.load(folder) is not None or netns_exists(netns):
        raise ClusterError(f"a local cluster is already up (namespace {netns!r}, state in {folder}); "
                           "stop it first: python -m rnnlab.cluster down")
    private_folder(folder)
    made = subprocess.run(["ip", "netns", "add", netns], capture_output=True, text=True, timeout=10)
    if made.returncode != 0:
        raise ClusterError(f"cannot create the network namespace {netns!r} (root needed): {made.stderr.strip()}")
    state = State(netns, ADDRESS)
    state.save(folder)
    make_token(folder)
    try:
        subprocess.run(["ip", "-n", netns, "link", "set", "lo", "up"], check=True, capture_output=True, timeout=10)
    except BaseException:
        down(folder, netns)
        raise
    return state


def up(workers: int = 2, folder: Path = STATE_DIR, object_store_bytes: int = OBJECT_STORE_BYTES,
       netns: str = NETNS) -> State:
    """Start the namespace, the head and ``workers`` worker nodes; their state. ClusterError when a cluster is
    already up, the namespace cannot be made, or a node does not start in time (what started is stopped then)."""
    state = open_namespace(folder, netns)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        head = start_node("head", folder, object_store_bytes, netns)
        state.nodes.append(head)
        state.save(folder)
        wait_started(head, deadline)
        for i in range(workers):  # one at a time: nodes starting together on a busy 2-core machine time out
            state.nodes.append(start_node(f"worker{i + 1}", folder, object_store_bytes, netns))
            state.save(folder)
            wait_started(state.nodes[-1], deadline)
    except BaseException:
        down(folder, netns)
        raise
    return state


def down(folder: Path = STATE_DIR, netns: str = NETNS, timeout_s: float = STOP_TIMEOUT_S) -> list[int]:
    """Stop every process :func:`up` (and :mod:`.web`) started and anything else in the namespace, delete the
    namespace and the state folder; the pids that had to be killed (SIGKILL). ClusterError, touching nothing, when
    the state folder fails :func:`private_folder`'s checks."""
    state = State.load(folder)
    groups = [n.pid for n in (*state.processes, *state.nodes)] if state else []
    for pid in groups:
        signal_group(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and any(alive(p) for p in remaining(groups, netns)):
        time.sleep(0.2)
    killed = [p for p in remaining(groups, netns) if alive(p)]
    for pid in groups:
        signal_group(pid, signal.SIGKILL)
    for pid in killed:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    kill_deadline = time.monotonic() + 5.0
    while time.monotonic() < kill_deadline and any(alive(p) for p in remaining(groups, netns)):
        time.sleep(0.1)
    for pid in groups:  # the nodes are this process's children when it started them: reap them
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
    if netns_exists(netns):
        subprocess.run(["ip", "netns", "del", netns], capture_output=True, timeout=10)
    shutil.rmtree(folder, ignore_errors=True)
    return killed


def remaining(groups: list[int], netns: str) -> list[int]:
    """The processes of the nodes' groups and of the namespace."""
    pids = set(netns_pids(netns)) if netns_exists(netns) else set()
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if os.getpgid(int(proc.name)) in groups:
                    pids.add(int(proc.name))
            except (ProcessLookupError, PermissionError):
                continue
    return sorted(pids)


def signal_group(pgid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def status(folder: Path = STATE_DIR, netns: str = NETNS) -> dict:
    """Whether a cluster is up: its address, and per node (and per web process or proxy) its pid and whether it
    runs."""
    state = State.load(folder)
    if state is None:
        return {"up": False, "netns": netns_exists(netns)}
    nodes = {n.role: {"pid": n.pid, "alive": alive(n.pid), "log": n.log} for n in state.nodes}
    others = {n.role: {"pid": n.pid, "alive": alive(n.pid), "log": n.log} for n in state.processes}
    return {"up": all(n["alive"] for n in (*nodes.values(), *others.values())), "address": state.address,
            "netns": state.netns, "nodes": nodes, "processes": others,
            "processes_in_netns": len(netns_pids(state.netns)) if netns_exists(state.netns) else 0}
