"""Gilbert (RULES.md): Klondike's tableau, four foundations up from the Ace and
four down from the King, only a Seven fills an empty pile, draw three with
unlimited redeals, and a "lost" test that tells nothing about unseen cards."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..cards import RANK
from ..errors import IllegalCommand
from ..movegen import has_legal_move, moves_from
from ..piles import Kind, Pile, PileSpec
from ..refusals import Rule
from ..variant import Variant
from ._layout import foundations, tableau

if TYPE_CHECKING:
    from ..position import Position

# A draw deals this many cards onto the waste (fewer if fewer remain): RULES.md, Gilbert.
CARDS_PER_DRAW = 3


class Gilbert(Variant):
    id = "gilbert"
    name = "Gilbert"
    decks = 1
    layout = (
        PileSpec("stock", "stock", row=0, col=0),
        PileSpec("waste", "waste", row=0, col=1, spread="right"),
        *foundations("ascending", 0, row=0, col=3),
        *foundations("descending", 4, row=1, col=3),
        *tableau(7, row=2, per_row=7, spread="down"),
    )
    rules = (
        "One deck. Four foundations build up by suit from the Ace and four build down by suit "
        "from the King; each suit is shared by its two foundations. On the tableau, build "
        "down in alternating colours; an ordered run moves as one; only a Seven, or a run "
        "starting with one, may fill an empty pile. A click on the stock deals three cards to "
        "the waste; when the stock is empty it turns the waste back over, as often as you "
        "like. The top card of a foundation may come back onto the tableau or onto the other "
        "foundation of its suit."
    )
    tableau_build = "alternate_colour_down"
    runs_move = True
    foundation_returns = frozenset({"tableau", "foundation"})

    def deal(self, seed: int) -> dict[str, Pile]:
        """Tableau pile i takes the next i+1 cards of the shuffled deck (bottom to top), only
        the last face up; the 24 left form the stock in deck order, the last card on top."""
        cards = self.shuffled_deck(seed)
        piles = self.empty_piles()
        at = 0
        for i in range(7):
            piles[f"tableau/{i}"] = Pile(tuple(cards[at:at + i]), (cards[at + i],))
            at += i + 1
        piles["stock"] = Pile(tuple(cards[at:]), ())
        return piles

    def empty_tableau_refusal(self, source_kind: Kind, card: str) -> str | None:
        return None if RANK[card] == 7 else "only a Seven may fill an empty tableau pile"

    def can_draw(self, piles: Mapping[str, Pile]) -> bool:
        return bool(piles["stock"].down or piles["waste"].up)

    def draw(self, piles: dict[str, Pile]) -> bool:
        stock, waste = piles["stock"], piles["waste"]
        if stock.down:
            k = min(CARDS_PER_DRAW, len(stock.down))
            dealt = stock.down[:-k - 1:-1]  # one by one from the top: the third ends on top
            piles["stock"] = Pile(stock.down[:-k], ())
            piles["waste"] = Pile((), waste.up + dealt)
            return False
        if waste.up:
            # Turned over as a whole, order kept: the next pass deals the same cards in the
            # same order.
            piles["stock"] = Pile(waste.up[::-1], ())
            piles["waste"] = Pile()
            return True
        raise IllegalCommand(Rule.STOCK_AND_WASTE_EMPTY, "the stock and the waste are both empty")

    def is_lost(self, position: Position) -> bool:
        piles = position.piles
        waste = piles["waste"].up
        if piles["stock"].down:
            return False  # (c) needs the stock empty
        if waste and not position.only_draws_since_turnover:
            return False  # (c) the player has not seen every card of this pass
        if has_legal_move(self, piles):
            return False  # (a)
        # (b) the waste tops repeated draws would show: after the turn-over, every
        # third card of the waste (bottom first) and the last one.
        reachable = ({waste[i] for i in range(CARDS_PER_DRAW - 1, len(waste), CARDS_PER_DRAW)}
                     | set(waste[-1:]))
        for card in reachable:
            trial = dict(piles)
            trial["waste"] = Pile((), (card,))
            if moves_from(self, trial, "waste"):
                return False
        return True
