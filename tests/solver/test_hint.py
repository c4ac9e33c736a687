"""Hints: from the public view only, so the face-down cards never change them."""

from __future__ import annotations

import random
from typing import Any

import pytest

from service.engine import DRAW, UNDO, Game, Move, Pile, Status
from service.solver import Budget, HintResult, seen_stock, suggest
from service.solver.hint import history, shown_in_game, view_key
from tests.commands import from_json

from .helpers import CONFIGS, config_id, game_at, random_positions, small_position

SAMPLE = Budget(max_nodes=400, max_seconds=60.0)  # nodes, not seconds, end each sample: repeatable


def hint(game: Game, rng_seed: int = 5, samples: int = 4) -> HintResult:
    return suggest(game.variant.id, game.variant.options, game.public_piles(),
                   samples=samples, budget_per_sample=SAMPLE, rng_seed=rng_seed)


def with_face_down_cards_shuffled(game: Game, rng: random.Random, only: str = "") -> Game:
    """The same visible position with the face-down cards (of the piles whose id starts
    with ``only``) dealt differently."""
    ids = [k for k in game.piles if k.startswith(only)]
    hidden = [c for k in ids for c in game.piles[k].down]
    rng.shuffle(hidden)
    piles, at = dict(game.piles), 0
    for pile_id in ids:
        pile = game.piles[pile_id]
        n = len(pile.down)
        piles[pile_id] = Pile(tuple(hidden[at:at + n]), pile.up)
        at += n
    return game_at(game.variant.id, game.variant.options, piles)


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_a_hint_depends_only_on_the_visible_position(config: tuple[str, dict[str, Any]]) -> None:
    variant_id, options = config
    rng = random.Random(3)
    differed = 0
    for seed in (1, 2):
        game = random_positions(variant_id, options, seed, steps=15)[-1]
        if game.status is not Status.PLAYING:
            continue
        other = with_face_down_cards_shuffled(game, rng)
        differed += other.piles != game.piles
        assert other.public_piles() == game.public_piles()
        first = hint(game)
        assert first == hint(other), f"seed {seed}: the face-down cards changed the hint"
        samples = 4 if any(p.down for p in game.piles.values()) else 1  # nothing unknown: 1
        assert first.command is not None and first.samples == samples
        assert 0 <= first.wins <= samples
        assert from_json(first.command) in game.legal_moves()
        reordered = dict(reversed(list(game.public_piles().items())))
        assert suggest(variant_id, options, reordered, samples=4, budget_per_sample=SAMPLE,
                       rng_seed=5) == first
    # Shamrocks has no face-down card: the two games are the same there.
    assert differed or variant_id == "shamrocks"


def test_two_deals_brought_to_the_same_visible_position_get_the_same_hint() -> None:
    # Gilbert deals 21 cards face down on the tableau: two deals that differ only there,
    # played the same way (the stock is the same, so draws show the same cards).
    game = Game.deal("gilbert", 8, {})
    twin = with_face_down_cards_shuffled(game, random.Random(1), only="tableau/")
    assert twin.piles != game.piles and twin.public_piles() == game.public_piles()
    for command in (DRAW, DRAW):
        game, twin = game.apply(command)[0], twin.apply(command)[0]
    assert twin.public_piles() == game.public_piles()
    assert hint(game, samples=6) == hint(twin, samples=6)


def test_a_hint_near_the_end_wins_its_samples() -> None:
    rng = random.Random(4)
    for _ in range(20):
        game = small_position("gate", {}, rng, 6)
        if game.status is Status.PLAYING and game.piles["stock"].down:
            break
    result = hint(game, samples=5)
    assert result.command is not None and result.samples == 5 and result.wins >= 1
    assert from_json(result.command) in game.legal_moves()


def test_no_legal_command_no_hint() -> None:
    # Clubs up to the Four; the rest of the clubs in three full fans, the Five at a bottom.
    piles = {f"foundation/{i}": Pile((), tuple(r + s for r in "A23456789TJQK")) for i,
             s in enumerate("CDHS")}
    piles["foundation/0"] = Pile((), ("AC", "2C", "3C", "4C"))
    for i, fan in enumerate(("5C 8C JC", "6C 9C QC", "7C TC KC")):
        piles[f"tableau/{i}"] = Pile((), tuple(fan.split()))
    game = game_at("shamrocks", {}, piles)
    assert game.legal_moves() == []
    result = suggest("shamrocks", {}, game.public_piles(), samples=3, budget_per_sample=SAMPLE,
                     rng_seed=1)
    assert result.command is None


def test_a_view_with_impossible_cards_is_refused() -> None:
    game = Game.deal("gate", 1, {})
    view = game.public_piles()
    view["waste"] = {"down": 0, "up": [view["tableau/0"]["up"][-1]]}
    with pytest.raises(ValueError):
        suggest("gate", {}, view, samples=1, budget_per_sample=SAMPLE, rng_seed=1)


def test_gilberts_stock_is_seen_once_it_has_run_out() -> None:
    # Drawing through the stock (and playing from the waste where it can, which takes
    # cards out of the talon): not seen until the last card has been drawn.
    game = Game.deal("gilbert", 8, {})
    while game.piles["stock"].down:
        assert seen_stock(game) is None
        from_waste = [m for m in game.legal_moves() if getattr(m, "from_", "") == "waste"]
        game = game.apply(from_waste[0] if from_waste else DRAW)[0]
    assert seen_stock(game) == ()
    turned = game.apply(DRAW)[0]  # turned over: every card seen, in order
    assert turned.piles["stock"].down
    assert seen_stock(turned) == turned.piles["stock"].down
    drawn = turned.apply(DRAW)[0]
    assert seen_stock(drawn) == drawn.piles["stock"].down
    # Undone back to before the stock ran out, the commands in effect no longer show it
    # (the player did see it: the hint knows less than the player, never more).
    undone = drawn
    for _ in range(3):
        undone = undone.apply(UNDO)[0]
    assert undone.piles["stock"].down and seen_stock(undone) is None
    assert seen_stock(Game.deal("gate", 1, {})) is None


def test_a_hint_samples_only_the_cards_not_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    # Once Gilbert's stock has been seen, every sample deals it as it is; the tableau's
    # face-down cards are still shuffled. Before, the samples' stocks differ.
    from service.solver import hint as hint_module

    stocks: list[tuple[str, ...]] = []
    tableaux: list[tuple[str, ...]] = []

    def record(rules: Any, piles: dict[str, Pile], budget: Budget, order: Any) -> None:
        stocks.append(piles["stock"].down)
        tableaux.append(piles["tableau/6"].down)

    monkeypatch.setattr(hint_module, "_solve_first", record)
    game = Game.deal("gilbert", 8, {})
    for _ in range(9):
        game = game.apply(DRAW)[0]
    known = seen_stock(game)
    assert known is not None and len(known) == 24
    suggest("gilbert", {}, game.public_piles(), samples=6, budget_per_sample=SAMPLE,
            rng_seed=3, known={"stock": known})
    assert stocks == [known] * 6
    assert len(set(tableaux)) > 1
    stocks.clear()
    suggest("gilbert", {}, game.public_piles(), samples=6, budget_per_sample=SAMPLE, rng_seed=3)
    assert len(set(stocks)) == 6 and known not in stocks
    with pytest.raises(ValueError, match="known card"):
        suggest("gilbert", {}, game.public_piles(), samples=1, budget_per_sample=SAMPLE,
                rng_seed=3, known={"stock": known[1:]})


def test_a_view_with_nothing_unknown_is_solved_once_with_every_samples_budget(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Shamrocks deals every card face up: six samples would be one position six times."""
    from service.solver import hint as hint_module

    budgets: list[Budget] = []

    def record(rules: Any, piles: dict[str, Pile], budget: Budget, order: Any) -> None:
        budgets.append(budget)

    monkeypatch.setattr(hint_module, "_solve_first", record)
    game = Game.deal("shamrocks", 4, {})
    result = suggest("shamrocks", {}, game.public_piles(), samples=6,
                     budget_per_sample=Budget(400, 0.5), rng_seed=1)
    assert budgets == [Budget(2400, 3.0)] and result.samples == 1
    budgets.clear()
    gate = Game.deal("gate", 4, {})
    suggest("gate", {}, gate.public_piles(), samples=6, budget_per_sample=Budget(400, 0.5),
            rng_seed=1)
    assert budgets == [Budget(400, 0.5)] * 6


def back_and_forth(config: tuple[str, dict[str, Any]]) -> tuple[Game, Game]:
    """A game, and the same game after its hint, where the hint turned no card up."""
    variant_id, options = config
    for seed in range(1, 40):
        game = random_positions(variant_id, options, seed, steps=10)[-1]
        if game.status is not Status.PLAYING or len(game.legal_moves()) < 2:
            continue
        command = from_json(hint(game).command)
        after = game.apply(command)[0]
        downs = [len(p.down) for p in game.piles.values()]
        if after.status is Status.PLAYING and downs == [len(p.down) for p in after.piles.values()]:
            return game, after
    raise AssertionError(f"no such position in {variant_id}")


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_a_hint_does_not_lead_back_to_a_view_shown_before(
        config: tuple[str, dict[str, Any]]) -> None:
    """Told that the view after its own hint has been shown, the hint suggests another
    command, one that leads to a view not shown (or turns a card up)."""
    game, after = back_and_forth(config)
    first = hint(game).command
    shown = {view_key(after.piles): 1}
    again = suggest(game.variant.id, game.variant.options, game.public_piles(), samples=4,
                    budget_per_sample=SAMPLE, rng_seed=5, shown=shown)
    assert again.command is not None and again.command != first
    assert view_key(game.apply(from_json(again.command))[0].piles) not in shown
    # Every command leading back, the least shown of them is suggested.
    everywhere = {view_key(game.apply(c)[0].piles): 2 for c in game.legal_moves()}
    everywhere[view_key(after.piles)] = 1
    only = suggest(game.variant.id, game.variant.options, game.public_piles(), samples=4,
                   budget_per_sample=SAMPLE, rng_seed=5, shown=everywhere)
    if all(len(game.apply(c)[0].piles[k].down) == len(p.down) for c in game.legal_moves()
           for k, p in game.piles.items()):
        assert only.command == first


def test_the_views_shown_are_those_of_the_commands_in_effect() -> None:
    """history counts each view before the game's own, along the commands in effect; the
    service's job (shown_in_game) rebuilds them from a snapshot, the same, for suggest."""
    game = Game.deal("gate", 3, {})
    moves = [m for m in game.legal_moves() if isinstance(m, Move)]
    there = game.apply(moves[0])[0]
    back = [m for m in there.legal_moves()
            if isinstance(m, Move) and view_key(there.apply(m)[0].piles) == view_key(game.piles)]
    undone = there.apply(UNDO)[0]
    assert history(undone.position) == {}
    assert history(there.position) == {view_key(game.piles): 1}
    if back:  # moved there and back: the deal's view shown once, the other once
        home = there.apply(back[0])[0]
        assert history(home.position) == {view_key(game.piles): 1, view_key(there.piles): 1}
    assert shown_in_game(there.snapshot()) == history(there.position)
    assert shown_in_game(undone.snapshot()) == {}
