"""The native core against the pure-Python reference: the same answers, position for
position, at budgets of positions (not seconds, so both are deterministic), and every
won line of either wins when replayed through the engine."""

from __future__ import annotations

import logging
import random
import shutil
from typing import Any

import pytest

from service.engine import Game, Status
from service.solver import Budget, SolveResult, native, solve_deal
from service.solver.rules import GUIDES
from service.solver.search import _search, search
from service.solver.variants import rules_for

from .helpers import CONFIGS, config_id, replay, small_position

needs_core = pytest.mark.skipif(not native.AVAILABLE, reason="the native core was not built")
DEALS = range(1, 51)
# Enough for the restarts to run and shake the order (and for the best-first search and
# the full search after them), small enough for the reference: each configuration's
# 50 deals end some won and some unknown.
NODES = 2_500
SMALL = {"gilbert": (2, 8), "shamrocks": (2, 10), "gate": (2, 10), "caprice": (12, 13)}


def both(variant_id: str, options: dict[str, Any], game: Game,
         budget: Budget) -> tuple[SolveResult, SolveResult]:
    rules = rules_for(variant_id, options)
    start = rules.from_piles(game.piles)
    return search(rules, start, budget, native=False), search(rules, start, budget, native=True)


def check_agree(game: Game, reference: SolveResult, core: SolveResult, what: str) -> None:
    assert reference.result == core.result, f"{what}: {reference} vs {core}"
    # Not only the class: the same positions counted and the same line.
    assert (reference.nodes, reference.commands) == (core.nodes, core.commands), what
    for result in (reference, core):
        if result.result == "won":
            assert replay(game, result.commands).status is Status.WON, what


@needs_core
@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_the_core_answers_as_the_reference_on_fifty_deals(
        config: tuple[str, dict[str, Any]]) -> None:
    variant_id, options = config
    budget = Budget(max_nodes=NODES, max_seconds=1e9)
    answers = {"won": 0, "lost": 0, "unknown": 0}
    for seed in DEALS:
        game = Game.deal(variant_id, seed, options)
        reference, core = both(variant_id, options, game, budget)
        check_agree(game, reference, core, f"seed {seed}")
        answers[core.result] += 1
    assert answers["won"] >= 10, answers


@needs_core
@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_the_core_proves_the_same_losses_on_small_positions(
        config: tuple[str, dict[str, Any]]) -> None:
    variant_id, options = config
    rng = random.Random(5)
    fewest, most = SMALL[variant_id]
    budget = Budget(max_nodes=200_000, max_seconds=1e9)
    answers = {"won": 0, "lost": 0, "unknown": 0}
    for i in range(40):
        game = small_position(variant_id, options, rng, rng.randint(fewest, most))
        if game.status is not Status.PLAYING:
            continue
        reference, core = both(variant_id, options, game, budget)
        check_agree(game, reference, core, f"position {i}")
        answers[core.result] += 1
    assert answers["won"] >= 10, answers
    assert answers["lost"] or variant_id == "caprice", answers


@needs_core
def test_the_core_follows_the_rules_switches() -> None:
    # Gilbert, Gate and Shamrocks without their pruning, every hasty search, and every
    # search without its dead-position test: the same answers again.
    budget = Budget(max_nodes=NODES, max_seconds=1e9)
    for variant_id, options in CONFIGS:
        for seed in range(1, 6):
            game = Game.deal(variant_id, seed, options)
            rules = rules_for(variant_id, options)
            if variant_id in ("gilbert", "gate", "shamrocks"):
                rules.pruning = False
            plain = rules_for(variant_id, options)
            plain.dead_ends = False  # no dead-position test (Shamrocks tests every position)
            for r in (rules, rules.hastily(), plain):
                start = r.from_piles(game.piles)
                check_agree(game, search(r, start, budget, native=False),
                            search(r, start, budget, native=True), f"{variant_id} {seed}")


@needs_core
@pytest.mark.parametrize("guide", GUIDES)
def test_the_core_scores_shamrocks_best_first_searches_by_each_guide_as_the_reference(
        guide: str) -> None:
    # Each guide's best-first search alone (the full rules and hasty), long enough for
    # the order to matter: the same positions counted and the same lines.
    budget = Budget(max_nodes=4 * NODES, max_seconds=1e9)
    for seed in range(1, 6):
        game = Game.deal("shamrocks", seed, {})
        full = rules_for("shamrocks", {}).guided(guide)
        for rules in (full, full.hastily()):
            start = rules.from_piles(game.piles)
            check_agree(game, _search(rules, start, budget, native=False),
                        _search(rules, start, budget, native=True), f"{guide} {seed}")


@needs_core
def test_a_clock_that_raises_stops_the_core_with_its_error() -> None:
    looks = []

    def clock() -> float:  # good for the Python side's three looks, then breaks in the core
        looks.append(1)
        if len(looks) > 3:
            raise ZeroDivisionError("the clock broke")
        return 0.0

    with pytest.raises(ZeroDivisionError):
        solve_deal("gilbert", {}, 1, Budget(max_nodes=10**6, max_seconds=60.0, clock=clock))
    assert len(looks) == 4


def test_the_core_is_built_where_there_is_a_compiler() -> None:
    # ./run and ./test install the package in place (pip install -e): setup.py builds
    # the core next to its source, where the import finds it.
    if not (shutil.which("gcc") or shutil.which("cc")):
        pytest.skip("no C compiler here: the pure-Python search is used")
    assert native.AVAILABLE, native.MISSING


def test_without_the_core_the_reference_solves_and_the_service_says_so(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    from service.__main__ import say_solver_core

    monkeypatch.setattr(native, "AVAILABLE", False)
    with caplog.at_level(logging.WARNING, logger="service"):
        say_solver_core()
    assert [r.getMessage() for r in caplog.records] == [native.MISSING]
    result = solve_deal("gate", {}, 1, Budget(max_nodes=2_000, max_seconds=1e9))
    assert result.result == "won"
    assert replay(Game.deal("gate", 1, {}), result.commands).status is Status.WON
    rules = rules_for("gate", {})
    with pytest.raises(RuntimeError, match="not built"):
        search(rules, rules.from_piles(Game.deal("gate", 1, {}).piles),
               Budget(max_nodes=10, max_seconds=1.0), native=True)
