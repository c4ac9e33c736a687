"""What ``Game.apply`` costs per command in the service's mix (not a test: it prints figures).

The games of ``benchmarks/ws_load.py`` (planned with half the commands undos), replayed
command by command from their deals; the best of ``--repeat`` passes by CPU time, per
command (a deal per game included). ``--profile`` prints the top functions by self time.

With ``--edge``, each pass starts from every command's JSON, as the service does, and
turns it into the engine's command the checkout's way before applying it: ``client``, a
command a client sent (decoded with protocol/'s Struct, then converted); ``stored``, a
command read back from the log when a game is loaded (an event's ``command`` field).

    python benchmarks/engine_apply.py --games 200 --repeat 5
    python benchmarks/engine_apply.py --root /tmp/perf_base   # another checkout's engine
    python benchmarks/engine_apply.py --edge client --root /tmp/perf_base
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--undos", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--edge", choices=("none", "client", "stored"), default="none",
                        help="time turning each command's JSON into the engine's command too")
    parser.add_argument(
        "--root",
        type=Path,
        default=HERE.parent,
        help="the checkout whose engine is measured (e.g. a worktree of an older commit)",
    )
    args = parser.parse_args()
    sys.path[:0] = [str(args.root.resolve()), str(HERE)]
    from ws_load import make_plans

    from service.engine import Game  # this checkout's engine, imported first

    print(f"engine: {sys.modules['service.engine'].__file__}")
    client, stored = _edges()
    plans = make_plans(args.games, args.seed, args.undos)
    if args.edge == "none":
        games = [(v, s, [client(c) for c in cs]) for v, s, cs in plans]
        edge = _as_is
    elif args.edge == "client":
        games, edge = plans, client
    else:
        games = [(v, s, [b'{"seq":1,"command":' + c + b"}" for c in cs]) for v, s, cs in plans]
        edge = stored
    n = sum(len(cs) for _, _, cs in games)

    def replay() -> float:
        started = time.process_time()
        for variant, seed, commands in games:
            game = Game.deal(variant, seed)
            for command in commands:
                game = game.apply(edge(command))[0]
        return time.process_time() - started

    replay()
    best = min(replay() for _ in range(args.repeat))
    print(
        f"{n} commands of {len(games)} games: {best / n * 1e6:.2f} µs per apply "
        f"(edge: {args.edge}; best of {args.repeat}, CPU)"
    )
    if args.profile:
        profiler = cProfile.Profile()
        profiler.runcall(replay)
        pstats.Stats(profiler).sort_stats("tottime").print_stats(12)


def _as_is(command: Any) -> Any:
    return command


def _edges() -> tuple[Callable[[bytes], Any], Callable[[bytes], Any]]:
    """The checkout's own ways from a command's JSON to what ``Game.apply`` takes: a client's
    command, and an event read back from the log."""
    from protocol import decode_command
    from service.domain import games, wire

    if hasattr(wire, "engine_command"):  # one conversion, in service/domain/wire.py
        engine_command = wire.engine_command
        return (lambda data: engine_command(decode_command(data))), games.decode_event
    # Before it: the engine parsed a dict itself (Game.apply took one).
    convert, decode_event = games.engine_command, games.decode_event
    return (lambda data: convert(decode_command(data))), (lambda data: decode_event(data).command)


if __name__ == "__main__":
    main()
