"""RULES.md, "Shamrocks": one test per rule sentence, each with an accepted and a refused case."""

from __future__ import annotations

import pytest

from service.engine import DRAW, RESIGN, UNDO, Game, Status
from service.engine.cards import RANK
from tests.commands import legal_commands

from .helpers import accepted, all_cards, full_deck, make_game, move, refused, suit_run, view

SEEDS = (0, 1, 42, 2**53 - 1)

# --- layout and deal ---------------------------------------------------------------------


def test_shamrocks_layout_is_four_foundations_and_eighteen_fans_no_stock_no_waste():
    game = Game.deal("shamrocks", 0)
    assert list(game.piles) == [
        *(f"foundation/{i}" for i in range(4)),
        *(f"tableau/{i}" for i in range(18)),
    ]
    assert [game.variant.spec[f"foundation/{i}"].suit for i in range(4)] == list("CDHS")
    assert {game.variant.spec[f"foundation/{i}"].direction for i in range(4)} == {"ascending"}


@pytest.mark.parametrize("seed", SEEDS)
def test_shamrocks_deal_fans_0_to_16_get_three_cards_and_fan_17_the_last_all_face_up(seed):
    game = Game.deal("shamrocks", seed)
    sizes = [len(game.piles[f"tableau/{i}"].up) for i in range(18)]
    assert sizes == [3] * 17 + [1]
    assert all(not p.down for p in game.piles.values())
    assert all_cards(game) == full_deck(1)


def _dealt_fans(seed: int) -> list[list[str]]:
    """The fans as dealt, before the Kings move: three cards each from the shuffled deck."""
    cards = Game.deal("shamrocks", seed).variant.shuffled_deck(seed)
    return [cards[3 * i : 3 * i + 3] for i in range(18)]


@pytest.mark.parametrize("seed", range(40))
def test_shamrocks_deal_moves_any_king_to_the_bottom_of_its_fan_keeping_relative_order(seed):
    game = Game.deal("shamrocks", seed)
    for i, dealt in enumerate(_dealt_fans(seed)):
        kings = [c for c in dealt if RANK[c] == 13]
        others = [c for c in dealt if RANK[c] != 13]
        assert list(game.piles[f"tableau/{i}"].up) == kings + others, (seed, i, dealt)


def test_shamrocks_deal_several_kings_in_one_fan_keep_their_order_and_so_do_the_others():
    # Find deals with a fan of two Kings over another card, and one with a King on top of two
    # others.
    two_kings = one_king_on_top = None
    for seed in range(5000):
        for i, dealt in enumerate(_dealt_fans(seed)):
            ranks = [RANK[c] for c in dealt]
            if len(dealt) == 3 and ranks[0] != 13 and ranks[1:] == [13, 13]:
                two_kings = two_kings or (seed, i, dealt)
            if len(dealt) == 3 and ranks[2] == 13 and 13 not in ranks[:2]:
                one_king_on_top = one_king_on_top or (seed, i, dealt)
        if two_kings and one_king_on_top:
            break
    assert two_kings and one_king_on_top
    seed, i, (x, k1, k2) = two_kings
    assert list(Game.deal("shamrocks", seed).piles[f"tableau/{i}"].up) == [k1, k2, x]
    seed, i, (a, b, k) = one_king_on_top
    assert list(Game.deal("shamrocks", seed).piles[f"tableau/{i}"].up) == [k, a, b]


# --- fans -------------------------------------------------------------------------------


def test_shamrocks_a_card_goes_onto_a_fan_whose_top_is_one_rank_higher_any_suit():
    game = make_game("shamrocks", {"tableau/0": "5C", "tableau/1": "4H", "tableau/2": "3H"})
    assert view(accepted(game, move("tableau/1", "tableau/0")))["tableau/0"] == "5C 4H"
    refused(game, move("tableau/2", "tableau/0"), "build")


def test_shamrocks_a_card_goes_onto_a_fan_whose_top_is_one_rank_lower_any_suit():
    game = make_game("shamrocks", {"tableau/0": "5C", "tableau/1": "6D", "tableau/2": "7D"})
    assert view(accepted(game, move("tableau/1", "tableau/0")))["tableau/0"] == "5C 6D"
    refused(game, move("tableau/2", "tableau/0"), "build")


def test_shamrocks_a_card_of_the_same_rank_does_not_go_on_a_fan():
    game = make_game("shamrocks", {"tableau/0": "5C", "tableau/1": "5D", "tableau/2": "4C"})
    accepted(game, move("tableau/2", "tableau/0"))
    refused(game, move("tableau/1", "tableau/0"), "build")


def test_shamrocks_a_card_goes_only_onto_a_fan_holding_fewer_than_three_cards():
    game = make_game(
        "shamrocks",
        {"tableau/0": "9C 8D", "tableau/1": "9S 8H 7D", "tableau/2": "6S", "tableau/3": "7C"},
    )
    assert view(accepted(game, move("tableau/3", "tableau/0")))["tableau/0"] == "9C 8D 7C"
    refused(game, move("tableau/2", "tableau/1"), "capacity")


def test_shamrocks_no_fan_ever_holds_more_than_three_cards():
    game = make_game("shamrocks", {"tableau/0": "9C 8D 7C", "tableau/1": "6H", "tableau/2": "8S"})
    refused(game, move("tableau/1", "tableau/0"), "capacity")
    assert move("tableau/1", "tableau/0") not in game.legal_moves()
    assert move("tableau/0", "tableau/2") in game.legal_moves()  # it may give its top away


def test_shamrocks_an_empty_fan_stays_empty():
    game = make_game(
        "shamrocks",
        {
            "tableau/0": "KS",
            "tableau/1": "QH",
            "tableau/2": "5D",
            "foundation/1": "AD 2D",
            "tableau/3": "3S",
        },
    )
    for src in ("tableau/0", "tableau/1", "tableau/2", "foundation/1"):
        refused(game, move(src, "tableau/4"), "empty_tableau")
    assert not any(m.to == "tableau/4" for m in game.legal_moves())
    accepted(game, move("tableau/1", "tableau/0"))  # a non-empty fan still takes cards


def test_shamrocks_not_even_a_king_fills_an_empty_fan():
    game = make_game(
        "shamrocks", {"tableau/0": "QH KS", "tableau/1": "3D", "tableau/2": "4C", "tableau/3": "QC"}
    )
    emptied = accepted(game, move("tableau/1", "tableau/2"))
    assert "tableau/1" not in view(emptied)
    refused(emptied, move("tableau/0", "tableau/1"), "empty_tableau")
    accepted(emptied, move("tableau/0", "tableau/3"))


def test_shamrocks_one_card_moves_at_a_time():
    game = make_game("shamrocks", {"tableau/0": "5C 6D", "tableau/1": "7S", "tableau/2": "5S"})
    accepted(game, move("tableau/0", "tableau/1"))
    refused(game, move("tableau/0", "tableau/2", 2), "one_card_at_a_time")


# --- foundations ------------------------------------------------------------------------


def test_shamrocks_foundations_build_by_suit_from_the_ace():
    game = make_game(
        "shamrocks",
        {
            "foundation/0": "AC",
            "tableau/0": "2C",
            "tableau/1": "3C",
            "tableau/2": "AD",
            "tableau/3": "2D",
        },
    )
    accepted(game, move("tableau/0", "foundation/0"))
    accepted(game, move("tableau/2", "foundation/1"))
    refused(game, move("tableau/1", "foundation/0"), "foundation_order")
    refused(game, move("tableau/3", "foundation/1"), "foundation_order")
    refused(game, move("tableau/2", "foundation/2"), "foundation_order")


def test_shamrocks_a_foundation_top_may_go_back_onto_a_fan_that_accepts_it():
    game = make_game(
        "shamrocks",
        {"foundation/0": "AC 2C", "tableau/0": "3H", "tableau/1": "4D 5S 3D", "tableau/2": "9H"},
    )
    assert view(accepted(game, move("foundation/0", "tableau/0")))["tableau/0"] == "3H 2C"
    refused(game, move("foundation/0", "tableau/1"), "capacity")
    refused(game, move("foundation/0", "tableau/2"), "build")
    refused(game, move("foundation/0", "tableau/3"), "empty_tableau")


def test_shamrocks_a_foundation_top_goes_back_only_onto_a_fan():
    game = make_game("shamrocks", {"foundation/0": "AC 2C", "tableau/0": "3H"})
    accepted(game, move("foundation/0", "tableau/0"))
    refused(game, move("foundation/0", "foundation/1"), "foundation_returns")


# --- no stock ---------------------------------------------------------------------------


def test_shamrocks_has_no_stock_so_draw_is_refused():
    game = Game.deal("shamrocks", 5)
    assert game.status is Status.PLAYING and DRAW not in game.legal_moves()
    refused(game, DRAW, "no_stock")
    refused(game, move("stock", "tableau/0"), "unknown_pile")
    refused(game, move("tableau/0", "waste"), "unknown_pile")


def test_shamrocks_a_full_suit_goes_up_to_the_king():
    game = make_game(
        "shamrocks", {"foundation/3": suit_run("S", 1, 12), "tableau/0": "KS", "tableau/1": "QD"}
    )
    accepted(game, move("tableau/0", "foundation/3"))
    refused(game, move("tableau/1", "foundation/3"), "foundation_order")


def test_shamrocks_a_deal_with_no_legal_move_is_lost_from_the_start():
    # About one deal in two hundred: no fan top goes anywhere and there is no Ace on top.
    dead = Game.deal("shamrocks", 18)
    assert dead.status is Status.LOST and dead.moves == 0
    assert legal_commands(dead) == [RESIGN]
    refused(dead, UNDO, "nothing_to_undo")
    assert Game.deal("shamrocks", 0).status is Status.PLAYING
