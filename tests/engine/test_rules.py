"""Build rules by name (service/engine/rules.py): the precomputed tables say what the rules say."""

from __future__ import annotations

from service.engine.cards import ALL_CARDS, RANK, RED, SUIT
from service.engine.rules import ACCEPTS, run_length


def test_alternate_colour_down_takes_the_next_lower_card_of_the_other_colour():
    assert ACCEPTS["alternate_colour_down"]["9S"] == {"8D", "8H"}
    assert ACCEPTS["alternate_colour_down"]["AH"] == set()
    assert all(
        RANK[t] == RANK[c] + 1 and RED[t] != RED[c]
        for t in ALL_CARDS
        for c in ACCEPTS["alternate_colour_down"][t]
    )


def test_rank_adjacent_any_suit_takes_one_rank_up_or_down():
    assert ACCEPTS["rank_adjacent_any_suit"]["5C"] == {r + s for r in "46" for s in "CDHS"}
    assert ACCEPTS["rank_adjacent_any_suit"]["KH"] == {"Q" + s for s in "CDHS"}
    assert ACCEPTS["rank_adjacent_any_suit"]["AH"] == {"2" + s for s in "CDHS"}


def test_rank_adjacent_same_suit_takes_one_rank_up_or_down_in_suit():
    assert ACCEPTS["rank_adjacent_same_suit"]["5H"] == {"4H", "6H"}
    assert ACCEPTS["rank_adjacent_same_suit"]["KH"] == {"QH"}
    assert ACCEPTS["rank_adjacent_same_suit"]["AH"] == {"2H"}
    assert all(SUIT[t] == SUIT[c] for t in ALL_CARDS for c in ACCEPTS["rank_adjacent_same_suit"][t])


def test_run_length_counts_the_cards_from_the_top_that_follow_the_rule():
    assert run_length((), "alternate_colour_down") == 0
    assert run_length(("5C",), "alternate_colour_down") == 1
    assert run_length(("TS", "9S", "8H"), "alternate_colour_down") == 2
    assert run_length(("JD", "TS", "9H", "8C"), "alternate_colour_down") == 4
    assert run_length(("8C", "9H"), "alternate_colour_down") == 1  # up is not a run
