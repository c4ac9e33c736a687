"""Dead positions (Rules.dead, proved in shamrocks.py, gilbert.py and gate.py): never a winnable
position, on many positions small enough for an exhaustive search; the same answer in
the native core as in the reference; and the search proves a dead start lost at once."""

from __future__ import annotations

import random
import time
from collections.abc import Iterable, Iterator
from typing import Any

import pytest

from service.engine import Game, Pile
from service.engine.cards import RANKS, SUITS
from service.solver import Budget, native
from service.solver.rules import Rules, State
from service.solver.search import DepthFirst, search
from service.solver.variants import rules_for

from .helpers import brute_force_winnable, game_at, random_positions, small_position

needs_core = pytest.mark.skipif(not native.AVAILABLE, reason="the native core was not built")
POSITIONS = 10_000  # per game, each decided by an exhaustive search
RUNS_POSITIONS = 8_000  # Gilbert's with runs, on top
EXHAUSTIVE = 400_000  # positions: more than any of these small positions has (asserted)


def _out_cards(rng: random.Random, two_ways: bool) -> tuple[list[str], dict[str, Pile]]:
    """One to four cards of each suit out of the foundations, the rest on them in order
    (Gilbert: each suit's lowest ranks on its ascending foundation, its highest on the
    descending one, split at random)."""
    out: list[str] = []
    piles: dict[str, Pile] = {}
    for i, s in enumerate(SUITS):
        k = rng.randint(1, 4)
        a = rng.randint(max(0, 4 - k // 2), min(13 - k, 9)) if two_ways else 13 - k
        d = 13 - k - a
        out += [RANKS[r - 1] + s for r in range(a + 1, 14 - d)]
        piles[f"foundation/{i}"] = Pile((), tuple(RANKS[r - 1] + s for r in range(1, a + 1)))
        if two_ways:
            piles[f"foundation/{4 + i}"] = Pile((), tuple(RANKS[r - 1] + s
                                                          for r in range(13, 13 - d, -1)))
    rng.shuffle(out)
    return out, piles


def shamrocks_position(rng: random.Random) -> dict[str, Pile]:
    """The cards out in as few fans of at most three as hold them: few landings, so the
    test has something to find."""
    out, piles = _out_cards(rng, two_ways=False)
    fans = rng.sample(range(18), (len(out) + 2) // 3)
    held: dict[int, list[str]] = {f: [] for f in fans}
    for c in out:
        held[rng.choice([f for f in fans if len(held[f]) < 3])].append(c)
    for f, cards in held.items():
        piles[f"tableau/{f}"] = Pile((), tuple(cards))
    return piles


def gilbert_position(rng: random.Random) -> dict[str, Pile]:
    """The cards out mostly in one or two tableau piles, mostly face down, some at times
    in the stock and waste."""
    out, piles = _out_cards(rng, two_ways=True)
    places = rng.sample([f"tableau/{i}" for i in range(7)], rng.randint(1, 2))
    talon = ["stock", "waste"] if rng.random() < 0.3 else []
    held: dict[str, list[str]] = {}
    for c in out:
        held.setdefault(rng.choice([*places, *places, *places, *talon]), []).append(c)
    for pid, cards in held.items():
        if pid == "stock":
            piles[pid] = Pile(tuple(cards), ())
        elif pid == "waste":
            piles[pid] = Pile((), tuple(cards))
        else:
            n = rng.randint(max(0, len(cards) - 2), len(cards) - 1)
            piles[pid] = Pile(tuple(cards[:n]), tuple(cards[n:]))
    return piles


def gilbert_runs_position(rng: random.Random) -> dict[str, Pile]:
    """The cards out in one to three tableau piles, any number of them face up, the
    face-up cards mostly in descending rank (so often in runs that move as one)."""
    out, piles = _out_cards(rng, two_ways=True)
    places = rng.sample([f"tableau/{i}" for i in range(7)], rng.randint(1, 3))
    held: dict[str, list[str]] = {}
    for c in out:
        held.setdefault(rng.choice(places), []).append(c)
    for pid, cards in held.items():
        n = rng.randint(0, len(cards) - 1)
        up = cards[n:]
        if rng.random() < 0.7:
            up.sort(key=lambda c: -RANKS.index(c[0]))
        piles[pid] = Pile(tuple(cards[:n]), tuple(up))
    return piles


MAKERS = {"shamrocks": shamrocks_position, "gilbert": gilbert_position,
          "gilbert-runs": gilbert_runs_position}


def positions(variant_id: str, seed: int, count: int,
              maker: str | None = None) -> Iterator[tuple[dict[str, Pile], State]]:
    rng = random.Random(seed)
    rules = rules_for(variant_id, {})
    for _ in range(count):
        piles = MAKERS[maker or variant_id](rng)
        full = get_empty(variant_id)
        full.update(piles)
        yield full, rules.from_piles(full)


def get_empty(variant_id: str) -> dict[str, Pile]:
    from service.engine import get_variant

    return get_variant(variant_id)({}).empty_piles()


def exhaustive(rules: Rules, start: State) -> str:
    """Won or lost, by the search of every reachable position (no dead test), in the core
    where it was built."""
    return exhaustive_nodes(rules, start)[0]


def exhaustive_within(rules: Rules, start: State) -> str:
    """:func:`exhaustive`'s answer, or "too big" where the reachable game has more than
    EXHAUSTIVE positions."""
    result, _ = search_whole(rules, start)
    return "too big" if result == "unknown" else result


def exhaustive_nodes(rules: Rules, start: State) -> tuple[str, int]:
    """:func:`exhaustive`'s answer, and how many positions it searched."""
    result, nodes = search_whole(rules, start)
    assert result != "unknown", f"{start}: more than {EXHAUSTIVE} positions"
    return result, nodes


def search_whole(rules: Rules, start: State) -> tuple[str, int]:
    """Every legal move tried, no pruning either, so that the answer does not lean on a
    proof; "unknown" past EXHAUSTIVE positions."""
    plain = rules_for(rules.variant_id, rules.options)
    plain.dead_ends = False
    plain.pruning = False
    search_ = native.depth_first(plain, start) if native.AVAILABLE else DepthFirst(plain, start)
    result, _, nodes = search_.run(EXHAUSTIVE, 1e9, time.perf_counter)
    return result, nodes


def tally(rules: Rules, start: State, answer: str, answers: dict[str, int], where: str) -> None:
    """Counts ``answer`` (the exhaustive search's) and whether ``start`` is called dead, by
    the reference and, where it was built, by the core alike; a position called dead
    must not be won."""
    answers[answer] += 1
    dead = rules.dead(start)
    if native.AVAILABLE:
        assert native.dead(rules, start) == dead, where
    if dead:
        answers["dead"] += 1
        assert answer != "won", f"{where}: called dead, and won"


@pytest.mark.parametrize("variant_id", ["shamrocks", "gilbert"])
def test_a_dead_position_is_never_winnable(variant_id: str) -> None:
    rules = rules_for(variant_id, {})
    answers = {"dead": 0, "lost": 0, "won": 0}
    checked_by_engine = 0
    for i, (piles, start) in enumerate(positions(variant_id, 17, POSITIONS)):
        if rules.won(start):
            continue
        result, nodes = exhaustive_nodes(rules, start)
        answers[result] += 1
        if not rules.dead(start):
            continue
        answers["dead"] += 1
        assert result == "lost", f"position {i} called dead is won: {piles}"
        # The exhaustive search over the engine agrees, where it is small enough (the
        # engine's positions tell apart every draw).
        if checked_by_engine < 15 and nodes < 2_000:
            checked_by_engine += 1
            assert not brute_force_winnable(game_at(variant_id, {}, piles)), f"position {i}"
    # The test fires (measured: 702 of Shamrocks' 1,685 lost positions here, 1,980 of
    # Gilbert's 3,155, where it was 161 before Top(C) and the Sevens), and both answers
    # are well represented.
    assert answers["dead"] >= 100 and answers["won"] >= 1000, answers
    assert checked_by_engine == 15


def test_a_dead_gilbert_position_with_runs_is_never_winnable() -> None:
    # Positions with many face-up cards, often in runs (a run moves as one, so a card on
    # a run's card can leave with it): the test is sound there too.
    rules = rules_for("gilbert", {})
    answers = {"dead": 0, "lost": 0, "won": 0}
    for i, (piles, start) in enumerate(positions("gilbert", 19, RUNS_POSITIONS, "gilbert-runs")):
        if rules.won(start):
            continue
        tally(rules, start, exhaustive(rules, start), answers, f"position {i}: {piles}")
    # Measured: 575 of the 1,945 lost positions here called dead, none of the 6,055 won
    # ones.
    assert answers["dead"] >= 100 and answers["won"] >= 1000, answers


def with_foundations(variant_id: str, piles: dict[str, str], up: dict[str, int],
                     down: dict[str, int] | None = None,
                     options: dict[str, Any] | None = None) -> tuple[Rules, State]:
    """The position of ``piles`` (pile id: "face-down cards | face-up cards"), with ``up[s]``
    cards of suit ``s`` on its ascending foundation (and ``down[s]`` on the descending)."""
    full = get_empty(variant_id)
    for i, s in enumerate(SUITS):
        full[f"foundation/{i}"] = Pile((), tuple(RANKS[r] + s for r in range(up.get(s, 0))))
        if down is not None:
            full[f"foundation/{4 + i}"] = Pile((), tuple(RANKS[12 - r] + s
                                                         for r in range(down.get(s, 0))))
    for pid, text in piles.items():
        hidden, _, shown = text.rpartition("|")
        full[pid] = Pile(tuple(hidden.split()), tuple(shown.split()))
    rules = rules_for(variant_id, options or {})
    return rules, rules.from_piles(full)


def test_shamrocks_kings_on_their_own_queens_are_dead() -> None:
    # Each King lies above the Queen of its suit (so goes to no foundation), and every
    # Queen, the only cards a King goes on, lies below one of the two Kings.
    jacks = {s: 11 for s in SUITS}
    rules, start = with_foundations("shamrocks", {"tableau/0": "QC QD KC", "tableau/1": "QH QS KH",
                                                  "tableau/2": "KD", "tableau/3": "KS"}, jacks)
    assert rules.dead(start)
    assert exhaustive(rules, start) == "lost"
    # The Queen of spades alone in a fan: the King of clubs goes onto it, and all is won.
    rules, start = with_foundations("shamrocks", {"tableau/0": "QC QD KC", "tableau/1": "QH KH",
                                                  "tableau/2": "KD", "tableau/3": "KS",
                                                  "tableau/4": "QS"}, jacks)
    assert not rules.dead(start)
    assert exhaustive(rules, start) == "won"


def test_shamrocks_a_card_that_moved_lands_only_on_a_fan_of_one() -> None:
    # KS goes up; then KD and KH each lie on the other's Queen (QH, QD), and only a Queen
    # takes a King. QS may come back from its foundation, but only onto KC or KH at
    # index 2, where nothing may go on it: a card that has moved is a landing only when
    # it went onto a fan of one card (a bottom), and none here is a top.
    up = {"C": 11, "D": 11, "H": 11, "S": 12}
    rules, start = with_foundations("shamrocks", {"tableau/0": "QH KD KS", "tableau/1": "QC KC",
                                                  "tableau/2": "QD KH"}, up)
    assert rules.dead(start)
    assert exhaustive(rules, start) == "lost"
    if native.AVAILABLE:
        assert native.dead(rules, start)


def test_shamrocks_never_moves_a_lone_card_across_and_answers_the_same() -> None:
    # Shamrocks' pruning (proved in Shamrocks._steps): a card alone on its fan never goes
    # onto another fan. On small positions the search with it answers as the exhaustive
    # search with every legal move, with fewer positions.
    rules = rules_for("shamrocks", {})
    rules.dead_ends = False
    assert rules.pruning
    lone = fewer = 0
    for seed in range(1, 21):  # on positions of random games from deals
        for game in random_positions("shamrocks", {}, seed, steps=60):
            start = rules.from_piles(game.piles)
            lone += any(len(start[1][int(c[0].split("/")[1])]) == 1 and c[1].startswith("tableau/")
                        for _, c, _ in rules.moves(start))
            for step in rules.steps(start):  # no step moves a lone card across, in any part
                s = start
                for c in rules.commands(step):
                    assert c in {m for _, m, _ in rules.moves(s)}, (start, step)
                    assert not (c[0].startswith("tableau/") and c[1].startswith("tableau/")
                                and len(s[1][int(c[0].split("/")[1])]) == 1), (start, step)
                    s = next(t for _, m, t in rules.moves(s) if m == c)
                assert s == rules.play(start, step)
    answers = {"won": 0, "lost": 0}
    for _, start in positions("shamrocks", 31, 2_000):
        if rules.won(start):
            continue
        search_ = native.depth_first(rules, start) if native.AVAILABLE else DepthFirst(rules, start)
        result, _, nodes = search_.run(EXHAUSTIVE, 1e9, time.perf_counter)
        whole, whole_nodes = exhaustive_nodes(rules, start)
        assert result == whole, start
        answers[whole] += 1
        fewer += nodes < whole_nodes
    assert lone >= 100 and fewer >= 100, (lone, fewer)
    assert answers["won"] >= 100 and answers["lost"] >= 100, answers


def _touches(c: tuple[str, str, int], fans: tuple[str, ...]) -> bool:
    return c[0] in fans or c[1] in fans


def test_shamrocks_moves_a_card_across_only_with_a_move_that_uses_it() -> None:
    # Shamrocks._combined (proved there): a fan's top card goes onto another fan only
    # together with a move straight after that takes from or puts onto one of the two
    # fans (not moving that card again), or with a second card across and the card the
    # first uncovered onto one of the second's fans. The restarts (hasty) keep single
    # moves. On small positions the search answers as the exhaustive search with every
    # legal move.
    rules = rules_for("shamrocks", {})
    hasty = rules.hastily()
    pairs = triples = parked = 0
    for seed in range(1, 21):  # on positions of random games from deals
        for game in random_positions("shamrocks", {}, seed, steps=60):
            start = rules.from_piles(game.piles)
            if any(c[0].startswith("tableau/") and c[1].startswith("foundation/")
                   for _, c, _ in rules.moves(start)):
                hasty_steps = hasty.steps(start)
                assert len(hasty_steps) == 1 and len(hasty.commands(hasty_steps[0])) == 1
            else:
                assert all(len(hasty.commands(st)) == 1 for st in hasty.steps(start))
            firsts = set()
            for step in rules.steps(start):
                cmds = rules.commands(step)
                across = cmds[0][0].startswith("tableau/") and cmds[0][1].startswith("tableau/")
                assert len(cmds) == 1 or across, cmds
                if not across:
                    continue
                assert len(cmds) in (2, 3), cmds  # never a card across alone
                firsts.add(cmds[0])
                if len(cmds) == 2:
                    pairs += 1
                    assert _touches(cmds[1], cmds[0][:2]) and cmds[1][0] != cmds[0][1], cmds
                else:
                    triples += 1
                    first, second, third = cmds
                    assert not _touches(second, first[:2]), cmds
                    assert third[0] == first[0] and third[1] in second[:2], cmds
            parked += any(c[0].startswith("tableau/") and c[1].startswith("tableau/")
                          and c not in firsts for _, c, _ in rules.moves(start)
                          if len(start[1][int(c[0].split("/")[1])]) > 1)
    # Measured: 29,136 pairs, 8,933 triples, and 430 positions with a card across that
    # nothing uses (on the positions of 20 random games of 60 moves).
    assert pairs >= 500 and triples >= 100 and parked >= 100, (pairs, triples, parked)
    plain = rules_for("shamrocks", {})
    plain.dead_ends = False
    answers = {"won": 0, "lost": 0}
    combined = 0  # positions whose first steps hold a card across with its use
    for _, start in positions("shamrocks", 37, 2_000):
        if plain.won(start):
            continue
        search_ = native.depth_first(plain, start) if native.AVAILABLE else DepthFirst(plain, start)
        result, _, _ = search_.run(EXHAUSTIVE, 1e9, time.perf_counter)
        assert result == exhaustive(plain, start), start
        answers[result] += 1
        combined += any(len(plain.commands(st)) > 1 for st in plain.steps(start))
    # Measured: 1,657 won, 343 lost, 1,072 with a card across and its use at the start.
    assert answers["won"] >= 100 and answers["lost"] >= 100 and combined >= 100, (answers, combined)


def test_gilbert_a_card_face_down_above_its_suit_and_its_bases_is_dead() -> None:
    # 6H, face down, above 5H and 9H (so no foundation takes it while they are below it)
    # and above both black Sevens, the only cards it goes on; not a Seven.
    up = {"C": 6, "D": 12, "H": 4, "S": 6}
    down = {"C": 6, "D": 0, "H": 4, "S": 6}
    piles = {"tableau/0": "5H 9H 7C 7S 6H | KD", "stock": "7H 8H |"}
    rules, start = with_foundations("gilbert", piles, up, down)
    assert rules.dead(start)
    assert exhaustive(rules, start) == "lost"
    # The Seven of spades in the stock instead: 6H may go onto it, not dead.
    piles = {"tableau/0": "5H 9H 7C 6H | KD", "stock": "7H 8H 7S |"}
    rules, start = with_foundations("gilbert", piles, up, down)
    assert not rules.dead(start)


def test_gilbert_a_card_whose_bases_can_never_be_tableau_tops_is_dead() -> None:
    # JH, face up, above TH and KH (so no foundation takes it while they are below it);
    # it goes only on QC or QS, in the stock, and a Queen comes to the tableau only onto
    # a red King there: KH lies below JH, and KD, in the stock, can never come to the
    # tableau (a King goes on no card, and an empty pile takes only a Seven).
    up = {"C": 11, "D": 12, "H": 9, "S": 11}
    down = {"C": 1, "D": 0, "H": 0, "S": 1}
    piles = {"tableau/0": "TH KH | JH", "stock": "QC QS KD QH |"}
    rules, start = with_foundations("gilbert", piles, up, down)
    assert rules.dead(start)
    assert exhaustive(rules, start) == "lost"
    if native.AVAILABLE:
        assert native.dead(rules, start)
    # KD in the tableau instead: QC goes onto it, JH onto QC, and all is won.
    piles = {"tableau/0": "TH KH | JH", "tableau/1": "| KD", "stock": "QC QS QH |"}
    rules, start = with_foundations("gilbert", piles, up, down)
    assert not rules.dead(start)
    assert exhaustive(rules, start) == "won"


def test_gilbert_a_card_on_its_run_leaves_with_the_run() -> None:
    # 6D lies on 7S, built on it, above 5D and 7D (so no foundation takes it) and above
    # 7C, its other base: alone, it could never move. But a run from 7S carries it into
    # an empty pile once 4D has gone up, and all is won: a test that counted 6D stuck on
    # its own (as one starting with every tableau card would, unless a card on a run's
    # card stays stuck only while that card does) calls this winnable position dead.
    up = {"C": 5, "D": 3, "H": 9, "S": 6}
    down = {"C": 6, "D": 6, "H": 3, "S": 5}
    piles = {"tableau/4": "7D 7C 6C TH 5D 8S | 7S 6D 4D"}
    rules, start = with_foundations("gilbert", piles, up, down)
    assert not rules.dead(start)
    if native.AVAILABLE:
        assert not native.dead(rules, start)
    assert exhaustive(rules, start) == "won"


def test_gilbert_a_seven_is_stuck_while_every_pile_holds_a_stuck_card() -> None:
    # Each Seven lies above a lower and a higher card of its suit and above one of its
    # bases, the other one below a Seven elsewhere; each Queen above its King, its bases
    # the Kings below the other Queens and KC, on its descending foundation (a King never
    # comes back to the tableau). Every pile holds a card that can never move, so no
    # pile empties for a Seven.
    up = {"C": 1, "D": 1, "H": 1, "S": 1}
    down = {"C": 5}
    piles = {"tableau/0": "2H 8C | 7H", "tableau/1": "2S 8H | 7S", "tableau/2": "2D 8S | 7D",
             "tableau/3": "2C 3C 4C 5C 6C 8D | 7C",
             "tableau/4": "KH 3H 4H 5H 6H 9H TH JH | QH",
             "tableau/5": "KS 3S 4S 5S 6S 9S TS JS | QS",
             "tableau/6": "KD 3D 4D 5D 6D 9D TD JD | QD"}
    rules, start = with_foundations("gilbert", piles, up, down)
    assert rules.dead(start)
    assert exhaustive(rules, start) == "lost"
    if native.AVAILABLE:
        assert native.dead(rules, start)
    # The three Kings on their descending foundations instead: the Queens go up, their
    # piles empty, and each Seven may go to an empty pile, freeing its bases.
    for i in (4, 5, 6):
        piles[f"tableau/{i}"] = piles[f"tableau/{i}"][3:]
    rules, start = with_foundations("gilbert", piles, up, {"C": 5, "D": 1, "H": 1, "S": 1})
    assert not rules.dead(start)
    if native.AVAILABLE:
        assert not native.dead(rules, start)
    assert exhaustive(rules, start) == "won"


@needs_core
@pytest.mark.parametrize("variant_id", ["shamrocks", "gilbert"])
def test_the_core_calls_the_same_positions_dead(variant_id: str) -> None:
    rules = rules_for(variant_id, {})
    seen = {True: 0, False: 0}
    for _, start in positions(variant_id, 23, POSITIONS):
        answer = rules.dead(start)
        assert native.dead(rules, start) == answer, start
        seen[answer] += 1
    for seed in range(1, 41):  # and positions of random games from deals
        for game in random_positions(variant_id, {}, seed, steps=60):
            start = rules.from_piles(game.piles)
            answer = rules.dead(start)
            assert native.dead(rules, start) == answer, (seed, start)
            seen[answer] += 1
    assert seen[True] >= 100 and seen[False] >= 100, seen


def dead_deal(variant_id: str) -> int:
    """The first deal whose start is dead (found by the test, not assumed)."""
    rules = rules_for(variant_id, {})
    for seed in range(1, 20_000):
        if rules.dead(rules.from_piles(Game.deal(variant_id, seed, {}).piles)):
            return seed
    raise AssertionError(f"no {variant_id} deal starts dead")


@pytest.mark.parametrize("native_core", [False, True], ids=["reference", "core"])
def test_a_dead_start_is_proved_lost_at_once(native_core: bool) -> None:
    if native_core and not native.AVAILABLE:
        pytest.skip("the native core was not built")
    seed = dead_deal("gilbert")
    rules = rules_for("gilbert", {})
    start = rules.from_piles(Game.deal("gilbert", seed, {}).piles)
    budget = Budget(max_nodes=1_000, max_seconds=1e9)
    result = search(rules, start, budget, native=native_core)
    assert (result.result, result.nodes) == ("lost", 1)
    rules.dead_ends = False  # without the test, the deal's game is too big to search whole
    assert search(rules, start, budget, native=native_core).result == "unknown"


def cut_where_dead(rules: Rules, plain: Rules, starts: Iterable[State],
                   native_core: bool) -> int:
    """Searches each start not yet won with ``rules`` (dead positions cut) and ``plain``
    (none cut): the same answer, never unknown; returns how many counted fewer positions."""
    fewer = 0
    budget = Budget(max_nodes=EXHAUSTIVE, max_seconds=1e9)
    for start in starts:
        if rules.won(start):
            continue
        cut = search(rules, start, budget, native=native_core)
        whole = search(plain, start, budget, native=native_core)
        assert cut.result == whole.result != "unknown", start
        fewer += cut.nodes < whole.nodes
    return fewer


@pytest.mark.parametrize("native_core", [False, True], ids=["reference", "core"])
@pytest.mark.parametrize("variant_id", ["shamrocks", "gilbert"])
def test_the_search_leaves_out_dead_positions_and_answers_the_same(variant_id: str,
                                                                   native_core: bool) -> None:
    # Shamrocks and Gilbert test every position they reach: on small positions the answer
    # is the exhaustive search's, with fewer positions counted wherever a dead one was cut.
    if native_core and not native.AVAILABLE:
        pytest.skip("the native core was not built")
    rules = rules_for(variant_id, {})
    plain = rules_for(variant_id, {})
    plain.dead_ends = False
    starts = (start for _, start in positions(variant_id, 29, 300))
    assert cut_where_dead(rules, plain, starts, native_core) >= 10


@pytest.mark.parametrize("native_core", [False, True], ids=["reference", "core"])
def test_gilbert_s_hasty_search_does_not_test_every_position(native_core: bool) -> None:
    # The hasty restarts only look for wins: they search as without the dead test (the
    # same positions counted), where a hasty search with it would count fewer.
    if native_core and not native.AVAILABLE:
        pytest.skip("the native core was not built")
    hasty = rules_for("gilbert", {}).hastily()
    plain = rules_for("gilbert", {})
    plain.dead_ends = False
    cutting = rules_for("gilbert", {}).hastily()
    cutting.dead_ends = True  # what the hasty search would be with the test
    budget = Budget(max_nodes=EXHAUSTIVE, max_seconds=1e9)
    differs = 0
    for _, start in positions("gilbert", 29, 300):
        if hasty.won(start):
            continue
        uncut = search(plain.hastily(), start, budget, native=native_core)
        found = search(hasty, start, budget, native=native_core)
        assert (found.result, found.commands, found.nodes) == (
            uncut.result, uncut.commands, uncut.nodes), start
        cut = search(cutting, start, budget, native=native_core)
        assert cut.result == uncut.result or "unknown" in (cut.result, uncut.result), start
        differs += cut.nodes != uncut.nodes
    assert differs >= 10, differs


# --- Gate with single_card_moves (Gate.dead) ----------------------------------------------

SINGLE = {"single_card_moves": True}
ALL_BUT_SPADES = {"C": 13, "D": 13, "H": 13, "S": 1}


def test_gate_single_card_a_king_on_a_lower_card_of_its_suit_is_dead() -> None:
    # KS lies on 3S in a bar: a King goes on no card, and no foundation takes it while
    # 3S is below it; a bar's card never goes into a space.
    piles = {"tableau/0": "3S KS", "tableau/1": "2S", "stock": "4S 5S 6S 7S 8S 9S TS JS QS |"}
    rules, start = with_foundations("gate", piles, ALL_BUT_SPADES, options=SINGLE)
    assert rules.dead(start)
    assert exhaustive(rules, start) == "lost"
    if native.AVAILABLE:
        assert native.dead(rules, start)
    # Plain Gate has no test (a run may carry a card along).
    plain, plain_start = with_foundations("gate", piles, ALL_BUT_SPADES)
    assert not plain.dead(plain_start)
    # KS below 3S instead: 2S and 3S go up, then the rest from the stock, and all is won.
    piles["tableau/0"] = "KS 3S"
    rules, start = with_foundations("gate", piles, ALL_BUT_SPADES, options=SINGLE)
    assert not rules.dead(start)
    assert exhaustive(rules, start) == "won"


def test_gate_single_card_the_waste_is_stuck_while_every_bar_holds_a_stuck_card() -> None:
    # 5S, the waste's top, lies on 2S: no foundation takes it, and its bases 6H and 6D lie
    # on their foundations below the Kings, which go on no card, so they never come down.
    # Each bar holds a spade that no foundation takes while 2S is in the waste, with no
    # base that could come to a bar: no bar ever empties, so 5S never has a space.
    piles = {"tableau/0": "KS", "tableau/1": "QS", "tableau/2": "JS", "tableau/3": "TS",
             "tableau/4": "9S", "tableau/5": "8S", "tableau/6": "7S", "tableau/7": "6S 4S 3S",
             "waste": "| 2S 5S"}
    rules, start = with_foundations("gate", piles, ALL_BUT_SPADES, options=SINGLE)
    assert rules.dead(start)
    assert exhaustive(rules, start) == "lost"
    if native.AVAILABLE:
        assert native.dead(rules, start)
    # KS under 6S instead, its bar empty: 5S goes into the space, and all is won.
    del piles["tableau/0"]
    piles["tableau/7"] = "KS 6S 4S 3S"
    rules, start = with_foundations("gate", piles, ALL_BUT_SPADES, options=SINGLE)
    assert not rules.dead(start)
    assert exhaustive(rules, start) == "won"


def test_a_dead_gate_single_card_position_is_never_winnable() -> None:
    # Small positions (bars, pillars, waste and stock): each one called dead is lost by
    # the exhaustive search over every legal move (the engine's own search is too big
    # here: it tells apart which empty bar a card went into), and the core calls the
    # same positions dead.
    rules = rules_for("gate", SINGLE)
    rng = random.Random(31)
    answers = {"dead": 0, "lost": 0, "won": 0, "too big": 0}
    for i in range(POSITIONS):
        game = small_position("gate", SINGLE, rng, rng.randint(6, 12))
        start = rules.from_piles(game.piles)
        if rules.won(start):
            continue
        tally(rules, start, exhaustive_within(rules, start), answers, f"position {i}: {start}")
    # Measured: 2,015 of the 2,078 lost ones called dead, none of the 7,919 won ones, 3 too
    # big to search whole here.
    assert answers["too big"] <= POSITIONS // 100, answers
    assert answers["dead"] >= POSITIONS // 10 and answers["won"] >= POSITIONS // 2, answers


@pytest.mark.parametrize("native_core", [False, True], ids=["reference", "core"])
def test_gate_single_card_search_leaves_out_dead_positions_and_answers_the_same(
        native_core: bool) -> None:
    if native_core and not native.AVAILABLE:
        pytest.skip("the native core was not built")
    # The search tests only its start (Gate.dead's docstring): with the test at every
    # position, as it may be, the answers on small positions are the exhaustive ones.
    rules = rules_for("gate", SINGLE)
    rules.dead_in_search = True
    plain = rules_for("gate", SINGLE)
    plain.dead_ends = False
    rng = random.Random(37)
    starts = (rules.from_piles(small_position("gate", SINGLE, rng, rng.randint(6, 12)).piles)
              for _ in range(150))
    assert cut_where_dead(rules, plain, starts, native_core) >= 10
