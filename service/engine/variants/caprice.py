"""Caprice (RULES.md): two decks, eight foundations that start with an Ace or a King
of each suit, twelve piles building up or down in suit, and a stock dealt one
card onto every pile, seven times."""

from __future__ import annotations

from collections.abc import Mapping

from ..cards import SUITS, ordered_deck
from ..errors import IllegalCommand
from ..piles import Kind, Pile, PileSpec
from ..refusals import Rule
from ..variant import Variant
from ._layout import foundations, tableau


class Caprice(Variant):
    id = "caprice"
    name = "Caprice"
    decks = 2
    layout = (
        PileSpec("stock", "stock", row=0, col=0),
        *foundations("ascending", 0, row=0, col=2),
        *foundations("descending", 4, row=1, col=2),
        *tableau(12, row=2, per_row=6, spread="down"),
    )
    rules = (
        "Two decks. Four foundations start with an Ace and build up by suit; four start with "
        "a King and build down by suit. On the twelve piles, a card goes onto one of the same "
        "suit one rank higher or lower; any card may fill an empty pile; one card moves at a "
        "time. A click on the stock deals a card onto every pile (seven times in all, one "
        "pass). The top card of a foundation, even a starting Ace or King, may come back onto "
        "the piles."
    )
    tableau_build = "rank_adjacent_same_suit"
    runs_move = False

    def deck_to_shuffle(self) -> list[str]:
        """Both decks in order less the first Ace and the first King of each suit."""
        cards = ordered_deck(2)
        for suit in SUITS:
            cards.remove("A" + suit)
            cards.remove("K" + suit)
        return cards

    def deal(self, seed: int) -> dict[str, Pile]:
        """foundation/0..3 get their Ace and foundation/4..7 their King; the 96 others are
        shuffled; tableau/0..11 take one card each, and the 84 left form the stock in
        deck order, the last card on top."""
        cards = self.shuffled_deck(seed)
        piles = self.empty_piles()
        for i, suit in enumerate(SUITS):
            piles[f"foundation/{i}"] = Pile((), ("A" + suit,))
            piles[f"foundation/{4 + i}"] = Pile((), ("K" + suit,))
        for i in range(12):
            piles[f"tableau/{i}"] = Pile((), (cards[i],))
        piles["stock"] = Pile(tuple(cards[12:]), ())
        return piles

    def empty_tableau_refusal(self, source_kind: Kind, card: str) -> str | None:
        return None

    def can_draw(self, piles: Mapping[str, Pile]) -> bool:
        return bool(piles["stock"].down)

    def draw(self, piles: dict[str, Pile]) -> bool:
        stock = piles["stock"].down
        if not stock:
            raise IllegalCommand(Rule.STOCK_EMPTY, "the stock is empty (one pass only)")
        for i in range(12):  # the stock's top card goes to tableau/0, the next to tableau/1...
            pile = piles[f"tableau/{i}"]
            piles[f"tableau/{i}"] = Pile(pile.down, pile.up + (stock[-1 - i],))
        piles["stock"] = Pile(stock[:-12], ())
        return False
