"""A command as the store keeps it beside its ``command_id``: a resend of the id is the
same command when its fingerprint is the same (``move waste foundation 1``, ``draw``)."""

from __future__ import annotations

from service.engine import DRAW, RESIGN, UNDO, Command, Draw, Move, Resign, Undo


def fingerprint(command: Command) -> str:
    """The command as the store keeps it with its command_id: a resend of the id is the
    same command when its fingerprint is the same (``move waste foundation 1``, ``draw``)."""
    if type(command) is Move:
        return f"move {command.from_} {command.to} {command.count}"
    return _WORD[type(command)]


_WORD: dict[type, str] = {Draw: "draw", Undo: "undo", Resign: "resign"}


_COMMAND: dict[str, Command] = {"draw": DRAW, "undo": UNDO, "resign": RESIGN}


def command_of(fingerprint_: str) -> Command:
    """The command a fingerprint names: :func:`fingerprint` the other way (its wire form
    is ``service/domain/wire.py``'s to make)."""
    kind, *move = fingerprint_.split(" ")
    if kind == "move" and len(move) == 3:
        return Move(move[0], move[1], int(move[2]))
    return _COMMAND[kind]
