"""The bot: its policy as a pure function, then whole runs against the live service."""

from __future__ import annotations

from pathlib import Path

import pytest

from clients.python.bot import choose, position, run_bot
from clients.python.notation import format_command
from protocol import Command, Draw, GameState, Move, Pile, Resign, Stats
from tests.live import running_service, settings_for_test

from .conftest import VARIANTS


def _state(**piles: tuple[int, list[str]]) -> GameState:
    return GameState(
        game_id="g_test",
        variant="gilbert",
        options={},
        seq=4,
        status="playing",
        piles={
            name.replace("_", "/"): Pile(down=down, up=up) for name, (down, up) in piles.items()
        },
        stats=Stats(moves=4, foundation_cards=0, started_at=None, finished_at=None, duration_ms=0),
        public=False,
        seed=1,
        owner="p_test",
    )


STATE = _state(
    stock=(10, []),
    waste=(0, ["9H"]),
    foundation_0=(0, ["AC"]),
    foundation_1=(0, []),
    tableau_0=(0, ["8S"]),
    tableau_1=(2, ["5D"]),
    tableau_2=(0, ["7C", "6H"]),
    tableau_3=(0, ["9D"]),
    tableau_4=(0, []),
)
TO_FOUNDATION = Move(from_="tableau/3", to="foundation/1")
FROM_FOUNDATION = Move(from_="foundation/0", to="tableau/4")
FLIPS = Move(from_="tableau/1", to="tableau/0")  # tableau/1 has face-down cards under 5D
EMPTIES = Move(from_="tableau/2", to="tableau/0", count=2)
EMPTIES_ONTO_EMPTY = Move(from_="tableau/2", to="tableau/4", count=2)
PLAIN = Move(from_="tableau/2", to="tableau/3")
FROM_WASTE = Move(from_="waste", to="tableau/0")


@pytest.mark.parametrize(
    ("moves", "best"),
    [
        ([Draw(), PLAIN, FLIPS, TO_FOUNDATION], TO_FOUNDATION),
        ([Draw(), PLAIN, FLIPS], FLIPS),
        ([Draw(), PLAIN, EMPTIES], EMPTIES),
        ([PLAIN, EMPTIES_ONTO_EMPTY, Draw()], Draw()),
        ([PLAIN, FROM_WASTE], FROM_WASTE),
        ([FROM_FOUNDATION, PLAIN], PLAIN),
        ([FROM_FOUNDATION], FROM_FOUNDATION),
    ],
)
def test_the_policy_prefers_foundations_then_reveals_then_draws(
    moves: list[Command], best: Command
) -> None:
    assert choose(moves, STATE) == best


def test_it_never_reverses_its_previous_move() -> None:
    back = Move(from_="tableau/0", to="tableau/1")
    assert choose([back, PLAIN], STATE, previous=FLIPS) == PLAIN
    assert choose([back], STATE, previous=FLIPS) is None


def test_it_never_plays_the_same_command_twice_from_one_position() -> None:
    tried = {(position(STATE), format_command(Draw()))}
    assert choose([Draw(), PLAIN], STATE, tried=tried) == PLAIN
    assert choose([Draw()], STATE, tried=tried) is None  # a draw cycle: the bot resigns


def test_it_never_picks_resign_from_a_list() -> None:
    assert choose([Resign()], STATE) is None


@pytest.mark.parametrize("variant", VARIANTS)
async def test_a_bot_run_plays_games_to_their_end(service_url: str, variant: str) -> None:
    seen: list[str] = []
    summary = await run_bot(
        service_url,
        variant,
        2,
        concurrency=2,
        seed=40,
        max_steps=150,
        on_result=lambda result, _: seen.append(result.game_id),
    )
    assert summary.failed == 0 and summary.errors == 0, summary.failures
    assert summary.games == 2 == summary.wins + summary.losses + summary.resigned
    assert summary.commands >= summary.moves > 0 and summary.commands_per_s > 0
    assert sorted(seen) == sorted(r.game_id for r in summary.results)
    assert {r.seed for r in summary.results} == {40, 41}
    for result in summary.results:
        assert result.commands <= 151  # the step cap, and the resign after it
    assert summary.as_dict()["games"] == 2 and "2 games" in summary.format()


async def test_a_bot_run_reads_its_moves_from_the_socket_not_the_address_read_limit(
        redis_url: str, tmp_path: Path) -> None:
    # Concurrent bots share their address's read limit; the legal moves of each step come
    # over the game's socket, so a run of many steps costs a few reads (a hello each).
    settings = settings_for_test(redis_url, tmp_path, read_rate_per_s=0.1, read_burst=12)
    async with running_service(settings) as url:
        summary = await run_bot(url, "gate", 4, concurrency=4, seed=1, max_steps=60)
    assert summary.failed == 0, summary.failures
    assert summary.games == 4 and summary.commands > 4 * 12


async def test_a_run_whose_players_are_refused_reports_failed_games(service_url: str) -> None:
    """The docstring's promise: a failure is counted, the run goes on and ends with a
    summary, even when no worker can create its player (here: a wrong base URL, 404)."""
    summary = await run_bot(service_url + "/not-the-api", "gilbert", 3, concurrency=2)
    assert (summary.games, summary.failed) == (0, 3)
    assert any("no player" in f and "not_found" in f for f in summary.failures)
