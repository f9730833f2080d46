"""Settings for the whole test session."""

import os
import tempfile

import jax
import pytest

# Runs kept for reloads are also written to disk; the tests (and the servers they start) keep theirs apart.
os.environ.setdefault("RNNLAB_RUNS_DIR", tempfile.mkdtemp(prefix="rnnlab-test-runs-"))
# A server (or AppTest's app) warms nothing ahead: no import or compile in the background of the tests' own. The tests
# of the start-up warm-up set it themselves.
os.environ.setdefault("RNNLAB_WARM", "off")


def pytest_collection_modifyitems(config, items):
    """Tests marked ``gpu`` run only where JAX has an accelerator (tests/gpu/check.sh on a GPU machine)."""
    if jax.default_backend() != "cpu":
        return
    skip = pytest.mark.skip(reason="needs an accelerator: JAX runs on the CPU here")
    for item in items:
        if item.get_closest_marker("gpu") is not None:
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
