"""Commands as the SDK accepts them: a :mod:`protocol` Struct or its JSON form."""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any, TypeAlias

import msgspec

from protocol.commands import Command

CommandLike: TypeAlias = Command | Mapping[str, Any]
"""A command Struct (``Move(from_="tableau/3", to="foundation")``) or its JSON form
(``{"type": "move", "from": "tableau/3", "to": "foundation"}``)."""


def as_command(command: CommandLike) -> Command:
    """The command Struct of a Struct or a JSON-shaped dict; a bad dict raises
    ``msgspec.ValidationError`` (a ``ValueError``) naming the field."""
    if isinstance(command, Mapping):
        result: Command = msgspec.convert(dict(command), Command)
        return result
    return command


def new_command_id() -> str:
    """A fresh, unique ``command_id`` (the service keeps them per game)."""
    return "c_" + secrets.token_urlsafe(12)
