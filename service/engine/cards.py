"""Cards as the two-character strings of RULES.md: rank then suit (``"TD"``)."""

from __future__ import annotations

RANKS = "A23456789TJQK"
SUITS = "CDHS"  # also the order of foundation/0..3 (and 4..7)
SUIT_NAMES = {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades"}
RANK_NAMES = {
    "A": "Ace", "2": "Two", "3": "Three", "4": "Four", "5": "Five", "6": "Six", "7": "Seven",
    "8": "Eight", "9": "Nine", "T": "Ten", "J": "Jack", "Q": "Queen", "K": "King",
}

# Lookup tables: hot paths index these instead of parsing strings.
RANK: dict[str, int] = {}  # card -> 1..13
SUIT: dict[str, str] = {}  # card -> "C" | "D" | "H" | "S"
RED: dict[str, bool] = {}  # card -> is the card red
ALL_CARDS: tuple[str, ...] = tuple(r + s for s in SUITS for r in RANKS)
for _card in ALL_CARDS:
    RANK[_card] = RANKS.index(_card[0]) + 1
    SUIT[_card] = _card[1]
    RED[_card] = _card[1] in "DH"


def card(rank: int, suit: str) -> str:
    """The card of ``rank`` (1 = Ace .. 13 = King) in ``suit``."""
    return RANKS[rank - 1] + suit


def name(c: str) -> str:
    """``"7H"`` -> ``"Seven of hearts"``, for messages a person reads."""
    return f"{RANK_NAMES[c[0]]} of {SUIT_NAMES[c[1]]}"


def ordered_deck(decks: int = 1) -> list[str]:
    """The unshuffled deck: for each deck, clubs, diamonds, hearts, spades, each Ace to King."""
    return [c for _ in range(decks) for c in ALL_CARDS]
