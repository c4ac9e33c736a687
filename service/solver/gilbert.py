"""Gilbert for the search.

Position: ``(found, tableau, down, talon, w)``. ``found[i]`` counts the cards on
``foundation/i`` (0..3 ascending, 4..7 descending); ``tableau[i]`` the cards of
``tableau/i`` bottom to top, of which the lowest ``down[i]`` are face down; ``talon``
the waste (bottom to top) followed by the stock in the order it deals, and ``w`` how
many of them are in the waste.

Draws cycle forever, so the search never plays a bare draw: from a position it
plays any waste card that some number of draws would bring to the top (through a
turn-over if need be), as that many ``draw`` commands followed by the move, as
Klondike solvers do. A position's key forgets ``w`` when draws alone lead back to
it from the turned-over talon (``w`` a multiple of three, or the whole talon).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping

from service.engine import Pile

from .build import ALT_DOWN, alt_run
from .cards import RANK_OF, RED_OF, card_of
from .foundations import accepts, bump
from .rules import (
    DRAW,
    DRAWS,
    FOUNDATION_IDS,
    FROM_FOUNDATION,
    FROM_WASTE,
    REVEALS,
    SETTLED,
    TABLEAU,
    TABLEAU_IDS,
    TO_FOUNDATION,
    Cmd,
    Rules,
    State,
    Step,
    codes,
)

F = FOUNDATION_IDS
T = TABLEAU_IDS


def _top(f: int, n: int) -> int:
    return card_of(f, n) if f < 4 else card_of(f - 4, 14 - n)


def _targets(tab: tuple[tuple[int, ...], ...]) -> tuple[dict[int, list[int]], list[int]]:
    targets: dict[int, list[int]] = {}
    empties = []
    for j, p in enumerate(tab):
        if p:
            for c in ALT_DOWN[p[-1]]:
                targets.setdefault(c, []).append(j)
        else:
            empties.append(j)
    return targets, empties


Tab = tuple[tuple[int, ...], ...]


def _put(tab: Tab, j: int, cards: tuple[int, ...]) -> Tab:
    lst = list(tab)
    lst[j] = lst[j] + cards
    return tuple(lst)


class Gilbert(Rules):
    variant_id = "gilbert"
    pruning = True  # tests turn it off to check that it changes no answer
    has_hasty = True

    def from_piles(self, piles: Mapping[str, Pile]) -> State:
        found = tuple(len(piles[f].up) for f in F)
        tab = tuple(codes(piles[t].down + piles[t].up) for t in T[:7])
        down = tuple(len(piles[t].down) for t in T[:7])
        waste, stock = piles["waste"].up, piles["stock"].down
        return (found, tab, down, codes(waste) + codes(stock[::-1]), len(waste))

    def key(self, s: State) -> Hashable:
        found, tab, down, talon, w = s
        if w % 3 == 0 or w == len(talon):
            w = 0
        return (found, tuple(sorted(zip(tab, down, strict=True))), talon, w)

    def _waste_moves(self, s: State, p: int, prefix: tuple[Cmd, ...], out: list[Step],
                     targets: dict[int, list[int]], empties: list[int]) -> None:
        """Moves of ``talon[p - 1]`` as the waste top, after the commands ``prefix``."""
        found, tab, down, talon, _ = s
        c = talon[p - 1]
        rest = talon[:p - 1] + talon[p:]
        prio = FROM_WASTE + len(prefix)
        for f in accepts(found, c):
            out.append((TO_FOUNDATION + len(prefix), prefix + (("waste", F[f], 1),),
                        (bump(found, f, 1), tab, down, rest, p - 1)))
        for j in targets.get(c, ()):
            out.append((prio, prefix + (("waste", T[j], 1),), (found, _put(tab, j, (c,)), down,
                                                               rest, p - 1)))
        if RANK_OF[c] == 7:
            for j in empties:
                out.append((prio, prefix + (("waste", T[j], 1),), (found, _put(tab, j, (c,)), down,
                                                                   rest, p - 1)))

    def _board_moves(self, s: State, out: list[tuple[int, Cmd, State]],
                     targets: dict[int, list[int]], empties: list[int],
                     prune: bool = False) -> None:
        """Moves from the foundations and the tableau.

        With ``prune`` (the search's steps, not :meth:`moves`), a foundation's top card
        ``c`` does not come back into play when :meth:`safe` would send it straight back
        up (``_needs_no_base`` holds for it with it off the foundation). Sound for the
        search, whatever the safe moves are worth: the position ``P'`` that move leads to
        has ``c`` on a tableau top and no other safe card (the parent ``P`` had none, or
        it would have played it instead of listing moves, and taking ``c`` off a
        foundation makes no other card safer), so ``P'``'s only step is ``c`` to
        ``fs[0]``, the first foundation that takes it. That is ``P`` itself (already in
        the transposition table), or, when ``c`` came off the other foundation of its
        suit, ``P``'s own foundation-to-foundation move. Every position reachable through
        ``P'`` is reachable without it: skipping it changes neither a win found nor a
        loss proved, and saves a position each time."""
        found, tab, down, talon, w = s
        for f in range(8):
            n = found[f]
            if not n:
                continue
            c = _top(f, n)
            less = bump(found, f, -1)
            for g in accepts(found, c):
                if g != f:
                    out.append((FROM_FOUNDATION, (F[f], F[g], 1), (bump(less, g, 1), tab, down,
                                                                   talon, w)))
            if prune and _needs_no_base(less, c):
                continue  # see _board_moves' docstring
            for j in targets.get(c, ()):
                out.append((FROM_FOUNDATION, (F[f], T[j], 1), (less, _put(tab, j, (c,)), down,
                                                               talon, w)))
            if RANK_OF[c] == 7:
                for j in empties:
                    out.append((FROM_FOUNDATION, (F[f], T[j], 1), (less, _put(tab, j, (c,)), down,
                                                                   talon, w)))
        for i, p in enumerate(tab):
            if not p:
                continue
            d = down[i]
            for k in range(1, alt_run(p, d) + 1):
                c = p[-k]
                rest = p[:-k]
                moved = p[-k:]
                lst = list(tab)
                lst[i] = rest
                left = tuple(lst)
                ndown = down
                if len(rest) == d and d:
                    dl = list(down)
                    dl[i] = d - 1
                    ndown = tuple(dl)
                if len(rest) == d:
                    prio = REVEALS
                elif c in ALT_DOWN[rest[-1]]:
                    prio = SETTLED
                else:
                    prio = TABLEAU
                if k == 1:
                    for f in accepts(found, c):
                        out.append((TO_FOUNDATION, (T[i], F[f], 1), (bump(found, f, 1), left,
                                                                     ndown, talon, w)))
                for j in targets.get(c, ()):
                    if j != i:
                        out.append((prio, (T[i], T[j], k), (found, _put(left, j, moved), ndown,
                                                            talon, w)))
                if RANK_OF[c] == 7:
                    for j in empties:
                        out.append((prio, (T[i], T[j], k), (found, _put(left, j, moved), ndown,
                                                            talon, w)))

    def moves(self, s: State) -> list[tuple[int, Cmd, State]]:
        found, tab, down, talon, w = s
        targets, empties = _targets(tab)
        out: list[tuple[int, Cmd, State]] = []
        if w:
            steps: list[Step] = []
            self._waste_moves(s, w, (), steps, targets, empties)
            out.extend((p, c[0], t) for p, c, t in steps)
        self._board_moves(s, out, targets, empties)
        if talon:
            nw = min(w + 3, len(talon)) if w < len(talon) else 0
            out.append((DRAWS, DRAW, (found, tab, down, talon, nw)))
        return out

    def safe(self, s: State) -> tuple[Cmd, State] | None:
        # Only from the tableau: taking a card out of the talon would change which
        # cards later passes of draw-three bring to the top.
        found, tab, down, talon, w = s
        for i, p in enumerate(tab):
            if not p:
                continue
            c = p[-1]
            fs = accepts(found, c)
            if not fs or not _needs_no_base(found, c):
                continue
            rest = p[:-1]
            ndown = down
            if len(rest) == down[i] and down[i]:
                dl = list(down)
                dl[i] -= 1
                ndown = tuple(dl)
            lst = list(tab)
            lst[i] = rest
            return (T[i], F[fs[0]], 1), (bump(found, fs[0], 1), tuple(lst), ndown, talon, w)
        return None

    def successors(self, s: State) -> list[Step]:
        safe = self.safe(s)
        if safe is not None:
            return [(TO_FOUNDATION, (safe[0],), safe[1])]
        found, tab, down, talon, w = s
        targets, empties = _targets(tab)
        board: list[tuple[int, Cmd, State]] = []
        self._board_moves(s, board, targets, empties, self.pruning)
        if self.hasty:
            board = [m for m in board if _purposeful(m)]
        steps: list[Step] = [(p, (c,), t) for p, c, t in board]
        for p, draws in _reachable(len(talon), w).items():
            self._waste_moves(s, p, (DRAW,) * draws, steps, targets, empties)
        return self.order(steps)

    def score(self, s: State) -> int:
        # Cards up count twice; each face-down card turned up counts once.
        return 2 * sum(s[0]) - sum(s[2])


def _purposeful(move: tuple[int, Cmd, State]) -> bool:
    """Whether a board move is one the hasty search tries: not a foundation's card back
    to the tableau, nor a move between tableau piles that neither turns a card up nor
    empties a pile nor leaves on top a card that can go to a foundation (a guess: such
    moves mostly rearrange)."""
    prio, (a, b, _), t = move
    if a.startswith("f"):
        return b.startswith("f")
    if prio == REVEALS or not b.startswith("t"):
        return True
    found, tab = t[0], t[1]
    return bool(accepts(found, tab[int(a[8:])][-1]))


def _low(found: tuple[int, ...], suit: int) -> int:
    """How many of the suit's lowest ranks are on the foundations for good."""
    return 13 if found[suit] + found[4 + suit] == 13 else found[suit]


def _needs_no_base(found: tuple[int, ...], c: int) -> bool:
    """No card still in play could ever be built on ``c``: every card of the other
    colour one rank lower, and of its colour two ranks lower, is on a foundation
    (any card built on ``c`` would start such a chain)."""
    r = RANK_OF[c]
    if r <= 2:
        return True
    red = RED_OF[c]
    for s in range(4):
        if RED_OF[card_of(s, 1)] != red:
            if _low(found, s) < r - 1:
                return False
        elif _low(found, s) < r - 2:
            return False
    return True


def _reachable(size: int, w: int) -> dict[int, int]:
    """Waste sizes that draws lead to from ``w`` (``size`` cards in stock and waste),
    each with the fewest draws, for the ones with a card on the waste."""
    out: dict[int, int] = {}
    if not size:
        return out
    draws, p = 0, w
    while True:
        if p and p not in out:
            out[p] = draws
        if p == size:
            break
        p = min(p + 3, size)
        draws += 1
    draws += 1  # the turn-over
    p = 0
    while p < size:
        p = min(p + 3, size)
        draws += 1
        if p not in out:
            out[p] = draws
    return out
