"""Settings for the whole test session."""

import os
import tempfile
from pathlib import Path

import jax
import pytest

# Runs kept for reloads are also written to disk; the tests (and the servers they start) keep theirs apart.
os.environ.setdefault("RNNLAB_RUNS_DIR", tempfile.mkdtemp(prefix="rnnlab-test-runs-"))
# A server (or AppTest's app) warms nothing ahead: no import or compile in the background of the tests' own. The tests
# of the start-up warm-up set it themselves.
os.environ.setdefault("RNNLAB_WARM", "off")


# Tests that start servers, browsers or a cluster, or that time what they see: under pytest-xdist (README's test
# command runs two workers) they all run in one worker, one at a time, so that no two of them share the CPU, while
# the other worker runs the in-process tests; every other test file stays whole on one worker (its module fixtures
# and compiled programs built once).
SERVER_TEST_FOLDERS = ("e2e", "on_ray", "load")
SERVER_TEST_FILES = ("test_class_attacks.py", "test_precompile.py", "test_cold_start.py")


def _xdist_group(item) -> str:
    path = Path(str(item.fspath))
    folder = path.parent.name
    if folder in SERVER_TEST_FOLDERS or path.name in SERVER_TEST_FILES or item.get_closest_marker("e2e"):
        return "servers"
    return f"{folder}/{path.name}"


def pytest_collection_modifyitems(config, items):
    """Tests marked ``gpu`` run only where JAX has an accelerator (tests/gpu/check.sh on a GPU machine); each test
    gets its pytest-xdist group."""
    skip = pytest.mark.skip(reason="needs an accelerator: JAX runs on the CPU here")
    for item in items:
        item.add_marker(pytest.mark.xdist_group(_xdist_group(item)))
        if jax.default_backend() == "cpu" and item.get_closest_marker("gpu") is not None:
            item.add_marker(skip)


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
    from rnnlab.server.results import RESULTS
    from rnnlab.server.shared_runs import RUNS

    RUNS.clear()
    RESULTS.clear()
    yield
    RUNS.clear()
    RESULTS.clear()
