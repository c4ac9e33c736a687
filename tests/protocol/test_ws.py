"""WebSocket messages: the shapes of PROTOCOL.md, and what a client may not send."""

from __future__ import annotations

import msgspec
import pytest

import protocol as p

from .examples import DIFF, ERROR, STATE


def test_hello_may_leave_out_token_and_since() -> None:
    assert p.decode_client_message(b'{"type": "hello"}') == p.Hello(token=None, since=None)
    assert p.decode_client_message(b'{"type": "hello", "token": "t", "since": 4}') == p.Hello(
        token="t", since=4
    )
    assert p.encode(p.Hello()) == b'{"type":"hello"}'


def test_a_command_message_carries_its_id() -> None:
    message = p.decode_client_message(
        b'{"type": "command", "command_id": "c1", "expected_seq": 3, "command": {"type": "draw"}}'
    )
    assert message == p.CommandMessage(command_id="c1", expected_seq=3, command=p.Draw())


@pytest.mark.parametrize(
    "wire",
    [
        b'{"type": "hello", "token": "t", "room": 1}',
        b'{"type": "ping", "at": 1}',
        b'{"type": "command", "command_id": "c", "command": {"type": "draw"}, "x": 0}',
    ],
)
def test_unknown_fields_from_clients_are_refused(wire: bytes) -> None:
    with pytest.raises(msgspec.ValidationError, match="unknown field"):
        p.decode_client_message(wire)


@pytest.mark.parametrize(
    ("wire", "field"),
    [
        (b'{"type": "hello", "token": "a", "token": "b"}', "token"),
        (b'{"type": "hello", "since": 1, "since" : 2}', "since"),
        (b'{"type": "hello", "t\\u006fken": "a", "token": "b"}', "token"),  # spelled otherwise
        (b'{"type": "hello", "type": "hello"}', "type"),
        (b'{"type": "hello", "type": "ping"}', "type"),
        (b'{"type": "command", "command_id": "c1", "command_id": "c2", '
         b'"command": {"type": "draw"}}', "command_id"),
        (b'{"type": "command", "command_id": "c1", "command": {"type": "move", "type": "draw"}}',
         "command.type"),
        (b'{"type": "command", "command_id": "c1", "command": '
         b'{"type": "move", "from": "waste", "to": "foundation", "to": "tableau/0"}}',
         "command.to"),
    ],
)
def test_a_key_repeated_in_a_client_message_is_refused_naming_it(wire: bytes, field: str) -> None:
    """Which of two values a client meant is anyone's guess: neither is taken."""
    with pytest.raises(msgspec.ValidationError, match="duplicate field") as caught:
        p.decode_client_message(wire)
    assert p.bad_request_from(caught.value, "message").error.details == {"field": field}


@pytest.mark.parametrize(
    "wire",
    [
        b'{"type": "hello", "token": "token"}',
        b'{"type": "hello", "token": "\\"token\\": \\"token\\""}',
        b'{"type": "command", "command_id": "type", "command": {"type": "move", '
        b'"from": "waste", "to": "foundation"}}',  # "type": once in each object
    ],
)
def test_a_value_spelled_like_a_key_is_no_repeat(wire: bytes) -> None:
    assert p.decode_client_message(wire)


@pytest.mark.parametrize(
    "wire",
    [
        b'{"type": "command", "command": {"type": "draw"}}',  # no command_id
        b'{"type": "command", "command_id": "", "command": {"type": "draw"}}',
        b'{"type": "hello", "since": -1}',
        b'{"type": "hello", "since": "3"}',
        b'{"type": "pong"}',  # a server message
        b'{"type": "diff"}',
        b"{}",
    ],
)
def test_wrong_client_messages_are_refused(wire: bytes) -> None:
    with pytest.raises(msgspec.ValidationError):
        p.decode_client_message(wire)


def test_server_messages_have_the_protocol_shapes() -> None:
    def wire(message: p.ServerMessage) -> dict[str, object]:
        return msgspec.json.decode(p.encode(message))

    assert wire(p.Synced(seq=3)) == {"type": "synced", "seq": 3}
    assert wire(p.Ack(command_id="c", seq=3)) == {"type": "ack", "command_id": "c", "seq": 3}
    assert wire(p.Pong()) == {"type": "pong"}
    assert set(wire(p.Snapshot(seq=0, state=STATE))) == {"type", "seq", "state"}
    assert set(wire(p.diff_message(DIFF))) == {
        "type", "seq", "command", "ops", "status", "stats", "at", "hash"
    }
    # Issue 13: a diff's event hash, when the server has one, is an added field.
    hashed = msgspec.structs.replace(DIFF, hash="0123456789abcdef")
    assert wire(p.diff_message(hashed))["hash"] == "0123456789abcdef"
    assert p.diff_of(p.diff_message(hashed)) == hashed


def test_an_error_message_has_a_command_id_only_when_it_answers_one() -> None:
    assert set(msgspec.json.decode(p.encode(p.ErrorMessage(error=ERROR)))) == {"type", "error"}
    answered = msgspec.json.decode(p.encode(p.ErrorMessage(command_id="c", error=ERROR)))
    assert answered["command_id"] == "c"


def test_a_diff_converts_between_rest_and_websocket_forms() -> None:
    message = p.diff_message(DIFF)
    assert p.diff_of(message) == DIFF
    # The REST diff is the WebSocket diff: the same stored event, "type" and "at" included.
    assert msgspec.json.decode(p.encode(message)) == msgspec.json.decode(p.encode(DIFF))


def test_protocol_constants() -> None:
    assert p.HELLO_TIMEOUT_S == 5.0
    assert p.CloseCode.POLICY_VIOLATION == 1008
