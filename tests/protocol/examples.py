"""One filled-in instance of every message of the protocol, for round-trip tests."""

from __future__ import annotations

from typing import Any

from msgspec.structs import asdict, replace

import protocol as p

STATS = p.Stats(
    moves=13,
    foundation_cards=5,
    started_at="2026-03-01T12:00:00.000Z",
    finished_at=None,
    duration_ms=61_500,
)
NEW_STATS = p.Stats(moves=0, foundation_cards=0, started_at=None, finished_at=None, duration_ms=0)

MOVE = p.Move(from_="tableau/3", to="foundation/1", count=1)
OPS: list[p.Op] = [
    p.Pop(pile="tableau/3", n=1),
    p.Push(pile="foundation/1", cards=["7D"]),
    p.Flip(pile="tableau/3", card="9C"),
    p.Down(pile="stock", n=-3),
]
DIFF = p.Diff(seq=13, command=MOVE, ops=OPS, status="playing", stats=STATS,
              at="2026-03-01T12:00:00.000Z", hash="0123456789abcdef")

STATE = p.GameState(
    game_id="g_1",
    variant="gilbert",
    options={},
    seq=0,
    status="playing",
    piles={
        "stock": p.Pile(down=24, up=[]),
        "waste": p.Pile(down=0, up=[]),
        "tableau/0": p.Pile(down=0, up=["7H"]),
        "tableau/1": p.Pile(down=1, up=["KS"]),
    },
    stats=NEW_STATS,
    public=False,
    seed=None,
    owner="p_1",
)
ERROR = p.error_info("conflict", "the game is at seq 14", {"seq": 14})
ENTRY = p.LeaderboardEntry(
    rank=1,
    player_id="p_1",
    name="Ada",
    game_id="g_1",
    status="won",
    won=True,
    foundation_cards=52,
    moves=120,
    duration_ms=300_000,
    finished_at="2026-03-01T12:05:00Z",
)
UNFINISHED = p.LeaderboardEntry(
    rank=2,
    player_id="p_2",
    name="Bob",
    game_id="g_2",
    status="playing",
    won=False,
    foundation_cards=10,
    moves=40,
    duration_ms=0,
    finished_at=None,
)
VARIANT = p.VariantInfo(
    id="gate",
    name="Gate",
    decks=1,
    piles=[
        p.PileInfo(
            id="stock", kind="stock", suit=None, direction=None, row=0, col=0, spread="none"
        ),
        p.PileInfo(
            id="foundation/0",
            kind="foundation",
            suit="C",
            direction="ascending",
            row=0,
            col=2,
            spread="none",
        ),
        p.PileInfo(
            id="tableau/0", kind="tableau", suit=None, direction=None, row=1, col=0, spread="down"
        ),
    ],
    options={
        "single_card_moves": p.OptionInfo(
            type="boolean", default=False, description="only one card moves at a time"
        )
    },
    rules="Build down in alternating colours.",
)

# Every message, by the type it is decoded as.
MESSAGES: list[tuple[Any, Any]] = [
    (p.Command, MOVE),
    (p.Command, p.Move(from_="waste", to="foundation", count=2)),
    (p.Command, p.Draw()),
    (p.Command, p.Undo()),
    (p.Command, p.Resign()),
    (p.Op, OPS[0]),
    (p.Op, OPS[1]),
    (p.Op, OPS[2]),
    (p.Op, OPS[3]),
    (p.Pile, STATE.piles["tableau/1"]),
    (p.Stats, STATS),
    (p.Diff, DIFF),
    (p.GameState, STATE),
    (p.GameState, replace(STATE, seed=2**53 - 1, public=True, options={"single_card_moves": True})),
    (p.CreatePlayer, p.CreatePlayer(name="Ada")),
    (p.PlayerCreated, p.PlayerCreated(player_id="p_1", name="Ada", token="t.x.y")),
    (p.UpdatePlayer, p.UpdatePlayer(name="Ada L.")),
    (p.Player, p.Player(player_id="p_1", name="Ada L.")),
    (p.Me, p.Me(player_id="p_1", name="Ada L.", created_at="2026-03-01T12:00:00.000Z")),
    (p.Me, p.Me(player_id="p_1", name="Ada L.", created_at=None)),
    (
        p.PlayerGames,
        p.PlayerGames(games=[
            p.GameSummary(game_id="g_2", variant="gate", options={"single_card_moves": False},
                          status="won", seq=120, public=True,
                          created_at="2026-03-01T12:00:00.000Z",
                          updated_at="2026-03-01T12:20:00.000Z"),
            p.GameSummary(game_id="g_1", variant="gilbert", options={}, status="playing", seq=0,
                          public=False, created_at="2026-03-01T00:00:01.000Z",
                          updated_at="2026-03-01T00:00:01.000Z", daily="2026-03-01"),
        ], next_cursor="MTc3MjM2NjQwMDAwMCBnXzEgZ2lsYmVydA"),
    ),
    (p.PlayerGames, p.PlayerGames(games=[], next_cursor=None)),
    (p.CreateGame, p.CreateGame(variant="gilbert")),
    (
        p.CreateGame,
        p.CreateGame(variant="gate", seed=0, options={"single_card_moves": True}, public=True),
    ),
    (p.GameCreated, p.GameCreated(game_id="g_1", state=STATE)),
    (p.CommandRequest, p.CommandRequest(command=p.Draw())),
    (p.CommandRequest, p.CommandRequest(command=MOVE, expected_seq=12, command_id="c-1")),
    (p.CommandResult, p.CommandResult(seq=13, diff=DIFF)),
    (p.LegalMoves, p.LegalMoves(seq=12, moves=[MOVE, p.Draw()], can_undo=True)),
    (p.Events, p.Events(events=[p.Event(seq=1, command=p.Draw(), at="2026-03-01T12:00:00Z",
                                                 hash="0123456789abcdef")])),
    (p.Variants, p.Variants(variants=[VARIANT])),
    (
        p.DailyDay,
        p.DailyDay(
            date="2026-03-01",
            challenges=[
                p.Challenge(
                    variant="gilbert",
                    date="2026-03-01",
                    starts_at="2026-03-01T00:00:00Z",
                    ends_at="2026-03-02T00:00:00Z",
                    seed=None,
                    winnable=True,
                    par=88,
                )
            ],
        ),
    ),
    (
        p.Leaderboard,
        p.Leaderboard(
            entries=[ENTRY],
            next_cursor="c2",
            me=p.MyEntry(**asdict(UNFINISHED), around=[ENTRY, UNFINISHED]),
        ),
    ),
    (p.Leaderboard, p.Leaderboard(entries=[], next_cursor=None, me=None)),
    (p.ErrorBody, p.ErrorBody(error=ERROR)),
    (p.Health, p.Health(status="ok")),
    (p.Solution, p.Solution(result="won", commands=[MOVE, p.Draw()], nodes=1234, elapsed_ms=56)),
    (p.Solution, p.Solution(result="unknown", commands=[], nodes=5_000_000, elapsed_ms=10_000)),
    (p.Hint, p.Hint(seq=13, command=MOVE, samples=12, wins=7)),
    (p.Hint, p.Hint(seq=0, command=None, samples=12, wins=0)),
    (p.ClientMessage, p.Hello()),
    (p.ClientMessage, p.Hello(token="t.x.y", since=12)),
    (p.ClientMessage, p.Hello(token="t.x.y", since=12, moves=True)),
    (p.ClientMessage, p.CommandMessage(command_id="c-1", command=MOVE)),
    (p.ClientMessage, p.CommandMessage(command_id="c-2", expected_seq=13, command=p.Undo())),
    (p.ClientMessage, p.Ping()),
    (p.ServerMessage, p.Snapshot(seq=0, state=STATE)),
    (p.ServerMessage, p.Synced(seq=13)),
    (p.ServerMessage, p.diff_message(DIFF)),
    (p.ServerMessage, p.Ack(command_id="c-1", seq=13)),
    (p.ServerMessage, p.ErrorMessage(error=ERROR)),
    (p.ServerMessage, p.ErrorMessage(command_id="c-1", error=ERROR)),
    (p.ServerMessage, p.Pong()),
    (p.ServerMessage, p.MovesMessage(seq=13, moves=[MOVE, p.Draw()], can_undo=True)),
    (p.ServerMessage, p.MovesMessage(seq=40, moves=[], can_undo=False)),
]
