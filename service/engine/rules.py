"""Build rules: which card may go on which tableau card (by the rule's name), which
face-up runs move as one, and which card a foundation takes next.

Each tableau rule is a table ``top card -> frozenset of cards that may be placed
on it``, computed once, so move generation is a dictionary look-up.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .cards import ALL_CARDS, RANK, RED, SUIT, card

if TYPE_CHECKING:
    from .piles import Pile, PileSpec

Fits = Callable[[str, str], bool]  # (top, card) -> may card go on top


def _alternate_colour_down(top: str, card: str) -> bool:
    return RANK[top] == RANK[card] + 1 and RED[top] != RED[card]


def _rank_adjacent_any_suit(top: str, card: str) -> bool:
    return abs(RANK[top] - RANK[card]) == 1


def _rank_adjacent_same_suit(top: str, card: str) -> bool:
    return SUIT[top] == SUIT[card] and abs(RANK[top] - RANK[card]) == 1


BUILD_RULES: dict[str, Fits] = {
    "alternate_colour_down": _alternate_colour_down,
    "rank_adjacent_any_suit": _rank_adjacent_any_suit,
    "rank_adjacent_same_suit": _rank_adjacent_same_suit,
}

# How each rule is said to a person, completed with "<card> cannot go on <top>".
BUILD_RULE_TEXT = {
    "alternate_colour_down": "tableau piles build down in alternating colours",
    "rank_adjacent_any_suit": "a card goes on a card one rank higher or lower, any suit",
    "rank_adjacent_same_suit": "a card goes on a card of the same suit one rank higher or lower",
}

ACCEPTS: dict[str, dict[str, frozenset[str]]] = {
    name: {top: frozenset(c for c in ALL_CARDS if fits(top, c)) for top in ALL_CARDS}
    for name, fits in BUILD_RULES.items()
}


def run_length(up: tuple[str, ...], rule: str) -> int:
    """How many cards from the top of ``up`` form a run under ``rule`` (at least 1 if non-empty)."""
    fits = BUILD_RULES[rule]
    n = len(up)
    if n == 0:
        return 0
    k = 1
    while k < n and fits(up[n - k - 1], up[n - k]):
        k += 1
    return k


def foundation_next(spec: PileSpec, pile: Pile) -> str | None:
    """The one card a foundation takes next (``None`` when it is complete)."""
    suit = spec.suit or "C"
    if spec.direction == "ascending":
        rank = RANK[pile.up[-1]] + 1 if pile.up else 1
        return card(rank, suit) if rank <= 13 else None
    rank = RANK[pile.up[-1]] - 1 if pile.up else 13
    return card(rank, suit) if rank >= 1 else None
