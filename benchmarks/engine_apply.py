"""What ``Game.apply`` costs per command in the service's mix (not a test: it prints figures).

The games of ``benchmarks/ws_load.py`` (planned with half the commands undos), replayed
command by command from their deals; the best of ``--repeat`` passes by CPU time, per
command (a deal per game included). ``--profile`` prints the top functions by self time.

    python benchmarks/engine_apply.py --games 200 --repeat 5
    python benchmarks/engine_apply.py --root /tmp/perf_base   # another checkout's engine
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

import msgspec

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
    parser.add_argument(
        "--root",
        type=Path,
        default=HERE.parent,
        help="the checkout whose engine is measured (e.g. a worktree of an older commit)",
    )
    args = parser.parse_args()
    sys.path[:0] = [str(args.root.resolve()), str(HERE)]
    from ws_load import make_plans

    from service.engine import Game, command_from_dict  # this checkout's engine, imported first

    print(f"engine: {sys.modules['service.engine'].__file__}")
    games = [
        (v, s, [command_from_dict(msgspec.json.decode(c)) for c in cs])
        for v, s, cs in make_plans(args.games, args.seed, args.undos)
    ]
    n = sum(len(cs) for _, _, cs in games)

    def replay() -> float:
        started = time.process_time()
        for variant, seed, commands in games:
            game = Game.deal(variant, seed)
            for command in commands:
                game = game.apply(command)[0]
        return time.process_time() - started

    replay()
    best = min(replay() for _ in range(args.repeat))
    print(
        f"{n} commands of {len(games)} games: {best / n * 1e6:.2f} µs per apply "
        f"(best of {args.repeat}, CPU)"
    )
    if args.profile:
        profiler = cProfile.Profile()
        profiler.runcall(replay)
        pstats.Stats(profiler).sort_stats("tottime").print_stats(12)


if __name__ == "__main__":
    main()
