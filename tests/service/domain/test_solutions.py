"""A deal's solution (service/domain/solutions.py, PROTOCOL.md): ``GET /v1/games/{id}/solution``
of a game that is over gives the solver's line from seq 0, computed once per deal and
kept. Every line the service returns is checked the way a client would use it: sent as
commands, over REST, to a NEW game with the same seed, which it must win. Whoever may
read the game may read its solution, and no one before the game is over.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import msgspec
import pytest

from protocol.solver import Solution
from service.app import Context
from tests.live import settings_for_test
from tests.service.helpers import CONFIGS, Api, running_app, wait_for, wait_for_file

# Deals whose solutions the tests replay: fixed, so a run never depends on a drawn deal.
SEEDS = {"gilbert": 6, "shamrocks": 4, "gate": 13, "caprice": 7}


@pytest.fixture
async def service(redis_url: str, tmp_path: Path) -> AsyncIterator[tuple[Api, Context]]:
    settings = settings_for_test(redis_url, tmp_path, snapshot_every=1)
    async with running_app(settings) as (base, ctx), aiohttp.ClientSession() as session:
        yield Api(session, base), ctx


async def replay_wins(api: Api, token: str, variant: str, options: dict[str, Any] | None, seed: int,
                      commands: list[dict[str, Any]]) -> None:
    """Send ``commands`` to a new game of the same deal: each accepted, the last one winning."""
    game = (await api.create(token, variant, seed, options))["game_id"]
    status = "playing"
    for i, command in enumerate(commands):
        assert status == "playing", f"{variant} {seed}: the game was {status} before command {i}"
        reply = await api.command(token, game, command, expected_seq=i, expect=None)
        assert reply.status == 200, (variant, seed, i, command, reply.body)
        status = reply.body["diff"]["status"]
    assert status == "won", (
        f"{variant} {seed}: the solution's {len(commands)} commands end {status}"
    )


async def solution(api: Api, token: str | None, game: str) -> Any:
    """GET the solution as a client does: after a 503 (the pool busy, on a shared machine),
    wait what Retry-After says and ask again."""
    for _ in range(10):
        reply = await api.request("GET", f"/v1/games/{game}/solution", token)
        if reply.status != 503:
            assert reply.status == 200, reply.raw
            return reply.body
        await asyncio.sleep(int(reply.headers["Retry-After"]))
    raise AssertionError("the solver stayed busy for ten tries")


@pytest.mark.parametrize(("variant", "options"), CONFIGS)
async def test_the_solution_of_a_resigned_game_wins_a_new_game_with_the_same_seed(
        service: tuple[Api, Context], variant: str, options: dict[str, Any]) -> None:
    api, _ = service
    _, token = await api.player()
    seed = SEEDS[variant]
    game = (await api.create(token, variant, seed, options or None))["game_id"]
    await api.command(token, game, {"type": "resign"})
    body = await solution(api, token, game)
    answer = msgspec.convert(body, Solution)
    assert set(body) == {"result", "commands", "nodes", "elapsed_ms"}
    assert answer.result == "won", body
    await replay_wins(api, token, variant, options or None, seed, body["commands"])


async def test_the_solution_of_a_won_game_wins_too_and_is_kept(
    service: tuple[Api, Context],
) -> None:
    api, ctx = service
    _, token = await api.player()
    seed = SEEDS["gate"]
    first = (await api.create(token, "gate", seed))["game_id"]
    await api.command(token, first, {"type": "resign"})
    line = await solution(api, token, first)
    won = (await api.create(token, "gate", seed))["game_id"]
    for command in line["commands"]:
        await api.command(token, won, command)
    assert (await api.state(won, token))["status"] == "won"
    again = await solution(api, token, won)
    assert again == line  # one search per deal: the kept answer
    kept = await ctx.redis.execute("GET", ctx.solutions.key("gate", {}, seed))
    assert json.loads(kept) == line
    await replay_wins(api, token, "gate", None, seed, again["commands"])


async def test_no_solution_before_the_game_is_over(service: tuple[Api, Context]) -> None:
    api, _ = service
    _, token = await api.player()
    game = (await api.create(token, "gilbert", 5))["game_id"]
    err = (await api.request("GET", f"/v1/games/{game}/solution", token, 409)).error
    assert err["code"] == "conflict" and "playing" in err["message"]
    await api.command(token, game, {"type": "draw"})
    assert (await api.request("GET", f"/v1/games/{game}/solution", token, 409)).error[
        "code"
    ] == "conflict"


async def test_a_solution_is_visible_to_whoever_may_read_the_game(
    service: tuple[Api, Context],
) -> None:
    api, _ = service
    _, owner = await api.player("ann")
    _, other = await api.player("bob")
    private = (await api.create(owner, "gate", SEEDS["gate"]))["game_id"]
    public = (await api.create(owner, "gate", SEEDS["gate"], public=True))["game_id"]
    for game in (private, public):
        await api.command(owner, game, {"type": "resign"})
    assert (await api.request("GET", f"/v1/games/{private}/solution", other, 404)).error[
        "code"
    ] == "not_found"
    await api.request("GET", f"/v1/games/{private}/solution", None, 404)
    await solution(api, other, public)
    await solution(api, None, public)


async def test_a_kept_solution_needs_no_search_whoever_plays_the_deal_however_written(
        redis_url: str, tmp_path: Path) -> None:
    """A solution is kept by the deal (variant, options as the variant completes them,
    seed): another player's game of it, its options written out at their defaults, gets
    the kept answer at once, even while the solver is too busy for any new search."""
    settings = settings_for_test(redis_url, tmp_path, solver_workers=1, solver_queue=0,
                                 daily_solve_s=0.5)
    async with running_app(settings) as (base, ctx), aiohttp.ClientSession() as session:
        api = Api(session, base)
        await ctx.daily.deals.stop()
        await wait_for(lambda: ctx.pool.pending == 0, 60, "the daily chooser's last search")
        _, ann = await api.player("ann")
        _, bob = await api.player("bob")
        seed = SEEDS["gate"]
        first = (await api.create(ann, "gate", seed))["game_id"]
        spelled_out = (await api.create(bob, "gate", seed, {"single_card_moves": False}))[
            "game_id"]
        another_deal = (await api.create(bob, "gate", seed + 1))["game_id"]
        for token, game in ((ann, first), (bob, spelled_out), (bob, another_deal)):
            await api.command(token, game, {"type": "resign"})
        kept = await solution(api, ann, first)
        assert kept["result"] == "won"
        release = tmp_path / "release"
        blocker = ctx.pool.submit(wait_for_file, str(release), what="a test's blocker", retry_s=1)
        try:
            busy = await api.request("GET", f"/v1/games/{another_deal}/solution", bob, 503)
            assert "busy" in busy.error["message"]  # a deal not searched before waits...
            again = await api.request("GET", f"/v1/games/{spelled_out}/solution", bob, 200)
            assert again.body == kept  # ... the kept one does not
        finally:
            release.touch()
            await blocker
