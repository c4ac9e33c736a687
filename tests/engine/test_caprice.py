"""RULES.md, "Caprice": one test per rule sentence, each with an accepted and a refused case."""

from __future__ import annotations

from collections import Counter

import pytest

from service.engine import DRAW, Game, Status

from .helpers import accepted, all_cards, full_deck, make_game, move, play, refused, suit_run, view

SEEDS = (0, 1, 42, 2**53 - 1)

# --- layout and deal ---------------------------------------------------------------------


def test_caprice_layout_is_stock_eight_foundations_and_twelve_tableau_piles_no_waste():
    game = Game.deal("caprice", 0)
    assert list(game.piles) == [
        "stock",
        *(f"foundation/{i}" for i in range(8)),
        *(f"tableau/{i}" for i in range(12)),
    ]
    spec = game.variant.spec
    assert [
        (spec[f"foundation/{i}"].suit, spec[f"foundation/{i}"].direction) for i in range(8)
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
def test_caprice_deal_one_ace_and_one_king_of_each_suit_start_on_the_foundations(seed):
    game = Game.deal("caprice", seed)
    assert [view(game)[f"foundation/{i}"] for i in range(8)] == [
        "AC",
        "AD",
        "AH",
        "AS",
        "KC",
        "KD",
        "KH",
        "KS",
    ]


@pytest.mark.parametrize("seed", SEEDS)
def test_caprice_deal_each_tableau_pile_gets_one_face_up_card_and_84_form_the_stock(seed):
    game = Game.deal("caprice", seed)
    public = game.public_piles()
    assert all(
        public[f"tableau/{i}"]["down"] == 0 and len(public[f"tableau/{i}"]["up"]) == 1
        for i in range(12)
    )
    assert public["stock"] == {"down": 84, "up": []}


@pytest.mark.parametrize("seed", SEEDS)
def test_caprice_is_played_with_two_decks_each_card_twice(seed):
    game = Game.deal("caprice", seed)
    assert all_cards(game) == full_deck(2)
    # The other 96 were shuffled: the second Ace and King of each suit are among them.
    rest = Counter(
        c
        for pile_id, p in game.piles.items()
        if not pile_id.startswith("foundation")
        for c in (*p.down, *p.up)
    )
    assert sum(rest.values()) == 96 and all(rest[r + s] == 1 for r in "AK" for s in "CDHS")


def test_caprice_deals_differ_by_seed():
    assert Game.deal("caprice", 0).piles != Game.deal("caprice", 1).piles


# --- tableau ----------------------------------------------------------------------------


def test_caprice_a_card_goes_onto_a_pile_whose_top_is_the_same_suit_one_rank_higher():
    game = make_game("caprice", {"tableau/0": "5H", "tableau/1": "4H", "tableau/2": "4D"})
    assert view(accepted(game, move("tableau/1", "tableau/0")))["tableau/0"] == "5H 4H"
    refused(game, move("tableau/2", "tableau/0"), "build")


def test_caprice_a_card_goes_onto_a_pile_whose_top_is_the_same_suit_one_rank_lower():
    game = make_game("caprice", {"tableau/0": "5H", "tableau/1": "6H", "tableau/2": "7H"})
    assert view(accepted(game, move("tableau/1", "tableau/0")))["tableau/0"] == "5H 6H"
    refused(game, move("tableau/2", "tableau/0"), "build")


def test_caprice_a_card_of_the_same_rank_does_not_go_on_a_pile():
    # Two decks: the other copy of the same card is no neighbour either.
    game = make_game("caprice", {"tableau/0": "5H", "tableau/1": "5H", "tableau/2": "6H"})
    accepted(game, move("tableau/2", "tableau/0"))
    refused(game, move("tableau/1", "tableau/0"), "build")


def test_caprice_any_card_may_fill_an_empty_pile():
    game = make_game(
        "caprice",
        {"tableau/0": "9S", "tableau/1": "KD", "foundation/2": "AH 2H", "foundation/6": "KH"},
    )
    for src in ("tableau/0", "tableau/1", "foundation/2", "foundation/6"):
        after = accepted(game, move(src, "tableau/5"))
        assert view(after)["tableau/5"] == view(game)[src].split()[-1]
    refused(
        game, move("tableau/0", "tableau/1"), "build"
    )  # a pile that is not empty still builds in suit


def test_caprice_one_card_moves_at_a_time():
    game = make_game("caprice", {"tableau/0": "5H 6H", "tableau/1": "7H", "tableau/2": "4H"})
    accepted(game, move("tableau/0", "tableau/1"))
    refused(game, move("tableau/0", "tableau/2", 2), "one_card_at_a_time")
    refused(game, move("tableau/0", "tableau/3", 2), "one_card_at_a_time")


# --- stock ------------------------------------------------------------------------------


def test_caprice_draw_deals_one_card_face_up_onto_each_of_the_twelve_piles_empty_ones_included():
    stock = "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC 2D 3D 4D 5D |"  # KC... 5D on top
    game = make_game(
        "caprice", {"stock": stock, "tableau/0": "9H", "tableau/3": "AS", "tableau/11": "QS"}
    )
    after = accepted(game, DRAW)
    dealt = [view(after)[f"tableau/{i}"].split()[-1] for i in range(12)]
    # The stock's top card goes to tableau/0, the next to tableau/1, and so on.
    assert dealt == ["5D", "4D", "3D", "2D", "KC", "QC", "JC", "TC", "9C", "8C", "7C", "6C"]
    assert view(after)["tableau/0"] == "9H 5D" and view(after)["tableau/1"] == "4D"
    assert view(after)["stock"] == "2C 3C 4C 5C |"
    assert all(after.public_piles()[f"tableau/{i}"]["down"] == 0 for i in range(12))


def test_caprice_the_stock_is_dealt_seven_times_in_all_one_pass_only():
    game = Game.deal("caprice", 3)
    for deal in range(7):
        assert game.public_piles()["stock"]["down"] == 84 - 12 * deal
        game = accepted(game, DRAW)
    assert game.public_piles()["stock"]["down"] == 0
    assert all(len(game.piles[f"tableau/{i}"].up) == 8 for i in range(12))  # one dealt card + seven
    assert DRAW not in game.legal_moves()


def test_caprice_draw_is_refused_with_the_stock_empty():
    game = make_game("caprice", {"tableau/0": "5H", "tableau/1": "6H"})
    refused(game, DRAW, "stock_empty")
    accepted(
        make_game("caprice", {"tableau/0": "5H", "tableau/1": "6H", "stock": "9C " * 12 + "|"}),
        DRAW,
    )


def test_caprice_draw_may_be_used_at_any_time_while_the_stock_has_cards():
    game = make_game("caprice", {"tableau/0": "5H", "tableau/1": "6H", "stock": "9C " * 12 + "|"})
    assert move("tableau/0", "tableau/1") in game.legal_moves() and DRAW in game.legal_moves()
    accepted(game, DRAW)


def test_caprice_has_no_waste():
    game = make_game("caprice", {"tableau/0": "5H", "tableau/1": "6H"})
    refused(game, move("waste", "tableau/0"), "unknown_pile")
    refused(game, move("stock", "tableau/2"), "stock_by_draw_only")


# --- foundations ------------------------------------------------------------------------


def test_caprice_ascending_foundations_build_up_by_suit_descending_down():
    game = make_game(
        "caprice",
        {
            "foundation/2": "AH",
            "foundation/6": "KH",
            "tableau/0": "2H",
            "tableau/1": "QH",
            "tableau/2": "3H",
            "tableau/3": "2D",
        },
    )
    accepted(game, move("tableau/0", "foundation/2"))
    accepted(game, move("tableau/1", "foundation/6"))
    refused(game, move("tableau/2", "foundation/2"), "foundation_order")
    refused(game, move("tableau/3", "foundation/2"), "foundation_order")
    refused(game, move("tableau/0", "foundation/6"), "foundation_order")


def test_caprice_a_foundation_top_may_go_back_onto_the_tableau_under_the_tableau_rules():
    game = make_game(
        "caprice", {"foundation/2": suit_run("H", 1, 5), "tableau/0": "6H", "tableau/1": "6S"}
    )
    assert view(accepted(game, move("foundation/2", "tableau/0")))["tableau/0"] == "6H 5H"
    refused(game, move("foundation/2", "tableau/1"), "build")


def test_caprice_a_foundation_top_goes_back_only_onto_the_tableau():
    # 7H may not go from the ascending hearts to the descending hearts showing 8H.
    game = make_game(
        "caprice",
        {
            "foundation/2": suit_run("H", 1, 7),
            "foundation/6": suit_run("H", 13, 8),
            "tableau/0": "8H",
        },
    )
    accepted(game, move("foundation/2", "tableau/0"))
    refused(game, move("foundation/2", "foundation/6"), "foundation_returns")
    # Said the same way with "to": "foundation": foundation/6 does take a 7H, from the tableau.
    refused(
        game, move("foundation/2", "foundation"), "foundation_returns"
    )


def test_caprice_a_starting_ace_may_go_back_onto_the_tableau():
    game = make_game("caprice", {"foundation/2": "AH", "tableau/0": "2H", "tableau/1": "2D"})
    assert view(accepted(game, move("foundation/2", "tableau/0")))["tableau/0"] == "2H AH"
    refused(game, move("foundation/2", "tableau/1"), "build")


def test_caprice_a_starting_king_may_go_back_onto_the_tableau():
    game = make_game("caprice", {"foundation/6": "KH", "tableau/0": "QH", "tableau/1": "QS"})
    assert view(accepted(game, move("foundation/6", "tableau/0")))["tableau/0"] == "QH KH"
    refused(game, move("foundation/6", "tableau/1"), "build")


def test_caprice_emptied_ascending_foundation_accepts_its_ace_again():
    game = make_game(
        "caprice",
        {
            "foundation/2": "AH",
            "tableau/0": "2H",
            "tableau/1": "AH",
            "tableau/2": "AD",
            "tableau/3": "2H",
        },
    )
    emptied = accepted(game, move("foundation/2", "tableau/0"))
    assert "foundation/2" not in view(emptied)
    assert view(accepted(emptied, move("tableau/1", "foundation/2")))["foundation/2"] == "AH"
    refused(emptied, move("tableau/2", "foundation/2"), "foundation_order")  # another suit's Ace
    refused(emptied, move("tableau/3", "foundation/2"), "foundation_order")  # not the Ace


def test_caprice_emptied_descending_foundation_accepts_its_king_again():
    game = make_game(
        "caprice",
        {
            "foundation/6": "KH",
            "tableau/0": "QH",
            "tableau/1": "KH",
            "tableau/2": "KS",
            "tableau/3": "QH",
        },
    )
    emptied = accepted(game, move("foundation/6", "tableau/0"))
    assert "foundation/6" not in view(emptied)
    assert view(accepted(emptied, move("tableau/1", "foundation/6")))["foundation/6"] == "KH"
    refused(emptied, move("tableau/2", "foundation/6"), "foundation_order")
    refused(emptied, move("tableau/3", "foundation/6"), "foundation_order")  # not the King


def test_caprice_an_emptied_ascending_foundation_takes_no_king():
    game = make_game("caprice", {"foundation/2": "AH", "tableau/0": "2H", "tableau/1": "KH"})
    emptied = play(game, move("foundation/2", "tableau/0"))
    refused(emptied, move("tableau/1", "foundation/2"), "foundation_order")
    accepted(emptied, move("tableau/1", "foundation/6"))


def test_caprice_is_won_with_all_104_cards_on_the_foundations():
    full = {f"foundation/{i}": suit_run(s, 1, 13) for i, s in enumerate("CDHS")}
    full |= {f"foundation/{4 + i}": suit_run(s, 13, 1) for i, s in enumerate("CDHS")}
    assert make_game("caprice", full).status is Status.WON
    one_short = full | {"foundation/7": suit_run("S", 13, 2), "tableau/0": "AS"}
    game = make_game("caprice", one_short)
    assert game.status is Status.PLAYING and game.foundation_cards == 103
    assert accepted(game, move("tableau/0", "foundation/7")).status is Status.WON
