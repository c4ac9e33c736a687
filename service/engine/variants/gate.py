"""Gate (RULES.md): two pillars of five cards refill the eight bars' spaces;
once both are empty, only the waste top (or, with no waste, the stock's top)
fills a space. Draw one, one pass."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import IllegalCommand
from ..piles import Kind, Pile, PileSpec
from ..refusals import Rule
from ..variant import Option, Variant
from ._layout import foundations, tableau


class Gate(Variant):
    id = "gate"
    name = "Gate"
    decks = 1
    layout = (
        PileSpec("stock", "stock", row=0, col=0),
        PileSpec("waste", "waste", row=0, col=1),
        *foundations("ascending", 0, row=0, col=2),
        PileSpec("reserve/0", "reserve", row=1, col=0, spread="down"),
        *tableau(4, row=1, per_row=4, spread="down", col=1),
        PileSpec("reserve/1", "reserve", row=1, col=5, spread="down"),
        *tableau(4, row=2, per_row=4, spread="down", col=1, first_index=4),
    )
    rules = (
        "One deck. Build the four foundations up by suit from the Ace. On the eight bars, "
        "build down in alternating colours; ordered runs move as one unless you choose "
        "single-card moves. The top cards of the two pillars go to the foundations or the "
        "bars; nothing goes onto a pillar. While a pillar has cards, an emptied bar is "
        "refilled at once from the fuller pillar (the left one on a tie); after that, only "
        "the top card of the waste fills a space, or the top card of the stock when the waste "
        "is empty. A click on the stock turns one card; there is one pass."
    )
    options_spec = {
        "single_card_moves": Option(
            False, "only one card moves at a time (Marks and Harrod's rule)"),
    }
    tableau_build = "alternate_colour_down"
    pile_nouns = {**Variant.pile_nouns, "reserve": "pillar"}

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(options)
        self.runs_move = not self.options["single_card_moves"]

    def deal(self, seed: int) -> dict[str, Pile]:
        """reserve/0 then reserve/1 take five cards each (bottom to top), tableau/0..7 one
        each, and the 34 left form the stock in deck order, the last card on top."""
        cards = self.shuffled_deck(seed)
        piles = self.empty_piles()
        piles["reserve/0"] = Pile((), tuple(cards[0:5]))
        piles["reserve/1"] = Pile((), tuple(cards[5:10]))
        for i in range(8):
            piles[f"tableau/{i}"] = Pile((), (cards[10 + i],))
        piles["stock"] = Pile(tuple(cards[18:]), ())
        return piles

    def why_one_card_at_a_time(self) -> str:
        return f"{super().why_one_card_at_a_time()} with single_card_moves"

    def empty_tableau_refusal(self, source_kind: Kind, card: str) -> str | None:
        if source_kind == "waste":
            return None
        return ("a space may be filled only with the waste top, or with the stock's top card "
                "when the waste is empty")

    def stock_refusal(self, piles: Mapping[str, Pile]) -> tuple[Rule, str] | None:
        """The stock's top card fills a space only when the waste is empty."""
        if not piles["stock"].down:
            return (Rule.STOCK_EMPTY, "the stock is empty")
        if piles["waste"].up:
            return (Rule.SPACE_FROM_WASTE_FIRST,
                    "a space is filled from the stock only when the waste is empty: "
                    "play the waste top into it")
        return None

    def after_move(self, piles: dict[str, Pile], source: str) -> None:
        if self.kind[source] != "tableau" or piles[source].up:
            return
        left, right = piles["reserve/0"], piles["reserve/1"]
        if not left.up and not right.up:
            return  # a space: it stays empty until the player fills it
        pillar = "reserve/0" if len(left.up) >= len(right.up) else "reserve/1"
        cards = piles[pillar].up
        piles[pillar] = Pile((), cards[:-1])
        piles[source] = Pile((), cards[-1:])

    def can_draw(self, piles: Mapping[str, Pile]) -> bool:
        return bool(piles["stock"].down)

    def draw(self, piles: dict[str, Pile]) -> bool:
        stock = piles["stock"]
        if not stock.down:
            raise IllegalCommand(Rule.STOCK_EMPTY, "the stock is empty (one pass only, no redeal)")
        piles["stock"] = Pile(stock.down[:-1], ())
        piles["waste"] = Pile((), piles["waste"].up + stock.down[-1:])
        return False
