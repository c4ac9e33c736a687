"""service/domain/wire.py: a command between the protocol's Struct and the engine's value,
both ways, and a game's snapshot as the store keeps it."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import protocol as p
from service.domain import wire
from service.engine import DRAW, RESIGN, UNDO, Game, Move
from tests.commands import from_json, to_json

PILE_IDS = ["stock", "waste", "foundation/0", "foundation/7", "tableau/0", "tableau/17",
            "reserve/1"]


@settings(derandomize=True, database=None, max_examples=200, deadline=None)
@given(st.sampled_from(PILE_IDS), st.sampled_from([*PILE_IDS, "foundation"]),
       st.integers(min_value=1, max_value=52))
def test_a_move_round_trips_through_its_json_form(src, dst, count):
    command = Move(src, dst, count)
    data = to_json(command)
    assert data == {"type": "move", "from": src, "to": dst, "count": count}
    assert from_json(data) == command
    assert wire.engine_command(p.decode_command(msgspec.json.encode(data))) == command


@pytest.mark.parametrize(
    "command, data",
    [(DRAW, {"type": "draw"}), (UNDO, {"type": "undo"}), (RESIGN, {"type": "resign"})],
)
def test_draw_undo_and_resign_round_trip_through_their_json_form(command, data):
    assert to_json(command) == data
    assert from_json(data) is command  # the engine's one value of each


def test_count_defaults_to_one():
    assert wire.engine_command(p.decode_command(b'{"type": "move", "from": "waste", '
                                                b'"to": "foundation"}')) == Move(
        "waste", "foundation", 1)


def test_a_snapshot_keeps_the_commands_in_effect_in_their_json_form():
    game = Game.deal("gilbert", 42).apply(DRAW)[0]
    move = next(c for c in game.legal_moves() if isinstance(c, Move))
    game = game.apply(move)[0].apply(DRAW)[0].apply(UNDO)[0]
    stored = p.encode(wire.snapshot(game))
    effective = msgspec.json.decode(stored)["effective"]
    assert effective == [{"type": "draw"}, {"type": "move", "from": move.from_, "to": move.to,
                                            "count": move.count}]
    restored = wire.restore(stored)
    assert restored.effective_commands() == game.effective_commands() == [DRAW, move]
    assert restored.piles == game.piles
    assert (restored.status, restored.moves) == (game.status, game.moves)


def test_a_snapshot_with_a_malformed_command_is_refused():
    stored = msgspec.json.decode(p.encode(wire.snapshot(Game.deal("gate", 1).apply(DRAW)[0])))
    stored["effective"] = [{"type": "redo"}]
    with pytest.raises(msgspec.ValidationError):
        wire.restore(msgspec.json.encode(stored))
