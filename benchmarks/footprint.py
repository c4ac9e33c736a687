"""One instance's memory: at rest, with players and games made, and before and after a
burst of sockets (issue 25).

Starts ``python -m service`` as deployed: its default settings (the workers one a core,
the embedded store, the solver pools), but for the per-address limits, lifted because
every client here comes from one address, and the daily secret, ``--daily-secret`` with
a fixed default: the service would otherwise generate one into its (temporary) data
folder on every run, so each run would deal other daily deals, and the at-rest figure
would move with them (on some deals a solver process is still up 10 s after the choice).
With the same secret, runs on the same day choose the same daily deals and compare;
the day itself still picks them. Then, for every process of the instance (the
supervisor, its workers, their solver processes, the store), its RSS and its PSS (the
pages it shares with others, such as the code of the interpreter, counted once across
them), at each stage:

1. at rest: ready, today's and tomorrow's daily deals chosen, ``--settle`` seconds idle;
2. ``--games`` games made (one player for 50 games), before the first socket;
3. ``--sockets`` WebSockets open on those games (hello, synced), the peak;
4. the same sockets closed, ``--after`` seconds later: what the workers gave back
   (``--bursts 2``: twice, to tell memory kept for reuse from memory lost).

    python benchmarks/footprint.py --games 1000 --sockets 10000
    python benchmarks/footprint.py --root /path/to/other/checkout   # another commit's
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
from _harness import LIFTED_PER_ADDRESS_LIMITS, ROOT, load_average, python_path, wait_ready
from idle_connections import make_games, raise_nofile
from ws_load import wait_daily

from tests.live import free_port

MIB = 1024 * 1024
DAILY_SECRET = "bench-footprint-daily-secret-0123456789"


def tree(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo.extend(int(c) for c in f.read().split())
        except OSError:
            continue
    return out


def memory(pid: int) -> tuple[str, int, int]:
    """A process's short name, RSS and PSS in bytes (0 for a process gone meanwhile)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
        rss = pss = 0
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Rss:"):
                    rss = int(line.split()[1]) * 1024
                elif line.startswith("Pss:"):
                    pss = int(line.split()[1]) * 1024
    except OSError:
        return "gone", 0, 0
    text = " ".join(a.decode(errors="replace") for a in argv if a)
    if "valkey" in text or "redis-server" in text:
        name = "store"
    elif "resource_tracker" in text:
        name = "resource tracker"
    elif "multiprocessing" in text:
        name = "solver process"
    elif "SOLITAIRE_WORKER_OF" in _environ(pid):
        name = "worker"
    elif "-m service" in text:
        name = "supervisor"
    else:
        name = text[:40]
    return name, rss, pss


def _environ(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return f.read().decode(errors="replace")
    except OSError:
        return ""


def heap_kinds(pid: int) -> str:
    """Where a worker's anonymous memory is: glibc's heap (what ``malloc_trim`` can give
    back), Python's own allocator's arenas (1 MiB mappings, given back only when every
    object in them is gone) and other anonymous mappings; RSS in MiB.

    The kernel shows arenas mapped side by side as one mapping, so every anonymous mapping
    whose size is a whole number of MiB counts as arenas. A thread's stack (8 MiB) counts
    there too, but only its touched pages, a few KiB each."""
    heap = arenas = other = 0
    name, size = "", 0
    try:
        with open(f"/proc/{pid}/smaps") as f:
            for line in f:
                head = line.split()
                if "-" in head[0] and len(head) >= 5:  # a mapping's first line
                    start, end = (int(x, 16) for x in head[0].split("-"))
                    size, name = end - start, head[5] if len(head) > 5 else ""
                elif head[0] == "Rss:":
                    rss = int(head[1]) * 1024
                    if name == "[heap]":
                        heap += rss
                    elif not name and size % MIB == 0:
                        arenas += rss
                    elif not name:
                        other += rss
    except OSError:
        return "gone"
    return (f"heap {heap / MIB:.0f}, Python arenas {arenas / MIB:.0f}, other anonymous "
            f"{other / MIB:.0f}")


def snapshot(stage: str, pid: int) -> dict[str, Any]:
    """Print and return the instance's memory now, by process."""
    rows = [memory(p) for p in tree(pid)]
    rows = [r for r in rows if r[0] != "gone"]
    total_rss = sum(r[1] for r in rows)
    total_pss = sum(r[2] for r in rows)
    workers = [r for r in rows if r[0] in ("worker", "supervisor")]
    by_kind: dict[str, list[int]] = {}
    for name, rss, _ in rows:
        by_kind.setdefault(name, []).append(rss)
    kinds = "; ".join(f"{len(v)} {k} {', '.join(f'{x / MIB:.0f}' for x in v)}"
                      for k, v in by_kind.items())
    print(f"{stage}: {len(rows)} processes, RSS {total_rss / MIB:.0f} MiB, PSS "
          f"{total_pss / MIB:.0f} MiB ({kinds} MiB RSS); load average {load_average()}",
          flush=True)
    for p in tree(pid):
        if memory(p)[0] == "worker":
            print(f"  worker {p}: {heap_kinds(p)} MiB", flush=True)
    return {"stage": stage, "processes": len(rows), "rss_mib": total_rss / MIB,
            "pss_mib": total_pss / MIB,
            "workers_rss_mib": sum(r[1] for r in workers if r[0] == "worker") / MIB}


async def burst(base: str, game_ids: list[str], sockets: int, pid: int) -> dict[str, Any]:
    """Open ``sockets`` sockets over the games (each says hello and waits for synced), take
    the peak, and close them all."""
    opened: list[aiohttp.ClientWebSocketResponse] = []
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:

        async def one(i: int) -> None:
            ws = await session.ws_connect(f"{base}/v1/games/{game_ids[i % len(game_ids)]}/ws",
                                          compress=0, max_msg_size=0)
            await ws.send_str('{"type":"hello"}')
            while True:
                msg = await ws.receive()
                if msg.type is not aiohttp.WSMsgType.TEXT:
                    raise RuntimeError(f"socket {i} closed before synced: {msg}")
                if '"synced"' in msg.data:
                    break
            opened.append(ws)

        for start in range(0, sockets, 250):
            await asyncio.gather(*(one(i) for i in range(start, min(sockets, start + 250))))
        await asyncio.sleep(2.0)
        peak = snapshot(f"{sockets} sockets open", pid)
        for start in range(0, len(opened), 500):
            await asyncio.gather(*(ws.close() for ws in opened[start:start + 500]))
    return peak


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--sockets", type=int, default=10_000)
    parser.add_argument("--settle", type=float, default=10.0,
                        help="seconds idle before the at-rest figure")
    parser.add_argument("--after", type=float, default=15.0,
                        help="seconds after the sockets close before the last figure")
    parser.add_argument("--bursts", type=int, default=1,
                        help="bursts of sockets, one after the other (a second one tells "
                             "memory kept for reuse from memory lost)")
    parser.add_argument("--root", type=Path, default=ROOT,
                        help="the checkout whose service runs (another commit's)")
    parser.add_argument("--daily-secret", default=DAILY_SECRET,
                        help="the service's SOLITAIRE_DAILY_SECRET (fixed by default, so that "
                             "runs on one day deal the same daily deals)")
    parser.add_argument("--env", nargs="*", default=[],
                        help="NAME=VALUE for the service's environment (e.g. MALLOC_ARENA_MAX=2)")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    raise_nofile()
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="bench-footprint-") as data:
        env = {**os.environ, "SOLITAIRE_PORT": str(port), "SOLITAIRE_DATA_DIR": data,
               "SOLITAIRE_LOG_LEVEL": "WARNING", "PYTHONPATH": python_path(True, root),
               "SOLITAIRE_DAILY_SECRET": args.daily_secret,
               **LIFTED_PER_ADDRESS_LIMITS, "SOLITAIRE_RATE_LIMIT_PER_S": "100000",
               "SOLITAIRE_RATE_LIMIT_BURST": "1000000",
               **dict(item.split("=", 1) for item in args.env)}
        env.pop("REDIS_URL", None)  # the embedded store, as deployed by default
        proc = subprocess.Popen([sys.executable, "-m", "service"], cwd=root, env=env)
        base = f"http://127.0.0.1:{port}"
        try:
            wait_ready(base, timeout_s=120)
            asyncio.run(wait_daily(base))
            time.sleep(args.settle)
            rows = [snapshot("at rest", proc.pid)]
            games = asyncio.run(make_games(base, args.games))
            time.sleep(2.0)
            rows.append(snapshot(f"{args.games} games made", proc.pid))
            for i in range(args.bursts if args.sockets else 0):
                rows.append(asyncio.run(burst(base, [g for g, _ in games], args.sockets,
                                              proc.pid)))
                time.sleep(args.after)
                rows.append(snapshot(f"{args.after:g} s after the sockets closed (burst {i + 1})",
                                     proc.pid))
        finally:
            proc.terminate()
            proc.wait(30)
    print("\n== summary ==")
    for row in rows:
        print(f"{row['stage']}: {row['processes']} processes, RSS {row['rss_mib']:.0f} MiB "
              f"(the workers {row['workers_rss_mib']:.0f}), PSS {row['pss_mib']:.0f} MiB")


if __name__ == "__main__":
    main()
