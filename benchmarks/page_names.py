"""What reading a leaderboard page's names costs the store: ``DailyStore.profiles`` (one
script over the page's players) against a pipeline of one HMGET per player.

A fresh embedded store, ``--players`` players (a page of 20 and the caller's five);
each way is called ``--calls`` times, twice, alternated. Prints the store's CPU per
call (``INFO cpu`` before and after) and the wall time per call as this process sees it.

    python benchmarks/page_names.py
    python benchmarks/page_names.py --players 25 --calls 3000
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from service.settings import Settings
from service.store import keys
from service.store import meta as fields
from service.store.connection import RedisConn
from service.store.daily import DailyStore
from service.store.embedded import EmbeddedServer


async def store_cpu_s(conn: RedisConn) -> float:
    info = await conn.execute("INFO", "cpu")  # parsed by redis-py
    return float(info["used_cpu_sys"]) + float(info["used_cpu_user"])


async def measure(url: str, players: int, calls: int) -> None:
    conn = RedisConn(Settings(redis_url=url, data_dir=Path(tempfile.gettempdir())), url)
    try:
        store = DailyStore(conn)
        ids = [f"p_{i:06d}" for i in range(players)]
        for pid in ids:
            await conn.execute("HSET", keys.player(pid), fields.PLAYER_NAME, f"Player {pid}",
                               fields.PLAYER_JOINED, "1700000000")

        async def script() -> None:
            await store.profiles(ids)

        async def pipeline() -> None:
            await conn.pipeline([("HMGET", keys.player(pid), fields.PLAYER_NAME,
                                  fields.PLAYER_JOINED) for pid in ids])

        ways: list[tuple[str, Callable[[], Awaitable[None]]]] = [
            ("script", script), ("pipeline", pipeline)]
        for name, way in ways * 2:
            cpu0, t0 = await store_cpu_s(conn), time.perf_counter()
            for _ in range(calls):
                await way()
            wall, cpu = time.perf_counter() - t0, await store_cpu_s(conn) - cpu0
            print(f"{name:9s} {players} players: store {1e6 * cpu / calls:6.1f} µs/call, "
                  f"wall {1e6 * wall / calls:6.1f} µs/call", flush=True)
    finally:
        await conn.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=25)
    parser.add_argument("--calls", type=int, default=3000)
    args = parser.parse_args()
    with EmbeddedServer(Path(tempfile.mkdtemp())) as server:
        asyncio.run(measure(server.url, args.players, args.calls))


if __name__ == "__main__":
    main()
