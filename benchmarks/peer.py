"""The service against its peer, boardgame.io, side by side in one run (issue 25).

For each client count and run, two loads, one after the other (their order
alternates from run to run, so neither always gets the machine's quieter half):

- **the peer**: boardgame.io (``benchmarks/peer/``: installed from the npm registry
  by its lock file, ``npm ci`` on first use) serving a game of the service's shape
  (``peer/game.js``) from its own server (Koa and socket.io, in-memory storage,
  nothing durable), driven by a Node load generator (``peer/load.js``): N clients,
  each sending its next move when the server's update for the last one comes back;
- **the service**: ``ws_load.py saturation``'s clients (real games, half of the
  commands undos), each sending its next command when the last one's ack comes
  back, against ``python -m service`` at the given durability and workers, on a
  fresh store that fsyncs as that durability asks.

It prints each run's rate, ack p50/p99 and the CPU the server used, then the
medians and the service's rate over the peer's. See benchmarks/README.md, "The peer".

    python benchmarks/peer.py --clients 100 1000 --runs 3
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import ws_load
from _harness import (
    load_average,
    median,
    process_cpu_s,
    service_processes,
    store,
    tree_cpu_s,
    wait_ready_port,
)

from service.settings import DURABILITY_LEVELS
from service.store.embedded import appendfsync_for
from tests.live import free_port

PEER = Path(__file__).resolve().parent / "peer"


def install_peer() -> None:
    """boardgame.io and socket.io-client as the lock file has them (``npm ci``), once."""
    if (PEER / "node_modules" / "boardgame.io" / "package.json").exists():
        return
    if shutil.which("npm") is None:
        sys.exit("the peer needs Node and npm: install them, then run this again")
    print("installing the peer (npm ci in benchmarks/peer)", flush=True)
    subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=PEER, check=True)


def run_peer(clients: int, duration: float, warmup: float, seed: int,
             moves_per_match: int) -> dict[str, float]:
    """One run of the peer: its server on a free port, the load generator against it."""
    port = free_port()
    env = {**os.environ, "NODE_ENV": "production"}  # boardgame.io logs every move otherwise
    server = subprocess.Popen(["node", "server.js", str(port)], cwd=PEER, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_ready_port(port)
        load = subprocess.Popen(
            ["node", "load.js", "--url", f"http://127.0.0.1:{port}", "--clients", str(clients),
             "--duration", str(duration), "--warmup", str(warmup), "--seed", str(seed),
             "--moves-per-match", str(moves_per_match)],
            cwd=PEER, env=env, stdout=subprocess.PIPE, text=True)
        assert load.stdout is not None
        cpu: dict[str, float] = {}
        started = ended = 0.0
        result: dict[str, Any] = {}
        for line in load.stdout:
            if line.startswith("window start"):
                started = time.perf_counter()
                cpu = {"server": process_cpu_s(server.pid), "loadgen": process_cpu_s(load.pid)}
            elif line.startswith("window end"):
                ended = time.perf_counter()
                cpu = {"server": process_cpu_s(server.pid) - cpu["server"],
                       "loadgen": process_cpu_s(load.pid) - cpu["loadgen"]}
            elif line.startswith("{"):
                result = json.loads(line)
        if load.wait(30) != 0 or not result:
            raise RuntimeError(f"the peer's load generator failed (exit {load.returncode})")
    finally:
        server.terminate()
        server.wait(15)
    elapsed = ended - started
    row = {"commands_per_s": result["moves_per_s"], "ack_p50_ms": result["ack_p50_ms"],
           "ack_p99_ms": result["ack_p99_ms"]}
    cores = {k: v / elapsed for k, v in cpu.items()}
    row["cores_server"] = cores["server"]
    row["server_us_per_command"] = cores["server"] / row["commands_per_s"] * 1e6
    print(f"boardgame.io, {clients} clients (load average {load_average()}): "
          f"{result['moves']} moves = {row['commands_per_s']:,.0f}/s; ack p50 "
          f"{row['ack_p50_ms']:.1f} ms, p99 {row['ack_p99_ms']:.1f} ms; cores used: server "
          f"{cores['server']:.2f}, load generator {cores['loadgen']:.2f} (server CPU per move "
          f"{row['server_us_per_command']:.0f} µs); errors {result['errors']}; the load "
          f"generator's loop late by p99 {result['loadgen_lag_p99_ms']:.1f} ms", flush=True)
    return row


def run_service(redis_url: Any, clients: int, duration: float, warmup: float, seed: int,
                workers: int, durability: str, accel: bool) -> dict[str, float]:
    """One run of ws_load.py saturation against the service."""
    with service_processes(redis_url, 1, accel=accel, workers=workers,
                           SOLITAIRE_RATE_LIMIT_PER_S="100000",
                           SOLITAIRE_RATE_LIMIT_BURST="1000000",
                           SOLITAIRE_DURABILITY=durability) as urls:

        def sample() -> dict[str, float]:
            return {"service": tree_cpu_s(urls.pids[0]),
                    "redis": sum(process_cpu_s(pid) for pid in redis_url.pids),
                    "loadgen": process_cpu_s(os.getpid())}

        ws_load.run_loop(ws_load.wait_daily(urls[0]))  # the daily chooser idle first
        stats = ws_load.run_loop(ws_load.run_saturation(list(urls), clients, duration, warmup,
                                                        seed, sample))
    row = ws_load.report(f"service ({workers} workers, durability {durability}), {clients} "
                         f"clients (load average {load_average()})", stats)
    row["server_us_per_command"] = row.get("service_us_per_command", float("nan"))
    return row


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--duration", type=float, default=8.0, help="seconds measured per run")
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--runs", type=int, default=3, help="runs per size; medians reported")
    parser.add_argument("--durability", choices=DURABILITY_LEVELS, default="local",
                        help="the service's (local, the default, fsyncs every write)")
    parser.add_argument("--workers", type=int, default=2,
                        help="the service's worker processes (its default here: one a core)")
    parser.add_argument("--accel", choices=("on", "off"), default="on",
                        help="the service with uvloop and hiredis (on, as deployed) or without")
    parser.add_argument("--moves-per-match", type=int, default=0,
                        help="the peer's match length (default: the service's games' mean)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--plans", type=int, default=300)
    args = parser.parse_args(argv)
    if args.durability == "replicated":
        parser.error("replicated needs a cluster with replicas: use ws_load.py --cluster")
    install_peer()
    ws_load.PLANS[:] = ws_load.make_plans(args.plans, args.seed, 0.5)
    mean = sum(len(p[2]) for p in ws_load.PLANS) / len(ws_load.PLANS)
    per_match = args.moves_per_match or round(mean)
    print(f"{len(ws_load.PLANS)} service games planned ({mean:.0f} commands each on average); "
          f"the peer's matches: {per_match} moves; load average {load_average()}", flush=True)
    fsync = appendfsync_for(args.durability, "everysec")
    summary = []
    with store(appendfsync=fsync) as redis_url:
        for clients in args.clients:
            rows: dict[str, list[dict[str, float]]] = {"peer": [], "service": []}
            for run in range(args.runs):
                order = ["peer", "service"] if run % 2 == 0 else ["service", "peer"]
                for which in order:
                    if which == "peer":
                        rows["peer"].append(run_peer(clients, args.duration, args.warmup,
                                                     args.seed + run, per_match))
                    else:
                        rows["service"].append(run_service(
                            redis_url, clients, args.duration, args.warmup, args.seed + run,
                            args.workers, args.durability, args.accel == "on"))
            peer = median([r["commands_per_s"] for r in rows["peer"]])
            service = median([r["commands_per_s"] for r in rows["service"]])
            per_run = ", ".join(f"{s['commands_per_s'] / p['commands_per_s']:.2f}"
                                for s, p in zip(rows["service"], rows["peer"], strict=True))
            for name, runs in rows.items():
                summary.append(
                    f"{clients} clients, {name}: {median([r['commands_per_s'] for r in runs]):,.0f}"
                    f"/s, ack p99 {median([r['ack_p99_ms'] for r in runs]):.1f} ms, server CPU "
                    f"per command {median([r['server_us_per_command'] for r in runs]):.0f} µs "
                    f"(median of {len(runs)})")
            summary.append(f"{clients} clients: service / boardgame.io = {service / peer:.2f} "
                           f"(per run: {per_run}); service: {args.workers} workers, durability "
                           f"{args.durability} (appendfsync {fsync}), uvloop and hiredis "
                           f"{args.accel}")
    print(f"load average after: {load_average()}")
    print("\n".join(["", "== summary =="] + summary))


if __name__ == "__main__":
    main()
