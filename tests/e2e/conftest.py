"""Fixtures for the real-browser test: a Streamlit server on a free port and a headless Debian chromium."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
SCREENSHOTS = ARTIFACTS / "screenshots"
STARTUP_TIMEOUT_S = 60.0


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200 and response.read().decode().strip() == "ok"
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _stop(process: subprocess.Popen) -> None:
    """Terminate the server and everything it started (it leads its own process group)."""
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait(timeout=10)


@pytest.fixture(scope="session")
def artifacts() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def chromium_path() -> str:
    """Debian's chromium; skipped when missing, unless RNNLAB_REQUIRE_BROWSER=1 (as in CI) makes that a failure."""
    path = shutil.which("chromium") or shutil.which("/usr/bin/chromium")
    if path is None:
        _unavailable("chromium is not installed (apt-get install chromium); the browser test needs it")
    return path


def _unavailable(reason: str) -> None:
    """Skip, or fail where RNNLAB_REQUIRE_BROWSER=1 (CI) says the browser test must run."""
    if os.environ.get("RNNLAB_REQUIRE_BROWSER") == "1":
        pytest.fail(f"RNNLAB_REQUIRE_BROWSER=1 but {reason}", pytrace=False)
    pytest.skip(reason)


@contextmanager
def streamlit_server(log_path: Path, started: list | None = None) -> Iterator[str]:
    """``streamlit run app.py`` on a free localhost port, logging to ``log_path``; yields its base URL (and
    appends its process to ``started``, for a test that kills it)."""
    port = _free_port()
    command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
               "--server.port", str(port), "--server.address", "127.0.0.1",
               "--browser.gatherUsageStats", "false"]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with open(log_path, "w") as log:
        process = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=env,
                                   start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    if started is not None:
        started.append(process)
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while not _healthy(f"{base}/_stcore/health"):
            if process.poll() is not None or time.monotonic() > deadline:
                why = (f"exited with code {process.returncode}" if process.poll() is not None
                       else f"did not answer {base}/_stcore/health within {STARTUP_TIMEOUT_S:.0f} s")
                pytest.fail(f"The Streamlit server {why}. Its log ({log_path}):\n{log_path.read_text()}",
                            pytrace=False)
            time.sleep(0.25)
        yield base
    finally:
        _stop(process)


@pytest.fixture(scope="session")
def server(artifacts: Path) -> Iterator[str]:
    """The app's server for the whole session (log: test-artifacts/streamlit-server.log)."""
    with streamlit_server(artifacts / "streamlit-server.log") as base:
        yield base


@pytest.fixture
def fresh_server(artifacts: Path, request) -> Iterator[str]:
    """A server of its own that no browser has opened yet (log: test-artifacts/streamlit-server-<test>.log)."""
    with streamlit_server(artifacts / f"streamlit-server-{request.node.name}.log") as base:
        yield base


@pytest.fixture(scope="session")
def browser(chromium_path: str):
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the Python package playwright is not installed (pip install -r requirements-dev.txt)")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path, headless=True,
                                    args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        try:
            yield browser
        finally:
            browser.close()


def _new_tab(browser, base_url: str):
    """A fresh context and tab with a tall viewport (Streamlit scrolls inside its own container)."""
    context = browser.new_context(viewport={"width": 1400, "height": 3000}, base_url=base_url)
    return context, context.new_page()


@pytest.fixture
def page(browser, server: str):
    """A tab on the session's server."""
    context, tab = _new_tab(browser, server)
    try:
        yield tab
    finally:
        context.close()


@pytest.fixture
def fresh_page(browser, fresh_server: str):
    """A tab on a server of its own, which no browser has opened before."""
    context, tab = _new_tab(browser, fresh_server)
    try:
        yield tab
    finally:
        context.close()
