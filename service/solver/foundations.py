"""The foundations as the solver keeps them: a tuple of how many cards each holds.

Ascending foundations ``0..3`` (C, D, H, S) hold the Ace up to their count;
in games with eight, descending ``4..7`` hold the King down.
"""

from __future__ import annotations

from .cards import RANK_OF, SUIT_OF


def bump(found: tuple[int, ...], f: int, d: int) -> tuple[int, ...]:
    """``found`` with foundation ``f`` holding ``d`` more cards (``d`` < 0: fewer)."""
    lst = list(found)
    lst[f] += d
    return tuple(lst)


def accepts(found: tuple[int, ...], c: int) -> list[int]:
    """The foundations, of eight (ascending and descending), that take card ``c`` now."""
    s, r = SUIT_OF[c], RANK_OF[c]
    out = []
    if found[s] == r - 1:
        out.append(s)
    if found[4 + s] == 13 - r:
        out.append(4 + s)
    return out
