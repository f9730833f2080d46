"""Settings for the whole test session."""

import json
import os
import resource
import shutil
import sys
import tempfile
import time

import jax
import pytest

# Runs kept for reloads are also written to disk; the tests (and the servers they start) keep theirs apart, in a
# folder made for the session (pytest-xdist's workers inherit it) and removed with it.
_made_runs_dir = "RNNLAB_RUNS_DIR" not in os.environ
if _made_runs_dir:
    os.environ["RNNLAB_RUNS_DIR"] = tempfile.mkdtemp(prefix="rnnlab-test-runs-")
# A server (or AppTest's app) warms nothing ahead: no import or compile in the background of the tests' own. The tests
# of the start-up warm-up set it themselves.
os.environ.setdefault("RNNLAB_WARM", "off")
# Nor do they keep compiled programs on disk (nothing written to the user's cache): the tests of the disk cache, of
# a worker's compile and of the start-up set a folder of their own.
os.environ.setdefault("RNNLAB_JAX_CACHE_DIR", "off")
# The test processes (not the app's own cache, which stays off) keep the programs they compile in one folder for the
# session, shared by the pytest-xdist workers: many test files compile the same programs (the presets' runs, the
# probes), and each file's compiled programs are dropped after it (release_compiled_programs). JAX's public
# configuration, so rnnlab.training.compiled.cache_folder() stays None and no compile goes to a worker process.
# RNNLAB_TEST_JAX_CACHE=off turns it off.
TEST_JAX_CACHE = "RNNLAB_TEST_JAX_CACHE"
_made_test_cache = TEST_JAX_CACHE not in os.environ  # in the first process (pytest-xdist's workers inherit it)
if _made_test_cache:
    os.environ[TEST_JAX_CACHE] = tempfile.mkdtemp(prefix="rnnlab-test-jax-")
# Every program is kept, however short its compile: a suite compiles thousands of small ones, most of them more than
# once. The servers, CLIs and workers the tests start read the same folder through JAX's own environment variables
# (its public configuration; the app's cache_folder() stays None there too); one that sets RNNLAB_JAX_CACHE_DIR to a
# folder of its own (a cold start) uses that folder instead.
if os.environ[TEST_JAX_CACHE].lower() != "off":
    for _flag, _value in {"jax_compilation_cache_dir": os.environ[TEST_JAX_CACHE],
                          "jax_persistent_cache_min_compile_time_secs": 0.0,
                          "jax_persistent_cache_min_entry_size_bytes": 0}.items():
        os.environ[_flag.upper()] = str(_value)
        jax.config.update(_flag, _value)
# A pytest-xdist worker runs each test under execnet's own frames: room for the deep parsing and tracing of some
# tests (the migration corpus, msgpack round trips), which hit Python's default limit of 1,000 there.
sys.setrecursionlimit(max(sys.getrecursionlimit(), 4000))


# Tests that start servers, browsers or a cluster, or that time what they see. Under pytest-xdist (README's test
# command runs two workers) they are one unit of work, run first and one at a time on one worker, so that no two of
# them share the CPU, while the other worker runs the in-process tests; every other test file is a unit of its own
# (its module fixtures and compiled programs built once).
SERVER_TEST_FOLDERS = ("e2e", "on_ray", "load")
SERVER_TEST_FILES = ("test_class_attacks.py", "test_precompile.py")
SERVERS = "servers"


def work_unit(nodeid: str) -> str:
    """The pytest-xdist unit of work of a test: ``servers``, or the test's file."""
    path = nodeid.split("::", 1)[0]
    parts = path.split("/")
    if (len(parts) > 2 and parts[-2] in SERVER_TEST_FOLDERS) or parts[-1] in SERVER_TEST_FILES:
        return SERVERS
    return path


def pytest_xdist_make_scheduler(config, log):
    """pytest-xdist's scheduling by scope, with :func:`work_unit` as the scope."""
    from xdist.scheduler import LoadScopeScheduling

    class ServersApart(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:  # the hook LoadScopeScheduling's subclasses override
            return work_unit(nodeid)

    return ServersApart(config, log)


IN_PROCESS_NICE = 10  # the priority of a worker running in-process tests, below the servers' and browsers'
_yielded = False


def pytest_runtest_setup(item):
    """A pytest-xdist worker that runs an in-process test lowers its priority (every thread it has, and so what they
    start) once: the other worker's servers and browsers wait on what they time, so they get the cores first."""
    global _yielded
    if _yielded or not os.environ.get("PYTEST_XDIST_WORKER") or work_unit(item.nodeid) == SERVERS:
        return
    _yielded = True
    try:
        threads = os.listdir("/proc/self/task")  # Linux: a priority belongs to a thread
    except OSError:
        threads = [str(os.getpid())]
    for thread in threads:
        try:
            os.setpriority(os.PRIO_PROCESS, int(thread), IN_PROCESS_NICE)
        except (OSError, AttributeError):
            pass


def pytest_unconfigure(config):
    """The session's folders of kept runs and of compiled programs go with the process that made them."""
    if _made_runs_dir:
        shutil.rmtree(os.environ["RNNLAB_RUNS_DIR"], ignore_errors=True)
    if _made_test_cache:
        shutil.rmtree(os.environ[TEST_JAX_CACHE], ignore_errors=True)


def pytest_collection_modifyitems(config, items):
    """Tests marked ``gpu`` run only where JAX has an accelerator (tests/gpu/check.sh on a GPU machine), those marked
    ``minutes`` only with RNNLAB_SLOW_TESTS=1. The tests that start servers come first, so that their one long unit
    of work starts at once."""
    items.sort(key=lambda item: work_unit(item.nodeid) != SERVERS)  # stable: each group keeps its order
    no_gpu = pytest.mark.skip(reason="needs an accelerator: JAX runs on the CPU here")
    not_minutes = pytest.mark.skip(reason="takes minutes on its own: RNNLAB_SLOW_TESTS=1 runs it")
    for item in items:
        if jax.default_backend() == "cpu" and item.get_closest_marker("gpu") is not None:
            item.add_marker(no_gpu)
        if os.environ.get("RNNLAB_SLOW_TESTS") != "1" and item.get_closest_marker("minutes") is not None:
            item.add_marker(not_minutes)


CPU_TIMES = "RNNLAB_TEST_CPU_TIMES"


def _cpu_seconds() -> float:
    """CPU seconds of this process (every thread) and of the children it has waited for (servers, CLIs, workers)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """With RNNLAB_TEST_CPU_TIMES=<file>, each test's CPU seconds (set-up, call and tear-down) and wall seconds are
    appended to that file as a JSON line. Under pytest-xdist a worker at a lower priority waits for the CPU, so a
    test's duration says little about what it costs; its CPU seconds do (tests/cpu_times.py sums them by file)."""
    path = os.environ.get(CPU_TIMES)
    if not path:
        yield
        return
    cpu, wall = _cpu_seconds(), time.monotonic()
    yield
    line = {"test": item.nodeid, "cpu_s": round(_cpu_seconds() - cpu, 2), "wall_s": round(time.monotonic() - wall, 2),
            "worker": os.environ.get("PYTEST_XDIST_WORKER", "")}
    with open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")


@pytest.fixture(autouse=True, scope="module")
def release_compiled_programs():
    """After each test module, drop every compiled program. Each XLA:CPU program holds about 20 memory mappings
    and a process may have 65,530 (vm.max_map_count): the whole suite in one process compiles more programs than
    that and crashed inside XLA (a segmentation fault at about 80% of the run)."""
    yield
    jax.clear_caches()


@pytest.fixture(autouse=True)
def forget_shared_runs():
    """Each test starts as on a fresh server: no run or result of another test is shared with it."""
    from rnnlab.server.work.results import RESULTS
    from rnnlab.server.work.shared_runs import RUNS

    RUNS.clear()
    RESULTS.clear()
    yield
    RUNS.clear()
    RESULTS.clear()
