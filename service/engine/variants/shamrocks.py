"""Shamrocks (RULES.md; PySolFC's "Shamrocks II"): eighteen fans of at most three
cards, building up or down by rank in any suit; Kings go to the bottom of their
fan at the deal; an empty fan stays empty."""

from __future__ import annotations

from ..cards import RANK
from ..piles import Kind, Pile
from ..variant import Variant
from ._layout import foundations, tableau


class Shamrocks(Variant):
    id = "shamrocks"
    name = "Shamrocks"
    decks = 1
    layout = (
        *foundations("ascending", 0, row=0, col=1),
        *tableau(18, row=1, per_row=6, spread="right"),
    )
    rules = (
        "One deck, all face up in eighteen fans. Build the four foundations up by suit from "
        "the Ace. A card goes onto a fan whose top is one rank higher or lower, any suit, if "
        "the fan holds fewer than three cards. One card moves at a time, and an empty fan "
        "stays empty. At the deal, Kings go to the bottom of their fan. The top card of a "
        "foundation may come back onto a fan."
    )
    tableau_build = "rank_adjacent_any_suit"
    tableau_capacity = 3
    pile_nouns = {**Variant.pile_nouns, "tableau": "fan"}
    runs_move = False

    def deal(self, seed: int) -> dict[str, Pile]:
        """Fans 0..16 take three cards each and fan 17 the last one, in deck order, bottom
        to top; then each fan's Kings move to its bottom, both groups keeping their order."""
        cards = self.shuffled_deck(seed)
        piles = self.empty_piles()
        for i in range(18):
            fan = cards[3 * i:3 * i + 3]
            kings = tuple(c for c in fan if RANK[c] == 13)
            others = tuple(c for c in fan if RANK[c] != 13)
            piles[f"tableau/{i}"] = Pile((), kings + others)
        return piles

    def empty_tableau_refusal(self, source_kind: Kind, card: str) -> str | None:
        return "an empty fan stays empty for the rest of the game"
