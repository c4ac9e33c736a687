"""JSON encoding and decoding of every message, with encoders and decoders built once.

Every decode function raises ``msgspec.DecodeError`` (``msgspec.ValidationError``
is a subclass) on malformed JSON, an unknown field in a request, a wrong type or
a value out of bounds; :func:`protocol.errors.bad_request_from` turns it into
the 400 body. What a client sends (a socket's message, a request body) is also
refused when an object of it gives a key twice (:mod:`protocol.duplicates`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, TypeVar

import msgspec

from .commands import Command
from .diffs import Diff, GameState
from .duplicates import key_limits, may_repeat_a_key, refuse_repeated_keys
from .errors import QueryError, field_of, in_words
from .fields import CommandId
from .rest import CommandRequest
from .ws import ClientMessage, CommandMessage, ServerMessage

T = TypeVar("T")

_encoder = msgspec.json.Encoder()
_client_message = msgspec.json.Decoder(ClientMessage)
_server_message = msgspec.json.Decoder(ServerMessage)
_command = msgspec.json.Decoder(Command)
_game_state = msgspec.json.Decoder(GameState)
_diff = msgspec.json.Decoder(Diff)


def encode(obj: Any) -> bytes:
    """Encode any message (or list/dict of them) as compact UTF-8 JSON."""
    return _encoder.encode(obj)


class TooDeep(msgspec.DecodeError):
    """JSON nested deeper than the decoder's recursion limit (a bad message, not a crash)."""


def _shallow(decoder: msgspec.json.Decoder[Any], data: bytes | str) -> Any:
    # A message nested thousands deep (in a field skipped before the union's tag is
    # seen) exhausts the C decoder's recursion limit: RecursionError is not a
    # DecodeError, and would escape every caller's handling of bad input.
    try:
        return decoder.decode(data)
    except RecursionError:
        raise TooDeep("JSON nested too deeply") from None


def decode_client_message(data: bytes | str) -> ClientMessage:
    """Decode a WebSocket message from a client: ``hello``, ``command`` or ``ping``."""
    try:
        result: ClientMessage = _shallow(_client_message, data)
    except msgspec.DecodeError:
        refuse_repeated_keys(data)  # a tag given twice is refused for its second value
        raise
    # Decoded: a key given twice is rare, and mostly proved absent by counting bytes (the
    # exact look parses the message again).
    structs = ((CommandMessage, type(result.command)) if isinstance(result, CommandMessage)
               else (type(result),))
    if not isinstance(data, bytes) or may_repeat_a_key(data, key_limits(structs)):
        refuse_repeated_keys(data)
    return result


class _CommandTag(msgspec.Struct):
    """What a message that does not decode may still tell: its type and command_id."""

    type: str | None = None
    command_id: CommandId | None = None


_command_tag = msgspec.json.Decoder(_CommandTag)


def command_id_in(data: bytes | str) -> str | None:
    """The ``command_id`` of a ``command`` message that :func:`decode_client_message`
    refused (an unknown command, a missing or extra field), so that its ``error`` names
    the command it answers; None when there is none to read."""
    try:
        tag: _CommandTag = _shallow(_command_tag, data)
    except msgspec.DecodeError:
        return None
    return tag.command_id if tag.type == "command" else None


def decode_server_message(data: bytes | str) -> ServerMessage:
    """Decode a WebSocket message from the server (for clients)."""
    return _server_message.decode(data)


def decode_command_request(data: bytes | str) -> CommandRequest:
    """Decode the body of ``POST /v1/games/{id}/commands``."""
    return decode_request(data, CommandRequest)


def decode_command(data: bytes | str) -> Command:
    """Decode one command (``{"type": "move", ...}``), as stored in a game's log."""
    return _command.decode(data)


def decode_game_state(data: bytes | str) -> GameState:
    """Decode a game state (``GET /v1/games/{id}``)."""
    return _game_state.decode(data)


def decode_diff(data: bytes | str) -> Diff:
    """Decode a diff as REST sends it (inside ``CommandResult``) or as stored."""
    return _diff.decode(data)


# Decoders for decode(), by type, built on first use.
_decoders: dict[Any, msgspec.json.Decoder[Any]] = {}


def decode(data: bytes | str, type_: type[T]) -> T:
    """Decode JSON as ``type_`` (any Struct of this package); the decoder for each
    type is built on first use and reused."""
    decoder = _decoders.get(type_)
    if decoder is None:
        decoder = _decoders[type_] = msgspec.json.Decoder(type_)
    result: T = _shallow(decoder, data)
    return result


def decode_request(data: bytes | str, type_: type[T]) -> T:
    """Decode a request body as ``type_``, as :func:`decode` does; a key given twice in an
    object is refused too (what a client sends: not needed for what the server sends)."""
    try:
        result = decode(data, type_)
    except msgspec.DecodeError:
        refuse_repeated_keys(data)  # the cause, when it is one (a tag given twice)
        raise
    refuse_repeated_keys(data)
    return result


def decode_query(query: Mapping[str, str], type_: type[T]) -> T:
    """Decode a query string (``request.query``) into a query Struct such as
    ``LeaderboardQuery``: numbers are parsed from their text, unknown parameters
    ignored, a repeated parameter counts once (the first)."""
    # An aiohttp MultiDict yields every value of a repeated key: keep the first.
    first: dict[str, str] = {}
    for key, value in query.items():
        first.setdefault(key, value)
    try:
        return msgspec.convert(first, type_, strict=False)
    except msgspec.ValidationError as exc:
        field = field_of(exc)
        if field is None or field not in first:
            raise
        # In the words of a path parameter: the value as sent, and what it is not.
        reason = _AT.sub("", str(exc))
        pattern = _PATTERN_ONLY.match(reason)
        value = _shown(first[field])
        message = (f"{value} is not {in_words(reason)[len('Expected '):]}" if pattern
                   else f"{value} is not a valid {field}: {_lower(in_words(reason))}")
        raise QueryError(message, field) from None


def _shown(value: str) -> str:
    """A parameter's value as a message quotes it: its first 40 characters at most."""
    return repr(value) if len(value) <= 40 else repr(value[:40]) + "..."


def _lower(text: str) -> str:
    return text[:1].lower() + text[1:]


_AT = re.compile(r" - at `\$[^`]*`$")
_PATTERN_ONLY = re.compile(r"^Expected `str` matching regex .*$")
