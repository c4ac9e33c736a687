"""The commands a player sends: ``move``, ``draw``, ``undo``, ``resign`` (PROTOCOL.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import BadCommand


@dataclass(frozen=True, slots=True)
class Move:
    """Move the top ``count`` cards of pile ``from_`` onto pile ``to``.

    ``to`` may be the bare word ``"foundation"``: the lowest-index foundation
    that accepts the card (resolved when the move is applied)."""

    from_: str
    to: str
    count: int = 1

    def to_dict(self) -> dict[str, Any]:
        return {"type": "move", "from": self.from_, "to": self.to, "count": self.count}


@dataclass(frozen=True, slots=True)
class Draw:
    def to_dict(self) -> dict[str, Any]:
        return {"type": "draw"}


@dataclass(frozen=True, slots=True)
class Undo:
    def to_dict(self) -> dict[str, Any]:
        return {"type": "undo"}


@dataclass(frozen=True, slots=True)
class Resign:
    def to_dict(self) -> dict[str, Any]:
        return {"type": "resign"}


Command = Move | Draw | Undo | Resign

DRAW = Draw()
UNDO = Undo()
RESIGN = Resign()
_SIMPLE: dict[str, Command] = {"draw": DRAW, "undo": UNDO, "resign": RESIGN}


def command_from_dict(data: Any) -> Command:
    """Parse the JSON form of a command; :class:`BadCommand` says what is wrong."""
    if not isinstance(data, dict):
        raise BadCommand(f"a command is a JSON object, got {type(data).__name__}")
    kind = data.get("type")
    if kind in _SIMPLE:
        extra = set(data) - {"type"}
        if extra:
            raise BadCommand(f"'{kind}' takes no fields, got {sorted(extra)}")
        return _SIMPLE[kind]
    if kind != "move":
        raise BadCommand(f"unknown command type {kind!r}: expected move, draw, undo or resign")
    extra = set(data) - {"type", "from", "to", "count"}
    if extra:
        raise BadCommand(f"unknown field(s) in move: {sorted(extra)}")
    src, dst, count = data.get("from"), data.get("to"), data.get("count", 1)
    if not isinstance(src, str) or not isinstance(dst, str):
        raise BadCommand("a move needs 'from' and 'to' pile ids (strings)")
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise BadCommand(f"'count' must be a whole number of at least 1, got {count!r}")
    return Move(src, dst, count)


def command_to_dict(command: Command) -> dict[str, Any]:
    return command.to_dict()
