"""RULES.md, "Gate": one test per rule sentence, each with an accepted and a refused case.

Positions with an empty bar have both pillars empty: while a pillar holds
cards, no bar stays empty.
"""

from __future__ import annotations

import pytest

from service.engine import DRAW, BadOptions, Game, Move, Status

from .helpers import accepted, all_cards, full_deck, make_game, move, refused, suit_run, view

SEEDS = (0, 1, 42, 2**53 - 1)
SINGLE = {"single_card_moves": True}

# --- layout and deal ---------------------------------------------------------------------


def test_gate_layout_is_stock_waste_four_foundations_eight_bars_and_two_pillars():
    game = Game.deal("gate", 0)
    kinds = {pile_id: game.variant.kind[pile_id] for pile_id in game.piles}
    assert kinds == {
        "stock": "stock",
        "waste": "waste",
        **{f"foundation/{i}": "foundation" for i in range(4)},
        **{f"tableau/{i}": "tableau" for i in range(8)},
        "reserve/0": "reserve",
        "reserve/1": "reserve",
    }
    assert [game.variant.spec[f"foundation/{i}"].suit for i in range(4)] == list("CDHS")
    # 0..3 the upper row of bars, 4..7 the lower; reserve/0 left of them, reserve/1 right.
    spec = game.variant.spec
    assert {spec[f"tableau/{i}"].row for i in range(4)} != {
        spec[f"tableau/{i}"].row for i in range(4, 8)
    }
    assert (
        spec["reserve/0"].col
        < spec["tableau/0"].col
        < spec["tableau/3"].col
        < spec["reserve/1"].col
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_gate_deal_each_pillar_gets_five_cards_face_up(seed):
    public = Game.deal("gate", seed).public_piles()
    assert public["reserve/0"]["down"] == public["reserve/1"]["down"] == 0
    assert len(public["reserve/0"]["up"]) == len(public["reserve/1"]["up"]) == 5


@pytest.mark.parametrize("seed", SEEDS)
def test_gate_deal_each_bar_gets_one_card_face_up_the_other_34_form_the_stock(seed):
    game = Game.deal("gate", seed)
    public = game.public_piles()
    assert all(
        public[f"tableau/{i}"] == {"down": 0, "up": public[f"tableau/{i}"]["up"]}
        and len(public[f"tableau/{i}"]["up"]) == 1
        for i in range(8)
    )
    assert public["stock"] == {"down": 34, "up": []}
    assert public["waste"] == {"down": 0, "up": []}
    assert all_cards(game) == full_deck(1)


def test_gate_only_the_pillar_top_is_playable():
    game = make_game("gate", {"reserve/0": "5C 9D AH", "reserve/1": "3C", "tableau/0": "TS"})
    accepted(game, move("reserve/0", "foundation/2"))
    refused(game, move("reserve/0", "tableau/0", 2), "top_card_only")  # 9D under AH


# --- tableau ----------------------------------------------------------------------------


def test_gate_tableau_builds_down_in_alternating_colours():
    game = make_game(
        "gate",
        {
            "tableau/0": "9S",
            "tableau/1": "8H",
            "tableau/2": "8C",
            "tableau/3": "7D",
            "tableau/4": "TH",
        },
    )
    accepted(game, move("tableau/1", "tableau/0"))
    refused(game, move("tableau/2", "tableau/0"), "build")
    refused(game, move("tableau/3", "tableau/0"), "build")
    refused(game, move("tableau/4", "tableau/0"), "build")


def test_gate_ordered_runs_move_as_a_unit():
    game = make_game("gate", {"tableau/0": "TS 9H 8C", "tableau/1": "JD", "tableau/2": "TC"})
    assert view(accepted(game, move("tableau/0", "tableau/1", 3)))["tableau/1"] == "JD TS 9H 8C"
    assert view(accepted(game, move("tableau/0", "tableau/2", 2)))["tableau/2"] == "TC 9H 8C"
    refused(
        make_game("gate", {"tableau/0": "TH 9H 8C", "tableau/1": "JS", "tableau/2": "9D"}),
        move("tableau/0", "tableau/1", 3),
        "not_a_run",
    )


def test_gate_single_card_moves_option_moves_only_one_card_at_a_time():
    game = make_game(
        "gate", {"tableau/0": "TS 9H 8C", "tableau/1": "JD", "tableau/2": "9D"}, SINGLE
    )
    accepted(game, move("tableau/0", "tableau/2"))
    refused(game, move("tableau/0", "tableau/1", 3), "one_card_at_a_time")
    assert all(m.count == 1 for m in game.legal_moves() if isinstance(m, Move))
    assert (
        move("tableau/0", "tableau/1", 3)
        in make_game(
            "gate", {"tableau/0": "TS 9H 8C", "tableau/1": "JD", "tableau/2": "9D"}
        ).legal_moves()
    )


def test_gate_single_card_moves_is_off_by_default_and_checked():
    assert Game.deal("gate", 0).variant.options == {"single_card_moves": False}
    assert Game.deal("gate", 0, SINGLE).variant.options == SINGLE
    with pytest.raises(BadOptions):
        Game.deal("gate", 0, {"single_card_moves": "yes"})
    with pytest.raises(BadOptions):
        Game.deal("gate", 0, {"single_card_move": True})
    with pytest.raises(BadOptions):
        Game.deal("gilbert", 0, SINGLE)


# --- pillars ----------------------------------------------------------------------------


def test_gate_a_pillar_top_may_be_played_onto_a_foundation():
    game = make_game("gate", {"reserve/0": "5C AH", "reserve/1": "2H", "tableau/0": "TS"})
    accepted(game, move("reserve/0", "foundation/2"))
    refused(game, move("reserve/1", "foundation/2"), "foundation_order")


def test_gate_a_pillar_top_may_be_played_onto_the_tableau():
    game = make_game("gate", {"reserve/0": "5C 9H", "reserve/1": "9S", "tableau/0": "TS"})
    assert view(accepted(game, move("reserve/0", "tableau/0")))["tableau/0"] == "TS 9H"
    refused(game, move("reserve/1", "tableau/0"), "build")


def test_gate_nothing_is_ever_placed_on_a_pillar():
    game = make_game(
        "gate",
        {
            "reserve/0": "5C 9H",
            "reserve/1": "TD",
            "tableau/0": "8C",
            "tableau/1": "9D",
            "waste": "8S",
            "foundation/3": suit_run("S", 1, 9),
        },
    )
    accepted(game, move("tableau/0", "tableau/1"))  # 8C goes on a red Nine in the tableau...
    refused(game, move("tableau/0", "reserve/0"), "never_onto")  # ...but not on the pillar's 9H
    refused(game, move("waste", "reserve/0"), "never_onto")
    refused(game, move("tableau/1", "reserve/1"), "never_onto")
    refused(game, move("foundation/3", "reserve/1"), "never_onto")


# --- spaces -----------------------------------------------------------------------------


def test_gate_space_refilled_at_once_from_the_fuller_pillar():
    game = make_game(
        "gate",
        {"tableau/0": "8C", "tableau/1": "9H", "reserve/0": "2C 3C", "reserve/1": "4C 5C 6C"},
    )
    after, diff = game.apply(move("tableau/0", "tableau/1"))
    assert view(after) == {
        "tableau/0": "6C",
        "tableau/1": "9H 8C",
        "reserve/0": "2C 3C",
        "reserve/1": "4C 5C",
    }
    assert after.moves == 1  # part of the same move
    assert {"pile": "tableau/0", "op": "push", "cards": ["6C"]} in diff.ops
    left = make_game(
        "gate",
        {"tableau/0": "8C", "tableau/1": "9H", "reserve/0": "2C 3C 4C", "reserve/1": "5C 6C"},
    )
    assert view(accepted(left, move("tableau/0", "tableau/1")))["tableau/0"] == "4C"


def test_gate_space_refilled_from_the_fuller_pillar_left_on_tie():
    game = make_game(
        "gate", {"tableau/0": "8C", "tableau/1": "9H", "reserve/0": "2C 3C", "reserve/1": "4C 5C"}
    )
    after = accepted(game, move("tableau/0", "tableau/1"))
    assert view(after)["tableau/0"] == "3C"
    assert view(after)["reserve/0"] == "2C" and view(after)["reserve/1"] == "4C 5C"


def test_gate_space_refilled_while_either_pillar_holds_cards():
    right_only = make_game("gate", {"tableau/0": "8C", "tableau/1": "9H", "reserve/1": "4C"})
    after = accepted(right_only, move("tableau/0", "tableau/1"))
    assert view(after)["tableau/0"] == "4C" and "reserve/1" not in view(after)
    left_only = make_game("gate", {"tableau/0": "8C", "tableau/1": "9H", "reserve/0": "2C"})
    assert view(accepted(left_only, move("tableau/0", "tableau/1")))["tableau/0"] == "2C"


def test_gate_space_refilled_whatever_emptied_it():
    to_foundation = make_game("gate", {"tableau/0": "AH", "reserve/0": "2C", "reserve/1": "3C"})
    assert view(accepted(to_foundation, move("tableau/0", "foundation/2")))["tableau/0"] == "2C"
    run = make_game(
        "gate", {"tableau/0": "TS 9H", "tableau/1": "JD", "reserve/0": "2C", "reserve/1": "3C 4C"}
    )
    assert view(accepted(run, move("tableau/0", "tableau/1", 2)))["tableau/0"] == "4C"


def test_gate_once_both_pillars_are_empty_a_space_stays_empty():
    game = make_game("gate", {"tableau/0": "8C", "tableau/1": "9H", "waste": "5D", "stock": "2S |"})
    after = accepted(game, move("tableau/0", "tableau/1"))
    assert "tableau/0" not in view(after)
    # Never filled from the waste automatically either: the player chooses.
    assert view(after)["waste"] == "5D" and view(after)["stock"] == "2S |"


def test_gate_a_space_may_be_filled_with_the_waste_top():
    game = make_game("gate", {"waste": "2D 5H", "tableau/1": "9S"})
    after = accepted(game, move("waste", "tableau/0"))
    assert view(after)["tableau/0"] == "5H" and view(after)["waste"] == "2D"


def test_gate_no_other_card_may_go_into_a_space():
    game = make_game(
        "gate", {"waste": "5H", "tableau/1": "9S", "tableau/2": "8D", "foundation/2": "AH 2H"}
    )
    accepted(game, move("waste", "tableau/0"))
    refused(game, move("tableau/1", "tableau/0"), "empty_tableau")
    refused(game, move("tableau/2", "tableau/0"), "empty_tableau")
    refused(game, move("foundation/2", "tableau/0"), "empty_tableau")
    assert not any(m.to == "tableau/0" and m.from_ != "waste" for m in game.legal_moves())


def test_gate_from_stock_fills_a_space_when_the_waste_is_empty():
    game = make_game("gate", {"stock": "3C 9D |", "tableau/1": "9S"})
    assert move("stock", "tableau/0") in game.legal_moves()
    after, _diff = game.apply(move("stock", "tableau/0"))
    assert view(after)["tableau/0"] == "9D" and view(after)["stock"] == "3C |"
    assert after.public_piles()["tableau/0"] == {"down": 0, "up": ["9D"]}  # turned face up


def test_gate_from_stock_only_when_the_waste_is_empty():
    game = make_game("gate", {"stock": "3C 9D |", "waste": "KH", "tableau/1": "9S"})
    refused(game, move("stock", "tableau/0"), "space_from_waste_first")
    assert not any(m.from_ == "stock" for m in game.legal_moves() if isinstance(m, Move))
    accepted(game, move("waste", "tableau/0"))


def test_gate_from_stock_only_into_a_space():
    game = make_game("gate", {"stock": "3C 9D |", "tableau/0": "9S", "tableau/1": "2H"})
    accepted(game, move("stock", "tableau/2"))
    refused(game, move("stock", "tableau/0"), "stock_fills_spaces_only")
    refused(game, move("stock", "foundation/0"), "stock_fills_spaces_only")
    refused(game, move("stock", "foundation"), "stock_fills_spaces_only")
    refused(game, move("stock", "tableau/2", 2), "one_card_from_stock")


def test_gate_a_stock_card_refused_by_the_foundations_is_refused_by_the_rule_not_by_the_card():
    # The stock's top is the Ace of hearts, which foundation/2 would take face up. The
    # move is refused because the stock fills only spaces, whatever its card: a refusal
    # saying no foundation accepts "that card" would tell the player it is no Ace.
    game = make_game("gate", {"stock": "3C AH |", "tableau/0": "9S"})
    err = refused(game, move("stock", "foundation"),
                  "stock_fills_spaces_only")
    assert "foundation" not in err.message


def test_gate_from_stock_needs_a_card_in_the_stock():
    game = make_game("gate", {"tableau/0": "9S", "tableau/1": "8H"})
    refused(game, move("stock", "tableau/2"), "stock_empty")
    assert not any(m.from_ == "stock" for m in game.legal_moves() if isinstance(m, Move))


# --- stock ------------------------------------------------------------------------------


def test_gate_draw_turns_one_card_onto_the_waste():
    game = make_game("gate", {"stock": "2C 3C |", "waste": "KD", "tableau/0": "9S"})
    after = accepted(game, DRAW)
    assert view(after)["waste"] == "KD 3C" and view(after)["stock"] == "2C |"


def test_gate_one_pass_only_no_redeal():
    game = make_game("gate", {"stock": "2C |", "waste": "KD", "tableau/0": "9S", "tableau/1": "8H"})
    empty = accepted(game, DRAW)
    assert DRAW not in empty.legal_moves()
    refused(empty, DRAW, "stock_empty")


def test_gate_play_goes_on_after_the_stock_runs_out_until_no_move_remains():
    bars = {
        f"tableau/{i}": c for i, c in enumerate(["9C", "9S", "5C", "5S", "JC", "JS", "QC", "QS"])
    }
    game = make_game("gate", {**bars, "foundation/2": "AH", "stock": "2H |"})
    out = accepted(game, DRAW)
    assert "stock" not in view(out)
    assert out.status is Status.PLAYING  # the game did not end with the stock
    last = accepted(out, move("waste", "foundation/2"))
    assert last.status is Status.LOST  # no move remains


# --- foundations ------------------------------------------------------------------------


def test_gate_foundations_build_by_suit_from_the_ace():
    game = make_game(
        "gate", {"tableau/0": "AD", "tableau/1": "2D", "foundation/2": "AH", "tableau/2": "2H"}
    )
    accepted(game, move("tableau/0", "foundation/1"))
    accepted(game, move("tableau/2", "foundation/2"))
    refused(game, move("tableau/1", "foundation/1"), "foundation_order")
    refused(game, move("tableau/0", "foundation/0"), "foundation_order")


def test_gate_a_foundation_top_may_go_back_onto_a_non_empty_tableau_pile_that_accepts_it():
    game = make_game(
        "gate", {"foundation/2": suit_run("H", 1, 5), "tableau/0": "6S", "tableau/1": "6H"}
    )
    assert view(accepted(game, move("foundation/2", "tableau/0")))["tableau/0"] == "6S 5H"
    refused(game, move("foundation/2", "tableau/1"), "build")
    refused(game, move("foundation/2", "tableau/2"), "empty_tableau")  # a space: no


def test_gate_a_foundation_top_goes_back_only_onto_the_tableau():
    game = make_game("gate", {"foundation/2": suit_run("H", 1, 5), "tableau/0": "6S"})
    accepted(game, move("foundation/2", "tableau/0"))
    refused(game, move("foundation/2", "foundation/1"), "foundation_returns")
    refused(game, move("foundation/2", "waste"), "never_onto")
