"""What the winnability tables' unknown deals are like: for the first unknown deals of
each configuration (from its data file), solve again with a larger node budget and
print the answer and how far the search got (the most cards it put on the
foundations, and, where cards are dealt face down, the fewest still face down).

    python benchmarks/unknowns.py --configs gilbert shamrocks gate-single_card_moves \\
        --deals 6 --nodes 1000000

A deal that stays unknown with its search stuck far from a win (few cards up, many
still face down) looks lost, its proof needing the whole reachable game; one that
is won with more positions was winnable, the budget too small for it. Not a test:
it prints figures. The seconds are CPU seconds (``--seconds``, roomy by default, so
that the node budget decides). The search is the pure-Python reference (the native core
answers the same but never calls the rules' ``play``, which this script watches), so a
million positions take about half a minute to a minute.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from winnability import CONFIGS, read_rows  # noqa: E402

from service.engine import Game  # noqa: E402
from service.solver import Budget  # noqa: E402
from service.solver import native as core  # noqa: E402
from service.solver.search import search  # noqa: E402
from service.solver.variants import rules_for  # noqa: E402


def probe(config: str, seed: int, nodes: int, seconds: float) -> dict[str, Any]:
    """Solve ``seed`` of ``config`` within ``nodes``, watching every position the search
    builds: the most foundation cards, and the fewest face-down cards (Gilbert)."""
    variant, options = CONFIGS[config]
    rules = rules_for(variant, options)
    start = rules.from_piles(Game.deal(variant, seed, options).piles)
    face_down = variant == "gilbert"  # its position's third part counts them per pile
    furthest = {"up": sum(start[0]), "down": sum(start[2]) if face_down else None}
    play = rules.play

    def watched(state: Any, step: Any) -> Any:
        child = play(state, step)
        furthest["up"] = max(furthest["up"], sum(child[0]))
        if face_down:
            furthest["down"] = min(furthest["down"], sum(child[2]))
        return child

    rules.play = watched  # type: ignore[method-assign]
    began = time.process_time()
    # The reference: the native core never calls rules.play, so nothing would be watched.
    result = search(rules, start, Budget(nodes, seconds, time.process_time), native=False)
    return {"seed": seed, "result": result.result, "nodes": result.nodes,
            "cpu_s": time.process_time() - began, **furthest}


def main_only(config: str, seed: int, nodes: int, seconds: float) -> dict[str, Any]:
    """The main search alone (:func:`search`'s, in the native core) on ``seed`` of
    ``config``, until it ends or has counted ``nodes`` positions or ``seconds`` of CPU."""
    variant, options = CONFIGS[config]
    rules = rules_for(variant, options)
    start = rules.from_piles(Game.deal(variant, seed, options).piles)
    began = time.process_time()
    if core.dead(rules, start):
        result, counted = "lost", 1  # dead at the deal, as search() answers
    else:
        result, _, counted = core.depth_first(rules, start).run(
            nodes, began + seconds, time.process_time)
    return {"seed": seed, "result": result, "nodes": counted,
            "cpu_s": time.process_time() - began}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configs", nargs="*", choices=list(CONFIGS),
                        default=["gilbert", "shamrocks", "gate-single_card_moves"])
    parser.add_argument("--deals", type=int, default=6, help="unknown deals per configuration")
    parser.add_argument("--nodes", type=int, default=1_000_000, help="node budget per deal")
    parser.add_argument("--seconds", type=float, default=3600.0, help="CPU time budget per deal")
    parser.add_argument("--main-only", action="store_true",
                        help="the main search alone, native (see above)")
    parser.add_argument("--seeds", nargs="*", type=int, help="these deals, not the unknown ones")
    args = parser.parse_args()
    if args.main_only and not core.AVAILABLE:
        parser.error(core.MISSING)
    for config in args.configs:
        unknown = [r["seed"] for r in read_rows(config) if r["result"] == "unknown"]
        seeds = args.seeds or unknown[:args.deals]
        print(f"{config}: {len(unknown)} unknown deals in the data file; {len(seeds)} with "
              f"{args.nodes:,} positions" + (", the main search alone" if args.main_only else ""),
              flush=True)
        for seed in seeds:
            if args.main_only:
                row = main_only(config, seed, args.nodes, args.seconds)
                print(f"  seed {seed:4}: {row['result']:7} {row['nodes']:>11,} positions "
                      f"{row['cpu_s']:6.1f} s CPU", flush=True)
                continue
            row = probe(config, seed, args.nodes, args.seconds)
            down = "" if row["down"] is None else f", fewest face down {row['down']}"
            print(f"  seed {seed:4}: {row['result']:7} {row['nodes']:>10,} positions "
                  f"{row['cpu_s']:6.1f} s CPU; most cards on the foundations {row['up']}{down}",
                  flush=True)


if __name__ == "__main__":
    main()
