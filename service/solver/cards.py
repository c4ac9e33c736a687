"""Cards as small integers for the search: ``suit * 13 + rank - 1``, suits in the
order of RULES.md (C, D, H, S), so ``foundation/s`` is the ascending pile of suit ``s``.
Both copies of a card in two-deck games are the same integer: they are interchangeable."""

from __future__ import annotations

from service.engine.cards import RANK, RANKS, SUITS

CODE: dict[str, int] = {r + s: i * 13 + j for i, s in enumerate(SUITS) for j, r in enumerate(RANKS)}
NAME: tuple[str, ...] = tuple(sorted(CODE, key=CODE.__getitem__))
RANK_OF: tuple[int, ...] = tuple(RANK[c] for c in NAME)  # 1..13
SUIT_OF: tuple[int, ...] = tuple(CODE[c] // 13 for c in NAME)  # 0..3
RED_OF: tuple[bool, ...] = tuple(c[1] in "DH" for c in NAME)


def card_of(suit: int, rank: int) -> int:
    return suit * 13 + rank - 1
