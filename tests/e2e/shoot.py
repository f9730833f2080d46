"""Screenshots of the app's pages in each language and screen size, to look at (not a test).

    python tests/e2e/shoot.py --pages home,explore --langs zh,ru --sizes 1280x720,390x844 --out test-artifacts/shots
    python tests/e2e/shoot.py --url http://127.0.0.1:8501 ...   # an app already running

Without ``--url`` it starts ``streamlit run app.py`` on a free port and stops it at the end. Each page waits until
Streamlit stops running (``--wait`` seconds at most), then the whole page is captured (``--full``) or the screen.
``--query 'cell=lstm&run=1'`` adds to every page's link.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.app_pages import PAGES as APP_PAGES

ROOT = Path(__file__).resolve().parents[2]
PAGES = {p.name: p.url_path for p in APP_PAGES}


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(log: Path) -> tuple[subprocess.Popen, str]:
    """``streamlit run app.py`` on a free localhost port; returns the process and its base URL."""
    import urllib.request

    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.port", str(port),
         "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"],
        cwd=ROOT, stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"{base}/_stcore/health", timeout=2)
            return process, base
        except OSError:
            time.sleep(0.3)
    process.kill()
    raise SystemExit(f"the server did not start; see {log}")


def wait_idle(tab, limit_s: float) -> None:
    """Until Streamlit shows no 'running' indicator for a moment (or ``limit_s``)."""
    deadline, quiet_since = time.monotonic() + limit_s, None
    tab.wait_for_selector("[data-testid='stMainBlockContainer'] h1", timeout=int(limit_s * 1000))
    while time.monotonic() < deadline:
        running = tab.locator("[data-testid='stStatusWidget']").count() > 0
        if running:
            quiet_since = None
        elif quiet_since is None:
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since > 1.5:
            return
        time.sleep(0.3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", default=",".join(PAGES))
    parser.add_argument("--langs", default="en,zh,ru")
    parser.add_argument("--sizes", default="1280x720,390x844")
    parser.add_argument("--out", default="test-artifacts/shots")
    parser.add_argument("--url", default=None)
    parser.add_argument("--query", default="")
    parser.add_argument("--wait", type=float, default=60.0)
    parser.add_argument("--full", action="store_true", help="the whole page, not just the screen")
    args = parser.parse_args()
    out = ROOT / args.out
    out.mkdir(parents=True, exist_ok=True)
    process, base = (None, args.url) if args.url else start_server(out / "server.log")
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                        args=["--no-sandbox", "--disable-gpu"])
            for size in args.sizes.split(","):
                width, height = (int(v) for v in size.split("x"))
                for lang in args.langs.split(","):
                    context = browser.new_context(viewport={"width": width, "height": height},
                                                  locale={"zh": "zh-CN", "ru": "ru-RU"}.get(lang, "en-US"))
                    tab = context.new_page()
                    for page in args.pages.split(","):
                        query = "&".join(q for q in (f"lang={lang}", args.query) if q)
                        tab.goto(f"{base}/{PAGES[page]}?{query}")
                        wait_idle(tab, args.wait)
                        path = out / f"{page}-{lang}-{size}.png"
                        tab.screenshot(path=str(path), full_page=args.full)
                        print(path)
                    context.close()
            browser.close()
    finally:
        if process is not None:
            process.terminate()


if __name__ == "__main__":
    main()
