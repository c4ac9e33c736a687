"""Hints as players feel them: how many winnable deals a bot wins by always playing the
service's hint, against a bot that always plays the first legal move.

    python benchmarks/hint_quality.py --deals 200 --configs gilbert shamrocks

The deals: the first ``--deals`` seeds that the full-information solver wins in the
winnability tables (``benchmarks/data/winnability-<config>.csv``, or ``--data DIR``), so
the full-information win rate on them is 100%. Each is played from the deal by the two
bots: ``hint`` asks ``service.solver.suggest`` with the service's default settings (the
same samples, budget per sample, sampling seed of the view and views shown before as
service/domain/hints.py: its job, service/domain/hint_job.py, gives ``suggest`` the same
``shown``, from a rebuild this bot does not need) and plays its command; ``first`` plays
``Game.legal_moves()[0]``. A game ends won, lost, with no command left to suggest,
or after ``--max-commands`` commands (Gilbert's draws never run out).
Prints each bot's win rate and the hints' CPU time in this process (median,
p95: what a busy machine moves little; the service's own answer times are
benchmarks/hint_latency.py's), and writes them
to ``benchmarks/data/hint-quality.csv`` (``--data``), which ``winnability.py report``
puts in docs/winnability.md. Not a test: it prints figures.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from winnability import CONFIGS, DATA, read_rows  # noqa: E402

from service.domain import wire  # noqa: E402
from service.domain.hints import view_seed  # noqa: E402
from service.engine import Game, Status  # noqa: E402
from service.settings import Settings  # noqa: E402
from service.solver import Budget, native, seen_stock, suggest  # noqa: E402
from service.solver.hint import history  # noqa: E402

HINT_COLUMNS = ["config", "deals", "hint_won", "first_won", "hint_ms_median", "hint_ms_p95",
                "samples", "sample_nodes"]


def read_hint_rows(path: Path) -> list[dict[str, str]]:
    if not path.exists():
        return []
    with path.open() as f:
        return list(csv.DictReader(f))


def play(game: Game, bot: str, settings: Settings, max_commands: int,
         hint_times: list[float]) -> bool:
    # The time cap in CPU seconds of this process: on this shared machine a wall-clock cap
    # would cut samples short by what else runs (the service counts wall-clock time).
    budget = Budget(settings.hint_sample_nodes, settings.hint_sample_s, time.process_time)
    for _ in range(max_commands):
        if game.status is not Status.PLAYING:
            break
        moves = game.legal_moves()
        if not moves:
            break
        if bot == "first":
            command = moves[0]
        else:
            variant, options = game.variant.id, dict(game.variant.options)
            piles = game.public_piles()
            stock = seen_stock(game)  # as service/domain/hints.py: Gilbert's stock once seen
            known = {"stock": list(stock)} if stock is not None else None
            began = time.process_time()
            result = suggest(variant, options, piles, samples=settings.hint_samples,
                             budget_per_sample=budget, known=known,
                             rng_seed=view_seed(variant, options, piles, known),
                             shown=history(game.position))
            hint_times.append(time.process_time() - began)
            if result.command is None:
                break
            command = wire.engine_command(wire.command_of(result.command))
        game = game.apply(command)[0]
    return game.status is Status.WON


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=200)
    parser.add_argument("--configs", nargs="*", default=list(CONFIGS))
    parser.add_argument("--max-commands", type=int, default=600)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--samples", type=int, help="instead of the default hint_samples")
    parser.add_argument("--nodes", type=int, help="instead of the default hint_sample_nodes")
    parser.add_argument("--out", type=Path, help="the CSV to write (default DATA/hint-quality.csv)")
    parser.add_argument("--stop-at", type=float,
                        help="a Unix time: start no deal after it (the row says the deals played)")
    parser.add_argument("--skip", type=int, default=0,
                        help="leave out the first SKIP won seeds (to run a config in parts)")
    args = parser.parse_args()
    settings = Settings()
    if args.samples:
        settings = dataclasses.replace(settings, hint_samples=args.samples)
    if args.nodes:
        settings = dataclasses.replace(settings, hint_sample_nodes=args.nodes)
    print(f"native core: {native.AVAILABLE}; hints: {settings.hint_samples} samples of "
          f"{settings.hint_sample_nodes:,} positions ({settings.hint_sample_s} s at most)")
    print("| game | deals (won with every card known) | hint bot | first-move bot | "
          "full information | hint time median / p95 |")
    print("|---|---|---|---|---|---|")
    out = args.out or args.data / "hint-quality.csv"
    rows = {r["config"]: r for r in read_hint_rows(out)}
    for config in args.configs:
        variant, options = CONFIGS[config]
        seeds = [r["seed"] for r in read_rows(config, args.data) if r["result"] == "won"]
        seeds = sorted(seeds)[args.skip:args.skip + args.deals]
        times: list[float] = []
        wins = {"hint": 0, "first": 0}
        n = 0
        for seed in seeds:
            if args.stop_at and time.time() > args.stop_at:
                break
            for bot in wins:
                wins[bot] += play(Game.deal(variant, seed, options), bot, settings,
                                  args.max_commands, times)
            n += 1
            # Written after each deal: a run stopped early still says what it played.
            rows[config] = row(config, n, wins, times, settings)
            write(out, rows)
        if n:
            r = rows[config]
            print(f"| {config} | {n} | {wins['hint'] / n:.1%} | {wins['first'] / n:.1%} | "
                  f"100% | {r['hint_ms_median']} / {r['hint_ms_p95']} ms |", flush=True)


def row(config: str, n: int, wins: dict[str, int], times: list[float],
        settings: Settings) -> dict[str, object]:
    ordered = sorted(times) or [0.0]
    p95 = ordered[int(0.95 * (len(ordered) - 1))]
    return {"config": config, "deals": n, "hint_won": wins["hint"], "first_won": wins["first"],
            "hint_ms_median": round(statistics.median(ordered) * 1000),
            "hint_ms_p95": round(p95 * 1000), "samples": settings.hint_samples,
            "sample_nodes": settings.hint_sample_nodes}


def write(out: Path, rows: dict[str, dict[str, object]]) -> None:
    with out.open("w", newline="") as f:
        writer = csv.DictWriter(f, HINT_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows[c] for c in CONFIGS if c in rows)

if __name__ == "__main__":
    main()
