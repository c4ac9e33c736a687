"""The store client's own CPU per command: 100 callers each running an append-sized
``EVALSHA`` through ``RedisConn`` (the automatic pipeline), on a fresh store.

What the service spends on its side of a store round trip, without the WebSocket, the
rules or the store's own CPU: the CPU time of this process (not the wall clock), best of
``--reps`` passes, so a busy machine changes it far less than it changes throughput.
``--roots`` runs each checkout's client in turn (``--rounds`` interleaved), for before and
after figures taken side by side.

    python benchmarks/store_client.py --roots /tmp/before . --rounds 2
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

HERE = Path(__file__).resolve().parent
EVENT = (b'{"type":"diff","seq":12,"command":{"type":"move","from":"tableau3","to":'
         b'"foundation1"},"ops":[{"op":"replace","pile":"tableau3","cards":[]}]}') * 3


async def measure(url: str, callers: int, per_caller: int, reps: int) -> float:
    from service.store.connection import RedisConn, Script
    from tests.live import settings_for_test

    script = Script("redis.call('INCR', KEYS[1]); "
                    "return {0, redis.call('RPUSH', KEYS[2], ARGV[2])}")
    with tempfile.TemporaryDirectory() as data:
        conn = RedisConn(settings_for_test(url, Path(data), instance_id="bench"), url)
        try:

            async def caller(i: int) -> None:
                for _ in range(per_caller):
                    await conn.run(script, [f"g{i}:seq", f"g{i}:log"], [b"\x01" * 40, EVENT])

            await caller(0)  # the script loaded, a connection made
            best = float("inf")
            for _ in range(reps):
                started = time.process_time()
                await asyncio.gather(*(caller(i) for i in range(callers)))
                best = min(best, (time.process_time() - started) / (callers * per_caller))
                await conn.execute("FLUSHDB")
        finally:
            await conn.aclose()
    return best * 1e6


def child(argv: list[str]) -> None:
    url, callers, per_caller, reps = argv[0], int(argv[1]), int(argv[2]), int(argv[3])
    try:
        import uvloop

        print(uvloop.run(measure(url, callers, per_caller, reps)))
    except ImportError:
        print(asyncio.run(measure(url, callers, per_caller, reps)))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--roots", type=Path, nargs="+", default=[HERE.parent])
    parser.add_argument("--callers", type=int, default=100)
    parser.add_argument("--per-caller", type=int, default=50)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    from _harness import load_average, store  # not in a child: it puts this checkout first

    print(f"load average before: {load_average()}", flush=True)
    results: dict[Path, list[float]] = {root.resolve(): [] for root in args.roots}
    with store() as url:
        for _ in range(args.rounds):
            for root in results:
                out = subprocess.run(
                    [sys.executable, __file__, "--child", url, str(args.callers),
                     str(args.per_caller), str(args.reps)],
                    cwd=root, env={**os.environ, "PYTHONPATH": str(root)},
                    capture_output=True, text=True, check=True)
                results[root].append(float(out.stdout.split()[-1]))
                print(f"{root}: {results[root][-1]:.1f} µs CPU per command", flush=True)
    print(f"load average after: {load_average()}")
    for root, figures in results.items():
        print(f"{root}: best {min(figures):.1f} µs, runs "
              + ", ".join(f"{f:.1f}" for f in figures))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:  # the checkout of PYTHONPATH, as a service would run
        sys.path[0] = os.environ["PYTHONPATH"]
        child(sys.argv[2:])
    else:
        main()
