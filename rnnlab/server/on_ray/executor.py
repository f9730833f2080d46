"""Heavy work on a Ray cluster: ``RNNLAB_EXECUTOR=ray`` with ``RNNLAB_RAY_ADDRESS=HOST:PORT`` (the head's).

:class:`RayExecutor` admits work as the embedded executor does, through state every web process shares (the
cluster's gate: fair shares, memory budget and queue, :mod:`rnnlab.server.on_ray.gate_actor`; results computed once,
:mod:`rnnlab.server.on_ray.registry`) and this process's shared runs, and sends the computing to the cluster as Ray
tasks:

- a run's compiled training call (``jobs.call_job``): the run stays here; its state travels as msgpack bytes to
  :func:`rnnlab.training.calls.compute_call_bytes` on a worker, and the result that comes back is applied here with
  :meth:`~rnnlab.training.train.Run.apply_call` (:func:`call_on_ray`). A pristine run's calls are computed once
  for every web process, and its finished run kept for them (:mod:`rnnlab.server.on_ray.cluster_runs`);
- work of plain arguments and values (probes, sweeps, example looks): the work function itself, on a worker;
  what it reports (:func:`rnnlab.server.work.reporting.report`) comes back to the job that waits for it through the
  cluster's progress actor (:class:`rnnlab.server.on_ray.registry.ProgressActor`), so its progress bar moves;
- a new run (starting one, the untrained model a page probes) is made on a worker and read back here from bytes,
  without computing or compiling anything here; a long first compile runs on a worker (its node then gets the
  configuration's calls); an uploaded file's run is read here, as in embedded mode. Which of these a piece of work
  is, its row of :data:`rnnlab.server.work.jobs.CLUSTER_FORMS` says (:data:`FORMS` gives each its shape here).

Each job's thread here waits for its task with ``ray.wait`` in short steps, so a cancel is seen within
:data:`WAIT_S`: a gentle one cancels the task (Ray raises KeyboardInterrupt in it when its compiled call returns;
a training call is short, so it ends by itself, and no call is submitted after it), and other work
still running :data:`FORCE_AFTER_S` later (a probe's long segment) is killed with its worker process; a forced
cancel kills it at once. A configuration's work goes preferably to the node that computed for it last (it has its
programs compiled; each node keeps its own compile cache): there when it has a free CPU, to another node when it is
busy or gone. A worker or node that dies mid-task is retried by Ray (:data:`MAX_RETRIES`) on another; training
is deterministic, so the history is the same. With no worker node left for
:data:`NO_WORKER_S`, the job fails with :data:`NO_WORKER` (a training run keeps its last step). Ray is imported
only here, and this module only when ``RNNLAB_EXECUTOR=ray``.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import ray
import ray.exceptions
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from rnnlab.config import Config, ConfigError
from rnnlab.server.access.clients import ENV_PROXY_SECRET
from rnnlab.server.on_ray import cluster_runs, gate_actor, registry
from rnnlab.server.on_ray.actors import NAMESPACE
from rnnlab.server.work import jobs, reporting, shared_runs
from rnnlab.server.work import results as kept_results
from rnnlab.server.work.embedded import EmbeddedExecutor, EmbeddedJob
from rnnlab.server.work.executor import ENV_EXECUTOR, Cancelled, Lease, RunLease, Work
from rnnlab.server.work.gate import Gate
from rnnlab.training import calls
from rnnlab.training.train import Run

ENV_ADDRESS = "RNNLAB_RAY_ADDRESS"
CONNECT_TIMEOUT_S = 5.0
WAIT_S = 0.2  # a job's thread checks this often whether it should stop while its task runs
GET_TIMEOUT_S = 60.0
MAX_RETRIES = 3  # a task whose worker died is run again (not a cancelled one, nor one that raised)
FORCE_AFTER_S = 0.5  # work other than a training call still running this long after a cancel is killed
NO_WORKER_S = 2.0  # no worker node alive for this long: the job fails with NO_WORKER
WORKERS_CHECK_S = 1.0  # how often the cluster's nodes are looked up while a task waits
PROGRESS_POLL_S = 0.5  # how often a job asks how far its task on a worker has got
NO_WORKER = ("No Ray worker is available: every worker node of the cluster has stopped, so nothing can be computed "
             "now. What was computed is kept (a run stays at its last step); start again once a worker node has "
             "joined the cluster.")

_connect_lock, _shared_lock = threading.Lock(), threading.Lock()
_shared: RayExecutor | None = None


def worker_env() -> dict[str, str]:
    """What the cluster's workers must share with this process: every ``RNNLAB_*`` setting and ``XLA_FLAGS``
    (part of the compile cache's key); not the proxy's secret, which only web processes check."""
    return {k: v for k, v in os.environ.items()
            if (k.startswith("RNNLAB_") or k == "XLA_FLAGS") and k != ENV_PROXY_SECRET}


def parse_address(address: str) -> tuple[str, int]:
    """``HOST:PORT``; ConfigError saying what is wrong otherwise."""
    host, _, port = address.strip().rpartition(":")
    if not host or not port.isdigit():
        raise ConfigError([f"{ENV_ADDRESS} must be the Ray head's HOST:PORT (e.g. 127.0.0.1:6379); got {address!r}"])
    return host, int(port)


def connect(address: str | None = None) -> None:
    """Join the cluster at ``address`` (default ``$RNNLAB_RAY_ADDRESS``) as a driver, once per process. A missing,
    malformed or unreachable address is one ConfigError that says which and what to do."""
    with _connect_lock:
        if ray.is_initialized():
            return
        address = (address or os.environ.get(ENV_ADDRESS, "")).strip()
        if not address:
            raise ConfigError([f"{ENV_EXECUTOR}=ray needs {ENV_ADDRESS}=HOST:PORT, the address of the Ray "
                               "cluster's head (python -m rnnlab.cluster up starts one on this machine)"])
        host, port = parse_address(address)
        try:
            socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S).close()
        except OSError as e:
            raise ConfigError([f"no Ray cluster answers at {ENV_ADDRESS}={address} ({e.strerror or e}): start its "
                               "head there, or set the variable to the head's HOST:PORT"]) from None
        check_token(address)
        check_auth_required(address)
        ray.init(address=address, namespace=NAMESPACE, log_to_driver=False, logging_level=logging.WARNING,
                 runtime_env={"env_vars": worker_env()})


AUTH_VARIABLES = "RAY_AUTH_MODE=token and RAY_AUTH_TOKEN_PATH (the file holding the cluster's token)"


def token_given() -> bool:
    """Whether Ray's token authentication is on for this process and a token is where Ray looks for it
    (``$RAY_AUTH_TOKEN``, the file ``$RAY_AUTH_TOKEN_PATH``, else ``~/.ray/auth_token``)."""
    if os.environ.get("RAY_AUTH_MODE", "").strip().lower() != "token":
        return False
    if os.environ.get("RAY_AUTH_TOKEN", "").strip():
        return True
    path = os.environ.get("RAY_AUTH_TOKEN_PATH", "").strip() or os.path.expanduser("~/.ray/auth_token")
    try:
        with open(path) as f:
            return bool(f.read().strip())
    except OSError:
        return False


def check_token(address: str) -> None:
    """ConfigError when the cluster at ``address`` refuses this process's Ray token (none, or another), asked once
    with Ray's own GCS client (ray.init would retry for 20 s and then only say that it could not connect)."""
    from ray._raylet import GcsClient  # type: ignore[attr-defined]

    refused = ConfigError([f"the Ray cluster at {ENV_ADDRESS}={address} refused this process: its authentication "
                           f"token is missing or not the cluster's. Set {AUTH_VARIABLES}, as for the cluster's nodes "
                           "(python -m rnnlab.cluster up keeps it in /tmp/rnnlab-cluster/ray_token)"])
    mode = os.environ.get("RAY_AUTH_MODE", "").strip().lower()
    if mode == "token" and not token_given():  # Ray would abort the process
        raise refused
    try:
        GcsClient(address=address).internal_kv_get(b"rnnlab-token-check", None, timeout=CONNECT_TIMEOUT_S)
    except ray.exceptions.AuthenticationError:
        raise refused from None
    except Exception:  # noqa: BLE001 - anything else is ray.init's to report
        return


ENV_NO_AUTH = "RNNLAB_RAY_NO_AUTH"  # =1: join a Ray cluster that lets anyone in (told explicitly)
AUTH_PROBE = """
import sys
from ray._raylet import GcsClient
GcsClient(address=sys.argv[1]).internal_kv_get(b"rnnlab-auth-check", None, timeout=5)
print("let in")
"""


def check_auth_required(address: str) -> None:
    """ConfigError when the cluster at ``address`` lets a process without a token in (Ray's token authentication
    off: anyone who reaches it runs code there, and in this process through the results it unpickles), unless
    ``$RNNLAB_RAY_NO_AUTH=1`` says to join it anyway. Asked once, from a process without this one's token."""
    if os.environ.get(ENV_NO_AUTH, "").strip() == "1":
        return
    tokenless = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}
    try:
        probe = subprocess.run([sys.executable, "-c", AUTH_PROBE, address], env=tokenless, capture_output=True,
                               text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return  # the cluster did not answer: ray.init says so
    if "let in" in probe.stdout:
        raise ConfigError([f"the Ray cluster at {ENV_ADDRESS}={address} lets in any process without a token (Ray's "
                           "token authentication is off), so anyone who reaches it could run code there and in "
                           f"this web process. Start it with {AUTH_VARIABLES} (python -m rnnlab.cluster up does), "
                           f"or set {ENV_NO_AUTH}=1 to join it anyway"])


# ---- what this process's job threads run -------------------------------------------------------------------------
def call(fn: Callable[..., Any], args: tuple, kwargs: dict, token: str | None = None) -> tuple[str, Any]:
    """On a worker: (this node's id, ``fn(*args, **kwargs)``); what it reports goes to the progress actor under
    ``token`` (:class:`rnnlab.server.on_ray.registry.TaskProgress`)."""
    node = ray.get_runtime_context().get_node_id()
    if token is None:
        return node, fn(*args, **kwargs)
    with reporting.reporting_to(registry.TaskProgress(token)):
        return node, fn(*args, **kwargs)


def compute_call_on_node(config: Config, state: bytes, n_active: int) -> tuple[str, bytes]:
    """On a worker: (this node's id, :func:`rnnlab.training.calls.compute_call_bytes`)."""
    return ray.get_runtime_context().get_node_id(), calls.compute_call_bytes(config, state, n_active)


_nodes_lock = threading.Lock()
_compiled_on: dict[tuple, str] = {}  # a configuration's compiled settings -> the node that last computed for it
MAX_REMEMBERED = 256


def config_in(args: tuple) -> Config | None:
    """The configuration a task computes for: the first argument that is one, or has one (a model, a run)."""
    for arg in args:
        config = arg if isinstance(arg, Config) else getattr(arg, "config", None)
        if isinstance(config, Config):
            return config
    return None


def placed(fn: Callable[..., Any], config: Config | None):
    """``fn``'s task, preferring the node that last computed for ``config``'s compiled settings (it has them
    compiled): there when it has a free CPU, elsewhere when it is busy or gone."""
    node = _compiled_on.get(config.static_key()) if config is not None else None
    if node is None:
        return task(fn)
    return task(fn).options(scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=True,
                                                                               _spill_on_unavailable=True))


def remember_node(config: Config | None, node: str) -> None:
    """``node`` has ``config``'s programs compiled now."""
    if config is None:
        return
    with _nodes_lock:
        _compiled_on.pop(config.static_key(), None)
        _compiled_on[config.static_key()] = node
        while len(_compiled_on) > MAX_REMEMBERED:
            del _compiled_on[next(iter(_compiled_on))]


@functools.cache
def task(fn: Callable[..., Any]):
    """``fn`` as a Ray task that is retried when its worker dies."""
    return ray.remote(max_retries=MAX_RETRIES, retry_exceptions=False)(fn)


class NoWorker(RuntimeError):
    """No worker node of the cluster is alive: the work cannot be computed now (:data:`NO_WORKER`)."""


_workers_lock = threading.Lock()
_workers_seen: list[float] = [-1.0, 0.0]  # (when looked up, how many CPU worker nodes were alive)


def workers_alive(max_age_s: float = WORKERS_CHECK_S) -> int:
    """How many nodes with CPUs are alive, as looked up at most ``max_age_s`` ago (one lookup for all jobs)."""
    with _workers_lock:
        now = time.monotonic()
        if _workers_seen[0] < 0 or now - _workers_seen[0] >= max_age_s:
            alive = sum(1 for node in ray.nodes() if node.get("Alive") and node.get("Resources", {}).get("CPU", 0) > 0)
            _workers_seen[:] = [now, float(alive)]
        return int(_workers_seen[1])


def stop_task(ref: ray.ObjectRef, force_after_s: float | None) -> None:
    """Cancel the task of ``ref``; when it is still running ``force_after_s`` later, kill its worker."""
    try:
        ray.cancel(ref)
    except Exception:  # noqa: BLE001 - the cluster may have gone; the job ends all the same
        return
    if force_after_s is None:
        return

    def force() -> None:
        try:
            if not ray.wait([ref], timeout=0)[0]:
                ray.cancel(ref, force=True)
        except Exception:  # noqa: BLE001 - it ended meanwhile, or the cluster went
            pass

    timer = threading.Timer(force_after_s, force)
    timer.daemon = True
    timer.start()


@functools.cache
def progress_actor():
    """The cluster's progress actor (made on first use)."""
    return registry.progress_actor()


def wait_for(ref: ray.ObjectRef, force_after_s: float | None = None, token: str | None = None) -> Any:
    """The task's value, waited for in steps of :data:`WAIT_S`; a stop request cancels it (:class:`Cancelled`;
    killed when still running ``force_after_s`` later), a forced cancel of the job kills its worker, and
    :class:`NoWorker` when no worker node has been alive for :data:`NO_WORKER_S`. What the task reports under
    ``token`` is reported to this job every :data:`PROGRESS_POLL_S`."""
    reporting.on_force(lambda: ray.cancel(ref, force=True))
    finished, alone_since, asked_at = False, None, time.monotonic()
    try:
        while not finished:
            finished = bool(ray.wait([ref], timeout=WAIT_S)[0])
            if finished:
                break
            if reporting.should_stop():
                raise Cancelled("cancelled")
            if token is not None and time.monotonic() - asked_at >= PROGRESS_POLL_S:
                asked_at = time.monotonic()
                latest = registry.progress_of(progress_actor(), token, timeout_s=PROGRESS_POLL_S)
                if latest is not None:
                    reporting.report(*latest)
            if workers_alive():
                alone_since = None
            elif alone_since is None:
                alone_since = time.monotonic()
            elif time.monotonic() - alone_since >= NO_WORKER_S:
                raise NoWorker(NO_WORKER)
        try:
            return ray.get(ref, timeout=GET_TIMEOUT_S)  # ready and local: only its bytes are read
        except ray.exceptions.TaskCancelledError:
            raise Cancelled("cancelled") from None
        except ray.exceptions.RayError as e:  # the task's own exception is raised as it is
            if not isinstance(e, ray.exceptions.RayTaskError) and not workers_alive(0.0):
                raise NoWorker(NO_WORKER) from None
            raise
    finally:
        if not finished:
            stop_task(ref, force_after_s)
        if token is not None:
            try:
                progress_actor().forget.remote(token)
            except Exception:  # noqa: BLE001 - forgotten with age anyway
                pass


def remote(fn: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    """``fn(*args, **kwargs)`` as a task on the cluster (on the node that computed for its configuration last,
    when that node has a free CPU); its value here."""
    config, token = config_in(args), uuid.uuid4().hex
    node, value = wait_for(placed(call, config).remote(fn, args, kwargs, token), force_after_s=FORCE_AFTER_S,
                           token=token)
    remember_node(config, node)
    return value


def call_on_ray(config: Config, state: dict, n_active: int) -> calls.CallResult:
    """:func:`rnnlab.training.calls.compute_call` computed on the cluster from and to msgpack bytes (a drop-in for
    it in :meth:`~rnnlab.training.train.Run.run_call`), preferably on the node that computed the last call of
    this configuration's compiled settings."""
    node, data = wait_for(placed(compute_call_on_node, config).remote(config, calls.state_to_bytes(state), n_active))
    remember_node(config, node)
    return calls.result_from_bytes(config, data)


def untrained_run_on_ray(config: Config) -> bytes:
    """A new run of ``config`` made on a worker (:func:`rnnlab.server.work.jobs.untrained_run_bytes`), as bytes."""
    return remote(jobs.untrained_run_bytes, (config,), {})


def shared_call(work: Work, results: Any) -> Work:
    return dataclasses.replace(work, fn=cluster_runs.shared_call_job,
                               kwargs={**work.kwargs, "results": results, "compute": call_on_ray})


def shared_start(work: Work, results: Any) -> Work:
    return dataclasses.replace(work, fn=cluster_runs.start_run,
                               kwargs={**work.kwargs, "results": results, "make": untrained_run_on_ray})


def made_on_worker(work: Work, results: Any) -> Work:
    return dataclasses.replace(work, fn=cluster_runs.untrained_run,
                               kwargs={**work.kwargs, "make": untrained_run_on_ray})


def in_process(work: Work, results: Any) -> Work:
    return work


def on_worker(work: Work, results: Any) -> Work:
    return dataclasses.replace(work, fn=remote, args=(work.fn, tuple(work.args), dict(work.kwargs)), kwargs={})


# The shape each form of :data:`rnnlab.server.work.jobs.CLUSTER_FORMS` takes here.
FORMS: dict[str, Callable[[Work, Any], Work]] = {jobs.SHARED_CALL: shared_call, jobs.SHARED_START: shared_start,
                                                 jobs.MADE_ON_WORKER: made_on_worker, jobs.IN_PROCESS: in_process}


def on_ray(work: Work, results: Any = None) -> Work:
    """``work`` as this process's job thread runs it in Ray mode (see the module's docstring), in the form its row
    of :data:`rnnlab.server.work.jobs.CLUSTER_FORMS` names (whole on a worker when it has none); with ``results``
    (the results every web process shares), a pristine run's calls and finished runs are shared through it
    (:mod:`rnnlab.server.on_ray.cluster_runs`)."""
    form = jobs.CLUSTER_FORMS.get(work.fn)
    return (on_worker if form is None else FORMS[form])(work, results)


# ---- the executor -------------------------------------------------------------------------------------------------
class RayExecutor:
    """Work admitted by the cluster's gate actor, with results computed once for the whole cluster (its results
    actor) and this process's shared runs, computed on the Ray cluster at ``address`` (default
    ``$RNNLAB_RAY_ADDRESS``). ``gate`` and ``results``: others instead (e.g. this process's)."""

    def __init__(self, address: str | None = None, gate: Gate | None = None,
                 runs: shared_runs.SharedRuns | None = None,
                 results: kept_results.ResultStore | None = None):
        connect(address)
        self.gate = gate if gate is not None else gate_actor.RemoteGate.named()
        self.results = results if results is not None else registry.RemoteResults.named()
        self.local = EmbeddedExecutor(self.gate, runs, self.results)

    def submit(self, work: Work, lease: Lease | None = None) -> EmbeddedJob:
        """The embedded job that admits ``work`` here and runs it as :func:`on_ray` rewrites it (its task waited
        for on the cluster); its ``work`` keeps the label, kind, client and key of ``work``."""
        return self.local.submit(on_ray(work, self.results), lease)

    def lease(self, memory_bytes: int, label: str = "", client: str = "") -> Lease:
        return self.local.lease(memory_bytes, label, client)

    def run_lease(self, run: Run, label: str = "training", client: str = "") -> RunLease:
        return self.local.run_lease(run, label, client)


def shared_executor() -> RayExecutor:
    """This process's executor for ``$RNNLAB_RAY_ADDRESS`` (connected on first use)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = RayExecutor()
    return _shared
