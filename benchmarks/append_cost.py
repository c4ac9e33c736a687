"""What ``Games.append`` costs the service's process per call (not a test: it prints figures).

Appends ``--appends`` events of the service's shape (a diff message of about 300 B, the
meta updates a command makes, a snapshot every 50th event) to ``--games`` games (after
as many to a first game, to warm up), each game's appends one after the other and the
games concurrently, against a private valkey-server started like the tests'
(``EmbeddedServer``). It prints the process's CPU time (``time.process_time``: user +
system) per append, and the arguments of one append command as redis-py sends them
(``EVALSHA``, the sha and numkeys included), and the store server's own CPU per append
(``INFO cpu``, user + system, over the same window). With ``--listen``, this process also
listens to every game through its fan-out hub (as the service does while a socket is
open on the game), and the clock stops once every event has reached its listener and
every published copy has been read: the figure then includes the fan-out's part.

    python benchmarks/append_cost.py                       # uvloop + hiredis if importable
    PYTHONPATH=benchmarks/noaccel python benchmarks/append_cost.py   # both off
    python benchmarks/append_cost.py --root /tmp/base      # another checkout's store
    python benchmarks/append_cost.py --listen              # and a listener per game
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _event(seq: int) -> bytes:
    """About 300 B, like a stored diff message."""
    return (b'{"type":"diff","seq":%d,"command":{"type":"move","from":"tableau.3","to":'
            b'"foundation.1","count":1},"ops":[{"pile":"tableau.3","op":"pop","n":1},'
            b'{"pile":"foundation.1","op":"push","cards":["7h"]}],"status":"playing",'
            b'"stats":{"moves":%d,"foundation_cards":12,"started_at":"2026-12-01T18:00:00.000Z",'
            b'"finished_at":null,"duration_ms":51000,"hints":0},"at":"2026-12-01T18:00:51.000Z",'
            b'"hash":"0123456789abcdef"}' % (seq, seq))


def _updates(seq: int) -> dict[str, str]:
    """The meta updates of one command (service/domain/game_commands.py ``_append``)."""
    updates = {"status": "playing", "moves": str(seq), "foundation_cards": "12",
               "last_at": "2026-12-01T18:00:51.000Z"}
    if seq == 1:
        updates["started_at"] = "2026-12-01T18:00:51.000Z"
    updates["hash"] = "0123456789abcdef"
    return updates


async def _measure(url: str, args: argparse.Namespace,
                   run: int) -> tuple[float, float, list[int]]:
    from service.settings import Settings
    from service.store import keys
    from service.store.connection import RedisConn
    from service.store.fanout import Hub, Published
    from service.store.games import GameMeta, Games

    settings = Settings(redis_url=url, durability=args.durability)
    redis = RedisConn(settings, url)
    hub = Hub(redis)
    games = Games(redis)
    sizes: list[int] = []
    execute = redis.execute

    async def counting(*call: Any) -> Any:
        if call[0] in ("EVALSHA", "EVAL"):
            sizes.append(len(call))
        return await execute(*call)

    ids = [f"bench-{run}-{i}" for i in range(args.games + 1)]  # the first: warm-up
    meta = GameMeta(variant="klondike", seed=1, owner="p_bench", rules_version="1",
                    created_at=datetime(2026, 12, 1, 18, tzinfo=UTC))
    for game_id in ids:
        await games.create(game_id, meta, ttl_s=3600)
    per_game = args.appends // args.games
    snapshot = b'{"piles":' + b"x" * 2000 + b"}"

    async def play(game_id: str) -> None:
        for seq in range(1, per_game + 1):
            await games.append(game_id, seq - 1, f"{game_id}-c{seq}", _event(seq), _updates(seq),
                               1_209_600, snapshot if seq % 50 == 0 else None, expected_hints=0)

    heard: dict[str, int] = dict.fromkeys(ids, 0)
    done, flushed = asyncio.Event(), asyncio.Event()

    def listener(game_id: str) -> Any:
        def take(item: Any) -> None:
            if isinstance(item, Published) and item.seq == 0:
                flushed.set()
            elif isinstance(item, Published) and item.seq > heard[game_id]:
                heard[game_id] = item.seq
                if item.seq == per_game and all(seq == per_game for seq in heard.values()):
                    done.set()
        return take

    async with contextlib.AsyncExitStack() as listening:
        if args.listen:
            for game_id in ids:
                await listening.enter_async_context(hub.listen(game_id, listener(game_id)))
        redis.execute = counting  # type: ignore[method-assign]
        await play(ids[0])  # warm up (the script cached, the connections open); not counted
        heard[ids[0]] = per_game
        sizes.clear()
        rest = ids[1:]
        store_started = _store_cpu(await execute("INFO", "cpu"))
        started = time.process_time()
        await asyncio.gather(*(play(game_id) for game_id in rest))
        if args.listen:
            await asyncio.wait_for(done.wait(), 30)
            # Every copy published back is read too (one subscriber connection brings
            # them all, in order): a marker after them, waited for.
            sharded = redis.sharded_pubsub()  # a coroutine in older checkouts, or unasked
            if not isinstance(sharded, bool):
                sharded = await sharded
            await execute("SPUBLISH" if sharded else "PUBLISH", keys.game_channel(ids[-1]),
                          b"0 marker")
            await asyncio.wait_for(flushed.wait(), 30)
        spent = time.process_time() - started
        store_spent = _store_cpu(await execute("INFO", "cpu")) - store_started
    await hub.aclose()
    await redis.aclose()
    calls = per_game * len(rest)
    return spent / calls, store_spent / calls, sizes


def _store_cpu(info: dict[str, Any]) -> float:
    """The store server's CPU seconds so far (its main thread and the rest), from INFO cpu."""
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--appends", type=int, default=20_000)
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--durability", default="memory", choices=("memory", "local"))
    parser.add_argument("--listen", action="store_true",
                        help="listen to every game through the fan-out, as a socket would")
    parser.add_argument("--root", type=Path, default=HERE.parent,
                        help="the checkout whose store is measured (e.g. a worktree of main)")
    args = parser.parse_args()
    sys.path.insert(0, str(args.root.resolve()))
    from service.store.embedded import EmbeddedServer

    try:
        import uvloop
    except ImportError:
        uvloop = None  # type: ignore[assignment]
    try:
        import hiredis  # noqa: F401
        has_hiredis = True
    except ImportError:
        has_hiredis = False
    print(f"store: {sys.modules['service.store.embedded'].__file__.rsplit('/', 2)[0]}; "
          f"uvloop {'on' if uvloop else 'off'}, hiredis {'on' if has_hiredis else 'off'}; "
          f"durability {args.durability}; {args.appends} appends to {args.games} games"
          f"{', each with a listener' if args.listen else ''}")
    results, store_results = [], []
    with tempfile.TemporaryDirectory() as data, EmbeddedServer(data) as server:
        for run in range(args.runs):
            coro = _measure(server.url, args, run)
            per_call, store_per_call, sizes = uvloop.run(coro) if uvloop else asyncio.run(coro)
            results.append(per_call)
            store_results.append(store_per_call)
            counts = sorted(set(sizes))
            print(f"run {run + 1}: {per_call * 1e6:.1f} µs of CPU per append, the store "
                  f"{store_per_call * 1e6:.1f} µs; "
                  f"arguments per append: {counts} (mean {statistics.mean(sizes):.1f})")
    print(f"median of {args.runs}: {statistics.median(results) * 1e6:.1f} µs per append, the "
          f"store {statistics.median(store_results) * 1e6:.1f} µs")


if __name__ == "__main__":
    main()
