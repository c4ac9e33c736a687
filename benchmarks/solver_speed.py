"""The solver's native core against its pure-Python reference: positions searched per
second of CPU time, on the same deals in the same run.

    python benchmarks/solver_speed.py --deals 10 --nodes 20000

For each configuration and each deal 1..N: the same search (the same node budget,
seconds roomy so that positions decide) once in pure Python and once in the core,
each timed by ``time.process_time``; the two must give the same answer and count the
same positions (the script stops otherwise). Prints, per configuration, the median
over the deals of each one's positions per CPU second and of the ratio. Not a test:
it prints figures.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from winnability import CONFIGS  # noqa: E402

from service.engine import Game  # noqa: E402
from service.solver import Budget, native  # noqa: E402
from service.solver.search import search  # noqa: E402
from service.solver.variants import rules_for  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=10)
    parser.add_argument("--nodes", type=int, default=20_000)
    parser.add_argument("--configs", nargs="*", default=list(CONFIGS))
    parser.add_argument("--seeds", nargs="*", type=int,
                        help="these deals instead of 1..--deals (e.g. the ones whose search "
                             "is long enough to time the search, not its start and its line)")
    args = parser.parse_args()
    if not native.AVAILABLE:
        sys.exit(native.MISSING)
    seeds = args.seeds or list(range(1, args.deals + 1))
    which = f"deals {' '.join(map(str, seeds))}" if args.seeds else f"deals 1..{args.deals}"
    print(f"{which}, {args.nodes:,} positions at most each; "
          "positions per CPU second, medians over the deals")
    print("| configuration | pure Python | native | native / Python (median of the ratios) "
          "| answers (won/lost/unknown) |")
    print("|---|---|---|---|---|")
    for config in args.configs:
        variant, options = CONFIGS[config]
        rules = rules_for(variant, options)
        py_rates, c_rates, ratios = [], [], []
        answers = {"won": 0, "lost": 0, "unknown": 0}
        for seed in seeds:
            start = rules.from_piles(Game.deal(variant, seed, options).piles)
            budget = Budget(args.nodes, 1e9, time.process_time)
            rates = []
            outcome = []
            for use_native in (False, True):
                began = time.process_time()
                result = search(rules, start, budget, native=use_native)
                spent = time.process_time() - began
                rates.append(result.nodes / max(spent, 1e-6))
                outcome.append((result.result, result.nodes))
            if outcome[0] != outcome[1]:
                sys.exit(f"{config} seed {seed}: the core answered {outcome[1]}, "
                         f"the reference {outcome[0]}")
            answers[outcome[0][0]] += 1
            py_rates.append(rates[0])
            c_rates.append(rates[1])
            ratios.append(rates[1] / rates[0])
        print(f"| {config} | {statistics.median(py_rates):,.0f} | "
              f"{statistics.median(c_rates):,.0f} | {statistics.median(ratios):.1f}x | "
              f"{answers['won']}/{answers['lost']}/{answers['unknown']} |", flush=True)


if __name__ == "__main__":
    main()
