"""Commands: PROTOCOL.md's examples, defaults, and what is refused."""

from __future__ import annotations

import msgspec
import pytest

import protocol as p


def test_the_protocol_examples_decode() -> None:
    assert p.decode_command(
        b'{"type": "move", "from": "tableau/3", "to": "foundation/1", "count": 1}'
    ) == p.Move(from_="tableau/3", to="foundation/1", count=1)
    assert p.decode_command(b'{"type": "move", "from": "waste", "to": "foundation"}') == p.Move(
        from_="waste", to="foundation"
    )
    assert p.decode_command(b'{"type": "draw"}') == p.Draw()
    assert p.decode_command(b'{"type": "undo"}') == p.Undo()
    assert p.decode_command(b'{"type": "resign"}') == p.Resign()


def test_count_defaults_to_one_and_is_always_sent() -> None:
    move = p.decode_command(b'{"type": "move", "from": "waste", "to": "foundation"}')
    assert isinstance(move, p.Move)
    assert move.count == 1
    assert msgspec.json.decode(p.encode(move)) == {
        "type": "move",
        "from": "waste",
        "to": "foundation",
        "count": 1,
    }


def test_gate_moves_from_the_stock() -> None:
    assert p.decode_command(b'{"type": "move", "from": "stock", "to": "tableau/5"}') == p.Move(
        from_="stock", to="tableau/5"
    )


@pytest.mark.parametrize(
    "wire",
    [
        b'{"type": "move", "from": "waste", "to": "foundation", "cards": 2}',
        b'{"type": "draw", "n": 3}',
        b'{"type": "undo", "steps": 2}',
        b'{"type": "resign", "why": "bored"}',
        b'{"type": "draw", "count": 1}',
        b'{"type": "undo", "to": "tableau/0"}',
        b'{"type": "move", "from": "waste", "to": "tableau/0", "card": "7H"}',
    ],
)
def test_unknown_fields_are_refused(wire: bytes) -> None:
    with pytest.raises(msgspec.ValidationError, match="unknown field"):
        p.decode_command(wire)


@pytest.mark.parametrize(
    "wire",
    [
        b'{"type": "move", "from": "waste"}',  # no to
        b'{"type": "move", "from": 3, "to": "foundation"}',
        b'{"type": "move", "from": "waste", "to": "foundation", "count": "1"}',
        b'{"type": "move", "from": "waste", "to": "foundation", "count": true}',
        b'{"type": "move", "from": "waste", "to": "foundation", "count": 1.5}',
        b'{"type": "move", "from": "waste", "to": "foundation", "count": 0}',
        b'{"type": "move", "from": "waste", "to": "foundation", "count": -1}',
        b'{"type": "move", "to": "waste"}',  # no from
        b'{"type": "fly"}',
        b'{"type": "redo"}',  # undo has no opposite
        b'{"type": "Move"}',  # the tags are lower case
        b'{"from": "waste", "to": "foundation"}',  # no type
        b"{}",
        b'"draw"',
        b"[]",
        b"null",
    ],
)
def test_wrong_shapes_and_types_are_refused(wire: bytes) -> None:
    with pytest.raises(msgspec.ValidationError):
        p.decode_command(wire)


@pytest.mark.parametrize(
    "pile", ["tableau", "tableau/", "tableau/-1", "tableau/01", "tableau/1000", "Stock", "hand/0"]
)
def test_malformed_pile_ids_are_refused(pile: str) -> None:
    wire = msgspec.json.encode({"type": "move", "from": pile, "to": "tableau/1"})
    with pytest.raises(msgspec.ValidationError, match="from"):
        p.decode_command(wire)


def test_only_to_may_name_the_bare_foundation() -> None:
    with pytest.raises(msgspec.ValidationError, match="from"):
        p.decode_command(b'{"type": "move", "from": "foundation", "to": "tableau/1"}')


def test_malformed_json_is_a_decode_error() -> None:
    with pytest.raises(msgspec.DecodeError):
        p.decode_command(b'{"type": ')
