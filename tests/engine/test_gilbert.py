"""RULES.md, "Gilbert": one test per rule sentence, each with an accepted and a refused case."""

from __future__ import annotations

import pytest

from service.engine import DRAW, RESIGN, UNDO, Game, Status
from service.engine.cards import ALL_CARDS

from .helpers import (
    accepted,
    all_cards,
    cards_named,
    full_deck,
    make_game,
    move,
    play,
    refused,
    suit_run,
    view,
)

SEEDS = (0, 1, 42, 2**53 - 1)

# --- layout and deal ---------------------------------------------------------------------


def test_gilbert_layout_is_stock_waste_eight_foundations_and_seven_tableau_piles():
    game = Game.deal("gilbert", 0)
    assert list(game.piles) == [
        "stock",
        "waste",
        *(f"foundation/{i}" for i in range(8)),
        *(f"tableau/{i}" for i in range(7)),
    ]
    specs = game.variant.spec
    assert [
        (specs[f"foundation/{i}"].suit, specs[f"foundation/{i}"].direction) for i in range(8)
    ] == [
        ("C", "ascending"),
        ("D", "ascending"),
        ("H", "ascending"),
        ("S", "ascending"),
        ("C", "descending"),
        ("D", "descending"),
        ("H", "descending"),
        ("S", "descending"),
    ]


@pytest.mark.parametrize("seed", SEEDS)
def test_gilbert_deal_tableau_pile_i_gets_i_plus_one_cards_only_the_top_face_up(seed):
    game = Game.deal("gilbert", seed)
    for i in range(7):
        pile = game.piles[f"tableau/{i}"]
        assert (len(pile.down), len(pile.up)) == (i, 1)


@pytest.mark.parametrize("seed", SEEDS)
def test_gilbert_deal_the_other_24_cards_form_the_stock_face_down_and_the_waste_is_empty(seed):
    game = Game.deal("gilbert", seed)
    assert game.public_piles()["stock"] == {"down": 24, "up": []}
    assert game.public_piles()["waste"] == {"down": 0, "up": []}
    assert all(not game.piles[f"foundation/{i}"] for i in range(8))
    assert all_cards(game) == full_deck(1)


def test_gilbert_is_played_with_one_deck():
    assert Game.deal("gilbert", 3).variant.total_cards == 52
    assert sorted(all_cards(Game.deal("gilbert", 3))) == sorted(ALL_CARDS)


# --- a suit split between its two foundations -------------------------------------------


def test_gilbert_a_suit_may_meet_in_the_middle_of_its_two_foundations():
    game = make_game(
        "gilbert",
        {
            "foundation/2": suit_run("H", 1, 6),
            "foundation/6": suit_run("H", 13, 8),
            "tableau/0": "7H",
        },
    )
    accepted(game, move("tableau/0", "foundation/6"))
    accepted(game, move("tableau/0", "foundation/2"))
    gap = make_game(
        "gilbert",
        {
            "foundation/2": suit_run("H", 1, 5),
            "foundation/6": suit_run("H", 13, 9),
            "tableau/0": "7H",
        },
    )
    refused(gap, move("tableau/0", "foundation/2"), "foundation_order")
    refused(gap, move("tableau/0", "foundation/6"), "foundation_order")


def test_gilbert_a_suit_may_go_entirely_onto_one_of_its_two_piles():
    up = make_game("gilbert", {"foundation/2": suit_run("H", 1, 12), "tableau/0": "KH"})
    assert view(accepted(up, move("tableau/0", "foundation/2")))["foundation/2"] == suit_run(
        "H", 1, 13
    )
    down = make_game("gilbert", {"foundation/6": suit_run("H", 13, 2), "tableau/0": "AH"})
    assert view(accepted(down, move("tableau/0", "foundation/6")))["foundation/6"] == suit_run(
        "H", 13, 1
    )
    refused(
        make_game("gilbert", {"foundation/2": suit_run("H", 1, 13), "tableau/0": "AH"}),
        move("tableau/0", "foundation/2"),
        "foundation_complete",
    )


# --- tableau ----------------------------------------------------------------------------


def test_gilbert_tableau_builds_down_in_alternating_colours():
    game = make_game(
        "gilbert",
        {
            "tableau/0": "9S",
            "tableau/1": "8H",
            "tableau/2": "8C",
            "tableau/3": "7D",
            "tableau/4": "TD",
        },
    )
    accepted(game, move("tableau/1", "tableau/0"))  # red Eight on black Nine
    refused(game, move("tableau/2", "tableau/0"), "build")  # same colour
    refused(game, move("tableau/3", "tableau/0"), "build")  # two ranks down
    refused(game, move("tableau/4", "tableau/0"), "build")  # up, not down


def test_gilbert_a_run_moves_as_a_unit_from_any_card_of_the_run_to_the_top():
    game = make_game(
        "gilbert",
        {"tableau/0": "3C | TS 9H 8C", "tableau/1": "JD", "tableau/2": "TC", "tableau/3": "9D"},
    )
    whole = accepted(game, move("tableau/0", "tableau/1", 3))
    assert view(whole)["tableau/1"] == "JD TS 9H 8C" and view(whole)["tableau/0"] == "3C"
    assert view(accepted(game, move("tableau/0", "tableau/2", 2)))["tableau/2"] == "TC 9H 8C"
    assert view(accepted(game, move("tableau/0", "tableau/3", 1)))["tableau/3"] == "9D 8C"


def test_gilbert_cards_that_are_not_a_run_move_one_at_a_time():
    # 9S on TS is not a run: only 9S 8H (and 8H alone) may leave.
    game = make_game("gilbert", {"tableau/0": "TS 9S 8H", "tableau/1": "TH", "tableau/2": "JD"})
    accepted(game, move("tableau/0", "tableau/1", 2))
    refused(game, move("tableau/0", "tableau/2", 3), "not_a_run")


def test_gilbert_a_run_cannot_be_longer_than_the_face_up_cards():
    game = make_game("gilbert", {"tableau/0": "4D | 9H 8C", "tableau/1": "TS"})
    accepted(game, move("tableau/0", "tableau/1", 2))
    refused(game, move("tableau/0", "tableau/1", 3), "not_enough_cards")


def test_gilbert_only_a_seven_fills_an_empty_tableau_pile():
    game = make_game("gilbert", {"tableau/0": "7H", "tableau/1": "8S", "tableau/2": "KD"})
    filled = accepted(game, move("tableau/0", "tableau/3"))
    assert view(filled)["tableau/3"] == "7H"
    refused(game, move("tableau/1", "tableau/3"), "empty_tableau")
    refused(game, move("tableau/2", "tableau/3"), "empty_tableau")


def test_gilbert_only_a_seven_fills_an_empty_tableau_pile_from_the_waste():
    accepted(make_game("gilbert", {"waste": "7C", "tableau/0": "2D"}), move("waste", "tableau/1"))
    refused(
        make_game("gilbert", {"waste": "6C", "tableau/0": "9S", "tableau/2": "8H"}),
        move("waste", "tableau/1"),
        "empty_tableau",
    )


def test_gilbert_only_a_seven_fills_an_empty_tableau_pile_from_a_foundation():
    accepted(
        make_game("gilbert", {"foundation/2": suit_run("H", 1, 7)}),
        move("foundation/2", "tableau/0"),
    )
    refused(
        make_game("gilbert", {"foundation/2": suit_run("H", 1, 8), "tableau/1": "9S"}),
        move("foundation/2", "tableau/0"),
        "empty_tableau",
    )


def test_gilbert_a_run_whose_first_card_is_a_seven_fills_an_empty_tableau_pile():
    game = make_game("gilbert", {"tableau/0": "KC | 7S 6H 5C"})
    accepted(game, move("tableau/0", "tableau/1", 3))
    refused(game, move("tableau/0", "tableau/1", 2), "empty_tableau")


def test_gilbert_a_face_down_card_that_becomes_the_top_turns_up_at_once_in_the_same_move():
    game = make_game("gilbert", {"tableau/0": "2C 5D | 8H", "tableau/1": "9S"})
    after, diff = game.apply(move("tableau/0", "tableau/1"))
    assert view(after)["tableau/0"] == "2C | 5D"
    assert after.moves == 1
    assert {"pile": "tableau/0", "op": "flip", "card": "5D"} in diff.ops
    # A pile that still shows a face-up card turns nothing up.
    kept = make_game("gilbert", {"tableau/0": "2C 5D | 9C 8H", "tableau/1": "9S"})
    assert view(accepted(kept, move("tableau/0", "tableau/1")))["tableau/0"] == "2C 5D | 9C"


def test_gilbert_refusals_never_name_a_face_down_card():
    game = make_game(
        "gilbert",
        {"tableau/0": "5D KS | 8H", "tableau/1": "2C 3D | 9H", "stock": "4C 6H AH |"},
    )
    for command, rule in [
        (move("tableau/0", "tableau/1", 2), "not_enough_cards"),
        (move("tableau/0", "tableau/1"), "build"),
        (move("stock", "tableau/1"), "stock_by_draw_only"),
        (move("tableau/0", "foundation"), "no_foundation_accepts"),
    ]:
        message = refused(game, command, rule).message
        assert not {"5D", "KS", "2C", "3D", "4C", "6H"} & cards_named(message), message


# --- stock and waste --------------------------------------------------------------------


def test_gilbert_draw_deals_three_cards_one_by_one_the_third_on_top():
    game = make_game("gilbert", {"stock": "2C 3C 4C 5C 6C |", "tableau/0": "9S"})
    after = accepted(game, DRAW)
    assert view(after)["waste"] == "6C 5C 4C"  # the stock's top card was dealt first
    assert view(after)["stock"] == "2C 3C |"
    assert after.public_piles()["waste"] == {"down": 0, "up": ["6C", "5C", "4C"]}


def test_gilbert_draw_deals_fewer_cards_when_fewer_remain():
    game = make_game("gilbert", {"stock": "2C 3C |", "waste": "9D"})
    after = accepted(game, DRAW)
    assert view(after)["waste"] == "9D 3C 2C"
    assert "stock" not in view(after)


def test_gilbert_draw_with_the_stock_empty_turns_the_whole_waste_over_into_the_stock():
    game = make_game("gilbert", {"waste": "2C 3C 4C 5C 6C", "tableau/0": "9S", "tableau/1": "8H"})
    after = accepted(game, DRAW)
    assert after.public_piles()["stock"] == {"down": 5, "up": []}
    assert after.public_piles()["waste"] == {"down": 0, "up": []}
    # Order kept: the next draw deals the cards the first pass dealt first.
    assert view(accepted(after, DRAW))["waste"] == "2C 3C 4C"


def test_gilbert_the_next_pass_deals_the_same_cards_in_the_same_order():
    game = Game.deal("gilbert", 42)
    first_pass = []
    for _ in range(8):
        game = accepted(game, DRAW)
        first_pass.append(game.public_piles()["waste"])
    assert game.public_piles()["stock"]["down"] == 0
    game = accepted(game, DRAW)  # turn the waste over
    assert game.public_piles()["waste"]["up"] == []
    second_pass = []
    for _ in range(8):
        game = accepted(game, DRAW)
        second_pass.append(game.public_piles()["waste"])
    assert second_pass == first_pass


def test_gilbert_redeals_are_unlimited():
    game = make_game("gilbert", {"stock": "2C 3C 4C 5C |", "tableau/0": "9S", "tableau/1": "8H"})
    for _ in range(10):  # ten passes: deal twice, turn over
        game = play(game, DRAW, DRAW)
        assert game.public_piles()["stock"]["down"] == 0
        game = accepted(game, DRAW)
        assert game.public_piles()["stock"]["down"] == 4
    assert view(game)["stock"] == "2C 3C 4C 5C |"


def test_gilbert_draw_with_both_the_stock_and_the_waste_empty_is_refused():
    game = make_game("gilbert", {"tableau/0": "9S", "tableau/1": "8H"})
    assert game.status is Status.PLAYING and DRAW not in game.legal_moves()
    refused(game, DRAW, "stock_and_waste_empty")
    accepted(make_game("gilbert", {"tableau/0": "9S", "tableau/1": "8H", "waste": "2C"}), DRAW)


def test_gilbert_only_the_waste_top_is_playable():
    game = make_game("gilbert", {"waste": "8C 7H", "tableau/0": "8S", "tableau/1": "9D"})
    accepted(game, move("waste", "tableau/0"))  # 7H on 8S
    refused(game, move("waste", "tableau/1", 2), "top_card_only")  # 8C under it may not go on 9D


def test_gilbert_nothing_is_placed_on_the_stock_or_the_waste():
    game = make_game("gilbert", {"waste": "9D", "tableau/0": "8S", "tableau/1": "9H"})
    accepted(game, move("tableau/0", "tableau/1"))
    refused(game, move("tableau/0", "waste"), "never_onto")
    refused(game, move("tableau/0", "stock"), "never_onto")


def test_gilbert_cards_leave_the_stock_only_by_a_draw():
    game = make_game("gilbert", {"stock": "2C 3C 7C |", "tableau/0": "8H"})
    accepted(game, DRAW)
    refused(game, move("stock", "tableau/0"), "stock_by_draw_only")
    refused(game, move("stock", "tableau/1"), "stock_by_draw_only")


# --- foundations ------------------------------------------------------------------------


def test_gilbert_a_foundation_top_may_go_back_onto_a_tableau_pile_that_accepts_it():
    game = make_game(
        "gilbert", {"foundation/2": suit_run("H", 1, 7), "tableau/0": "8S", "tableau/1": "8D"}
    )
    assert view(accepted(game, move("foundation/2", "tableau/0")))["tableau/0"] == "8S 7H"
    refused(game, move("foundation/2", "tableau/1"), "build")


def test_gilbert_a_foundation_top_may_go_onto_the_other_foundation_of_its_suit():
    # RULES.md's example: 7H from the ascending hearts onto the descending hearts showing 8H.
    game = make_game(
        "gilbert",
        {
            "foundation/2": suit_run("H", 1, 7),
            "foundation/6": suit_run("H", 13, 8),
            "foundation/7": suit_run("S", 13, 8),
            "foundation/1": suit_run("D", 1, 6),
        },
    )
    after = accepted(game, move("foundation/2", "foundation/6"))
    assert view(after)["foundation/6"] == suit_run("H", 13, 7)
    assert after.foundation_cards == game.foundation_cards
    refused(game, move("foundation/2", "foundation/7"), "foundation_order")  # the other suit
    refused(game, move("foundation/2", "foundation/1"), "foundation_order")


def test_gilbert_only_the_top_card_of_a_foundation_goes_back_into_play():
    game = make_game(
        "gilbert", {"foundation/2": suit_run("H", 1, 7), "tableau/0": "8S", "tableau/1": "7C"}
    )
    accepted(game, move("foundation/2", "tableau/0"))
    refused(game, move("foundation/2", "tableau/1", 2), "top_card_only")


# --- lost: (a), (b) and (c) -------------------------------------------------------------
#
# The stuck position: 9C and 9S on the tableau (nothing builds on them but a red
# Eight, and only a Seven fills the empty piles), no Ace and no King anywhere to
# start a foundation, and a waste of small black cards.


def _stuck(waste: str = "5C 5S 3C 3S", **extra: str) -> dict[str, str]:
    return {"waste": waste, "tableau/0": "9C", "tableau/1": "9S", **extra}


def test_gilbert_lost_when_a_b_and_c_all_hold():
    game = make_game("gilbert", _stuck())
    assert game.status is Status.LOST


def test_gilbert_lost_a_a_legal_move_now_means_not_lost():
    assert make_game("gilbert", _stuck(**{"tableau/2": "8H"})).status is Status.PLAYING
    assert make_game("gilbert", _stuck(**{"tableau/2": "8C"})).status is Status.LOST


def test_gilbert_lost_a_a_legal_move_from_a_foundation_means_not_lost():
    # The ascending and descending hearts meet: 7H may go from one to the other.
    meet = {"foundation/2": suit_run("H", 1, 7), "foundation/6": suit_run("H", 13, 8)}
    assert make_game("gilbert", _stuck(**meet)).status is Status.PLAYING
    apart = {"foundation/2": suit_run("H", 1, 6), "foundation/6": suit_run("H", 13, 9)}
    assert make_game("gilbert", _stuck(**apart)).status is Status.LOST


def test_gilbert_lost_b_a_playable_card_that_draws_bring_to_the_waste_top_means_not_lost():
    # 8H is the third card of the waste: the turn-over and one draw make it the top.
    game = make_game("gilbert", _stuck(waste="5C 5S 8H 3S"))
    assert game.status is Status.PLAYING
    shown = play(game, DRAW, DRAW)
    assert view(shown)["waste"] == "5C 5S 8H"
    accepted(shown, move("waste", "tableau/0"))


def test_gilbert_lost_b_looks_only_at_cards_draws_can_bring_to_the_top():
    # 8H second in the waste is never its top: draws deal 5C 8H 5S, then 3S.
    game = make_game("gilbert", _stuck(waste="5C 8H 5S 3S"))
    assert game.status is Status.LOST


def test_gilbert_lost_b_draws_show_every_third_card_of_the_waste():
    # Seven cards: after the turn-over, draws show the 3rd, the 6th and the 7th.
    assert make_game("gilbert", _stuck(waste="2C 2S 3C 3S 4C 8H 5C")).status is Status.PLAYING
    assert make_game("gilbert", _stuck(waste="2C 2S 3C 3S 8H 4C 5C")).status is Status.LOST


def test_gilbert_lost_b_counts_a_seven_for_an_empty_tableau_pile():
    assert make_game("gilbert", _stuck(waste="5C 5S 7D 3S")).status is Status.PLAYING
    assert make_game("gilbert", _stuck(waste="5C 7D 5S 3S")).status is Status.LOST


def test_gilbert_lost_c_needs_the_stock_empty():
    # Nothing in the stock could play either, but the player has not seen it.
    assert make_game("gilbert", _stuck(stock="5H |")).status is Status.PLAYING
    assert make_game("gilbert", _stuck()).status is Status.LOST


def test_gilbert_lost_c_needs_only_draws_since_the_waste_was_last_turned_over():
    game = make_game("gilbert", _stuck(waste="5C 5S 3C", stock="3S |", **{"tableau/2": "AD"}))
    moved = play(game, move("tableau/2", "foundation/1"), DRAW)
    # Nothing plays now and no draw can bring a playable card, but a move was made
    # since the deal: the player has not seen this pass through.
    assert view(moved)["waste"] == "5C 5S 3C 3S" and "stock" not in view(moved)
    assert moved.status is Status.PLAYING
    # Turn the waste over and deal it through with draws only: now it is lost.
    turned = play(moved, DRAW, DRAW)
    assert turned.status is Status.PLAYING  # one card still in the stock
    assert accepted(turned, DRAW).status is Status.LOST


def test_gilbert_lost_c_counts_since_the_deal_when_the_waste_was_never_turned_over():
    game = make_game("gilbert", _stuck(waste="5C", stock="3C 3S 5S |"))
    assert accepted(game, DRAW).status is Status.LOST
    moved = make_game(
        "gilbert", _stuck(waste="5C", stock="3C 3S 5S |"), only_draws_since_turnover=False
    )
    assert accepted(moved, DRAW).status is Status.PLAYING


def test_gilbert_lost_is_judged_on_the_commands_in_effect():
    # The waste's 5D plays on 6S, then a draw empties the stock: not lost, a move is in
    # effect. Undo both and draw: only draws are in effect, and 5D is out of reach.
    game = make_game(
        "gilbert",
        {
            "waste": "5D",
            "stock": "5C 5S 3C |",
            "tableau/0": "9C",
            "tableau/1": "9S",
            "tableau/2": "6S",
        },
    )
    moved = play(game, move("waste", "tableau/2"), DRAW)
    assert moved.status is Status.PLAYING  # (c) fails: a move since the deal
    back = play(moved, UNDO, UNDO, DRAW)
    assert back.effective_commands() == [DRAW]
    assert view(back)["waste"] == "5D 3C 5S 5C"
    # 5D (bottom) is never shown by draws; 5S shows; 5C is the top: nothing plays.
    assert back.status is Status.LOST


def test_gilbert_lost_with_the_stock_and_the_waste_empty_b_and_c_hold_trivially():
    game = make_game("gilbert", {"tableau/0": "9C", "tableau/1": "9S", "tableau/2": "AD"})
    # A move, not a draw, and still lost: no stock and no waste to look at.
    assert accepted(game, move("tableau/2", "foundation/1")).status is Status.LOST
    with_waste = make_game(
        "gilbert", {"tableau/0": "9C", "tableau/1": "9S", "tableau/2": "AD", "waste": "5C"}
    )
    assert accepted(with_waste, move("tableau/2", "foundation/1")).status is Status.PLAYING


def test_gilbert_lost_refuses_a_draw_although_the_waste_could_be_turned_over():
    game = make_game("gilbert", _stuck())
    assert game.status is Status.LOST and game.legal_moves() == []
    refused(game, DRAW, "game_lost")
    assert accepted(game, RESIGN).status is Status.RESIGNED
