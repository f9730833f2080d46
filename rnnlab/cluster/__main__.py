"""``python -m rnnlab.cluster up [--workers N] | down | status``: the local Ray cluster of :mod:`.local`."""

from __future__ import annotations

import argparse
import json
import sys

from rnnlab.cluster import local


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rnnlab.cluster", description=local.__doc__.split("\n")[0])
    parser.add_argument("command", choices=("up", "down", "status"))
    parser.add_argument("--workers", type=int, default=2, help="1-CPU worker nodes (up; default 2)")
    args = parser.parse_args(argv)
    try:
        if args.command == "up":
            state = local.up(workers=args.workers)
            print(f"up: head and {len(state.nodes) - 1} worker nodes at {state.address} in network namespace "
                  f"{state.netns!r}; drivers run inside it: ip netns exec {state.netns} python ...")
        elif args.command == "down":
            killed = local.down()
            print("down" + (f" (killed {len(killed)} that did not stop on SIGTERM)" if killed else ""))
        else:
            print(json.dumps(local.status(), indent=1))
    except local.ClusterError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
