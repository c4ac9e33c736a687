"""apply_diff: each op of PROTOCOL.md's table, its example, and diffs that cannot apply."""

from __future__ import annotations

import copy

import pytest
from msgspec.structs import replace

import protocol as p

from .examples import NEW_STATS, STATS


def state(seq: int = 12, **piles: tuple[int, list[str]]) -> p.GameState:
    return p.GameState(
        game_id="g_1",
        variant="gilbert",
        options={},
        seq=seq,
        status="playing",
        piles={name.replace("_", "/"): p.Pile(down=d, up=up) for name, (d, up) in piles.items()},
        stats=NEW_STATS,
        public=False,
        seed=None,
        owner="p_1",
    )


def diff(*ops: p.Op, seq: int = 13, command: p.Command | None = None) -> p.Diff:
    return p.Diff(
        seq=seq, command=command or p.Draw(), ops=list(ops), status="playing", stats=STATS,
        at="2026-03-01T12:00:00.000Z", hash="0123456789abcdef",
    )


def test_the_protocol_example() -> None:
    before = state(
        tableau_3=(2, ["9S", "7D"]), foundation_1=(0, ["AD", "2D", "3D", "4D", "5D", "6D"])
    )
    example = p.decode_diff(
        b"""{"seq": 13,
        "command": {"type": "move", "from": "tableau/3", "to": "foundation/1", "count": 1},
        "ops": [{"pile": "tableau/3", "op": "pop", "n": 1},
                {"pile": "foundation/1", "op": "push", "cards": ["7D"]},
                {"pile": "tableau/3", "op": "flip", "card": "9C"}],
        "status": "playing",
        "stats": {"moves": 13, "foundation_cards": 5, "started_at": null,
                  "finished_at": null, "duration_ms": 0},
        "at": "2026-03-01T12:00:00.000Z", "hash": "0123456789abcdef"}"""
    )
    after = p.apply_diff(before, example)
    assert after.piles["tableau/3"] == p.Pile(down=1, up=["9S", "9C"])
    assert after.piles["foundation/1"].up[-1] == "7D"
    assert (after.seq, after.stats.moves, after.stats.foundation_cards) == (13, 13, 5)


def test_pop_removes_the_top_n_face_up_cards() -> None:
    after = p.apply_diff(
        state(tableau_0=(1, ["KS", "QH", "JC"])), diff(p.Pop(pile="tableau/0", n=2))
    )
    assert after.piles["tableau/0"] == p.Pile(down=1, up=["KS"])


def test_push_appends_face_up_cards_bottom_to_top() -> None:
    after = p.apply_diff(state(waste=(0, ["2C"])), diff(p.Push(pile="waste", cards=["3D", "4S"])))
    assert after.piles["waste"] == p.Pile(down=0, up=["2C", "3D", "4S"])


def test_flip_turns_the_top_face_down_card_up() -> None:
    after = p.apply_diff(state(tableau_2=(3, [])), diff(p.Flip(pile="tableau/2", card="9C")))
    assert after.piles["tableau/2"] == p.Pile(down=2, up=["9C"])


def test_down_adds_or_removes_face_down_cards() -> None:
    # A Gilbert draw: three cards leave the stock face down and land on the waste face up.
    dealt = p.apply_diff(
        state(stock=(24, []), waste=(0, [])),
        diff(p.Down(pile="stock", n=-3), p.Push(pile="waste", cards=["4H", "JS", "2D"])),
    )
    assert dealt.piles["stock"] == p.Pile(down=21, up=[])
    assert dealt.piles["waste"] == p.Pile(down=0, up=["4H", "JS", "2D"])
    # The waste turned over: its cards go back into the stock, face down.
    turned = p.apply_diff(dealt, diff(p.Pop(pile="waste", n=3), p.Down(pile="stock", n=3), seq=14))
    assert turned.piles["stock"] == p.Pile(down=24, up=[])
    assert turned.piles["waste"] == p.Pile(down=0, up=[])


def test_seq_status_and_stats_come_from_the_diff() -> None:
    won = replace(diff(), status="won")
    after = p.apply_diff(state(), won)
    assert (after.seq, after.status, after.stats) == (13, "won", STATS)


def test_a_websocket_diff_applies_the_same() -> None:
    before = state(tableau_0=(1, ["KS"]))
    d = diff(p.Pop(pile="tableau/0", n=1), p.Flip(pile="tableau/0", card="QH"))
    assert p.apply_diff(before, p.diff_message(d)) == p.apply_diff(before, d)


def test_the_input_state_is_left_untouched() -> None:
    before = state(tableau_0=(1, ["KS", "QH"]), waste=(0, ["2C"]), stock=(5, []))
    snapshot = copy.deepcopy(before)
    after = p.apply_diff(
        before,
        diff(
            p.Pop(pile="tableau/0", n=1),
            p.Push(pile="waste", cards=["QH"]),
            p.Flip(pile="tableau/0", card="3D"),
            p.Down(pile="stock", n=-1),
        ),
    )
    assert before == snapshot
    assert after is not before
    assert after.piles is not before.piles
    assert after.stats is not STATS  # the diff's stats are copied, not shared


def test_every_op_in_order() -> None:
    # Order matters: the flip only fits after the pop has emptied the face-up cards.
    before = state(tableau_0=(1, ["KS"]))
    after = p.apply_diff(
        before, diff(p.Pop(pile="tableau/0", n=1), p.Flip(pile="tableau/0", card="QH"))
    )
    assert after.piles["tableau/0"] == p.Pile(down=0, up=["QH"])


@pytest.mark.parametrize(
    ("op", "reason"),
    [
        (p.Pop(pile="tableau/0", n=3), "cannot pop 3: 2 face up"),
        (p.Flip(pile="waste", card="9C"), "no face-down card"),
        (p.Down(pile="tableau/0", n=-2), "cannot remove 2: 1 face down"),
        (p.Push(pile="tableau/9", cards=["9C"]), "no such pile"),
        (p.Pop(pile="reserve/0", n=1), "no such pile"),
    ],
)
def test_an_op_that_cannot_apply_is_a_value_error(op: p.Op, reason: str) -> None:
    before = state(tableau_0=(1, ["KS", "QH"]), waste=(0, []))
    with pytest.raises(ValueError, match=reason) as caught:
        p.apply_diff(before, diff(p.Push(pile="waste", cards=["2C"]), op))
    assert isinstance(caught.value, p.DiffError)
    # The message names the game, the diff and the op.
    assert "game g_1, diff seq 13, op 1" in str(caught.value)


@pytest.mark.parametrize("seq", [12, 14, 0])
def test_a_diff_that_does_not_follow_the_state_is_refused(seq: int) -> None:
    with pytest.raises(p.DiffError, match=f"diff seq {seq} does not follow state seq 12"):
        p.apply_diff(state(seq=12), diff(seq=seq))


def test_a_failed_diff_leaves_the_state_untouched() -> None:
    before = state(tableau_0=(1, ["KS"]))
    snapshot = copy.deepcopy(before)
    with pytest.raises(p.DiffError):
        p.apply_diff(before, diff(p.Pop(pile="tableau/0", n=1), p.Pop(pile="tableau/0", n=1)))
    assert before == snapshot


def test_replaying_every_diff_from_seq_0() -> None:
    """The log folds into the state: seq 0 plus each diff in order."""
    start = state(seq=0, stock=(3, []), waste=(0, []), tableau_0=(1, ["KS"]))
    diffs = [
        diff(p.Down(pile="stock", n=-1), p.Push(pile="waste", cards=["QH"]), seq=1),
        diff(p.Pop(pile="waste", n=1), p.Push(pile="tableau/0", cards=["QH"]), seq=2),
        diff(p.Down(pile="stock", n=-1), p.Push(pile="waste", cards=["5C"]), seq=3),
    ]
    final = start
    for d in diffs:
        final = p.apply_diff(final, d)
    assert final.seq == 3
    assert final.piles == {
        "stock": p.Pile(down=1, up=[]),
        "waste": p.Pile(down=0, up=["5C"]),
        "tableau/0": p.Pile(down=1, up=["KS", "QH"]),
    }
