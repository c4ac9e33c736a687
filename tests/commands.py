"""A command's JSON form and back, as the service makes and reads it, for tests that keep
commands as JSON (data files, logs, what a test client sends); a log replayed from the
deal, which the service never needs (it loads from a snapshot and the events after); and
every command a game accepts now, which the service never lists (its moves endpoint gives
the moves and draw, and ``can_undo``).

The engine parses no JSON: the protocol's Structs are the one home of a command's
shape, and ``service/domain/wire.py`` turns them into the engine's commands and back.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from service import engine
from service.domain import wire


def to_json(command: engine.Command) -> dict[str, Any]:
    """The JSON object of PROTOCOL.md for an engine command (``count`` always there)."""
    return wire.command_json(command)


def from_json(data: Mapping[str, Any]) -> engine.Command:
    """The engine's command for a command's JSON object, checked by the protocol's Struct
    (``msgspec.ValidationError`` if it is not one)."""
    return wire.engine_command(wire.command_of(data))


def replay(variant_id: str, seed: int, options: Mapping[str, Any] | None,
           commands: Iterable[engine.Command]) -> engine.Game:
    """The game after ``commands`` (a whole log, undos and all) from the deal."""
    game = engine.Game.deal(variant_id, seed, options)
    for command in commands:
        game = game.apply(command)[0]
    return game


def legal_commands(game: engine.Game) -> list[engine.Command]:
    """Every command that ``game.apply`` accepts now: its legal moves and draw, then undo
    (when it may be undone) and resign; nothing once the game is over."""
    if game.status.is_final:
        return []
    out = game.legal_moves()
    if game.can_undo:
        out.append(engine.UNDO)
    out.append(engine.RESIGN)
    return out
