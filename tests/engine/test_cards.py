"""Cards (service/engine/cards.py): the two-character strings of RULES.md."""

from __future__ import annotations

from collections import Counter

from service.engine.cards import ALL_CARDS, RANK, RED, SUIT, card, name, ordered_deck


def test_cards_are_a_rank_then_a_suit():
    assert len(ALL_CARDS) == 52 == len(set(ALL_CARDS))
    assert {c[0] for c in ALL_CARDS} == set("A23456789TJQK")
    assert {c[1] for c in ALL_CARDS} == set("CDHS")
    assert "TD" in RANK and "10D" not in RANK and "td" not in RANK


def test_ranks_run_from_the_ace_to_the_king():
    assert [RANK[r + "S"] for r in "A23456789TJQK"] == list(range(1, 14))
    assert card(1, "H") == "AH" and card(10, "D") == "TD" and card(13, "C") == "KC"


def test_clubs_and_spades_are_black_diamonds_and_hearts_red():
    assert {SUIT[c] for c in ALL_CARDS if RED[c]} == {"D", "H"}
    assert {SUIT[c] for c in ALL_CARDS if not RED[c]} == {"C", "S"}


def test_cards_have_names_a_person_reads():
    assert name("TD") == "Ten of diamonds"
    assert name("AS") == "Ace of spades"
    assert name("7H") == "Seven of hearts"


def test_two_deck_games_hold_two_identical_copies_of_each_card():
    assert Counter(ordered_deck(2)) == Counter({c: 2 for c in ALL_CARDS})
    assert ordered_deck(1)[:13] == [r + "C" for r in "A23456789TJQK"]
