"""``python -m rnnlab.bench``: run the benchmark rows, print a table and write docs/benchmarks.md."""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import jax

from rnnlab.bench import ROWS
from rnnlab.bench.machine import machine_info
from rnnlab.bench.report import RowResult, render_markdown, render_text, splice_markdown

DEFAULT_OUT = Path(__file__).resolve().parents[2] / "docs" / "benchmarks.md"


def run_row(key: str, quick: bool) -> RowResult:
    """Run one row (``steps``, ``compile``, ``probe``, ``sweep``, ``app`` or ``first_link``)."""
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
    parser.add_argument("--splice", action="store_true",
                        help="with --only: put the rows run into the existing report (--out, default "
                             f"{DEFAULT_OUT}) in place of theirs, noting when and at what load they ran")
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
    if args.splice and args.only:
        out = args.out if args.out is not None else DEFAULT_OUT
        out.write_text(splice_markdown(out.read_text(), results, splice_note(command + " --splice", machine),
                                       ROWS))
        print(f"\nspliced {', '.join(args.only)} into {out} ({total:.0f} s)")
        return results
    out = args.out if args.out is not None or args.only else DEFAULT_OUT
    if out is None:
        print(f"\n{total:.0f} s; not written (a partial run: --out FILE writes its report, --splice puts it into "
              "the whole report)")
        return results
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_markdown(results, machine, command, total))
    print(f"\nwrote {out} ({total:.0f} s)")
    return results


def splice_note(command: str, machine: dict[str, str]) -> str:
    """What a spliced row says of its run: the command, the date and the load average at its start."""
    when = datetime.now(UTC).strftime("%Y-%m-%d at %H:%M UTC")
    load = machine.get("load average at start (1, 5, 15 min)", "n/a")
    cpu = f"{machine.get('CPU', 'n/a')}, {machine.get('cores', 'n/a')} cores"
    return (f"This row was run on its own (`{command}`) on {when} ({cpu}), load average at its start (1, 5, 15 min) "
            f"{load}; the machine table and the other rows are from the full run above.")


if __name__ == "__main__":
    main()
