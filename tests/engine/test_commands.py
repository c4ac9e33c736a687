"""Commands (service/engine/commands.py): the JSON forms of PROTOCOL.md, parsed and written back."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.engine import (
    DRAW,
    RESIGN,
    UNDO,
    BadCommand,
    Game,
    Move,
    command_from_dict,
    command_to_dict,
)

PILES = st.sampled_from(
    [
        "stock",
        "waste",
        "foundation",
        "foundation/0",
        "foundation/7",
        "tableau/0",
        "tableau/17",
        "reserve/1",
    ]
)


@settings(derandomize=True, database=None, max_examples=200, deadline=None)
@given(PILES, PILES, st.integers(min_value=1, max_value=52))
def test_a_move_round_trips_through_its_json_form(src, dst, count):
    command = Move(src, dst, count)
    data = command_to_dict(command)
    assert data == {"type": "move", "from": src, "to": dst, "count": count}
    assert command_from_dict(data) == command


@pytest.mark.parametrize(
    "command, data",
    [(DRAW, {"type": "draw"}), (UNDO, {"type": "undo"}), (RESIGN, {"type": "resign"})],
)
def test_draw_undo_and_resign_round_trip_through_their_json_form(command, data):
    assert command_to_dict(command) == data
    assert command_from_dict(data) is command


def test_count_defaults_to_one():
    assert command_from_dict({"type": "move", "from": "waste", "to": "foundation"}) == Move(
        "waste", "foundation", 1
    )


@pytest.mark.parametrize(
    "data",
    [
        None,
        [],
        "draw",
        {},
        {"type": "Move"},
        {"type": "redo"},
        {"type": "draw", "count": 1},
        {"type": "undo", "to": "x"},
        {"type": "move", "from": "waste"},
        {"type": "move", "to": "waste"},
        {"type": "move", "from": 1, "to": "tableau/0"},
        {"type": "move", "from": "waste", "to": "tableau/0", "count": 0},
        {"type": "move", "from": "waste", "to": "tableau/0", "count": -1},
        {"type": "move", "from": "waste", "to": "tableau/0", "count": 1.0},
        {"type": "move", "from": "waste", "to": "tableau/0", "count": True},
        {"type": "move", "from": "waste", "to": "tableau/0", "count": "1"},
        {"type": "move", "from": "waste", "to": "tableau/0", "card": "7H"},
    ],
)
def test_malformed_commands_are_bad_commands(data):
    with pytest.raises(BadCommand) as info:
        command_from_dict(data)
    assert str(info.value)
    with pytest.raises(BadCommand):
        Game.deal("gilbert", 0).apply(data)


@pytest.mark.parametrize("count", [0, -1, -5])
def test_a_move_of_no_cards_is_a_bad_command(count):
    # Built directly, not parsed: the engine still refuses to move fewer than one card.
    game = Game.deal("caprice", 0)
    with pytest.raises(BadCommand):
        game.apply(Move("tableau/0", "tableau/5", count))


def test_game_apply_takes_the_json_form():
    game = Game.deal("gilbert", 0)
    by_dict, diff_a = game.apply({"type": "draw"})
    by_object, diff_b = game.apply(DRAW)
    assert by_dict.piles == by_object.piles and diff_a.ops == diff_b.ops
