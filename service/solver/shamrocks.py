"""Shamrocks for the search.

Position: ``(found, fans)``: ``found[s]`` counts the cards on ``foundation/s``,
``fans[i]`` the cards of ``tableau/i`` bottom to top. The fans are interchangeable
(an empty fan stays empty whatever its index): the key sorts them.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping

from service.engine import Pile

from .build import ADJ_ANY
from .cards import RANK_OF, SUIT_OF, card_of
from .foundations import bump
from .rules import (
    FOUNDATION_IDS,
    FROM_FOUNDATION,
    REVEALS,
    SETTLED,
    TABLEAU,
    TABLEAU_IDS,
    TO_FOUNDATION,
    Cmd,
    Rules,
    State,
    codes,
)

F = FOUNDATION_IDS
T = TABLEAU_IDS


class Shamrocks(Rules):
    variant_id = "shamrocks"
    best_first = True
    has_hasty = True  # measured: more deals won within a budget

    def from_piles(self, piles: Mapping[str, Pile]) -> State:
        return (tuple(len(piles[f].up) for f in F[:4]), tuple(codes(piles[t].up) for t in T[:18]))

    def key(self, s: State) -> Hashable:
        return (s[0], tuple(sorted(s[1])))

    def moves(self, s: State) -> list[tuple[int, Cmd, State]]:
        found, fans = s
        out: list[tuple[int, Cmd, State]] = []
        targets: dict[int, list[int]] = {}
        for j, p in enumerate(fans):
            if 0 < len(p) < 3:
                for c in ADJ_ANY[p[-1]]:
                    targets.setdefault(c, []).append(j)
        for f in range(4):
            n = found[f]
            if n:
                c = card_of(f, n)
                less = bump(found, f, -1)
                for j in targets.get(c, ()):
                    lst = list(fans)
                    lst[j] = lst[j] + (c,)
                    out.append((FROM_FOUNDATION, (F[f], T[j], 1), (less, tuple(lst))))
        for i, p in enumerate(fans):
            if not p:
                continue
            c = p[-1]
            s_ = SUIT_OF[c]
            if found[s_] == RANK_OF[c] - 1:
                lst = list(fans)
                lst[i] = p[:-1]
                out.append((TO_FOUNDATION, (T[i], F[s_], 1), (bump(found, s_, 1), tuple(lst))))
            for j in targets.get(c, ()):
                if j != i:
                    lst = list(fans)
                    lst[i] = p[:-1]
                    lst[j] = lst[j] + (c,)
                    prio = REVEALS if len(p) == 1 else SETTLED if c in ADJ_ANY[p[-2]] else TABLEAU
                    out.append((prio, (T[i], T[j], 1), (found, tuple(lst))))
        return out
