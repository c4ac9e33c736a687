"""Diffs and states: PROTOCOL.md's examples decode, and nulls stay on the wire."""

from __future__ import annotations

import msgspec
import pytest

import protocol as p
from protocol.schema import components

from .examples import STATE

PROTOCOL_DIFF = b"""
{"seq": 13, "command": {"type": "move", "from": "tableau/3", "to": "foundation/1", "count": 1},
 "ops": [{"pile": "tableau/3", "op": "pop", "n": 1},
         {"pile": "foundation/1", "op": "push", "cards": ["7D"]},
         {"pile": "tableau/3", "op": "flip", "card": "9C"}],
 "status": "playing",
 "stats": {"moves": 13, "foundation_cards": 5, "started_at": "2026-03-01T12:00:00Z",
           "finished_at": null, "duration_ms": 4000},
 "at": "2026-03-01T12:00:04.000Z", "hash": "5b0e1c7d9a24f310"}
"""

PROTOCOL_STATE = b"""
{"game_id": "g_1", "variant": "gilbert", "options": {}, "seq": 0,
 "status": "playing",
 "piles": {"stock": {"down": 24, "up": []}, "waste": {"down": 0, "up": []},
           "tableau/0": {"down": 0, "up": ["7H"]}},
 "stats": {"moves": 0, "foundation_cards": 0, "started_at": null,
           "finished_at": null, "duration_ms": 0},
 "public": false, "seed": null, "owner": "p_1"}
"""


def test_the_protocol_diff_decodes() -> None:
    diff = p.decode_diff(PROTOCOL_DIFF)
    assert diff.command == p.Move(from_="tableau/3", to="foundation/1", count=1)
    assert diff.ops == [
        p.Pop(pile="tableau/3", n=1),
        p.Push(pile="foundation/1", cards=["7D"]),
        p.Flip(pile="tableau/3", card="9C"),
    ]
    assert (diff.stats.moves, diff.stats.foundation_cards) == (13, 5)
    assert (diff.at, diff.hash) == ("2026-03-01T12:00:04.000Z", "5b0e1c7d9a24f310")


def test_what_the_server_always_sends_is_neither_optional_nor_nullable() -> None:
    """A strict reader needs no null check for a field that always comes (issue 20)."""
    schemas = components()
    for name, fields in (("Diff", ("at", "hash")), ("DiffMessage", ("at", "hash")),
                         ("Event", ("hash",)), ("Challenge", ("par", "winnable"))):
        for field in fields:
            assert field in schemas[name]["required"], (name, field)
            assert "anyOf" not in schemas[name]["properties"][field], (name, field)


def test_ops_are_tagged_by_op() -> None:
    assert msgspec.json.decode(p.encode(p.Down(pile="stock", n=-3))) == {
        "op": "down",
        "pile": "stock",
        "n": -3,
    }


def test_the_protocol_state_decodes() -> None:
    state = p.decode_game_state(PROTOCOL_STATE)
    assert state.piles["stock"] == p.Pile(down=24, up=[])
    assert state.seed is None


def test_a_secret_seed_and_unset_times_are_sent_as_null() -> None:
    wire = msgspec.json.decode(p.encode(STATE))
    assert wire["seed"] is None
    assert wire["stats"]["started_at"] is None
    assert wire["stats"]["finished_at"] is None
    assert set(wire) == {
        "game_id",
        "variant",
        "options",
        "seq",
        "status",
        "piles",
        "stats",
        "public",
        "seed",
        "owner",
    }


def test_servers_may_add_fields_that_clients_ignore() -> None:
    """Server messages do not forbid unknown fields: old clients survive additions."""
    state = p.decode_game_state(PROTOCOL_STATE.replace(b'"owner"', b'"theme": "dark", "owner"'))
    assert state.owner == "p_1"


@pytest.mark.parametrize("card", ["7X", "10H", "7h", "", "7HH"])
def test_malformed_cards_are_refused(card: str) -> None:
    wire = msgspec.json.encode({"op": "flip", "pile": "tableau/0", "card": card})
    with pytest.raises(msgspec.ValidationError, match="card"):
        p.decode(wire, p.Flip)


def test_an_unknown_status_is_refused() -> None:
    wire = PROTOCOL_STATE.replace(b'"status": "playing"', b'"status": "paused"')
    with pytest.raises(msgspec.ValidationError, match="status"):
        p.decode_game_state(wire)


def test_an_unknown_op_is_refused() -> None:
    with pytest.raises(msgspec.ValidationError, match="op"):
        p.decode(b'{"op": "shuffle", "pile": "stock"}', p.Op)  # type: ignore[arg-type]
