"""Where the suite's CPU goes: ``python -m tests.cpu_times FILE`` sums the lines that RNNLAB_TEST_CPU_TIMES=FILE
made pytest write (tests/conftest.py) by test file, most expensive first, with each file's wall seconds and the
share of the whole."""

from __future__ import annotations

import json
import sys
from collections import defaultdict


def by_file(lines: list[dict]) -> list[tuple[str, float, float]]:
    """(file, CPU seconds, wall seconds), most CPU first."""
    cpu: dict[str, float] = defaultdict(float)
    wall: dict[str, float] = defaultdict(float)
    for line in lines:
        path = line["test"].split("::", 1)[0]
        cpu[path] += line["cpu_s"]
        wall[path] += line["wall_s"]
    return sorted(((path, cpu[path], wall[path]) for path in cpu), key=lambda row: -row[1])


def main(path: str, top: int = 40) -> None:
    with open(path, encoding="utf-8") as lines:
        rows = by_file([json.loads(line) for line in lines if line.strip()])
    total = sum(cpu for _, cpu, _ in rows) or 1.0
    print(f"{'CPU s':>8} {'wall s':>8} {'share':>6}  file")
    for path, cpu, wall in rows[:top]:
        print(f"{cpu:8.1f} {wall:8.1f} {cpu / total:6.1%}  {path}")
    print(f"{total:8.1f} CPU seconds in {len(rows)} files")


if __name__ == "__main__":
    main(*sys.argv[1:2])
