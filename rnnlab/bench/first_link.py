"""Row 6: a preset link's first chart on a server that has just started, for every preset.

The disk cache of compiled programs is filled first (``python -m rnnlab warm``, timed), as a teacher's machine has
it from the lesson before. Then each sample is a fresh process (``python -m rnnlab.bench.first_link``), a server
that nobody has visited yet, where Streamlit's ``AppTest`` opens the preset's link and the time to its first chart
is taken: on Explore the first chart drawn after a trained call, on Gradient flow the first chart (the probes of the
untrained model). Two cases: the link as the server's very first request (it pays the imports), and the link after
the server's warm-up, which a first visit (the teacher opening the app) starts, has finished. It prints one JSON
line that :func:`run` reads.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from rnnlab.bench.report import RowResult, Target

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "app.py"
TARGET_S = 4.0


class FirstChart(Exception):
    """Raised in the page at its first chart: the script run ends there, the rest is not this row's."""


def _watch_charts(page: str, marks: dict[str, list[float]]) -> None:
    """Record when each trained call ends and stop the script at the first chart that counts."""
    import streamlit as st
    from streamlit.elements.plotly_chart import PlotlyMixin

    from rnnlab.training import train

    run_call = train.Run.run_call

    def timed_call(self, *args, **kwargs):
        progress = run_call(self, *args, **kwargs)
        marks["call"].append(time.perf_counter())
        return progress

    def stopping_at_the_first_chart(draw):
        def drawn(*args, **kwargs):
            shown = draw(*args, **kwargs)
            if page != "explore" or marks["call"]:
                marks["chart"].append(time.perf_counter())
                raise FirstChart()
            return shown
        return drawn

    train.Run.run_call = timed_call  # type: ignore[method-assign]
    # A container's charts, and st.plotly_chart (bound to the main area when Streamlit was imported).
    PlotlyMixin.plotly_chart = stopping_at_the_first_chart(PlotlyMixin.plotly_chart)  # type: ignore[method-assign]
    st.plotly_chart = stopping_at_the_first_chart(st.plotly_chart)


def _warm_up_finished(timeout_s: float = 600) -> None:
    for thread in threading.enumerate():
        if thread.name == "rnnlab-warm-up":
            thread.join(timeout_s)


def measure_here(key: str, warmed: bool) -> dict:
    """In this (fresh) process: preset ``key``'s link, first (or, ``warmed``, after a visit to Home and the warm-up
    it starts); seconds from the link's request to its first chart."""
    from streamlit.testing.v1 import AppTest

    from rnnlab.sharing.presets import PRESETS

    preset = next(p for p in PRESETS if p.key == key)
    marks: dict[str, list[float]] = {"call": [], "chart": []}
    if warmed:
        AppTest.from_file(str(APP), default_timeout=600).run()
        _warm_up_finished()
    _watch_charts(preset.page, marks)
    at = AppTest.from_file(str(APP), default_timeout=600)
    for name, value in preset.query().items():
        at.query_params[name] = value
    at.switch_page(f"app_pages/{preset.page}.py")
    start = time.perf_counter()
    at.run()
    if not marks["chart"]:
        raise RuntimeError(f"{key}: no chart was drawn: {[e.value for e in at.exception]}")
    return {"preset": key, "page": preset.page, "warmed": warmed, "first_chart_s": marks["chart"][0] - start}


def sample(key: str, warmed: bool, env: dict[str, str], timeout_s: float = 900) -> dict:
    """One fresh process: its :func:`measure_here` result."""
    cmd = [sys.executable, "-m", "rnnlab.bench.first_link", key] + (["--warmed"] if warmed else [])
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout_s)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"first-link sample {key} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return json.loads(lines[-1])


def run(quick: bool = False) -> RowResult:
    """Every preset (quick: the first), each link first on a fresh server and after its warm-up."""
    from rnnlab.sharing.presets import PRESETS

    start = time.perf_counter()
    presets = PRESETS[:1] if quick else PRESETS
    with tempfile.TemporaryDirectory(prefix="rnnlab-bench-first-link-") as folder:
        path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
        cache = os.environ.get("RNNLAB_JAX_CACHE_DIR") or str(Path(folder) / "jax")  # given: filled where missing
        env = dict(os.environ, RNNLAB_JAX_CACHE_DIR=cache, RNNLAB_RUNS_DIR=str(Path(folder) / "runs"),
                   RNNLAB_WARM="presets", PYTHONPATH=path)
        began = time.perf_counter()
        if not quick:  # quick: the first request compiles what it needs
            subprocess.run([sys.executable, "-m", "rnnlab", "warm"], cwd=ROOT, env=env, check=True,
                           capture_output=True, timeout=1800)
        filled_s = time.perf_counter() - began
        samples = [sample(p.key, warmed, env) for p in presets for warmed in (False, True)]
    rows = [{"preset": p.key, "page": p.page,
             "first request s": next(s["first_chart_s"] for s in samples if s["preset"] == p.key and not s["warmed"]),
             "after the warm-up s": next(s["first_chart_s"] for s in samples if s["preset"] == p.key and s["warmed"])}
            for p in presets]
    method = (
        "`python -m rnnlab warm` fills a new disk cache of compiled programs first (as the lesson before, or the "
        "teacher, left it). Each sample is a fresh process, a server nobody has visited, with the app's defaults "
        "(`RNNLAB_WARM=presets`): Streamlit's `AppTest` opens the preset's link and the time from that request to "
        "its first chart is taken (Explore: the first chart drawn after a trained call; Gradient flow: its first "
        "chart, the untrained model's probes). *First request*: the link is the server's first visit and pays the "
        "imports (JAX, Flax, Plotly) and loading its programs from the disk cache. *After the warm-up*: a first "
        "visit (Home) started the warm-up, which finished before the link came: the imports and the first presets' "
        "programs are loaded. No browser.")
    notes = [f"filling the disk cache for every preset took {filled_s:.0f} s (once per machine and JAX version; "
             "less when `RNNLAB_JAX_CACHE_DIR` names a folder that holds some already)."]
    worst = max(rows, key=lambda r: r["after the warm-up s"])
    met = worst["after the warm-up s"] < TARGET_S
    targets = [Target("first chart of every preset link, server warmed", f"< {TARGET_S:g} s",
                      f"{worst['after the warm-up s']:.2f} s ({worst['preset']})", met,
                      "" if met else f"{worst['preset']}: its first request took {worst['first request s']:.2f} s")]
    return RowResult("first_link", "6. App: a preset link's first chart on a new server", method,
                     ["preset", "page", "first request s", "after the warm-up s"], rows, notes, targets,
                     time.perf_counter() - start, extra={"samples": samples, "filled_s": filled_s})


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="One sample of the first-link row (prints JSON).")
    parser.add_argument("preset")
    parser.add_argument("--warmed", action="store_true")
    args = parser.parse_args(argv)
    print(json.dumps(measure_here(args.preset, args.warmed)), flush=True)


if __name__ == "__main__":
    main()
