"""Every message survives encode -> decode unchanged, through the type a receiver uses."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

import protocol as p
from protocol.schema import components

from .examples import MESSAGES


def _id(case: tuple[Any, Any]) -> str:
    return type(case[1]).__name__


@pytest.mark.parametrize("case", MESSAGES, ids=[_id(c) for c in MESSAGES])
def test_every_message_round_trips(case: tuple[Any, Any]) -> None:
    type_, message = case
    wire = p.encode(message)
    assert p.decode(wire, type_) == message
    # The same through the text a WebSocket frame carries.
    assert p.decode(wire.decode(), type_) == message


def test_every_schema_has_an_example() -> None:
    """Adding a Struct without adding it to examples.MESSAGES fails here."""
    seen: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, msgspec.Struct):
            seen.add(type(value).__name__)
            for field in value.__struct_fields__:
                walk(getattr(value, field))
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)

    for _, message in MESSAGES:
        walk(message)
    unions = {"Command", "Op", "ClientMessage", "ServerMessage"}
    assert set(components()) - unions - seen == set()


def test_client_and_server_decoders_pick_the_struct_by_type() -> None:
    assert p.decode_client_message(b'{"type": "ping"}') == p.Ping()
    assert p.decode_server_message(b'{"type": "pong"}') == p.Pong()
    assert p.decode_server_message(b'{"type": "synced", "seq": 4}') == p.Synced(seq=4)
