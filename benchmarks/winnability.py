"""Winnability tables: solve deals 1..N of every variant with every card known, and
write the per-deal data files and docs/winnability.md.

    python benchmarks/winnability.py run --deals 1000 --seconds 10 --workers 2
    python benchmarks/winnability.py report
    python benchmarks/winnability.py compare --against DIR   # won here, lost there?
    python benchmarks/winnability.py run --deals 60 --nodes 100000 --seconds 600 --out /tmp/try

``--out DIR`` writes the data files and the table (``DIR/winnability.md``) under DIR
instead of ``benchmarks/data/`` and ``docs/winnability.md``: for trying a change
without touching the committed tables (with a node budget and a roomy time budget,
a run's answers do not depend on the machine's load).

``run`` solves the deals in rounds (seed 1 of every configuration, then seed 2, ...)
so a run stopped early (Ctrl-C, or ``--stop-at HH:MM`` UTC) has the same number of
deals for each; it appends one row per deal to ``benchmarks/data/winnability-<config>.csv``
(``seed,result,nodes,ms,line_length``) and skips seeds already there, so it resumes.
Every won line is replayed through the engine before its row is written. ``report``
(also run at the end of ``run``) writes docs/winnability.md from the data files.
Not a test: it prints figures.

The seconds are CPU seconds: ``--seconds 10`` gives each deal 10 s of its worker
process's CPU time (the solver's ``Budget`` counts ``time.process_time``), and the
``ms`` column is the CPU time of the solve alone (not the replay check). So a deal's
answer hardly depends on what else the shared machine runs (only through shared caches
slowing a CPU second down), while the run's length does.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import math
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from service.domain import wire  # noqa: E402
from service.engine import Game, Status  # noqa: E402
from service.solver import Budget, solve_deal  # noqa: E402

DATA = ROOT / "benchmarks" / "data"
SECONDS = 10.0  # a deal's budget of CPU time, by default
NODES = 50_000_000  # and of positions: at 10 s the time runs out first
DOC = ROOT / "docs" / "winnability.md"
CONFIGS: dict[str, tuple[str, dict[str, Any]]] = {
    "gilbert": ("gilbert", {}),
    "shamrocks": ("shamrocks", {}),
    "gate": ("gate", {}),
    "gate-single_card_moves": ("gate", {"single_card_moves": True}),
    "caprice": ("caprice", {}),
}
COLUMNS = ["seed", "result", "nodes", "ms", "line_length"]
UNKNOWN_GOAL = {"gilbert": 0.10}  # the share of unknown deals allowed; 2% for the others
CLOCK = "cpu"  # the budget's seconds and the ms column: the worker process's CPU time


def data_file(config: str, data: Path = DATA) -> Path:
    return data / f"winnability-{config}.csv"


def read_rows(config: str, data: Path = DATA) -> list[dict[str, Any]]:
    path = data_file(config, data)
    if not path.exists():
        return []
    with path.open() as f:
        return [{"seed": int(r["seed"]), "result": r["result"], "nodes": int(r["nodes"]),
                 "ms": int(r["ms"]), "line_length": int(r["line_length"])}
                for r in csv.DictReader(f)]


def solve_one(config: str, seed: int, seconds: float, nodes: int) -> dict[str, Any]:
    variant, options = CONFIGS[config]
    budget = Budget(max_nodes=nodes, max_seconds=seconds, clock=time.process_time)
    began = time.process_time()
    result = solve_deal(variant, options, seed, budget)
    cpu_ms = int((time.process_time() - began) * 1000)
    if result.result == "won":  # the claim is checked before it is written down
        game = Game.deal(variant, seed, options)
        for command in result.commands:
            game = game.apply(wire.engine_command(wire.command_of(command)))[0]
        if game.status is not Status.WON:
            raise AssertionError(f"{config} seed {seed}: the solver's line does not win")
    return {"seed": seed, "result": result.result, "nodes": result.nodes, "ms": cpu_ms,
            "line_length": len(result.commands)}


def tasks(configs: list[str], deals: int, data: Path) -> Iterator[tuple[str, int]]:
    done = {c: {r["seed"] for r in read_rows(c, data)} for c in configs}
    for seed in range(1, deals + 1):
        for config in configs:
            if seed not in done[config]:
                yield config, seed


def places(args: argparse.Namespace) -> tuple[Path, Path]:
    """Where the data files and the table go: ``--out DIR``, or the committed places."""
    if args.out is None:
        return DATA, DOC
    return args.out, args.out / "winnability.md"


def run(args: argparse.Namespace) -> None:
    data, _ = places(args)
    data.mkdir(parents=True, exist_ok=True)
    configs = args.configs or list(CONFIGS)
    meta_path = data / "winnability-budget.json"
    old = read_meta(meta_path)
    # A resumed table keeps the budget its rows were solved with: a budget given
    # that differs from it is refused, not mixed in (a smaller node budget once left
    # deals unknown that the table's own budget would have settled).
    made_with = {"max_seconds": old.get("max_seconds", SECONDS),
                 "max_nodes": old.get("max_nodes", NODES), "clock": old.get("clock", CLOCK)}
    meta: dict[str, Any] = {
        "max_seconds": made_with["max_seconds"] if args.seconds is None else args.seconds,
        "max_nodes": made_with["max_nodes"] if args.nodes is None else args.nodes,
        "clock": CLOCK}
    if old and made_with != meta:
        sys.exit(f"the data files in {data} were made with {json.dumps(made_with)}; this run "
                 f"asks for {json.dumps(meta)}: give their budget (or none), or a new --out "
                 "directory, so one table has one budget")
    args.seconds, args.nodes = meta["max_seconds"], meta["max_nodes"]
    this_run = {"commit": git("rev-parse", "--short", "HEAD"), "solver": solver_code(),
                "workers": args.workers, "configs": configs,
                "started": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                "load_average_at_start": os.getloadavg()[0]}
    runs = old.get("runs", []) if old else []
    if runs and runs[-1].get("solver") != this_run["solver"]:
        print("warning: the solver's code (service/solver, service/engine) differs from the "
              "run that made the data files so far: remove them (or use --out) for a table "
              "made by one solver", file=sys.stderr)
    meta_path.write_text(json.dumps({**meta, "runs": [*runs, this_run]}) + "\n")
    stop_at = None
    if args.stop_at:
        hh, mm = map(int, args.stop_at.split(":"))
        now = dt.datetime.now(dt.UTC)
        stop_at = now.replace(hour=hh, minute=mm, second=0, microsecond=0)
        if stop_at < now:
            stop_at += dt.timedelta(days=1)
    todo = tasks(configs, args.deals, data)
    files = {}
    for config in configs:
        path = data_file(config, data)
        new = not path.exists()
        files[config] = path.open("a", newline="")
        if new:
            csv.writer(files[config]).writerow(COLUMNS)
    started, count = time.time(), 0
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        running: dict[Future[dict[str, Any]], str] = {}

        def submit() -> bool:
            if stop_at is not None and dt.datetime.now(dt.UTC) >= stop_at:
                return False
            item = next(todo, None)
            if item is None:
                return False
            running[pool.submit(solve_one, item[0], item[1], args.seconds, args.nodes)] = item[0]
            return True

        for _ in range(args.workers * 2):
            submit()
        while running:
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for fut in finished:
                config = running.pop(fut)
                row = fut.result()
                csv.writer(files[config]).writerow([row[c] for c in COLUMNS])
                files[config].flush()
                count += 1
                print(f"{time.time() - started:7.0f}s {config:24s} seed {row['seed']:5d} "
                      f"{row['result']:8s} {row['nodes']:9d} nodes {row['ms']:6d} ms  "
                      f"line {row['line_length']}", flush=True)
                submit()
    for f in files.values():
        f.close()
    print(f"{count} deals solved in {time.time() - started:.0f} s")
    report(args)


# --- the report ----------------------------------------------------------------------------


def wilson(k: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """The 95% Wilson score interval of ``k`` successes in ``n`` trials."""
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def percentile(values: list[int], p: float) -> int:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(p / 100 * len(ordered)) - 1))]


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True,
                          text=True).stdout.strip()


def solver_code() -> str:
    """The git trees of the solver and the engine at HEAD, and ``+changes`` when the work
    tree differs from them: two runs with the same value ran the same solver."""
    trees = "/".join(git("rev-parse", "--short", f"HEAD:{part}")
                     for part in ("service/solver", "service/engine"))
    dirty = git("status", "--porcelain", "service/solver", "service/engine")
    return trees + ("+changes" if dirty else "")


def read_meta(path: Path) -> dict[str, Any]:
    """``winnability-budget.json``: the budget, and one entry per run (older files had one
    run's fields at the top level)."""
    if not path.exists():
        return {}
    meta: dict[str, Any] = json.loads(path.read_text())
    if "runs" not in meta and "started" in meta:
        meta["runs"] = [{k: meta.pop(k) for k in ("commit", "workers", "started",
                                                   "load_average_at_start") if k in meta}]
    return meta


def budget_text(meta: dict[str, Any]) -> str:
    """How the data files were made, from ``winnability-budget.json``."""
    if not isinstance(meta.get("max_nodes"), int):
        return "every card known."
    cpu = meta.get("clock") == "cpu"
    seconds = f"{meta['max_seconds']:g} s of {'CPU' if cpu else 'wall-clock'} time"
    timing = ("The budget and the times below count the worker process's CPU time, so a "
              "deal's answer hardly depends on the other work the machine was running (only "
              "through shared caches); "
              "the run took longer in wall-clock time." if cpu else
              "Times are wall-clock: other work was running, so they are noisy and "
              "nodes/s is a floor.")
    runs = meta.get("runs", [])
    started = "; ".join(
        f"run started {r.get('started', '?')} at commit {r.get('commit', '?')}"
        + (f" for {', '.join(r['configs'])}" if r.get("configs") else "")
        + (f" ({r['rows']})" if r.get("rows") else "")
        + f" with {r.get('workers', '?')} worker process{'' if r.get('workers') == 1 else 'es'}"
        f" (load average "
        f"{r.get('load_average_at_start', 0):.1f} at the start)" for r in runs) or "runs unknown"
    solvers = {r.get("solver") for r in runs}
    if len(runs) > 1:
        if None in solvers:
            same = "the runs do not all say which solver code they ran"
        elif len(solvers) == 1:
            same = "the solver's code (service/solver, service/engine) the same in each run"
        else:
            same = ("the solver's code (service/solver, service/engine) as at each run's "
                    "commit")
        started += (f"; {same}; each configuration's rows from the runs that name it, each "
                    "resuming where the one before stopped"
                    + (" or solving the rows it names" if any(r.get("rows") for r in runs)
                       else ""))
    return (f"every card known, within a budget of {seconds} and {meta['max_nodes']:,} "
            f"positions per deal, on the shared 2-core machine: {started}. {timing}")


def goal_text(rows: dict[str, list[dict[str, Any]]], meta: dict[str, Any]) -> list[str]:
    """Issue 22's goal, part by part: which configurations meet it and which do not."""
    def split(ok: dict[str, bool], why: dict[str, str]) -> str:
        met = [c for c in CONFIGS if ok[c]]
        not_met = [f"{c} ({why[c]})" for c in CONFIGS if not ok[c]]
        if not not_met:
            return "met for every game."
        if not met:
            return "not met for any game: " + ", ".join(not_met) + "."
        return f"met for {', '.join(met)}; not met for {', '.join(not_met)}."

    n = {c: len(rows[c]) for c in CONFIGS}
    unknown = {c: sum(r["result"] == "unknown" for r in rows[c]) for c in CONFIGS}
    share = {c: unknown[c] / n[c] if n[c] else 1.0 for c in CONFIGS}
    longest = max((r["ms"] for c in CONFIGS for r in rows[c]), default=0) / 1000
    seconds = meta.get("max_seconds")
    cpu = meta.get("clock") == "cpu"
    if isinstance(seconds, (int, float)):
        kind = "CPU" if cpu else "wall-clock"
        over = sum(r["ms"] > seconds * 1000 for c in CONFIGS for r in rows[c])
        solves = sum(n.values())
        if seconds > 10:
            verdict = f"not met: the budget was {seconds:g} s of {kind} time per deal"
        elif longest <= seconds:
            verdict = f"met: the budget was {seconds:g} s of {kind} time per deal"
        else:
            verdict = (f"met as a budget of {seconds:g} s of {kind} time per deal, overrun "
                       f"by up to {longest - seconds:.2f} s: {over:,} of the {solves:,} "
                       f"solves took longer than {seconds:g} s")
        time_part = (f"{verdict}; the longest took {longest:.2f} s (the search looks at "
                     "its clock every 64 positions; after its deadline it still frees its "
                     "tables, a few tenths of a second in Shamrocks' largest searches; and "
                     "the time counted includes dealing the game).")
    else:
        time_part = "unknown: the data files do not say which budget made them."
    return [
        "Goal (issue 22): at least 1,000 deals per game, at most 2% unknown (10% for "
        "Gilbert), at most 10 s per deal.",
        "",
        "- 1,000 deals: " + split({c: n[c] >= 1000 for c in CONFIGS},
                                   {c: f"N = {n[c]:,}" for c in CONFIGS}),
        "- at most 2% unknown (10% for Gilbert): "
        + split({c: n[c] > 0 and share[c] <= UNKNOWN_GOAL.get(c, 0.02) for c in CONFIGS},
                {c: f"{unknown[c]:,} of {n[c]:,}, {share[c]:.2%}" for c in CONFIGS}),
        "- at most 10 s per deal: " + time_part,
        "",
        "The search ran in the solver's native core (service/solver/_core.c), which answers as "
        "the pure-Python reference does, position for position, at about 20 times its speed "
        "or more depending on the game and the deal (benchmarks/README.md, \"Solver speed on "
        "short searches and on long ones\"). Where it leaves deals unknown, the range "
        "between the two bounds is the honest answer.",
    ]


def report(args: argparse.Namespace) -> None:
    data, doc = places(args)
    meta = read_meta(data / "winnability-budget.json")
    kind = "CPU time" if meta.get("clock") == "cpu" else "time"
    lines = [
        "# Winnability of the four games (full information)",
        "",
        "Generated by `python benchmarks/winnability.py report` from the per-deal data files",
        "in `benchmarks/data/` (`winnability-<config>.csv`: `seed,result,nodes,ms,line_length`),",
        "made by `python benchmarks/winnability.py run`. Each deal is the engine's deal of that",
        "seed (seeds 1..N, default options; Gate also with `single_card_moves`), solved by",
        "`service/solver` with",
        budget_text(meta),
        "",
        "- **won**: the solver found a winning line, and the line was replayed through the engine",
        "  (a new game with the same seed) and won before the row was written.",
        "- **lost**: proved: every position reachable from the deal was searched (the search",
        "  prunes only by a transposition table, foundation moves proved safe, Gate's draw",
        "  tried alone while its waste is empty and its stock is not, and, with",
        "  `single_card_moves`, a foundation's card taken down only together with a move that",
        "  uses it (both proved in service/solver/gate.py), no Shamrocks card alone on its fan",
        "  moved onto another fan, and a Shamrocks card moved onto another fan only together",
        "  with a move that uses it (both proved in service/solver/shamrocks.py), and positions",
        "  proved dead: some cards can never leave their piles, in Shamrocks' fans or Gilbert's",
        "  tableau (every position searched), or in Gate's bars, pillars and waste with",
        "  `single_card_moves` (the deal itself only); each test is proved in",
        "  service/solver/shamrocks.py, gilbert.py and gate.py).",
        "- **unknown**: the budget ran out first. The win rate is therefore given as a range: the",
        "  lower bound counts every unknown deal as lost, the upper bound as won; each bound with",
        "  its 95% Wilson score interval.",
        f"- **{kind} per deal**: of the solve alone (`ms`), not of the replay check.",
        "- **winning line**: commands in the line found (a daily challenge's `par`); the first",
        "  line the search finds, not a shortest one.",
        "",
        "| game | deals N | won | lost | unknown | win rate (unknown = lost) [95% CI] | "
        f"win rate (unknown = won) [95% CI] | {kind} per deal median / p90 / max | "
        f"positions per second of {kind} | winning line median / max |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    rows = {config: read_rows(config, data) for config in CONFIGS}
    for config in CONFIGS:
        n = len(rows[config])
        if not n:
            lines.append(f"| {config} | 0 | | | | | | | | |")
            continue
        won = sum(r["result"] == "won" for r in rows[config])
        lost = sum(r["result"] == "lost" for r in rows[config])
        unknown = n - won - lost
        lo, hi = won / n, (won + unknown) / n
        lo_ci, hi_ci = wilson(won, n), wilson(won + unknown, n)
        ms = [r["ms"] for r in rows[config]]
        rate = sum(r["nodes"] for r in rows[config]) / max(1, sum(ms)) * 1000
        won_lines = [r["line_length"] for r in rows[config] if r["result"] == "won"]
        median_line = f"{statistics.median(won_lines):.0f} / {max(won_lines)}" if won_lines else "-"
        lines.append(
            f"| {config} | {n} | {won} | {lost} | {unknown} ({pct(unknown / n)}) | "
            f"{pct(lo)} [{pct(lo_ci[0])}, {pct(lo_ci[1])}] | "
            f"{pct(hi)} [{pct(hi_ci[0])}, {pct(hi_ci[1])}] | "
            f"{statistics.median(ms) / 1000:.2f} / {percentile(ms, 90) / 1000:.2f} / "
            f"{max(ms) / 1000:.2f} s | "
            f"{rate:,.0f} | {median_line} |")
    lines += ["", *goal_text(rows, meta), "", *hint_text(data), *COMPARISON]
    doc.write_text("\n".join(lines) + "\n")
    print("\n".join(lines[lines.index("") + 1:]))


def hint_text(data: Path) -> list[str]:
    """Hints worth taking, from ``hint-quality.csv`` (benchmarks/hint_quality.py)."""
    path = data / "hint-quality.csv"
    if not path.exists():
        return []
    with path.open() as f:
        rows = list(csv.DictReader(f))
    if not rows:
        return []
    deals = sorted({int(r["deals"]) for r in rows})
    out = [
        "## Hints worth taking",
        "",
        "Made by `python benchmarks/hint_quality.py --deals 200 --configs <game> "
        "--stop-at <time>`, one run per game (`benchmarks/data/hint-quality.csv`): the "
        "first seeds of each game that the full-information solver wins (by the data files "
        "as they were when it ran), each played from the deal by a bot that always plays "
        "the service's hint (the default hint settings: "
        f"{rows[0]['samples']} samples of {int(rows[0]['sample_nodes']):,} positions, "
        "and the views the game has shown before, as the service gives them) and by one "
        "that always plays the first legal move; a game that reaches 600 commands counts "
        "as not won. With every card known the solver wins all of them (100%). "
        + ("Each game's run had until a set time to play its 200 deals: `deals` is how "
           "many it played, the first of the list, in order. " if deals != [200] else "")
        + "Hint times are the CPU time of a hint's search in the benchmark's process "
        "(the answer times through the service are in benchmarks/README.md, "
        "`hint_latency.py`).",
        "",
        "| game | deals | hint bot won | first-move bot won | full information | "
        "hint CPU median / p95 |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        n = int(r["deals"])
        out.append(f"| {r['config']} | {n} | {int(r['hint_won']) / n:.1%} | "
                   f"{int(r['first_won']) / n:.1%} | 100% | {r['hint_ms_median']} / "
                   f"{r['hint_ms_p95']} ms |")
    return [*out, ""]


COMPARISON = [
    "## What these compare with",
    "",
    "We know of no published winnability figure for these four games under these rules.",
    "One published figure is for a related game, under the same full-information",
    "(\"thoughtful\") convention, and this page compares with it:",
    "",
    "- **Gilbert** is Klondike's tableau (seven piles, face-down cards, runs in alternating",
    "  colours) with three-card draws and unlimited redeals, but with descending foundations",
    "  too, foundation-to-foundation moves, and only Sevens in empty piles. Blake and Gent,",
    "  \"The Winnability of Klondike Solitaire and Many Other Patience Games\" (arXiv",
    "  1906.12314, the Solvitaire solver), give thoughtful Klondike as 81.956% ± 0.096%",
    "  winnable in the June 2019 version of the paper and as 81.945% ± 0.084% in the revised",
    "  version (both figures as stated in the abstracts; their rules were not re-checked",
    "  here). The extra foundations may make Gilbert easier at the end, the Seven-only",
    "  spaces harder in the middle: the two games need not agree.",
    "",
    "How to compare: the figure above is a full-information win rate of random deals, as",
    "here. Take Gilbert's range (lower bound, every unknown lost; upper bound, every unknown",
    "won) with its intervals. Klondike's figure inside the range is consistent with it (and",
    "says little while the range is wide); outside it, it says the games differ, not that",
    "either solver is wrong.",
    "",
    "- **Shamrocks** (a Fan-like game: fans of three, Kings moved to the bottom at the deal,",
    "  building up or down in any suit, no refilling of empty fans), **Gate** and **Caprice**",
    "  (open tableaux, every tableau card face up) are compared with no published figure: the",
    "  related games' published values (Fan, Beleaguered Castle and others) were not looked up",
    "  and re-checked for this page, and they are not the same games.",
]


def compare(args: argparse.Namespace) -> None:
    """Deals that one set of data files calls won and the other lost: a contradiction, as
    both answers are proofs (a won line replayed, a loss by exhaustion). Exits 1 if any."""
    data, _ = places(args)
    contradictions = 0
    for config in CONFIGS:
        before = {r["seed"]: r["result"] for r in read_rows(config, args.against)}
        now = {r["seed"]: r["result"] for r in read_rows(config, data)}
        both = sorted(set(before) & set(now))
        bad = [s for s in both if {before[s], now[s]} == {"won", "lost"}]
        settled = sum(before[s] == "unknown" and now[s] != "unknown" for s in both)
        unsettled = sum(before[s] != "unknown" and now[s] == "unknown" for s in both)
        print(f"{config}: {len(both)} deals in both; won against lost: {len(bad)} "
              f"{bad[:10]}; unknown before, settled now: {settled}; settled before, "
              f"unknown now: {unsettled}")
        contradictions += len(bad)
    if contradictions:
        sys.exit(f"{contradictions} deal(s) won in one and lost in the other")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="solve deals (resumable), then write the report")
    r.add_argument("--deals", type=int, default=1000, help="solve seeds 1..N of each configuration")
    r.add_argument("--seconds", type=float, help=f"CPU time budget per deal (s); default: the "
                   f"data files' budget when resuming, else {SECONDS:g}")
    r.add_argument("--nodes", type=int, help=f"node budget per deal; default: the data files' "
                   f"budget when resuming, else {NODES:,}")
    r.add_argument("--workers", type=int, default=os.cpu_count() or 2, help="worker processes")
    r.add_argument("--configs", nargs="*", choices=list(CONFIGS), help="only these configurations")
    r.add_argument("--stop-at", help="HH:MM (UTC): submit no new deal after this time")
    rep = sub.add_parser("report", help="write docs/winnability.md from the data files")
    cmp = sub.add_parser("compare", help="deals won in these data files and lost in others "
                         "(or the reverse): exits 1 if any")
    cmp.add_argument("--against", type=Path, required=True,
                     help="the directory of the other data files (e.g. the previous tables)")
    for p in (r, rep, cmp):
        p.add_argument("--out", type=Path, help="data files and table in this directory instead "
                       "of benchmarks/data/ and docs/winnability.md")
    args = parser.parse_args()
    if args.command == "run":
        run(args)
    elif args.command == "compare":
        compare(args)
    else:
        report(args)


if __name__ == "__main__":
    main()
