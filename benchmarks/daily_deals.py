"""How long choosing a day's four daily deals takes, with the service's default settings.

    python benchmarks/daily_deals.py --days 30

For each of ``--days`` days (from 2026-12-01, seeds from a fixed secret, so every run
walks the same candidates): the four variants' candidate walks of
``service.domain.daily.deals.DailyDeals._search`` (candidate k = 0, 1, ... solved within the
default ``daily_solve_nodes`` / ``daily_solve_s`` until one is won), all four asked at
once of as many processes as the solver pool gives background work (one: they run one
after the other), as ``choose_ahead`` runs them. Prints
per day the wall-clock time until the last of the four is chosen and each variant's
candidates (and the CPU time of each walk: the machine's other work stretches the
wall-clock time); then the median, p90 and max. No store: the solving only (the store's
writes take milliseconds). Not a test: it prints figures.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from service.domain.daily.challenge import Seeds  # noqa: E402
from service.domain.solving import BACKGROUND_PROCESSES  # noqa: E402
from service.engine import VARIANTS  # noqa: E402
from service.settings import Settings  # noqa: E402
from service.solver import Budget, native, solve_deal  # noqa: E402

SECRET = b"benchmarks/daily_deals.py"
FIRST_DAY = dt.date(2026, 12, 1)


def walk(variant: str, day: dt.date, nodes: int, seconds: float) -> dict[str, Any]:
    """The candidates of ``variant`` on ``day`` until one is won (DailyDeals._search)."""
    seeds = Seeds(SECRET)
    began, cpu = time.perf_counter(), time.process_time()
    outcomes = []
    for k in range(1000):
        result = solve_deal(variant, {}, seeds.seed(day, variant, k), Budget(nodes, seconds))
        outcomes.append(result.result)
        if result.result == "won":
            break
    return {"variant": variant, "outcomes": outcomes, "s": time.perf_counter() - began,
            "cpu": time.process_time() - cpu}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--nodes", type=int, help="instead of the default daily_solve_nodes")
    args = parser.parse_args()
    settings = Settings()
    nodes, seconds = args.nodes or settings.daily_solve_nodes, settings.daily_solve_s
    slots = BACKGROUND_PROCESSES
    print(f"native core: {native.AVAILABLE}; per candidate {nodes:,} positions or {seconds} s; "
          f"{slots} process(es) for the daily deals")
    times, cpus = [], []
    with ProcessPoolExecutor(slots) as pool:
        list(pool.map(abs, range(slots)))  # started before the clock runs
        for d in range(args.days):
            day = FIRST_DAY + dt.timedelta(days=d)
            began = time.perf_counter()
            futures = [pool.submit(walk, v, day, nodes, seconds) for v in VARIANTS]
            walks = [f.result() for f in futures]
            spent = time.perf_counter() - began
            times.append(spent)
            cpus.append(sum(w["cpu"] for w in walks))
            print(f"{day}  {spent:6.2f} s  " + "  ".join(
                f"{w['variant']} {len(w['outcomes'])} candidate(s) {w['s']:.2f} s "
                f"({w['cpu']:.2f} s CPU)" for w in walks), flush=True)
    for what, values in (("wall-clock time", times), ("CPU time of the four walks", cpus)):
        values.sort()
        print(f"a day's four deals chosen in ({what}): median {statistics.median(values):.2f} s, "
              f"p90 {values[int(0.9 * (len(values) - 1))]:.2f} s, max {values[-1]:.2f} s "
              f"({len(values)} days)")
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
