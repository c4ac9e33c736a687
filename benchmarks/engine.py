"""Engine speed: prints figures, asserts nothing (not a test).

    python -m benchmarks.engine            # from the repository root
    python -m benchmarks.engine --runs 7 --seconds 2

Two figures per configuration:

- steps/s: random play, one step = ``game.legal_moves()`` then ``game.apply()`` of one
  of them chosen at random (an ``undo`` when the game is lost; a new deal when the game
  is over or 300 commands long). The median of ``--runs`` runs of ``--seconds`` each.
- replay ms: ``Game.deal()`` then ``game.apply()`` of each command of a fixed 300-command
  log (random legal commands, about one undo in twenty), as the service loads a game with
  no snapshot; the median of ``--replays`` replays.

Each figure is given by the wall clock and by this process's CPU time: on a shared
machine the two differ by what other processes took (the load average is printed
before and after). Goals on the project's 2-core machine: >= 20,000 steps/s per
variant, and a 300-command replay in < 15 ms.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import time
from typing import Any

from service.engine import UNDO, Command, Game, Status

CONFIGS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("gilbert", {}),
    ("shamrocks", {}),
    ("gate", {}),
    ("gate", {"single_card_moves": True}),
    ("caprice", {}),
)
GAME_LENGTH = 300


def random_play(
    variant_id: str, options: dict[str, Any], seconds: float, seed: int
) -> tuple[float, float]:
    """Steps per second of random play, by the wall clock and by CPU time."""
    rng = random.Random(seed)
    deal = seed * 1000
    game = Game.deal(variant_id, deal, options)
    length = steps = 0
    wall, cpu = time.perf_counter, time.process_time
    start_wall, start_cpu = wall(), cpu()
    deadline = start_wall + seconds
    while True:
        for _ in range(100):
            moves = game.legal_moves()
            if moves:
                game = game.apply(rng.choice(moves))[0]
            elif game.status is Status.LOST and game.can_undo:
                game = game.apply(UNDO)[0]
            else:
                length = GAME_LENGTH
            length += 1
            steps += 1
            if length >= GAME_LENGTH or game.status.is_final:
                deal += 1
                game = Game.deal(variant_id, deal, options)
                length = 0
        now = wall()
        if now >= deadline:
            return steps / (now - start_wall), steps / (cpu() - start_cpu)


def replay_log(
    variant_id: str, options: dict[str, Any], seed: int
) -> tuple[int, list[Command]]:
    """A 300-command game (its deal and log): random legal commands, about one undo in twenty."""
    rng = random.Random(seed)
    for deal in range(seed, seed + 1000):
        game = Game.deal(variant_id, deal, options)
        log: list[Command] = []
        while len(log) < GAME_LENGTH and not game.status.is_final:
            moves = game.legal_moves()
            if game.can_undo and (not moves or rng.random() < 0.05):
                command = UNDO
            elif moves:
                command = rng.choice(moves)
            else:
                break
            game = game.apply(command)[0]
            log.append(command)
        if len(log) == GAME_LENGTH:
            return deal, log
    raise RuntimeError(f"no {GAME_LENGTH}-command game found for {variant_id}")


def replay_ms(
    variant_id: str, options: dict[str, Any], deal: int, log: list[Command], runs: int
) -> tuple[float, float]:
    """Median milliseconds of a replay of ``log`` from the deal, by the wall clock and by
    CPU time."""
    walls, cpus = [], []
    for _ in range(runs):
        start_wall, start_cpu = time.perf_counter(), time.process_time()
        game = Game.deal(variant_id, deal, options)
        for command in log:
            game = game.apply(command)[0]
        walls.append((time.perf_counter() - start_wall) * 1000)
        cpus.append((time.process_time() - start_cpu) * 1000)
    return statistics.median(walls), statistics.median(cpus)


def _load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Engine speed: random play and log replay.")
    parser.add_argument("--runs", type=int, default=5, help="random-play runs per variant (median)")
    parser.add_argument("--seconds", type=float, default=2.0, help="length of one random-play run")
    parser.add_argument(
        "--replays", type=int, default=30, help="replays of the log per variant (median)"
    )
    args = parser.parse_args(argv)
    print(
        f"Python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs, "
        f"load average {_load()}; {args.runs} runs x {args.seconds} s, {args.replays} replays"
    )
    print(
        f"{'configuration':<24}{'steps/s wall':>14}{'(min-max)':>18}{'steps/s cpu':>13}"
        f"{'replay ms wall':>16}{'cpu':>7}"
    )
    for variant_id, options in CONFIGS:
        label = variant_id + "".join(f" {k}" for k, v in options.items() if v)
        runs = [random_play(variant_id, options, args.seconds, seed) for seed in range(args.runs)]
        walls = [w for w, _ in runs]
        cpus = [c for _, c in runs]
        deal, log = replay_log(variant_id, options, 0)
        ms_wall, ms_cpu = replay_ms(variant_id, options, deal, log, args.replays)
        spread = f"{min(walls):,.0f}-{max(walls):,.0f}"
        print(
            f"{label:<24}{statistics.median(walls):>14,.0f}{spread:>18}{statistics.median(cpus):>13,.0f}"
            f"{ms_wall:>16.2f}{ms_cpu:>7.2f}"
        )
        sys.stdout.flush()
    print(f"load average after: {_load()}")


if __name__ == "__main__":
    main()
