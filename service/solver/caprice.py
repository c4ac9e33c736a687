"""Caprice for the search.

Position: ``(found, tableau, stock)``: ``found[i]`` counts the cards on
``foundation/i`` (0..3 ascending, 4..7 descending); ``tableau[i]`` the cards of
``tableau/i``; ``stock`` the engine's stock (its top last). Both copies of a card
are one integer. Once the stock is empty the piles are interchangeable (the key
sorts them); before, each pile has its own cards still to come.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping

from service.engine import Pile

from .build import ADJ_SUIT
from .cards import card_of
from .foundations import accepts, bump
from .rules import (DRAW, FOUNDATION_IDS, FROM_FOUNDATION, REVEALS, SETTLED, TABLEAU, TABLEAU_IDS,
                    TO_FOUNDATION, Cmd, Rules, State, Step, codes)

F = FOUNDATION_IDS
T = TABLEAU_IDS


# Dealing comes before moves between piles: measured, it finds wins in fewer positions.
DEAL = (REVEALS + TABLEAU) // 2


class Caprice(Rules):
    variant_id = "caprice"
    total_cards = 104

    def from_piles(self, piles: Mapping[str, Pile]) -> State:
        return (tuple(len(piles[f].up) for f in F),
                tuple(codes(piles[t].up) for t in T[:12]),
                codes(piles["stock"].down))

    def order(self, steps: list[Step]) -> list[Step]:
        steps.sort(key=lambda step: step[0])  # by priority alone
        return steps

    def successors(self, s: State) -> list[Step]:
        found, tab, stock = s
        moves = self.moves(s)
        if not stock:
            # No deal to come: the empty piles are interchangeable, fill only the first.
            empties = [T[j] for j, p in enumerate(tab) if not p]
            if len(empties) > 1:
                others = set(empties[1:])
                moves = [m for m in moves if m[1][1] not in others]
        return self.order([(p, (c,), t) for p, c, t in moves])

    def key(self, s: State) -> Hashable:
        found, tab, stock = s
        if stock:
            return (found, tab, len(stock))
        return (found, tuple(sorted(tab)))

    def moves(self, s: State) -> list[tuple[int, Cmd, State]]:
        found, tab, stock = s
        out: list[tuple[int, Cmd, State]] = []
        targets: dict[int, list[int]] = {}
        empties = []
        for j, p in enumerate(tab):
            if p:
                for c in ADJ_SUIT[p[-1]]:
                    targets.setdefault(c, []).append(j)
            else:
                empties.append(j)
        for f in range(8):
            n = found[f]
            if not n:
                continue
            c = card_of(f, n) if f < 4 else card_of(f - 4, 14 - n)
            less = bump(found, f, -1)
            for j in [*targets.get(c, ()), *empties]:
                lst = list(tab)
                lst[j] = lst[j] + (c,)
                out.append((FROM_FOUNDATION, (F[f], T[j], 1), (less, tuple(lst), stock)))
        for i, p in enumerate(tab):
            if not p:
                continue
            c = p[-1]
            rest = p[:-1]
            for f in accepts(found, c):
                lst = list(tab)
                lst[i] = rest
                out.append((TO_FOUNDATION, (T[i], F[f], 1), (bump(found, f, 1), tuple(lst), stock)))
            prio = REVEALS if not rest else TABLEAU
            for j in targets.get(c, ()):
                if j != i:
                    lst = list(tab)
                    lst[i] = rest
                    lst[j] = lst[j] + (c,)
                    out.append((prio, (T[i], T[j], 1), (found, tuple(lst), stock)))
            # A pile's only card into an empty pile changes only which cards later deals
            # put on it: tried last.
            empty_prio = TABLEAU if rest else SETTLED
            for j in empties:
                lst = list(tab)
                lst[i] = rest
                lst[j] = (c,)
                out.append((empty_prio, (T[i], T[j], 1), (found, tuple(lst), stock)))
        if stock:
            lst = [p + (stock[-1 - i],) for i, p in enumerate(tab)]
            out.append((DEAL, DRAW, (found, tuple(lst), stock[:-12])))
        return out
