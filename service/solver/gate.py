"""Gate for the search.

Position: ``(found, bars, pillars, talon, w)``: ``found[s]`` counts the cards on
``foundation/s``; ``bars[i]`` the cards of ``tableau/i`` bottom to top; ``pillars`` the
cards of ``reserve/0`` and ``reserve/1``; ``talon`` the waste (bottom to top) then the
stock in the order it deals, ``w`` of them in the waste. One pass: a draw is a plain
move of the search. The bars are interchangeable (the key sorts them); the pillars
are not (the left one refills on a tie).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

from service.engine import Pile

from .build import ALT_DOWN, alt_run
from .cards import RANK_OF, RED_OF, SUIT_OF, card_of
from .foundations import bump
from .rules import DRAW, Cmd, F, P, R, Rules, State, Step, T, codes

Bars = tuple[tuple[int, ...], ...]


def _put(bars: Bars, j: int, cards: tuple[int, ...]) -> Bars:
    lst = list(bars)
    lst[j] = lst[j] + cards
    return tuple(lst)


def _low_enough(found: tuple[int, ...], c: int) -> bool:
    """``c`` may go up for good: nothing still in play could be built on it (see gilbert)."""
    r = RANK_OF[c]
    if r <= 2:
        return True
    red = RED_OF[c]
    for s in range(4):
        need = r - 1 if RED_OF[card_of(s, 1)] != red else r - 2
        if found[s] < need:
            return False
    return True


def _awaited(c: int, bars: Bars, pillars: tuple[tuple[int, ...], ...],
             talon: tuple[int, ...], w: int) -> bool:
    """Some card could be built on ``c`` at once and is not already on a card it is built
    on: the waste's top, a pillar's, or a bar's top lying alone or on a card it does not
    build on (the hasty search's guess for taking ``c`` down from its foundation)."""
    below = ALT_DOWN[c]
    if w and talon[w - 1] in below:
        return True
    for p in bars:
        if p and p[-1] in below and (len(p) == 1 or p[-1] not in ALT_DOWN[p[-2]]):
            return True
    return any(p and p[-1] in below for p in pillars)


class Gate(Rules):
    variant_id = "gate"

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(options)
        # Measured with single_card_moves (benchmarks/README, branch gs): 11 of the table's
        # 76 unknown deals won at 2,000,000 positions (0 without); plain Gate left as it was.
        self.has_hasty = not self.runs_move

    def order(self, steps: list[Step]) -> list[Step]:
        steps.sort(key=lambda step: step[0])  # by priority alone: measured better than by score
        return steps

    def from_piles(self, piles: Mapping[str, Pile]) -> State:
        found = tuple(len(piles[f].up) for f in F[:4])
        bars = tuple(codes(piles[t].up) for t in T[:8])
        pillars = (codes(piles[R[0]].up), codes(piles[R[1]].up))
        waste, stock = piles["waste"].up, piles["stock"].down
        return (found, bars, pillars, codes(waste) + codes(stock[::-1]), len(waste))

    def key(self, s: State) -> Hashable:
        found, bars, pillars, talon, w = s
        return (found, tuple(sorted(bars)), pillars, talon, w)

    def _leave_bar(self, bars: Bars, pillars: tuple[tuple[int, ...], ...], i: int,
                   rest: tuple[int, ...]) -> tuple[Bars, tuple[tuple[int, ...], ...]]:
        """The bars and pillars once ``tableau/i`` is left holding ``rest`` (refilled if
        emptied)."""
        lst = list(bars)
        left, right = pillars
        if not rest and (left or right):
            if len(left) >= len(right):
                rest, pillars = left[-1:], (left[:-1], right)
            else:
                rest, pillars = right[-1:], (left, right[:-1])
        lst[i] = rest
        return tuple(lst), pillars

    def moves(self, s: State) -> list[tuple[int, Cmd, State]]:
        found, bars, pillars, talon, w = s
        out: list[tuple[int, Cmd, State]] = []
        targets: dict[int, list[int]] = {}
        empties = []
        for j, p in enumerate(bars):
            if p:
                for c in ALT_DOWN[p[-1]]:
                    targets.setdefault(c, []).append(j)
            else:
                empties.append(j)
        if w:
            c = talon[w - 1]
            rest = talon[:w - 1] + talon[w:]
            if found[SUIT_OF[c]] == RANK_OF[c] - 1:
                out.append((P.TO_FOUNDATION, ("waste", F[SUIT_OF[c]], 1),
                            (bump(found, SUIT_OF[c], 1), bars, pillars, rest, w - 1)))
            for j in targets.get(c, ()):
                out.append((P.FROM_WASTE, ("waste", T[j], 1), (found, _put(bars, j, (c,)), pillars,
                                                             rest, w - 1)))
            for j in empties:
                out.append((P.FROM_WASTE, ("waste", T[j], 1), (found, _put(bars, j, (c,)), pillars,
                                                             rest, w - 1)))
        elif empties and len(talon) > 0:
            c = talon[0]
            for j in empties:
                out.append((P.FROM_WASTE, ("stock", T[j], 1), (found, _put(bars, j, (c,)), pillars,
                                                             talon[1:], 0)))
        for r in range(2):
            pillar = pillars[r]
            if not pillar:
                continue
            c = pillar[-1]
            less = (pillar[:-1], pillars[1]) if r == 0 else (pillars[0], pillar[:-1])
            if found[SUIT_OF[c]] == RANK_OF[c] - 1:
                out.append((P.TO_FOUNDATION, (R[r], F[SUIT_OF[c]], 1),
                            (bump(found, SUIT_OF[c], 1), bars, less, talon, w)))
            for j in targets.get(c, ()):
                out.append((P.REVEALS, (R[r], T[j], 1),
                            (found, _put(bars, j, (c,)), less, talon, w)))
        for f in range(4):
            n = found[f]
            if not n:
                continue
            c = card_of(f, n)
            if self.hasty and not _awaited(c, bars, pillars, talon, w):
                continue
            less_found = bump(found, f, -1)
            for j in targets.get(c, ()):
                out.append((P.FROM_FOUNDATION, (F[f], T[j], 1), (less_found, _put(bars, j, (c,)),
                                                               pillars, talon, w)))
        for i, p in enumerate(bars):
            if not p:
                continue
            run = alt_run(p, 0) if self.runs_move else 1
            for k in range(1, run + 1):
                c = p[-k]
                moved = p[-k:]
                rest = p[:-k]
                nbars, npillars = self._leave_bar(bars, pillars, i, rest)
                if k == 1 and found[SUIT_OF[c]] == RANK_OF[c] - 1:
                    out.append((P.TO_FOUNDATION, (T[i], F[SUIT_OF[c]], 1),
                                (bump(found, SUIT_OF[c], 1), nbars, npillars, talon, w)))
                prio = (P.REVEALS if not rest else P.SETTLED if c in ALT_DOWN[rest[-1]]
                        else P.TABLEAU)
                for j in targets.get(c, ()):
                    if j != i:
                        out.append((prio, (T[i], T[j], k), (found, _put(nbars, j, moved), npillars,
                                                            talon, w)))
        if w < len(talon):
            out.append((P.DRAWS, DRAW, (found, bars, pillars, talon, w + 1)))
        return out

    def successors(self, s: State) -> list[Step]:
        """With the waste empty and cards in the stock, a draw alone (after a safe move).

        Proof, against docs/rules.md (Gate): from such a position ``P``, whatever wins
        also wins after a draw, in at most as many moves. Take a shortest winning line
        from ``P``. The stock is not empty, so some move of the line takes its top card
        ``c``; let ``m`` be the first move of the line that touches the stock or the
        waste, and ``m1 .. mk`` the moves before it. None of these touches the stock or
        the waste: each moves a bar's, a pillar's or a foundation's card onto a bar or a
        foundation (only the waste's or the stock's card may go into a space, and
        nothing goes onto the waste or the stock), and a pillar refills an emptied bar
        as part of the move. So none depends on them, and each is legal after a draw,
        leading to the same bars, pillars and foundations. Either ``m`` is the draw of
        ``c``: then the line draw, ``m1 .. mk``, then the rest wins, one move shorter
        from the draw's position. Or ``m`` puts ``c`` from the stock into a space (the
        waste is empty until a draw): then draw, ``m1 .. mk``, ``c`` from the waste into
        the same space (still empty; the waste's top is now ``c``) reach the position
        after ``m`` in as many moves from the draw's position as the line took from
        ``P``, and the rest wins. Nothing else takes
        ``c`` out of the stock. So the draw's position is won, at no greater distance,
        with one card less in the stock. The steps kept depend on the position alone,
        not on the path to it (a transposition table keeps them right), and from every
        winnable position one of them leads to a winnable position nearer a win, or (this
        draw) as near with a shorter stock, which never grows again (one pass): following
        those steps cannot go round, so it reaches a win, and the search loses none. (A
        safe foundation move, when there is one, comes first: that is :meth:`safe`'s own
        rule, older than this one.)"""
        found, bars, pillars, talon, w = s
        if self.pruning and not w and talon and self.safe(s) is None:
            return [(P.DRAWS, (DRAW,), (found, bars, pillars, talon, 1))]
        return super().successors(s)

    def safe(self, s: State) -> tuple[Cmd, State] | None:
        # Not from a pillar, nor from a bar that a pillar would refill: either changes
        # which pillar refills later spaces.
        found, bars, pillars, talon, w = s
        no_pillars = not pillars[0] and not pillars[1]
        for i, p in enumerate(bars):
            if p and (len(p) > 1 or no_pillars):
                c = p[-1]
                if found[SUIT_OF[c]] == RANK_OF[c] - 1 and _low_enough(found, c):
                    lst = list(bars)
                    lst[i] = p[:-1]
                    return (T[i], F[SUIT_OF[c]], 1), (bump(found, SUIT_OF[c], 1), tuple(lst),
                                                      pillars, talon, w)
        if w:
            c = talon[w - 1]
            if found[SUIT_OF[c]] == RANK_OF[c] - 1 and _low_enough(found, c):
                return (("waste", F[SUIT_OF[c]], 1),
                        (bump(found, SUIT_OF[c], 1), bars, pillars, talon[:w - 1] + talon[w:],
                         w - 1))
        return None
