"""``python -m rnnlab.bench``: run the benchmark rows, print a table and write docs/benchmarks.md."""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path

import jax

from rnnlab.bench import ROWS
from rnnlab.bench.machine import machine_info
from rnnlab.bench.report import RowResult, render_markdown, render_text

DEFAULT_OUT = Path(__file__).resolve().parents[2] / "docs" / "benchmarks.md"


def run_row(key: str, quick: bool) -> RowResult:
    """Run one row (``steps``, ``compile``, ``probe``, ``sweep`` or ``app``)."""
    module = "app_latency" if key == "app" else key
    return importlib.import_module(f"rnnlab.bench.{module}").run(quick=quick)


def main(argv: list[str] | None = None) -> list[RowResult]:
    """Parse the flags, run the rows, print the table and write the Markdown report; returns the results."""
    parser = argparse.ArgumentParser(prog="python -m rnnlab.bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="tiny sizes and repeats (seconds, not minutes)")
    parser.add_argument("--out", type=Path, default=None,
                        help=f"Markdown report (default {DEFAULT_OUT}; with --only, none unless given: a partial run "
                             "must not replace the whole report)")
    parser.add_argument("--only", choices=ROWS, action="append", help="run only this row (repeatable)")
    args = parser.parse_args(argv)
    jax.config.update("jax_enable_compilation_cache", False)  # compile times are measured, never read from disk
    start = time.perf_counter()
    machine = machine_info()
    results = []
    for key in args.only or ROWS:
        print(f"running {key}…", file=sys.stderr, flush=True)
        results.append(run_row(key, args.quick))
    total = time.perf_counter() - start
    print(render_text(results, machine))
    command = "python -m rnnlab.bench" + (" --quick" if args.quick else "") + "".join(
        f" --only {k}" for k in args.only or ())
    out = args.out if args.out is not None or args.only else DEFAULT_OUT
    if out is None:
        print(f"\n{total:.0f} s; not written (a partial run: --out FILE writes its report)")
        return results
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_markdown(results, machine, command, total))
    print(f"\nwrote {out} ({total:.0f} s)")
    return results


if __name__ == "__main__":
    main()
