"""Piles: their declaration in a variant's layout, and their contents in a position."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, NamedTuple

from .cards import SUIT_NAMES

Kind = Literal["stock", "waste", "foundation", "tableau", "reserve"]
Direction = Literal["ascending", "descending"]
Spread = Literal["none", "down", "right"]


@dataclass(frozen=True, slots=True)
class PileSpec:
    """One pile of a layout: its stable id and kind, a foundation's suit and direction,
    and where a client may draw it (``row``/``col``/``spread`` are hints only)."""

    id: str
    kind: Kind
    suit: str | None = None
    direction: Direction | None = None
    row: int = 0
    col: int = 0
    spread: Spread = "none"

    def describe(self) -> dict[str, object]:
        return {"id": self.id, "kind": self.kind, "suit": self.suit, "direction": self.direction,
                "row": self.row, "col": self.col, "spread": self.spread}


class Pile(NamedTuple):
    """A pile's cards: face-down ones (bottom to top) always below the face-up ones."""

    down: tuple[str, ...] = ()
    up: tuple[str, ...] = ()

    @property
    def top(self) -> str | None:
        return self.up[-1] if self.up else None

    def __len__(self) -> int:
        return len(self.down) + len(self.up)

    def public(self) -> dict[str, object]:
        """The redacted pile of PROTOCOL.md: face-down cards only as a count."""
        return {"down": len(self.down), "up": list(self.up)}


EMPTY = Pile()


def foundation_name(spec: PileSpec) -> str:
    start = "the Ace" if spec.direction == "ascending" else "the King"
    way = "up" if spec.direction == "ascending" else "down"
    return f"{spec.id} ({SUIT_NAMES[spec.suit or 'C']} {way} from {start})"
