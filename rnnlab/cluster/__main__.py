"""``python -m rnnlab.cluster up [--workers N] [--web N [--executor ray|embedded]] | down | status``: the local Ray
cluster of :mod:`.local`, and with ``--web`` the web processes and HAProxy of :mod:`.web`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rnnlab.cluster import local, web


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rnnlab.cluster", description=local.__doc__.split("\n")[0])
    parser.add_argument("command", choices=("up", "down", "status"))
    parser.add_argument("--workers", type=int, default=2, help="1-CPU worker nodes (up; default 2)")
    parser.add_argument("--web", type=int, default=0,
                        help="also N web processes behind HAProxy (up; default 0: the Ray cluster only)")
    parser.add_argument("--executor", choices=web.EXECUTORS, default="ray",
                        help="with --web: what runs the heavy work (embedded: no Ray nodes are started)")
    parser.add_argument("--host-port", type=int, default=web.PROXY_PORT,
                        help=f"with --web: HAProxy also listens on this machine's 127.0.0.1 at this port, for a "
                             f"browser (default {web.PROXY_PORT}; 0: only inside the namespace)")
    parser.add_argument("--runs-dir", type=Path, default=None,
                        help="with --web: the web processes' shared RNNLAB_RUNS_DIR (default: in the state folder, "
                             "deleted by down)")
    limits = web.ProxyBounds()
    parser.add_argument("--new-ids-per-minute", type=int, default=limits.new_ids_per_minute,
                        help="with --web: browser ids HAProxy makes for one source address a minute; past that, a "
                             f"browser gets the page without one (default {limits.new_ids_per_minute})")
    parser.add_argument("--connections-per-address", type=int, default=limits.connections,
                        help=f"with --web: TCP connections one source address holds at once (default "
                             f"{limits.connections})")
    parser.add_argument("--new-connections-per-address", type=int, default=limits.new_connections,
                        help=f"with --web: TCP connections one source address opens in 10 s (default "
                             f"{limits.new_connections})")
    parser.add_argument("--sessions-per-address", type=int, default=limits.sessions,
                        help=f"with --web: open tabs (websockets) of one source address at once (default "
                             f"{limits.sessions})")
    args = parser.parse_args(argv)
    try:
        if args.command == "up" and args.web:
            bounds = web.ProxyBounds(args.new_ids_per_minute, args.connections_per_address,
                                     args.new_connections_per_address, args.sessions_per_address)
            state = web.up(args.web, args.workers, args.executor, runs_dir=args.runs_dir,
                           host_port=args.host_port or None, bounds=bounds)
            ray = f"Ray head and {len(state.nodes) - 1} worker nodes at {state.address}, " if state.nodes else ""
            inside = f"{web.proxy_url()} inside network namespace {state.netns!r}"
            where = f"{web.proxy_url(args.host_port)} (also {inside})" if args.host_port else inside
            print(f"up: {ray}{args.web} web processes ({args.executor} executor) behind HAProxy at {where}; "
                  "stop: python -m rnnlab.cluster down")
        elif args.command == "up":
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
