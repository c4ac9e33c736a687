"""Diffs (service/engine/diff.py): the ops of PROTOCOL.md, in the order a client applies them."""

from __future__ import annotations

import pytest

from service.engine import DRAW, RESIGN, UNDO, Game

from .helpers import apply_ops, make_game, move, play, suit_run


def _applied(game: Game, command) -> tuple[Game, list]:
    after, diff = game.apply(command)
    assert apply_ops(game.public_piles(), diff.ops) == after.public_piles()
    return after, diff.ops


def test_a_move_that_turns_a_card_up_pops_pushes_then_flips():
    # PROTOCOL.md's example.
    game = make_game("gilbert", {"tableau/3": "4H 9C | 7D", "foundation/1": suit_run("D", 1, 6)})
    _, ops = _applied(game, move("tableau/3", "foundation/1", 1))
    assert ops == [
        {"pile": "tableau/3", "op": "pop", "n": 1},
        {"pile": "foundation/1", "op": "push", "cards": ["7D"]},
        {"pile": "tableau/3", "op": "flip", "card": "9C"},
    ]


def test_a_run_moves_as_one_pop_and_one_push():
    game = make_game("gilbert", {"tableau/0": "TS 9H 8C", "tableau/1": "JD"})
    _, ops = _applied(game, move("tableau/0", "tableau/1", 3))
    assert ops == [
        {"pile": "tableau/0", "op": "pop", "n": 3},
        {"pile": "tableau/1", "op": "push", "cards": ["TS", "9H", "8C"]},
    ]


def test_a_gilbert_draw_takes_face_down_cards_and_pushes_them_face_up():
    game = make_game("gilbert", {"stock": "2C 3C 4C 5C |", "tableau/0": "9S"})
    _, ops = _applied(game, DRAW)
    assert ops == [
        {"pile": "stock", "op": "down", "n": -3},
        {"pile": "waste", "op": "push", "cards": ["5C", "4C", "3C"]},
    ]


def test_turning_the_waste_over_pops_it_and_adds_face_down_cards_to_the_stock():
    game = make_game("gilbert", {"waste": "2C 3C 4C", "tableau/0": "9S", "tableau/1": "8H"})
    _, ops = _applied(game, DRAW)
    assert sorted(map(str, ops)) == sorted(
        map(str, [{"pile": "stock", "op": "down", "n": 3}, {"pile": "waste", "op": "pop", "n": 3}])
    )


def test_a_gate_stock_fill_names_the_card_only_once_it_is_face_up():
    game = make_game("gate", {"stock": "3C 9D |", "tableau/1": "9S"})
    _, ops = _applied(game, move("stock", "tableau/0"))
    assert ops == [
        {"pile": "stock", "op": "down", "n": -1},
        {"pile": "tableau/0", "op": "push", "cards": ["9D"]},
    ]


def test_a_gate_refill_is_in_the_same_diff():
    game = make_game(
        "gate", {"tableau/0": "8C", "tableau/1": "9H", "reserve/0": "2C 3C", "reserve/1": "4C"}
    )
    _, ops = _applied(game, move("tableau/0", "tableau/1"))
    assert {"pile": "reserve/0", "op": "pop", "n": 1} in ops
    assert {"pile": "tableau/0", "op": "push", "cards": ["3C"]} in ops


def test_a_caprice_draw_pushes_onto_all_twelve_piles():
    game = Game.deal("caprice", 0)
    _, ops = _applied(game, DRAW)
    assert ops[0] == {"pile": "stock", "op": "down", "n": -12}
    assert [op["pile"] for op in ops[1:]] == [f"tableau/{i}" for i in range(12)]
    assert all(op["op"] == "push" and len(op["cards"]) == 1 for op in ops[1:])


def test_undoing_a_flip_turns_the_card_back_down_without_naming_it():
    game = make_game("gilbert", {"tableau/3": "4H 9C | 7D", "tableau/0": "8S"})
    after, _ = _applied(game, move("tableau/3", "tableau/0"))
    _, ops = _applied(after, UNDO)
    assert {"pile": "tableau/3", "op": "down", "n": 1} in ops
    assert all(op.get("card") != "9C" and "9C" not in op.get("cards", ()) for op in ops)


def test_undoing_a_draw_returns_the_cards_face_down():
    game = make_game("gilbert", {"stock": "2C 3C 4C 5C |", "tableau/0": "9S"})
    after, _ = _applied(game, DRAW)
    _, ops = _applied(after, UNDO)
    assert sorted(map(str, ops)) == sorted(
        map(str, [{"pile": "waste", "op": "pop", "n": 3}, {"pile": "stock", "op": "down", "n": 3}])
    )


def test_resign_changes_no_pile():
    _, diff = Game.deal("shamrocks", 0).apply(RESIGN)
    assert diff.ops == [] and diff.status == "resigned"


def test_a_diff_carries_the_status_and_the_stats():
    game = play(Game.deal("gilbert", 0), DRAW)
    after, diff = game.apply(DRAW)
    assert (diff.status, diff.moves, diff.foundation_cards) == (
        after.status,
        2,
        after.foundation_cards,
    )


def test_apply_ops_leaves_its_input_alone():
    view = {"waste": {"down": 0, "up": ["5C"]}}
    out = apply_ops(view, [{"pile": "waste", "op": "push", "cards": ["6D"]}])
    assert view == {"waste": {"down": 0, "up": ["5C"]}} and out["waste"]["up"] == ["5C", "6D"]


@pytest.mark.parametrize(
    "op",
    [
        {"pile": "waste", "op": "pop", "n": 2},
        {"pile": "waste", "op": "flip", "card": "5C"},
        {"pile": "waste", "op": "down", "n": -1},
        {"pile": "waste", "op": "shuffle"},
    ],
)
def test_apply_ops_refuses_an_op_that_does_not_fit_the_pile(op):
    with pytest.raises(ValueError):
        apply_ops({"waste": {"down": 0, "up": ["5C"]}}, [op])
