"""What a few pieces of a command's way cost, one checkout against another.

The pieces each command goes through once, timed alone (``time.process_time``: CPU, best
of 7 passes), in a process of their own for each checkout (``--roots``, this checkout by
default), the checkouts in turn, ``--rounds`` times:

- ``deadline``: a command's request deadline (service/domain/deadline.py), entered and
  left around one ``await asyncio.sleep(0)``, less the same block without it (uvloop);
- ``pack``: ``pack_commands`` (service/store/resp.py) of a batch of 20 appends as
  ``Games.append`` sends them, per append;
- ``reader``: ``ReplyReader.feed`` of 20 published events (about 500 B each) as a
  subscriber connection gets them, per event;
- ``now``: ``GameLifetimes.now`` (the time a command records), per call;
- ``apply``: ``Game.apply`` (the rules, the diff, the outcome) over lines of legal commands
  of the four variants (a seeded walk, 46 % undos, as ``ws_load.py``'s), per command;
- ``command``: ``GameCommands.command`` on a cached game, the same lines, with a store that
  answers every append at once (``Games.append`` not run): the rules, the event, its hash
  and time, the meta fields, per command;
- ``decode``: a command message decoded (``decode_client_message``) and its ack encoded;
- ``metrics``: what a command counts (``Metrics.commands.inc``) and observes
  (``Metrics.websocket_ack.observe``), per command;
- ``meta``: a command's meta fields made text (``meta.to_texts``: status, moves, foundation
  cards, last time, hash), per command;
- ``rfc3339``: a time made text (``protocol.fields.rfc3339``), a new millisecond each call
  (a command's time, the first time it is formatted).

    python benchmarks/hot_paths.py
    python benchmarks/hot_paths.py --roots /tmp/before . --rounds 3
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PASSES = 7


def best(fn: Callable[[], object], number: int, per: int = 1) -> float:
    """The fastest of PASSES passes of ``number`` calls, in µs per call / ``per``."""
    times = []
    for _ in range(PASSES):
        started = time.process_time()
        for _ in range(number):
            fn()
        times.append(time.process_time() - started)
    return min(times) / number / per * 1e6


def measure() -> dict[str, float]:
    from service.domain.deadline import deadline
    from service.domain.game_lifetimes import GameLifetimes
    from service.runtime.clock import Clock
    from service.settings import Settings
    from service.store.resp import ReplyReader, pack_commands

    key = "game:{g_abcdefghijklmnop}"
    append = ("EVALSHA", "0" * 40, 5, f"{key}:meta", f"{key}:log", f"{key}:cmds",
              f"{key}:snap", f"{key}:ch", b"\x96" * 70, b"x" * 420)
    batch = [append] * 20
    payload = b"12 " + b"x" * 500
    message = b"*3\r\n$7\r\nmessage\r\n$%d\r\n%s:ch\r\n$%d\r\n%s\r\n" % (
        len(key) + 3, key.encode(), len(payload), payload)
    published = message * 20
    lifetimes = GameLifetimes(Settings(), Clock())
    figures = {
        "pack": best(lambda: pack_commands(batch), 2000, 20),
        "reader": best(lambda: ReplyReader().feed(published), 2000, 20),
        "now": best(lifetimes.now, 50_000),
    }

    async def blocks() -> float:
        async def bounded() -> None:
            async with deadline(5.0, write=True):
                await asyncio.sleep(0)

        async def bare() -> None:
            await asyncio.sleep(0)

        results = {}
        for name, block in (("bounded", bounded), ("bare", bare)):
            times = []
            for _ in range(PASSES):
                started = time.process_time()
                for _ in range(20_000):
                    await block()
                times.append(time.process_time() - started)
            results[name] = min(times) / 20_000 * 1e6
        return results["bounded"] - results["bare"]

    try:
        import uvloop
        figures["deadline"] = uvloop.run(blocks())
    except ImportError:
        figures["deadline"] = asyncio.run(blocks())
    figures.update(command_pieces())
    figures.update(bookkeeping())
    return figures


def bookkeeping() -> dict[str, float]:
    from datetime import UTC, datetime, timedelta

    from protocol.fields import rfc3339
    from service.runtime.metrics import Metrics
    from service.store import meta

    metrics = Metrics()
    count, observe = metrics.commands.inc, metrics.websocket_ack.observe

    def counted() -> None:
        count("klondike", "move")
        observe(0.0042)

    updates = {meta.STATUS: "playing", meta.MOVES: 12, meta.FOUNDATION_CARDS: 3,
               meta.LAST_AT: datetime(2026, 12, 6, 17, 0, 0, 123000, tzinfo=UTC),
               meta.HASH: "x" * 43}
    start = datetime(2026, 12, 6, 17, 0, 0, tzinfo=UTC)
    moments = iter([start + timedelta(milliseconds=i) for i in range(PASSES * 20_000)])
    return {"metrics": best(counted, 50_000),
            "meta": best(lambda: meta.to_texts(updates), 50_000),
            "rfc3339": best(lambda: rfc3339(next(moments)), 20_000)}


def lines(games_a_variant: int = 10, seed: int = 1) -> list[tuple[str, int, list[object]]]:
    """Lines of legal commands (46 % undos) of each variant: (variant, seed, commands)."""
    import random

    from service.engine import UNDO, Game, Status

    rng = random.Random(seed)
    out = []
    for variant in ("gilbert", "shamrocks", "gate", "caprice"):
        for deal in range(1000, 1000 + games_a_variant):
            game, commands = Game.deal(variant, deal), []
            for _ in range(60):
                legal = game.legal_moves() if game.status is Status.PLAYING else []
                if not legal:
                    break
                command = UNDO if game.can_undo and rng.random() < 0.46 else rng.choice(legal)
                game = game.apply(command)[0]
                commands.append(command)
            out.append((variant, deal, commands))
    return out


def command_pieces() -> dict[str, float]:
    from datetime import UTC, datetime

    from protocol.codec import decode_client_message, encode
    from protocol.ws import Ack
    from service.domain import wire
    from service.domain.game_access import GameAccess
    from service.domain.game_cache import GameCache
    from service.domain.game_commands import GameCommands
    from service.domain.game_lifetimes import GameLifetimes
    from service.domain.loaded import Loaded
    from service.engine import Game
    from service.runtime.clock import Clock
    from service.runtime.metrics import Metrics
    from service.settings import Settings
    from service.store.games import GameMeta, Games

    class AtOnce(Games):
        """Appends answered at once: only the command's own work is timed."""

        def __init__(self) -> None:
            pass

        async def append(self, game_id: str, expected_seq: int, *args: object,
                         **kwargs: object) -> int:
            return expected_seq + 1

    played = lines()
    count = sum(len(commands) for _, _, commands in played)
    settings, clock = Settings(), Clock()
    cache = GameCache(100_000)
    commands = GameCommands(AtOnce(), settings, Metrics(), GameAccess(settings, clock),
                            GameLifetimes(settings, clock), cache, None)  # type: ignore[arg-type]
    meta = GameMeta(variant="x", seed=0, owner="p_owner", rules_version="1",
                    created_at=datetime.now(UTC))
    dealt = [(variant, Game.deal(variant, deal), line) for variant, deal, line in played]
    messages = [encode({"type": "command", "command_id": f"c{i}-{j}-abcdef", "expected_seq": j,
                        "command": wire.command(command)})
                for i, (_, _, line) in enumerate(played) for j, command in enumerate(line)]

    def apply_all() -> None:
        for _, game, line in dealt:
            for command in line:
                game = game.apply(command)[0]

    async def command_all() -> None:
        for i, (_, game, line) in enumerate(dealt):
            game_id = f"g_{i}"
            cache.remember(Loaded(game_id, meta, game, 0))
            for j, command in enumerate(line):
                await commands.command(game_id, "p_owner", command, j, f"c{i}-{j}")

    def decode_all() -> None:
        for data in messages:
            message = decode_client_message(data)
            wire.engine_command(message.command)  # type: ignore[union-attr]
            encode(Ack(command_id=message.command_id, seq=1))  # type: ignore[union-attr]

    return {"apply": best(apply_all, 1, count),
            "command": best(lambda: asyncio.run(command_all()), 1, count),
            "decode": best(decode_all, 1, count)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--roots", type=Path, nargs="+", default=[ROOT])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(" ".join(f"{k}={v:.3f}" for k, v in measure().items()))
        return
    with open("/proc/loadavg") as f:
        print(f"load average {' '.join(f.read().split()[:3])}")
    for round_ in range(args.rounds):
        for root in args.roots:
            env = {**os.environ, "PYTHONPATH": str(root.resolve())}
            out = subprocess.run([sys.executable, __file__, "--one"], env=env, check=True,
                                 capture_output=True, text=True, cwd=root).stdout.strip()
            figures = dict(item.split("=") for item in out.split())
            print(f"round {round_ + 1} {root}: " + ", ".join(
                f"{k} {float(v):.2f} µs" for k, v in figures.items()))


if __name__ == "__main__":
    main()
