"""The commands the engine plays: plain values, built by their callers.

The engine parses nothing: a command's JSON form is protocol/commands.py's, decoded
(and checked) at the service's edge and turned into one of these by ``service/domain/wire.py``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Move:
    """Move the top ``count`` cards of pile ``from_`` onto pile ``to``.

    ``to`` may be the bare word ``"foundation"``: the lowest-index foundation
    that accepts the card (resolved when the move is applied)."""

    from_: str
    to: str
    count: int = 1


@dataclass(frozen=True, slots=True)
class Draw:
    """A click on the stock: deal, or turn the waste over."""


@dataclass(frozen=True, slots=True)
class Undo:
    """Revert the most recent command still in effect."""


@dataclass(frozen=True, slots=True)
class Resign:
    """Give the game up."""


Command = Move | Draw | Undo | Resign

DRAW = Draw()
UNDO = Undo()
RESIGN = Resign()
