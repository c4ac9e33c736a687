"""A command as the store keeps it beside its ``command_id``: a resend of the id is the
same command when its fingerprint is the same (``move waste foundation 1``, ``draw``)."""

from __future__ import annotations

from typing import Any

from service.engine import Command, Draw, Move, Resign, Undo


def fingerprint(command: Command) -> str:
    """The command as the store keeps it with its command_id: a resend of the id is the
    same command when its fingerprint is the same (``move waste foundation 1``, ``draw``)."""
    if type(command) is Move:
        return f"move {command.from_} {command.to} {command.count}"
    return _WORD[type(command)]


_WORD: dict[type, str] = {Draw: "draw", Undo: "undo", Resign: "resign"}


def command_of(fingerprint_: str) -> dict[str, Any]:
    """The JSON form of the command a fingerprint names."""
    kind, *move = fingerprint_.split(" ")
    if kind == "move" and len(move) == 3:
        return {"type": "move", "from": move[0], "to": move[1], "count": int(move[2])}
    return {"type": kind}
