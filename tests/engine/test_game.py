"""RULES.md, "Common vocabulary": the rules every variant shares, one test per sentence.

Each test shows its position (see :mod:`tests.engine.helpers` for the notation)
and has an accepted and a refused case, so dropping or inverting the rule fails it.
"""

from __future__ import annotations

import pytest

from service.engine import DRAW, RESIGN, UNDO, Game, Move, Status
from tests.commands import legal_commands

from .helpers import accepted, make_game, move, play, refused, suit_run, through_snapshot, view

# --- cards and piles ---------------------------------------------------------------------


def test_face_down_cards_are_always_at_the_bottom_of_a_pile():
    game = make_game("gilbert", {"tableau/0": "2C 5D | 8H", "tableau/1": "9S"})
    after = accepted(game, move("tableau/0", "tableau/1"))
    # The face-down 5D turned up when it became the top: it is never above a face-up card.
    assert view(after)["tableau/0"] == "2C | 5D"
    assert after.public_piles()["tableau/0"] == {"down": 1, "up": ["5D"]}


def test_top_is_the_only_playable_card_unless_sequences_may_move():
    fan = make_game("shamrocks", {"tableau/0": "5C 6D 7H", "tableau/1": "8S", "tableau/2": "7C"})
    accepted(fan, move("tableau/0", "tableau/1"))  # the top, 7H, onto 8S
    refused(fan, move("tableau/0", "tableau/2", 2), "one_card_at_a_time")  # 6D under it may not


# --- no rank wraps ----------------------------------------------------------------------


def test_no_rank_wraps_only_a_queen_goes_on_a_king():
    game = make_game("shamrocks", {"tableau/0": "KH", "tableau/1": "QC", "tableau/2": "AS"})
    accepted(game, move("tableau/1", "tableau/0"))
    refused(game, move("tableau/2", "tableau/0"), "build")


def test_no_rank_wraps_only_a_two_goes_on_an_ace():
    game = make_game("shamrocks", {"tableau/0": "AS", "tableau/1": "2D", "tableau/2": "KH"})
    accepted(game, move("tableau/1", "tableau/0"))
    refused(game, move("tableau/2", "tableau/0"), "build")


def test_no_rank_wraps_in_suit_either():
    game = make_game("caprice", {"tableau/0": "KH", "tableau/1": "AH", "tableau/2": "QH"})
    accepted(game, move("tableau/2", "tableau/0"))
    refused(game, move("tableau/1", "tableau/0"), "build")
    refused(game, move("tableau/0", "tableau/1"), "build")


def test_no_rank_wraps_a_complete_ascending_foundation_takes_no_ace():
    game = make_game(
        "caprice",
        {
            "foundation/2": suit_run("H", 1, 13),
            "foundation/6": "KH QH",
            "tableau/0": "AH",
            "tableau/1": "JH",
        },
    )
    refused(game, move("tableau/0", "foundation/2"), "foundation_complete")
    accepted(game, move("tableau/1", "foundation/6"))


def test_no_rank_wraps_a_complete_descending_foundation_takes_no_king():
    game = make_game(
        "caprice",
        {
            "foundation/6": suit_run("H", 13, 1),
            "foundation/2": "AH",
            "tableau/0": "KH",
            "tableau/1": "2H",
        },
    )
    refused(game, move("tableau/0", "foundation/6"), "foundation_complete")
    accepted(game, move("tableau/1", "foundation/2"))


# --- foundations ------------------------------------------------------------------------


@pytest.mark.parametrize("index, suit", [(0, "C"), (1, "D"), (2, "H"), (3, "S")])
def test_foundation_suits_are_fixed_by_index_ascending(index, suit):
    game = make_game("gilbert", {"tableau/0": "A" + suit})
    accepted(game, move("tableau/0", f"foundation/{index}"))
    for other in range(4):
        if other != index:
            refused(game, move("tableau/0", f"foundation/{other}"), "foundation_order")


@pytest.mark.parametrize("index, suit", [(4, "C"), (5, "D"), (6, "H"), (7, "S")])
def test_foundation_suits_are_fixed_by_index_descending(index, suit):
    game = make_game("gilbert", {"tableau/0": "K" + suit})
    accepted(game, move("tableau/0", f"foundation/{index}"))
    for other in range(4, 8):
        if other != index:
            refused(game, move("tableau/0", f"foundation/{other}"), "foundation_order")


def test_an_ascending_pile_starts_with_the_ace_of_its_suit():
    game = make_game("gilbert", {"tableau/0": "AH", "tableau/1": "2H"})
    accepted(game, move("tableau/0", "foundation/2"))
    refused(game, move("tableau/1", "foundation/2"), "foundation_order")


def test_an_ascending_pile_takes_the_next_higher_card_of_its_suit():
    game = make_game(
        "gilbert",
        {"foundation/2": "AH 2H", "tableau/0": "3H", "tableau/1": "4H", "tableau/2": "3D"},
    )
    accepted(game, move("tableau/0", "foundation/2"))
    refused(game, move("tableau/1", "foundation/2"), "foundation_order")
    refused(game, move("tableau/2", "foundation/2"), "foundation_order")


def test_a_descending_pile_starts_with_the_king_of_its_suit():
    game = make_game("gilbert", {"tableau/0": "KH", "tableau/1": "QH"})
    accepted(game, move("tableau/0", "foundation/6"))
    refused(game, move("tableau/1", "foundation/6"), "foundation_order")


def test_a_descending_pile_takes_the_next_lower_card_of_its_suit():
    game = make_game(
        "gilbert",
        {"foundation/6": "KH QH", "tableau/0": "JH", "tableau/1": "TH", "tableau/2": "JD"},
    )
    accepted(game, move("tableau/0", "foundation/6"))
    refused(game, move("tableau/1", "foundation/6"), "foundation_order")
    refused(game, move("tableau/2", "foundation/6"), "foundation_order")


def test_cards_go_onto_a_foundation_one_at_a_time():
    game = make_game("gilbert", {"foundation/2": "AH 2H", "tableau/0": "4S 3H", "tableau/1": "3H"})
    accepted(game, move("tableau/1", "foundation/2"))
    refused(game, move("tableau/0", "foundation/2", 2), "one_card_to_foundation")


# --- a move never lands on the pile it came from ----------------------------------------


def test_a_move_never_lands_on_the_pile_it_came_from():
    game = make_game("gilbert", {"tableau/0": "9S", "tableau/1": "TH"})
    accepted(game, move("tableau/0", "tableau/1"))
    refused(game, move("tableau/0", "tableau/0"), "same_pile")
    refused(game, move("foundation/0", "foundation/0"), "same_pile")


def test_to_foundation_never_picks_the_pile_the_card_came_from():
    # 7H leaves the ascending hearts: "foundation" must mean another pile, here the
    # descending hearts showing 8H.
    game = make_game(
        "gilbert", {"foundation/2": suit_run("H", 1, 7), "foundation/6": suit_run("H", 13, 8)}
    )
    after = accepted(game, move("foundation/2", "foundation"))
    assert view(after)["foundation/6"].endswith("8H 7H")


# --- "to": "foundation" -----------------------------------------------------------------


def test_to_foundation_picks_the_lowest_index_that_accepts_the_card():
    game = make_game(
        "gilbert",
        {
            "foundation/2": suit_run("H", 1, 6),
            "foundation/6": suit_run("H", 13, 8),
            "tableau/0": "7H",
        },
    )
    after, diff = game.apply(move("tableau/0", "foundation"))
    assert diff.command == Move("tableau/0", "foundation/2")
    assert view(after)["foundation/2"].endswith("6H 7H")


def test_to_foundation_picks_a_higher_index_when_only_it_accepts():
    game = make_game(
        "gilbert",
        {
            "foundation/2": suit_run("H", 1, 5),
            "foundation/6": suit_run("H", 13, 8),
            "tableau/0": "7H",
        },
    )
    _after, diff = game.apply(move("tableau/0", "foundation"))
    assert diff.command == Move("tableau/0", "foundation/6")


def test_to_foundation_is_refused_when_no_foundation_accepts_the_card():
    game = make_game(
        "gilbert", {"foundation/2": suit_run("H", 1, 5), "tableau/0": "7H", "tableau/1": "6H"}
    )
    accepted(game, move("tableau/1", "foundation"))
    refused(
        game, move("tableau/0", "foundation"), "no_foundation_accepts"
    )


def test_to_foundation_takes_one_card_at_a_time():
    # The 3D would go onto the diamonds showing 2D, but not with the 2C on it: the refusal
    # says why ("no foundation accepts the Three of diamonds" would be untrue).
    game = make_game(
        "gilbert", {"foundation/0": "AC", "foundation/1": "AD 2D", "tableau/0": "9S | 3D 2C"}
    )
    after = accepted(game, move("tableau/0", "foundation"))
    accepted(after, move("tableau/0", "foundation"))
    refused(
        game,
        move("tableau/0", "foundation", 2),
        "one_card_to_foundation",
    )


# --- won --------------------------------------------------------------------------------


def _one_card_from_winning() -> Game:
    return make_game(
        "gilbert",
        {
            "foundation/0": suit_run("C", 1, 13),
            "foundation/1": suit_run("D", 1, 6),
            "foundation/5": suit_run("D", 13, 7),
            "foundation/6": suit_run("H", 13, 1),
            "foundation/3": suit_run("S", 1, 12),
            "tableau/0": "KS",
        },
    )


def test_a_game_is_won_when_every_card_is_on_the_foundations():
    game = _one_card_from_winning()
    assert game.status is Status.PLAYING
    won = accepted(game, move("tableau/0", "foundation/3"))
    assert won.status is Status.WON
    assert won.foundation_cards == 52


def test_a_game_is_not_won_while_a_card_is_off_the_foundations():
    game = _one_card_from_winning()
    # The King of spades starts the descending spades instead: still on the foundations.
    assert accepted(game, move("tableau/0", "foundation/7")).status is Status.WON
    # Back into play, it leaves the game unfinished.
    game = make_game(
        "gilbert",
        {
            **{f"foundation/{i}": suit_run(s, 1, 13) for i, s in enumerate("CDH")},
            "foundation/3": suit_run("S", 1, 12),
            "foundation/7": "KS",
        },
    )
    assert game.status is Status.WON
    game = make_game(
        "gilbert",
        {
            **{f"foundation/{i}": suit_run(s, 1, 13) for i, s in enumerate("CDH")},
            "foundation/3": suit_run("S", 1, 11),
            "tableau/0": "QS",
            "foundation/7": "KS",
        },
    )
    assert game.status is Status.PLAYING


@pytest.mark.parametrize(
    "command",
    [move("tableau/0", "foundation/3"), DRAW, UNDO, RESIGN],
    ids=["move", "draw", "undo", "resign"],
)
def test_won_is_final_every_command_is_then_refused(command):
    game = _one_card_from_winning()
    won = play(game, move("tableau/0", "foundation/3"))
    assert won.status is Status.WON
    refused(won, command, "game_over")
    assert legal_commands(won) == [] and won.legal_moves() == [] and not won.can_undo


# --- resigned ---------------------------------------------------------------------------


def test_a_player_may_resign_while_the_game_is_not_won():
    game = make_game("gilbert", {"tableau/0": "9S", "tableau/1": "TH"})
    resigned = accepted(game, RESIGN)
    assert resigned.status is Status.RESIGNED
    assert resigned.piles == game.piles


def test_a_player_may_not_resign_a_won_game():
    won = play(_one_card_from_winning(), move("tableau/0", "foundation/3"))
    refused(won, RESIGN, "game_over")


@pytest.mark.parametrize(
    "command",
    [move("tableau/0", "tableau/1"), DRAW, UNDO, RESIGN],
    ids=["move", "draw", "undo", "resign"],
)
def test_resigned_is_final_every_command_is_then_refused(command):
    game = make_game("gilbert", {"tableau/0": "9S", "tableau/1": "TH", "stock": "2C |"})
    game = play(game, move("tableau/0", "tableau/1"), RESIGN)
    assert game.status is Status.RESIGNED
    refused(game, command, "game_over")
    assert legal_commands(game) == [] and not game.can_undo


# --- lost -------------------------------------------------------------------------------


def _about_to_lose() -> Game:
    # Shamrocks: the Two of clubs goes up; after that no fan takes anything and the
    # emptied fan stays empty: no move is legal, and Shamrocks has no draw.
    return make_game(
        "shamrocks", {"foundation/0": "AC", "tableau/0": "2C", "tableau/1": "9D 5S 7H"}
    )


def test_a_game_is_lost_when_no_move_and_no_draw_is_legal():
    game = _about_to_lose()
    assert game.status is Status.PLAYING
    lost = accepted(game, move("tableau/0", "foundation/0"))
    assert lost.status is Status.LOST
    assert lost.legal_moves() == []


def test_a_game_with_a_draw_left_is_not_lost():
    # Gate: eight black bars, nothing plays; one card left in the stock.
    bars = {
        f"tableau/{i}": c for i, c in enumerate(["9C", "9S", "5C", "5S", "3C", "3S", "JC", "JS"])
    }
    game = make_game("gate", {**bars, "stock": "5D |"})
    assert game.status is Status.PLAYING
    assert game.legal_moves() == [DRAW]
    assert accepted(game, DRAW).status is Status.LOST


def test_a_lost_game_accepts_undo_which_makes_it_playing_again():
    lost = play(_about_to_lose(), move("tableau/0", "foundation/0"))
    again = accepted(lost, UNDO)
    assert again.status is Status.PLAYING
    assert again.piles == _about_to_lose().piles


def test_a_positions_lost_test_is_asked_once_and_an_undo_asks_none(monkeypatch):
    """The lost test of a position is asked when the game first reaches it (the deal
    included) and kept: an undo goes back to a position asked before, without asking."""
    variant = type(Game.deal("gate", 3).variant)
    asked = []
    is_lost = variant.is_lost

    def counted(self, position):
        asked.append(position)
        return is_lost(self, position)

    monkeypatch.setattr(variant, "is_lost", counted)
    game = Game.deal("gate", 3)
    assert asked == [game.position]
    there = play(game, next(m for m in game.legal_moves() if isinstance(m, Move)))
    assert asked == [game.position, there.position]
    back = accepted(there, UNDO)
    assert back.position is game.position and back.status is Status.PLAYING
    assert asked == [game.position, there.position]


def test_a_lost_game_accepts_resign():
    lost = play(_about_to_lose(), move("tableau/0", "foundation/0"))
    assert accepted(lost, RESIGN).status is Status.RESIGNED


def test_a_lost_game_accepts_nothing_but_undo_and_resign():
    lost = play(_about_to_lose(), move("tableau/0", "foundation/0"))
    assert legal_commands(lost) == [UNDO, RESIGN]
    refused(lost, move("foundation/0", "tableau/1"), "game_lost")
    refused(lost, DRAW, "game_lost")
    bars = {
        f"tableau/{i}": c for i, c in enumerate(["9C", "9S", "5C", "5S", "3C", "3S", "JC", "JS"])
    }
    gate = play(make_game("gate", {**bars, "stock": "5D |"}), DRAW)
    assert gate.status is Status.LOST
    refused(gate, move("waste", "tableau/0"), "game_lost")
    refused(gate, DRAW, "game_lost")


def test_a_lost_game_is_not_final():
    lost = play(_about_to_lose(), move("tableau/0", "foundation/0"))
    assert not lost.status.is_final and lost.can_undo


# --- undo -------------------------------------------------------------------------------


def _three_steps() -> tuple[Game, Game, Game, Game]:
    g0 = make_game(
        "gilbert",
        {"tableau/0": "9S", "tableau/1": "8H", "tableau/2": "7C", "stock": "2C 3C 4C 5D |"},
    )
    g1 = accepted(g0, move("tableau/1", "tableau/0"))
    g2 = accepted(g1, move("tableau/2", "tableau/0"))
    g3 = accepted(g2, DRAW)
    return g0, g1, g2, g3


def test_undo_reverts_the_most_recent_command_still_in_effect():
    _g0, _g1, g2, g3 = _three_steps()
    back = accepted(g3, UNDO)
    assert back.piles == g2.piles
    assert back.effective_commands() == g2.effective_commands()


def test_each_undo_steps_one_command_further_back():
    g0, g1, g2, g3 = _three_steps()
    one = accepted(g3, UNDO)
    two = accepted(one, UNDO)
    three = accepted(two, UNDO)
    assert (one.piles, two.piles, three.piles) == (g2.piles, g1.piles, g0.piles)


def test_there_is_no_redo():
    _g0, g1, _g2, g3 = _three_steps()
    back = play(g3, UNDO, UNDO)
    # The second undo went further back, it did not redo (and no command redoes: the
    # wire refuses a "redo", tests/protocol/test_commands.py).
    assert back.piles == g1.piles


def test_undo_is_refused_when_nothing_is_left_to_revert():
    g0, g1, _g2, g3 = _three_steps()
    refused(g0, UNDO, "nothing_to_undo")
    assert not g0.can_undo
    start = play(g3, UNDO, UNDO, UNDO)
    assert not start.can_undo
    refused(start, UNDO, "nothing_to_undo")
    accepted(g1, UNDO)


def test_undo_is_refused_on_a_fresh_deal():
    game = Game.deal("gilbert", 7)
    refused(game, UNDO, "nothing_to_undo")
    assert UNDO not in legal_commands(game)


def test_undo_turns_a_card_turned_up_by_the_move_face_down_again():
    # The card stays known to the player (RULES.md), but the pile is as before the move.
    game = make_game("gilbert", {"tableau/0": "2C 5D | 8H", "tableau/1": "9S"})
    after = accepted(game, move("tableau/0", "tableau/1"))
    back, _diff = after.apply(UNDO)
    assert view(back)["tableau/0"] == "2C 5D | 8H"
    assert back.public_piles()["tableau/0"] == {"down": 2, "up": ["8H"]}


def test_commands_in_effect_leave_out_undos_and_what_they_reverted():
    _g0, _g1, _g2, g3 = _three_steps()
    back = play(g3, UNDO, UNDO, move("tableau/2", "tableau/0"))
    assert back.effective_commands() == [
        move("tableau/1", "tableau/0"),
        move("tableau/2", "tableau/0"),
    ]


# --- counters ---------------------------------------------------------------------------


def test_moves_count_every_applied_move_draw_and_undo():
    g0, g1, g2, g3 = _three_steps()
    assert [g.moves for g in (g0, g1, g2, g3)] == [0, 1, 2, 3]
    back, diff = g3.apply(UNDO)
    assert back.moves == diff.moves == 4


def test_moves_do_not_count_resign():
    _g0, _g1, _g2, g3 = _three_steps()
    resigned, diff = g3.apply(RESIGN)
    assert resigned.moves == diff.moves == 3


def test_refused_commands_do_not_count():
    g0, *_ = _three_steps()
    refused(g0, move("tableau/0", "tableau/1"), "build")
    assert g0.moves == 0


def test_foundation_cards_count_every_card_on_the_foundations():
    game = make_game(
        "gilbert",
        {"foundation/0": "AC 2C", "foundation/6": "KH", "tableau/0": "3C", "tableau/1": "4D"},
    )
    assert game.foundation_cards == 3
    up, diff = game.apply(move("tableau/0", "foundation/0"))
    assert up.foundation_cards == diff.foundation_cards == 4
    down, diff = up.apply(move("foundation/0", "tableau/1"))
    assert down.foundation_cards == diff.foundation_cards == 3


def test_foundation_cards_count_the_starting_cards():
    game = Game.deal("caprice", 1)
    assert game.foundation_cards == 8
    assert Game.deal("gilbert", 1).foundation_cards == 0


# --- snapshots (the engine's own; RULES.md: old logs must still replay) -----------------


def _played(variant_id: str, seed: int, n: int) -> Game:
    game = Game.deal(variant_id, seed)
    for i in range(n):
        moves = game.legal_moves()
        game = accepted(game, moves[i % len(moves)])
    return game


@pytest.mark.parametrize("variant_id", ["gilbert", "shamrocks", "gate", "caprice"])
def test_a_snapshot_restores_the_same_game(variant_id):
    game = accepted(_played(variant_id, 42, 6), UNDO)
    restored = through_snapshot(game)
    assert restored.piles == game.piles
    assert (restored.status, restored.moves, restored.foundation_cards) == (
        game.status,
        game.moves,
        game.foundation_cards,
    )
    assert legal_commands(restored) == legal_commands(game)
    assert restored.effective_commands() == game.effective_commands()


@pytest.mark.parametrize("variant_id", ["gilbert", "shamrocks", "gate", "caprice"])
def test_undo_reaches_back_past_a_snapshot(variant_id):
    game = _played(variant_id, 7, 5)
    restored = through_snapshot(game)
    for _ in range(5):
        game, restored = accepted(game, UNDO), accepted(restored, UNDO)
        assert restored.piles == game.piles
    assert restored.piles == Game.deal(variant_id, 7).piles
    refused(restored, UNDO, "nothing_to_undo")


def test_the_next_snapshot_of_a_restored_game_replays_nothing(monkeypatch):
    # The service writes a snapshot every few commands, often of a game it has just loaded
    # from the previous one: the commands in effect come from that snapshot, not from a
    # replay of the whole log (which undo alone needs, and which takes seconds in a long
    # Gilbert game of draws).
    game = _played("gilbert", 42, 6)
    restored = through_snapshot(game)

    def deal(self, seed):  # a replay starts from the deal: rebuilding the undo chain does
        raise AssertionError("the log was replayed from the deal")

    monkeypatch.setattr(type(restored.variant), "deal", deal)
    for _ in range(2):
        game, restored = accepted(game, DRAW), accepted(restored, DRAW)
        assert restored.snapshot() == game.snapshot()


def test_a_snapshot_keeps_a_final_status():
    resigned = accepted(_played("gate", 3, 3), RESIGN)
    restored = through_snapshot(resigned)
    assert restored.status is Status.RESIGNED
    refused(restored, UNDO, "game_over")
