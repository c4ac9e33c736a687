"""The engine's and the solver's values as the Structs of protocol/, ready for msgspec.

The engine and the solver are pure and know nothing of protocol/: their commands,
ops, piles and layouts are plain values. This module is the one place they become
the wire's Structs; handlers and the game service build every body and message
from these (and from protocol/'s other Structs), and msgspec encodes them.

And the one place a command goes the other way: msgspec decodes (and checks) what a
client sends, or what the store kept, as a protocol Struct, and :func:`engine_command`
gives the engine its own value. The engine parses nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import msgspec

from protocol.commands import Command, Draw, Move, Resign, Undo
from protocol.diffs import Down, Flip, Op, Pile, Pop, Push
from protocol.fields import Status
from protocol.variants import VariantInfo, Variants
from service import engine


def command(cmd: engine.Command) -> Command:
    """The protocol form of an engine command (field for field, no copy of anything large)."""
    if isinstance(cmd, engine.Move):
        return Move(from_=cmd.from_, to=cmd.to, count=cmd.count)
    if isinstance(cmd, engine.Draw):
        return Draw()
    if isinstance(cmd, engine.Undo):
        return Undo()
    return Resign()


def command_json(cmd: engine.Command) -> dict[str, Any]:
    """A command as PROTOCOL.md's JSON object, ``count`` and all, for a value of a
    ``details`` mapping (a 409 naming the command a ``command_id`` was first used for)."""
    data: dict[str, Any] = msgspec.to_builtins(command(cmd))
    return data


_ENGINE: dict[type, engine.Command] = {Draw: engine.DRAW, Undo: engine.UNDO,
                                       Resign: engine.RESIGN}


def engine_command(cmd: Command) -> engine.Command:
    """The engine's command for a decoded protocol command (field for field)."""
    if type(cmd) is Move:
        return engine.Move(cmd.from_, cmd.to, cmd.count)
    return _ENGINE[type(cmd)]


_snapshot_decoder = msgspec.json.Decoder(dict[str, Any])


def snapshot(game: engine.Game) -> dict[str, Any]:
    """The engine's snapshot of ``game`` as the store keeps it (encoded as JSON): its
    commands in effect in their protocol form."""
    data = game.snapshot()
    data["effective"] = [command(c) for c in data["effective"]]
    return data


def restore(data: bytes | str) -> engine.Game:
    """The game of a stored :func:`snapshot`."""
    fields = _snapshot_decoder.decode(data)
    fields["effective"] = [engine_command(c)
                           for c in msgspec.convert(fields["effective"], list[Command])]
    return engine.Game.from_snapshot(fields)


def status(value: engine.Status) -> Status:
    """A game's status as the wire names it (the engine's values are the protocol's words)."""
    return value.value


def command_of(data: Mapping[str, Any]) -> Command:
    """A command the solver produced (a PROTOCOL.md command object), checked on the way."""
    result: Command = msgspec.convert(data, Command)
    return result


def ops(engine_ops: Iterable[Mapping[str, Any]]) -> list[Op]:
    """The protocol ops of an engine diff (its ops are ``{"pile", "op", ...}`` mappings).

    On every command's path: an if-chain, the cheapest dispatch measured here."""
    out: list[Op] = []
    for op in engine_ops:
        kind = op["op"]
        if kind == "pop":
            out.append(Pop(pile=op["pile"], n=op["n"]))
        elif kind == "push":
            out.append(Push(pile=op["pile"], cards=op["cards"]))
        elif kind == "flip":
            out.append(Flip(pile=op["pile"], card=op["card"]))
        elif kind == "down":
            out.append(Down(pile=op["pile"], n=op["n"]))
        else:
            raise ValueError(f"the engine produced an unknown op {kind!r}")
    return out


def piles(public_piles: Mapping[str, Mapping[str, Any]]) -> dict[str, Pile]:
    """The redacted piles of ``Game.public_piles()`` as protocol Piles (lists not copied)."""
    return {pile_id: Pile(down=p["down"], up=p["up"]) for pile_id, p in public_piles.items()}


def variants() -> Variants:
    """``GET /v1/variants``: every variant the engine plays, checked against VariantInfo."""
    return Variants(variants=[msgspec.convert(cls().describe(), VariantInfo)
                              for cls in engine.VARIANTS.values()])
