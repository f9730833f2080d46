"""Row 5: from pressing Train to the first chart update in the app, cold (compiling) and warm.

Each cold sample is a fresh subprocess (``python -m rnnlab.bench.app_latency``) with JAX's persistent cache
off, so nothing compiled survives from an earlier run; it prints one JSON line that :func:`run` reads.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

from rnnlab.bench.report import RowResult, Target

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "app.py"
WARM_TARGET_S, COLD_TARGET_S = 1.0, 4.0
# The default preset with steps = chunk, so one press of Train trains exactly one chunk. Its chunk (20, not the
# preset's 25) makes it a static configuration the server's start-up warm-up has not compiled.
QUERY = {"steps": "20", "chunk": "20"}
QUICK_QUERY = {"seq_len": "20", "batch": "16", "features": "16", "steps": "10", "chunk": "10"}


def _click_train(at, marks: dict[str, list[float]]) -> dict[str, float]:
    """Press Train and run the script: seconds to the first compiled call's results and to the end of the script
    run, and how long building the :class:`~rnnlab.training.train.Run` and its first call took."""
    from rnnlab.server.work.shared_runs import RUNS

    RUNS.clear()  # the finished run of the last press would be shared at once: each press trains its own
    button = next(b for b in at.button if b.label == "Train")
    for values in marks.values():
        values.clear()
    start = time.perf_counter()
    button.click().run()
    total = time.perf_counter() - start
    if at.exception:
        raise RuntimeError([e.value for e in at.exception])
    run = at.session_state.run
    if run is None or run.step != run.config.steps or not marks["call_end"] or not marks["run_init"]:
        raise RuntimeError(f"Train did not train one chunk: {run and run.step}, {at.error}")
    if not at.get("plotly_chart"):
        raise RuntimeError("no chart was drawn")
    return {"first_call": marks["call_end"][0] - start, "script": total, "run_init": marks["run_init"][0],
            "call": marks["call"][0]}


def measure_here(quick: bool, warm_repeats: int) -> dict:
    """In this (fresh) process: open the Explore page, press Train once cold and ``warm_repeats`` times warm."""
    import jax

    jax.config.update("jax_enable_compilation_cache", False)
    from streamlit.testing.v1 import AppTest

    from rnnlab.training import train

    marks: dict[str, list[float]] = {"call_end": [], "call": [], "run_init": []}
    run_call, run_init = train.Run.run_call, train.Run.__init__

    def timed_call(self, *args, **kwargs):
        begin = time.perf_counter()
        progress = run_call(self, *args, **kwargs)
        marks["call_end"].append(time.perf_counter())
        marks["call"].append(marks["call_end"][-1] - begin)
        return progress

    def timed_init(self, *args, **kwargs):
        begin = time.perf_counter()
        run_init(self, *args, **kwargs)
        marks["run_init"].append(time.perf_counter() - begin)

    # Record when each call's results are back on the host, and how long a Run and its calls take.
    train.Run.run_call, train.Run.__init__ = timed_call, timed_init  # type: ignore[method-assign]
    at = AppTest.from_file(str(APP), default_timeout=600)
    for key, value in (QUICK_QUERY if quick else QUERY).items():
        at.query_params[key] = value
    at.switch_page("app_pages/explore.py")
    start = time.perf_counter()
    at.run()
    page_open = time.perf_counter() - start
    if at.exception:
        raise RuntimeError([e.value for e in at.exception])
    for thread in threading.enumerate():  # the server's start-up compile of the default preset
        if thread.name == "rnnlab-warm-up":
            thread.join()
    cold = _click_train(at, marks)
    warm = [_click_train(at, marks) for _ in range(warm_repeats)]
    return {"page_open": page_open, "cold": cold, "warm": warm}


def cold_sample(quick: bool, warm_repeats: int, timeout_s: float = 600) -> dict:
    """One fresh subprocess (persistent compilation cache off): its :func:`measure_here` result."""
    env = dict(os.environ, RNNLAB_JAX_CACHE_DIR="off", JAX_ENABLE_COMPILATION_CACHE="false",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    cmd = [sys.executable, "-m", "rnnlab.bench.app_latency", "--warm", str(warm_repeats)]
    cmd += ["--quick"] if quick else []
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout_s)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"app latency subprocess failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return json.loads(lines[-1])


def run(quick: bool = False) -> RowResult:
    """Cold: the first Train press in fresh processes; warm: later presses in the same session."""
    start = time.perf_counter()
    processes, warm_repeats = (1, 2) if quick else (2, 3)
    samples = [cold_sample(quick, warm_repeats) for _ in range(processes)]
    cold = [s["cold"] for s in samples]
    warm = [w for s in samples for w in s["warm"]]
    med = lambda xs, key: statistics.median(x[key] for x in xs)  # noqa: E731
    rows = [{"press": press, "Run() s": med(xs, "run_init"), "first call s": med(xs, "call"),
             "to first call s": med(xs, "first_call"), "to end of script run s": med(xs, "script"),
             "samples": len(xs)} for press, xs in (("cold (compiling)", cold), ("warm (compiled)", warm))]
    config = ", ".join(f"{k}={v}" for k, v in (QUICK_QUERY if quick else QUERY).items())
    method = (
        "Streamlit's `AppTest` runs `app.py` in a fresh subprocess with JAX's persistent compilation cache off "
        f"(`RNNLAB_JAX_CACHE_DIR=off`, `jax_enable_compilation_cache=False`), opens the Explore page with "
        f"`{config}` (the default preset otherwise; steps = chunk, so one press trains one chunk, and chunk 20 "
        "is not the preset the server compiles at start-up) and waits for that start-up compile to finish. "
        "Then it presses Train: the first press compiles (cold), later presses start a new run of the same "
        "configuration (warm; the server's shared runs are forgotten before each press, so that each press "
        "trains instead of receiving the finished run). `to first call s`: from the click to the first compiled "
        "call's results on the host, "
        "timed inside `Run.run_call`; the page draws its charts right after. `Run() s`: building the run "
        "(its `init` and `evaluate`, compiled on the cold press); `first call s`: `Run.run_call` "
        "(compiling `train_steps` on the cold press). `to end of script run s`: until "
        "the script run the click started has finished, including the rerun that redraws the buttons and the "
        "downloads (an upper bound for the first chart update). No browser: rendering in the browser is not "
        "included.")
    notes = [f"{processes} fresh processes (cold, median of their first presses) with {warm_repeats} warm presses "
             f"each (median of all); page open took {statistics.median(s['page_open'] for s in samples):.1f} s."]
    targets = []
    for label, row, goal in (("first chart update, warm", rows[1], WARM_TARGET_S),
                             ("first chart update, cold", rows[0], COLD_TARGET_S)):
        value = row["to end of script run s"]
        met = value < goal
        why = "" if met else (f"{row['to first call s']:.2f} s to the first call's results: Run() "
                              f"{row['Run() s']:.2f} s + first call {row['first call s']:.2f} s"
                              + (" (compiling init + evaluate, then train_steps; the warm call takes "
                                 f"{rows[1]['first call s']:.2f} s)" if "cold" in label else ""))
        targets.append(Target(label, f"< {goal:g} s", f"{value:.2f} s (script run)", met, why))
    return RowResult("app", "5. App: Train to first chart", method,
                     ["press", "Run() s", "first call s", "to first call s", "to end of script run s",
                      "samples"], rows, notes, targets,
                     time.perf_counter() - start, extra={"samples": samples})


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="One cold sample of the app latency row (prints JSON).")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--warm", type=int, default=3)
    args = parser.parse_args(argv)
    print(json.dumps(measure_here(args.quick, args.warm)), flush=True)


if __name__ == "__main__":
    main()
