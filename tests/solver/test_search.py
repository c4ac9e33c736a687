"""The search: lines that win when replayed through the engine, losses that an
exhaustive search over the engine confirms, and budgets that end in ``unknown``."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

import pytest

from service.engine import Game, Pile, Status
from service.engine.cards import RANKS, SUITS
from service.solver import Budget, solve_deal, solve_game
from service.solver import native as core
from service.solver.cards import CODE, card_of
from service.solver.rules import DRAW
from service.solver.search import (
    BEST_FIRST_SHARE,
    CHECK_CLOCK_EVERY,
    FIRST_LIMIT,
    FULL_BEST_FIRST_SHARE,
    MORE_BEST_FIRST_SHARE,
    DepthFirst,
    search,
)
from service.solver.variants import rules_for

from .helpers import (
    CONFIGS,
    brute_force_winnable,
    config_id,
    game_at,
    random_positions,
    replay,
    small_position,
)

ROOMY = Budget(max_nodes=2_000_000, max_seconds=120.0)


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_a_won_line_wins_when_replayed_from_the_deal_and_from_half_way(
        config: tuple[str, dict[str, Any]]) -> None:
    variant_id, options = config
    won = 0
    # Positions, not seconds, bound each search: the outcome does not depend on the machine.
    budget = Budget(max_nodes=6_000, max_seconds=600.0)
    for seed in range(5, 13) if variant_id == "caprice" else range(1, 9):
        result = solve_deal(variant_id, options, seed, budget)
        assert result.result in ("won", "lost", "unknown")
        assert result.nodes >= 1 and result.elapsed_ms >= 0
        if result.result != "won":
            assert result.commands == ()
            continue
        won += 1
        deal = Game.deal(variant_id, seed, options)
        assert replay(deal,
                      result.commands).status is Status.WON, f"seed {seed}: the line does not win"
        for command in result.commands:
            assert set(command) in ({"type"}, {"type", "from", "to", "count"})
            if command["type"] == "move":
                assert command["to"].startswith(("foundation/", "tableau/"))
        # From the middle of that line, every card known, the solver wins again.
        middle = replay(deal, result.commands[:len(result.commands) // 2])
        again = solve_game(middle, budget)
        assert again.result == "won", f"seed {seed}: no win found from half way"
        assert replay(middle, again.commands).status is Status.WON
        if won == 2:
            break
    assert won >= 1


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_a_line_from_a_random_position_wins_it(config: tuple[str, dict[str, Any]]) -> None:
    variant_id, options = config
    won = 0
    for seed in range(20, 24):
        game = random_positions(variant_id, options, seed, steps=25)[-1]
        if game.status is not Status.PLAYING:
            continue
        result = solve_game(game, Budget(max_nodes=3_000, max_seconds=600.0))
        if result.result == "won":
            won += 1
            assert replay(game, result.commands).status is Status.WON
    # Random play can spoil a deal, and Caprice needs more than this budget: no count asserted
    # there; every line found is checked.
    assert won >= 1 or variant_id == "caprice"


# (positions, fewest and most cards left): sized so the exhaustive search stays small.
SMALL = {"gilbert": (25, 2, 8), "shamrocks": (40, 2, 10), "gate": (40, 2, 10), "caprice": (8, 12,
                                                                                           13)}


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_the_answer_on_small_positions_is_the_exhaustive_searchs(
        config: tuple[str, dict[str, Any]]) -> None:
    variant_id, options = config
    rng = random.Random(11)
    answers = {"won": 0, "lost": 0}
    count, fewest, most = SMALL[variant_id]
    for i in range(count):
        game = small_position(variant_id, options, rng, rng.randint(fewest, most))
        if game.status is not Status.PLAYING:
            continue
        result = solve_game(game, ROOMY)
        assert result.result in ("won", "lost"), f"position {i}: {result}"
        assert (result.result == "won") == brute_force_winnable(game), f"position {i}: {game.piles}"
        answers[result.result] += 1
        if result.result == "won":
            assert replay(game, result.commands).status is Status.WON
    assert answers["won"] >= count // 2, answers
    # Caprice's small positions (twelve piles, any card fills an empty one) are all won.
    assert answers["lost"] or variant_id == "caprice", answers


def test_a_spent_budget_answers_unknown() -> None:
    for variant_id, options in CONFIGS:
        result = solve_deal(variant_id, options, 1, Budget(max_nodes=5, max_seconds=60.0))
        assert result.result == "unknown" and result.commands == () and result.nodes <= 5
    # Gilbert's deal 1 is not solved within 300,000 positions: no time, an unknown after
    # the first look at the clock.
    result = solve_deal("gilbert", {}, 1, Budget(max_nodes=10**9, max_seconds=0.0))
    assert result.result == "unknown" and result.commands == ()
    assert result.nodes <= CHECK_CLOCK_EVERY


# Deals that a shaken restart wins within 10,000 positions (not the first search).
SHAKEN_WINS = {"gilbert": (6, 23), "shamrocks": (6, 42), "gate": (38,),
               "gate-single_card_moves": (6, 9), "caprice": (5, 6)}


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_the_same_node_budget_gives_the_same_answer(config: tuple[str, dict[str, Any]]) -> None:
    # The restarts shake the move order at random, from a fixed seed: a node budget, not
    # the machine or the run, decides the answer (a daily deal's par must not vary).
    variant_id, options = config
    budget = Budget(max_nodes=10_000, max_seconds=600.0)
    # Shamrocks: its best-first searches, then the first restart.
    best_first = BEST_FIRST_SHARE + FULL_BEST_FIRST_SHARE + MORE_BEST_FIRST_SHARE * len(
        rules_for("shamrocks", {}).more_best_first)
    first_search = budget.max_nodes * best_first + FIRST_LIMIT \
        if variant_id == "shamrocks" else FIRST_LIMIT
    for seed in SHAKEN_WINS[config_id(config)]:
        first = solve_deal(variant_id, options, seed, budget)
        assert first.result == "won" and first.nodes > first_search, f"seed {seed}: {first}"
        again = solve_deal(variant_id, options, seed, budget)
        assert (again.commands, again.nodes) == (first.commands, first.nodes), f"seed {seed}"


def test_a_won_game_is_won_with_no_command() -> None:
    game = random_positions("gate", {}, 1, 0)[0]
    result = solve_game(game, ROOMY)
    line = result.commands
    assert result.result == "won"
    won = replay(game, line)
    again = solve_game(won, ROOMY)
    assert again.result == "won" and again.commands == () and again.nodes == 0


def test_budgets_and_results_cross_a_process_pool() -> None:
    import pickle

    from service.solver import HintResult, SolveResult

    for value in (ROOMY, SolveResult("won", ({"type": "draw"},), 3, 4), HintResult(None, 0, 0)):
        assert pickle.loads(pickle.dumps(value)) == value


def test_a_hasty_search_finds_real_wins_but_proves_no_loss() -> None:
    # Hasty Shamrocks plays any card that can go to a foundation and tries nothing else:
    # on some small positions that throws the win away. The search then answers from
    # the full search, as the exhaustive search does.
    rng = random.Random(11)
    thrown_away = 0
    for i in range(30):
        game = small_position("shamrocks", {}, rng, rng.randint(2, 10))
        if game.status is not Status.PLAYING:
            continue
        rules = rules_for("shamrocks", {})
        start = rules.from_piles(game.piles)
        hasty = search(rules.hastily(), start, ROOMY)
        if hasty.result == "won":
            assert replay(game, hasty.commands).status is Status.WON, f"position {i}"
        result = solve_game(game, ROOMY)
        assert (result.result == "won") == brute_force_winnable(game), f"position {i}: {game.piles}"
        if hasty.result == "won":
            assert result.result == "won"
        elif result.result == "won":
            thrown_away += 1
    assert thrown_away >= 1


def test_gilbert_does_not_bring_back_a_card_its_safe_move_would_send_straight_up() -> None:
    # Such a card would only go back up (the search's one step from there): leaving the
    # move out changes no answer, which the exhaustive search over the engine confirms.
    rng = random.Random(3)
    rules = rules_for("gilbert", {})
    fired = 0
    for i in range(30):
        game = small_position("gilbert", {}, rng, rng.randint(2, 6))
        if game.status is not Status.PLAYING:
            continue
        start = rules.from_piles(game.piles)
        full = type(rules)()
        full.pruning = False
        left_out = {c for _, c, _ in full.successors(start)} - \
            {c for _, c, _ in rules.successors(start)}
        assert all(c[0][0].startswith("foundation/") and c[0][1].startswith("tableau/")
                   for c in left_out), left_out
        fired += bool(left_out)
        result = solve_game(game, ROOMY)
        assert (result.result == "won") == brute_force_winnable(game), f"position {i}: {game.piles}"
        assert search(full, start, ROOMY).result == result.result, f"position {i}"
        if result.result == "won":
            assert replay(game, result.commands).status is Status.WON
    assert fired >= 3, fired


@pytest.mark.parametrize("options", [{}, {"single_card_moves": True}], ids=["runs", "single"])
def test_gate_only_draws_while_the_waste_is_empty_and_the_stock_is_not(
        options: dict[str, Any]) -> None:
    # The deal: an empty waste, 34 cards in the stock, and moves besides the draw (each
    # stock card into no space, but bar onto bar, pillar onto bar).
    rules = rules_for("gate", options)
    full = type(rules)(options)
    full.pruning = False
    start = rules.from_piles(Game.deal("gate", 1, options).piles)
    assert [c for _, c, _ in rules.successors(start)] == [(DRAW,)]
    assert len(full.successors(start)) > 1
    # On small positions, the search with the rule answers as the search without it, and
    # where the rule applies at the start, as the exhaustive search over the engine.
    def applies(game: Game, start: tuple[Any, ...]) -> bool:
        if (game.piles["waste"].up or not game.piles["stock"].down
                or rules.safe(start) is not None):
            return False
        assert [c for _, c, _ in rules.successors(start)] == [(DRAW,)]
        return True

    # At most 6 cards: a stock and spaces make big exhaustive searches.
    fired = check_small_gate_positions(options, full, random.Random(7), 150, 2, applies)
    assert fired >= 10, fired


def test_gate_single_card_restarts_take_a_card_down_only_for_a_card_awaiting_it() -> None:
    # Gate with single_card_moves restarts hastily (plain Gate does not): a card comes down
    # from its foundation only where a card not yet on one it builds on could go onto it
    # at once. The full rules (the main search) still take it down in every case.
    assert not rules_for("gate", {}).has_hasty
    full = rules_for("gate", {"single_card_moves": True})
    assert full.has_hasty
    hasty = full.hastily()
    six_h, four_h, five_s = card_of(2, 6), card_of(2, 4), card_of(3, 5)
    down = ("foundation/0", "tableau/0", 1)  # the Five of clubs onto the Six of hearts

    def position(bar: tuple[int, ...], waste: tuple[int, ...] = ()) -> tuple[Any, ...]:
        bars = ((six_h,), bar) + ((),) * 6
        return ((5, 0, 0, 0), bars, ((), ()), waste, len(waste))  # clubs up to the Five

    def offers(rules: Any, s: tuple[Any, ...]) -> bool:  # alone, or with a move using it
        return any(c[0] == down for _, c, _ in rules.successors(s))

    awaited = (position((four_h,)), position((five_s,), (four_h,)))
    settled = position((five_s, four_h))  # the Four of hearts already lies on a black Five
    for s in (*awaited, settled):
        assert offers(full, s)
    assert all(offers(hasty, s) for s in awaited)
    assert not offers(hasty, settled)
    # ... and together with that card going onto it (alone, the Five's only hasty step
    # would be back up: a card that can go to a foundation goes).
    assert [c for _, c, _ in hasty.successors(awaited[0]) if c[0] == down] == [
        (down, ("tableau/1", "tableau/0", 1))]
    assert [c for _, c, _ in hasty.successors(awaited[1]) if c[0] == down] == [
        (down, ("waste", "tableau/0", 1))]


def test_gate_single_card_takes_a_card_down_only_with_a_move_that_uses_it() -> None:
    # With single_card_moves the full rules (the main search) take a card down from its
    # foundation only together with a move that uses it (Gate._down_for_use, proved there):
    # a card onto it, the card it uncovers onto a bar, or a second card down whose uncovered
    # card goes onto it.
    options = {"single_card_moves": True}
    rules = rules_for("gate", options)
    full = type(rules)(options)
    full.pruning = False
    clubs = [card_of(0, r) for r in range(1, 14)]
    six_h, four_h, nine_c, nine_d = card_of(2, 6), card_of(2, 4), card_of(0, 9), card_of(1, 9)
    down = ("foundation/0", "tableau/0", 1)  # the Five of clubs onto the Six of hearts

    def commands(r: Any, s: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        return [c for _, c, _ in r.successors(s)]

    # A lone Four of hearts on tableau/1 (the Five of clubs up, nothing else):
    # the Five comes down only with the Four onto it.
    lone = ((5, 0, 0, 0), ((six_h,), (four_h,)) + ((),) * 6, ((), ()), (), 0)
    assert (down,) in commands(full, lone)
    assert [c for c in commands(rules, lone) if c[0] == down] == [
        (down, ("tableau/1", "tableau/0", 1))]
    # Nothing could use the Five of clubs on the Six of hearts: it stays up.
    alone = ((5, 0, 0, 0), ((six_h,), (clubs[8],)) + ((),) * 6, ((), ()), (), 0)
    assert (down,) in commands(full, alone)
    assert not [c for c in commands(rules, alone) if c[0] == down]
    # Hearts and spades up to the Eights: one Eight comes down for the other's Seven,
    # which only the second Eight down uncovers (in either order: one is searched).
    both = ((0, 0, 8, 8), ((nine_c,), (nine_d,)) + ((),) * 6, ((), ()), (), 0)
    eight_s, eight_h = ("foundation/3", "tableau/1", 1), ("foundation/2", "tableau/0", 1)
    assert commands(rules, both) == [
        (eight_h, eight_s, ("foundation/3", "tableau/0", 1)),
        (eight_s, eight_h, ("foundation/2", "tableau/1", 1))]
    assert {(eight_h,), (eight_s,)} <= set(commands(full, both))
    # Plain Gate (runs move) keeps every move down.
    assert (down,) in commands(rules_for("gate", {}), lone)
    # On small positions, the search answers as the search without the cuts, and where
    # a card could come down at the start, as the exhaustive search over the engine.
    def applies(game: Game, start: tuple[Any, ...]) -> bool:
        return any(c[0][0].startswith("foundation/") for c in commands(full, start))

    fired = check_small_gate_positions(options, full, random.Random(5), 300, 3, applies)
    assert fired >= 20, fired


def test_gate_single_card_moves_a_card_across_only_with_a_move_that_uses_it() -> None:
    # With single_card_moves the full rules (the main search) move a bar's top card off
    # the card it is built on, across onto that card's twin, only together with a move
    # that uses it, alone only where a second move kept back could be used with it
    # (Gate._across_for_use, _across_alone, proved there); the restarts keep it alone.
    options = {"single_card_moves": True}
    rules = rules_for("gate", options)
    full = type(rules)(options)
    full.pruning = False
    hasty = rules.hastily()

    def bars(*cards: str) -> tuple[tuple[int, ...], ...]:
        piles = tuple(tuple(CODE[c] for c in bar.split()) for bar in cards)
        return piles + ((),) * (8 - len(cards))

    across = ("tableau/0", "tableau/1", 1)  # the Queen of hearts from the King of spades

    def commands(r: Any, s: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        return [c for _, c, _ in r.successors(s)]

    # Clubs to the Jack, diamonds to the Queen, hearts to the Ten, spades to the Nine, the
    # Jack of spades in the waste, no card can go up: the Queen of hearts goes across onto
    # the King of clubs only with the Jack of spades or of clubs onto it, or the Queen of
    # diamonds onto the King of spades it left.
    s = ((11, 12, 10, 9), bars("KS QH", "KC", "TS JH KH", "KD QC QS"), ((), ()), (CODE["JS"],),
         1)
    assert (across,) in commands(full, s)
    paired = [(across, ("waste", "tableau/1", 1)), (across, ("foundation/0", "tableau/1", 1)),
              (across, ("foundation/1", "tableau/0", 1))]
    assert [c for c in commands(rules, s) if c[0] == across] == paired
    assert [c for c in commands(hasty, s) if c[0] == across] == [(across,)]
    # With clubs to the Queen, the Jack of clubs under it could go onto the Queen of hearts
    # once the Queen of clubs has come down (onto the King of hearts): a line may need both
    # kept back, so the move across is kept alone.
    second = ((12, 12, 10, 9), bars("KS QH", "KC", "TS JH KH", "KD QS"), ((), ()),
              (CODE["JS"],), 1)
    assert (across,) in commands(rules, second)
    # Plain Gate (runs move) keeps the move as it is.
    assert (across,) in commands(rules_for("gate", {}), s)
    # On small positions built with a card that can go across, the search answers as the
    # search without the cuts and as the exhaustive search over the engine; the rule is
    # counted where the search met a move across (mostly not at the start: a safe move).
    met = {"cut": 0, "alone": 0}
    kept = rules._across_for_use

    def counted(s: tuple[Any, ...], step: Any) -> Any:
        out = kept(s, step)
        met["alone" if out == [step] else "cut"] += 1
        return out

    rules._across_for_use = counted  # type: ignore[method-assign]
    # Without the dead test (Gate.dead), which proves some of these starts lost at once,
    # before any move across is met; the core, with it, answers the same.
    rules.dead_ends = False
    rng = random.Random(11)
    outcomes = {"won": 0, "lost": 0, "exhaustive": 0}
    for i in range(30):
        game = across_position(options, rng)
        if game.status is not Status.PLAYING:
            continue
        start = rules.from_piles(game.piles)
        result = search(rules, start, ROOMY, native=False)
        assert result.result in ("won", "lost"), f"position {i}"
        outcomes[result.result] += 1
        assert search(full, start, ROOMY, native=False).result == result.result, f"position {i}"
        assert solve_game(game, ROOMY).result == result.result, f"position {i}"  # the core too
        if result.result == "won":
            assert replay(game, result.commands).status is Status.WON
        try:  # the exhaustive search where it is small enough (spaces make it big)
            winnable = brute_force_winnable(game, 20_000)
        except AssertionError:
            continue
        outcomes["exhaustive"] += 1
        assert (result.result == "won") == winnable, f"position {i}: {game.piles}"
    assert met["cut"] >= 50 and met["alone"] >= 10, met
    assert outcomes["won"] >= 5 and outcomes["lost"] >= 5 and outcomes["exhaustive"] >= 15, outcomes


def across_position(options: dict[str, Any], rng: random.Random) -> Game:
    """A small Gate position (8 or 9 cards out, the highest of their suits) where the top
    card of ``tableau/0``, a red Queen, lies on the King of spades, and the King of clubs
    tops ``tableau/1``; each suit's next card is in the stock or under another card (so
    no card goes up at once, which would leave the move across unsearched)."""
    red = rng.choice("DH")
    other = "H" if red == "D" else "D"
    counts = {"C": 2, "S": 2, red: 3, other: rng.randint(1, 2)}
    piles = {f"foundation/{i}": Pile((), tuple(RANKS[r - 1] + s
                                               for r in range(1, 14 - counts[s])))
             for i, s in enumerate(SUITS)}
    nexts = [RANKS[13 - k] + s for s, k in counts.items()]
    rest = ["K" + other] if counts[other] == 2 else []
    rest.append("K" + red)
    rng.shuffle(nexts)
    groups: dict[str, list[str]] = {"tableau/0": [], "tableau/1": []}
    stock = []
    for c in nexts:  # mostly in the stock; else held under other cards, often for good
        if rng.random() < 0.9:
            stock.append(c)
        else:
            groups[rng.choice(["tableau/0", "tableau/1"])].append(c)
    for c in rest:
        groups.setdefault(rng.choice(["tableau/0", "tableau/1", "tableau/2"]),
                          []).append(c)
    groups["tableau/0"] += ["KS", "Q" + red]
    groups["tableau/1"].append("KC")
    for pid, cards in groups.items():
        if cards:
            piles[pid] = Pile((), tuple(cards))
    if stock:
        piles["stock"] = Pile(tuple(stock), ())
    return game_at("gate", options, piles)


def check_small_gate_positions(options: dict[str, Any], full: Any, rng: random.Random,
                               count: int, fewest: int,
                               applies: Callable[[Game, tuple[Any, ...]], bool]) -> int:
    """On ``count`` small Gate positions (``fewest`` to 6 cards), the search with the
    rules' cuts answers as ``full`` (the cuts off), and where a cut ``applies`` at the
    start, as the exhaustive search over the engine; won lines replay. How many it
    applied to."""
    rules = rules_for("gate", options)
    fired = 0
    for i in range(count):
        game = small_position("gate", options, rng, rng.randint(fewest, 6))
        if game.status is not Status.PLAYING:
            continue
        start = rules.from_piles(game.piles)
        result = solve_game(game, ROOMY)
        assert result.result in ("won", "lost"), f"position {i}"
        assert search(full, start, ROOMY).result == result.result, f"position {i}"
        if applies(game, start):
            fired += 1
            assert (result.result == "won") == brute_force_winnable(game), \
                f"position {i}: {game.piles}"
        if result.result == "won":
            assert replay(game, result.commands).status is Status.WON
    return fired


@pytest.mark.parametrize("native", [False, True], ids=["reference", "core"])
def test_a_paused_search_resumes_where_it_stopped(native: bool) -> None:
    # Run in slices of 37 positions, the search counts the same positions and gives the
    # same answer and line as in one run: the table and the path are kept between runs.
    if native and not core.AVAILABLE:
        pytest.skip("the native core was not built")
    for variant_id, options in CONFIGS:
        rules = rules_for(variant_id, options)
        for seed in (1, 2):
            start = rules.from_piles(Game.deal(variant_id, seed, options).piles)
            whole = (core.depth_first(rules, start) if native else DepthFirst(rules, start)
                     ).run(4_000, 1e9, time.perf_counter)
            sliced = core.depth_first(rules, start) if native else DepthFirst(rules, start)
            runs = 0
            while True:
                runs += 1
                answer = sliced.run(min(sliced.nodes + 37, 4_000), 1e9, time.perf_counter)
                if answer[0] != "unknown" or answer[2] >= 4_000:
                    break
            assert answer == whole, (variant_id, seed)
            assert runs > 1 or whole[2] < 37


# Gilbert deals that are lost, with the positions of their whole reachable game.
LOST_GILBERT = (208, 573, 681, 403)


def test_the_main_search_proves_a_loss_while_the_restarts_run() -> None:
    # Restarts in hasty mode prove no loss; the main search, taking turns with them,
    # keeps one table for the whole budget: six times the positions of the game's whole
    # reachable search prove the loss. (The full search that once came after the
    # restarts, with a fresh table and a tenth of the budget, ran out on each.)
    rules = rules_for("gilbert", {})
    for seed in LOST_GILBERT:
        start = rules.from_piles(Game.deal("gilbert", seed, {}).piles)
        reachable = DepthFirst(rules, start).run(10**9, 1e9, time.perf_counter)
        assert reachable[0] == "lost"
        budget = Budget(6 * reachable[2], 1e9)
        for native in (False, True) if core.AVAILABLE else (False,):
            result = search(rules, start, budget, native=native)
            assert result.result == "lost", (seed, reachable[2], result)
            assert result.nodes <= budget.max_nodes


def test_shamrocks_best_first_scores_four_a_card_up_less_the_cards_above_a_suits_next() -> None:
    # Clubs up to the Two, nothing else: the suits' next cards are 3C, AD, AH, AS.
    rules = rules_for("shamrocks", {})
    fans = (("3C", "9D", "KS"), ("AD", "AH"), ("AS",), ("5C", "3D"))
    piles = {"foundation/0": Pile((), ("AC", "2C"))}
    piles.update({f"tableau/{i}": Pile((), cards) for i, cards in enumerate(fans)})
    start = rules.from_piles({**_empty("shamrocks"), **piles})
    # 3C under two cards, AD under one; AH and AS on top; 3D is not its suit's next.
    assert rules.score(start) == 4 * 2 - 2 - 1  # the core's: tests/solver/test_native.py


def test_shamrocks_searches_best_first_with_the_full_rules_before_the_restarts() -> None:
    # Deal 468: the hasty best-first search runs out of steps at once (its hasty game is
    # searched whole), and the main search does not win within the budget; the full
    # rules' best-first search wins within its share.
    rules = rules_for("shamrocks", {})
    start = rules.from_piles(Game.deal("shamrocks", 468, {}).piles)
    budget = Budget(max_nodes=10_000, max_seconds=1e9)
    for native in (False, True) if core.AVAILABLE else (False,):
        won = search(rules, start, budget, native=native)
        assert won.result == "won" and won.nodes < 2_500, won
        assert replay(Game.deal("shamrocks", 468, {}), won.commands).status is Status.WON
    without = rules_for("shamrocks", {})
    without.full_best_first = False  # type: ignore[misc]
    assert search(without, start, budget).result == "unknown"


def test_shamrocks_other_scores_take_off_buried_cards_or_full_fans() -> None:
    # Clubs up to the Two; 3C under 9D and 5C (5C a higher club above it), AD under AH;
    # one full fan.
    rules = rules_for("shamrocks", {})
    fans = (("3C", "9D", "5C"), ("AD", "AH"), ("AS",))
    piles = {"foundation/0": Pile((), ("AC", "2C"))}
    piles.update({f"tableau/{i}": Pile((), cards) for i, cards in enumerate(fans)})
    start = rules.from_piles({**_empty("shamrocks"), **piles})
    score = 4 * 2 - 2 - 1  # 3C under two cards, AD under one (Shamrocks.score)
    assert rules.guided("score").guide_score(start) == score
    assert rules.guided("count").guide_score(start) == 2
    assert rules.guided("buried").guide_score(start) == score - 1  # 5C above 3C
    assert rules.guided("full_fans").guide_score(start) == score - 2  # one fan of three


@pytest.mark.parametrize(("seed", "guide"), [(1427, "count"), (9252, "buried"),
                                             (6309, "full_fans")])
def test_shamrocks_searches_best_first_by_more_guides_before_the_restarts(
        seed: int, guide: str) -> None:
    # Each deal is won within the budget by the full rules' best-first search with this
    # guide (after the hasty and the full best-first searches by Shamrocks.score, which do
    # not win it), and not without the further searches.
    rules = rules_for("shamrocks", {})
    rules.more_best_first = (guide,)  # type: ignore[misc]
    start = rules.from_piles(Game.deal("shamrocks", seed, {}).piles)
    budget = Budget(max_nodes=50_000, max_seconds=1e9)
    won = search(rules, start, budget)
    assert won.result == "won" and won.nodes < budget.max_nodes, won
    assert replay(Game.deal("shamrocks", seed, {}), won.commands).status is Status.WON
    assert guide in rules_for("shamrocks", {}).more_best_first
    rules.more_best_first = ()  # type: ignore[misc]
    assert search(rules, start, budget).result == "unknown"


def _empty(variant_id: str) -> dict[str, Pile]:
    from service.engine import get_variant

    return get_variant(variant_id)({}).empty_piles()
