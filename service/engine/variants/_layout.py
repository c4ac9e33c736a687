"""Small builders for layouts, so a variant's declaration reads like its rules."""

from __future__ import annotations

from ..cards import SUITS
from ..piles import Direction, PileSpec, Spread


def foundations(direction: Direction, first_index: int, row: int,
                col: int) -> tuple[PileSpec, ...]:
    """Four foundations, clubs, diamonds, hearts, spades, numbered from ``first_index``."""
    return tuple(PileSpec(f"foundation/{first_index + i}", "foundation", suit, direction, row,
                          col + i) for i, suit in enumerate(SUITS))


def tableau(count: int, row: int, per_row: int, spread: Spread, col: int = 0,
            first_index: int = 0) -> tuple[PileSpec, ...]:
    """``count`` tableau piles numbered from ``first_index``, ``per_row`` to a row."""
    return tuple(PileSpec(f"tableau/{first_index + i}", "tableau", None, None, row + i // per_row,
                          col + i % per_row, spread) for i in range(count))
