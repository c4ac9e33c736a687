"""Caprice for the search.

Position: ``(found, tableau, stock)``: ``found[i]`` counts the cards on
``foundation/i`` (0..3 ascending, 4..7 descending); ``tableau[i]`` the cards of
``tableau/i``; ``stock`` the engine's stock (its top last). Both copies of a card
are one integer. Once the stock is empty the piles are interchangeable (the key
sorts them); before, each pile has its own cards still to come.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

from service.engine import Pile

from .build import ADJ_SUIT
from .cards import card_of
from .foundations import accepts, bump
from .rules import DRAW, Cmd, F, P, Rules, State, Step, T, codes

# Dealing comes before moves between piles: measured, it finds wins in fewer positions.
DEAL = (P.REVEALS + P.TABLEAU) // 2
# A move: (from pile, to pile, from foundation, to foundation, card), -1 where none.
Move = tuple[int, int, int, int, int]
DEAL_MOVE: Move = (-1, -1, -1, -1, -1)


class Caprice(Rules):
    variant_id = "caprice"
    total_cards = 104
    has_hasty = True  # measured: more deals won within a budget, with shorter lines
    # Restarts in a nearly random order: deals 1..60 at 30,000 positions, shake 5: 47
    # won, 10: 57, 20 and 40: 60 (and deals 61..200 all won with 40 and with 100).
    shake = 100.0

    def from_piles(self, piles: Mapping[str, Pile]) -> State:
        return (tuple(len(piles[f].up) for f in F),
                tuple(codes(piles[t].up) for t in T[:12]),
                codes(piles["stock"].down))

    def successors(self, s: State) -> list[Step]:
        return [(p, self.commands(m), self.play(s, m)) for p, m in self._ordered(s)]

    def steps(self, s: State) -> list[Any]:
        return [m for _, m in self._ordered(s)]

    def _ordered(self, s: State) -> list[tuple[int, Move]]:
        if self.hasty:
            # Hasty: a card that can go to a foundation goes, nothing else is tried.
            up = _foundation_step(s)
            if up is not None:
                return [up]
        steps = self._steps(s, for_search=True)
        steps.sort(key=_priority)  # by priority alone
        return steps

    def key(self, s: State) -> Hashable:
        found, tab, stock = s
        if stock:
            return (found, tab, len(stock))
        return (found, tuple(sorted(tab)))

    def moves(self, s: State) -> list[tuple[int, Cmd, State]]:
        return [(p, self.commands(m)[0], self.play(s, m)) for p, m in self._steps(s)]

    def commands(self, step: Any) -> tuple[Cmd, ...]:
        if step is DEAL_MOVE:
            return (DRAW,)
        i, j, fo, fi, _ = step
        return ((F[fo] if fo >= 0 else T[i], F[fi] if fi >= 0 else T[j], 1),)

    def play(self, s: State, step: Any) -> State:
        found, tab, stock = s
        lst = list(tab)
        if step is DEAL_MOVE:
            return (found, tuple(p + (stock[-1 - i],) for i, p in enumerate(tab)), stock[:-12])
        i, j, fo, fi, c = step
        if fo >= 0:
            found = bump(found, fo, -1)
        elif fi >= 0:
            found = bump(found, fi, 1)
        if i >= 0:
            lst[i] = lst[i][:-1]
        if j >= 0:
            lst[j] = lst[j] + (c,)
        return (found, tuple(lst), stock)

    def _steps(self, s: State, for_search: bool = False) -> list[tuple[int, Move]]:
        """Every legal command as (priority, move): the move is (from pile, to pile, from
        foundation, to foundation, card), -1 where there is none; or DEAL_MOVE.

        ``for_search``: once the stock is out, the empty piles are interchangeable (the
        key sorts the piles): only the first is filled, and never with a pile's only
        card (that leads to the same key, already in the transposition table)."""
        found, tab, stock = s
        out: list[tuple[int, Move]] = []
        targets: dict[int, list[int]] = {}
        empties = []
        for j, p in enumerate(tab):
            if p:
                for c in ADJ_SUIT[p[-1]]:
                    targets.setdefault(c, []).append(j)
            else:
                empties.append(j)
        lone_to_empty = True
        if for_search and not stock and empties:
            empties = empties[:1]
            lone_to_empty = False
        for f in range(8):
            n = found[f]
            if not n:
                continue
            c = card_of(f, n) if f < 4 else card_of(f - 4, 14 - n)
            for j in [*targets.get(c, ()), *empties]:
                out.append((P.FROM_FOUNDATION, (-1, j, f, -1, c)))
        for i, p in enumerate(tab):
            if not p:
                continue
            c = p[-1]
            alone = len(p) == 1
            for f in accepts(found, c):
                out.append((P.TO_FOUNDATION, (i, -1, -1, f, c)))
            prio = P.REVEALS if alone else P.TABLEAU
            for j in targets.get(c, ()):
                if j != i:
                    out.append((prio, (i, j, -1, -1, c)))
            # A pile's only card into an empty pile changes only which cards later deals
            # put on it: tried last.
            if alone and not lone_to_empty:
                continue
            empty_prio = P.SETTLED if alone else P.TABLEAU
            for j in empties:
                out.append((empty_prio, (i, j, -1, -1, c)))
        if stock:
            out.append((DEAL, DEAL_MOVE))
        return out


def _foundation_step(s: State) -> tuple[int, Move] | None:
    """The first of :meth:`Caprice._steps`' moves to a foundation, if there is one."""
    found, tab, _ = s
    for i, p in enumerate(tab):
        if p:
            c = p[-1]
            for f in accepts(found, c):
                return (P.TO_FOUNDATION, (i, -1, -1, f, c))
    return None


def _priority(step: tuple[int, Move]) -> int:
    return step[0]
