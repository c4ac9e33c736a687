"""Solutions and hints through the running service (real Redis, real worker processes).

Every solution the service returns is checked the way a client would use it:
sent as commands, over REST, to a NEW game with the same seed, which it must win.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import msgspec
import pytest

from protocol.solver import Hint, Solution
from service.app import Context
from service.engine import Game, Status
from service.errors import ApiError
from service.store import keys
from tests.commands import from_json, to_json
from tests.live import alive, settings_for_test, wait_until_dead
from tests.service.helpers import CONFIGS, Api, running_app, wait_for

# Deals whose solutions the tests replay: fixed, so a run never depends on a drawn deal.
SEEDS = {"gilbert": 6, "shamrocks": 4, "gate": 13, "caprice": 7}
ENGINE_DATA = Path(__file__).parents[1] / "engine" / "data"


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


# --- solutions ------------------------------------------------------------------------------


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


# --- hints ------------------------------------------------------------------------------------


async def hint(api: Api, token: str | None, game: str, expect: int = 200) -> Any:
    return (await api.request("POST", f"/v1/games/{game}/hint", token, expect)).body


async def test_a_hint_suggests_a_legal_command_and_is_counted_in_stats(
    service: tuple[Api, Context],
) -> None:
    api, _ = service
    _, token = await api.player()
    game = (await api.create(token, "gilbert", 21))["game_id"]
    body = await hint(api, token, game)
    msgspec.convert(body, Hint)
    assert set(body) == {"seq", "command", "samples", "wins"}
    assert body["seq"] == 0 and body["samples"] > 0 and 0 <= body["wins"] <= body["samples"]
    if body["command"] is not None:
        legal = (await api.moves(game, token))["moves"]
        assert body["command"] in legal + [{"type": "draw"}], body
    state = await api.state(game, token)
    assert state["stats"]["hints"] == 1
    await hint(api, token, game)
    reply = await api.command(token, game, {"type": "draw"})
    assert reply.body["diff"]["stats"]["hints"] == 2
    assert (await api.state(game, token))["stats"]["hints"] == 2


async def test_a_hint_does_not_depend_on_where_the_face_down_cards_are(
        service: tuple[Api, Context]) -> None:
    """Two games that differ only in their face-down cards, at the same visible position,
    get the same hint. The second game's face-down stock is reordered in the store."""
    api, ctx = service
    _, token = await api.player()
    a = (await api.create(token, "gilbert", 31))["game_id"]
    b = (await api.create(token, "gilbert", 31))["game_id"]
    for game in (a, b):  # one command each: a snapshot (snapshot_every=1) holds every pile
        first = (await api.moves(game, token))["moves"][0]
        await api.command(token, game, first)
    snap_key = keys.game_snapshot(b)
    data = json.loads(await ctx.redis.execute("HGET", snap_key, "data"))
    stock_down = data["piles"]["stock"][0]
    assert len(stock_down) >= 2
    data["piles"]["stock"][0] = list(reversed(stock_down))
    await ctx.redis.execute("HSET", snap_key, "data", json.dumps(data))
    state_a, state_b = await api.state(a, token), await api.state(b, token)
    assert state_a["piles"] == state_b["piles"]  # the same visible position
    hint_a, hint_b = await hint(api, token, a), await hint(api, token, b)
    assert hint_a == hint_b
    # and the hidden cards really differ: the next stock card dealt is another one
    da = (await api.command(token, a, {"type": "draw"})).body["diff"]
    db = (await api.command(token, b, {"type": "draw"})).body["diff"]
    assert da["ops"] != db["ops"]


async def test_only_the_owner_may_ask_for_a_hint(service: tuple[Api, Context]) -> None:
    api, _ = service
    _, owner = await api.player("ann")
    _, other = await api.player("bob")
    game = (await api.create(owner, "gate", 3, public=True))["game_id"]
    assert (await api.request("POST", f"/v1/games/{game}/hint", None, 401)).error[
        "code"
    ] == "unauthorized"
    assert (await api.request("POST", f"/v1/games/{game}/hint", other, 403)).error[
        "code"
    ] == "forbidden"
    assert (await api.state(game))["stats"]["hints"] == 0


async def test_a_hint_takes_no_body_and_an_empty_object_like_any_json_client_sends_it(
        service: tuple[Api, Context]) -> None:
    """No body, or an empty JSON object however it is spaced (as a daily attempt takes it);
    a field is refused and named, as every other body's unknown field is."""
    api, _ = service
    _, token = await api.player()
    game = (await api.create(token, "gate", 3))["game_id"]
    json_type = {"Content-Type": "application/json"}
    for body in (b"", b"{}", b"{ }", b"{\n}\n"):
        await api.request("POST", f"/v1/games/{game}/hint", token, 200, data=body,
                          headers=json_type)
    err = (await api.request("POST", f"/v1/games/{game}/hint", token, 400,
                             json={"seq": 0})).error
    assert err["code"] == "bad_request" and err["details"]["field"] == "seq", err
    for body in (b"null", b"[]", b"not json"):
        await api.request("POST", f"/v1/games/{game}/hint", token, 400, data=body,
                          headers=json_type)
    assert (await api.state(game, token))["stats"]["hints"] == 4


def lost_gilbert_line() -> tuple[int, list[dict[str, Any]]]:
    """A deal and the commands in effect of a Gilbert game of it that is lost, with
    face-down cards still on the tableau: from the engine's pinned perft games."""
    games = json.loads((ENGINE_DATA / "perft_gilbert.json").read_text())["games"]
    record = next(g for g in games if g["seed"] == 52 and g["policy"] == "random")
    game = Game.deal("gilbert", record["seed"])
    for command in record["commands"]:
        game = game.apply(from_json(command))[0]
        if game.status is Status.LOST:
            return record["seed"], [to_json(c) for c in game.effective_commands()]
    raise AssertionError("the pinned game is never lost")


async def test_a_hint_in_a_lost_game_suggests_nothing(service: tuple[Api, Context]) -> None:
    """A lost game accepts only undo and resign, which a hint never suggests: no move or
    draw is legal, so the hint is null (a draw would be refused: "the game is lost")."""
    api, _ = service
    _, token = await api.player()
    seed, line = lost_gilbert_line()
    game = (await api.create(token, "gilbert", seed))["game_id"]
    for command in line:
        await api.command(token, game, command)
    state = await api.state(game, token)
    assert state["status"] == "lost" and state["piles"]["tableau/6"]["down"] > 0
    assert (await api.moves(game, token))["moves"] == []
    body = await hint(api, token, game)
    assert body == {"seq": len(line), "command": None, "samples": 0, "wins": 0}
    assert (await api.state(game, token))["stats"]["hints"] == 1


async def test_no_hint_for_a_finished_game(service: tuple[Api, Context]) -> None:
    api, _ = service
    _, token = await api.player()
    game = (await api.create(token, "gate", 3))["game_id"]
    await api.command(token, game, {"type": "resign"})
    err = (await api.request("POST", f"/v1/games/{game}/hint", token, 409)).error
    assert err["code"] == "conflict" and "resigned" in err["message"]


async def test_a_hint_counts_against_the_rate_limit(redis_url: str, tmp_path: Path) -> None:
    settings = settings_for_test(redis_url, tmp_path, rate_limit_per_s=0.001, rate_limit_burst=3)
    async with running_app(settings) as (base, _), aiohttp.ClientSession() as session:
        api = Api(session, base)
        _, token = await api.player()  # an address's request, not the player's
        game = (await api.create(token, "gate", 3))["game_id"]  # 1
        await hint(api, token, game)  # 2
        await hint(api, token, game)  # 3
        reply = await api.request("POST", f"/v1/games/{game}/hint", token, 429)
        assert reply.error["code"] == "rate_limited" and reply.headers["Retry-After"]
        assert reply.error["details"]["limit"] == "rate_limit_per_s"  # the setting's name
        assert (await api.state(game, token))["stats"]["hints"] == 2


async def test_a_strangers_hints_count_against_the_rate_limit_too(
        redis_url: str, tmp_path: Path) -> None:
    """A hint refused to a stranger (403 on a public game) is limited like a refused
    command: each one loads the game, and a flood of them must not go unbounded."""
    settings = settings_for_test(redis_url, tmp_path, rate_limit_per_s=0.001, rate_limit_burst=3)
    async with running_app(settings) as (base, _), aiohttp.ClientSession() as session:
        api = Api(session, base)
        _, owner = await api.player("ann")
        _, stranger = await api.player("bob")
        game = (await api.create(owner, "gate", 3, public=True))["game_id"]
        statuses = [(await api.request("POST", f"/v1/games/{game}/hint", stranger)).status
                    for _ in range(5)]
        assert statuses == [403, 403, 403, 429, 429], statuses


def wait_for_file(path: str) -> None:
    """A job that holds a worker until ``path`` exists (runs in a worker process)."""
    deadline = time.monotonic() + 120
    while not Path(path).exists() and time.monotonic() < deadline:
        time.sleep(0.02)


async def test_a_busy_solver_answers_503_with_retry_after(redis_url: str, tmp_path: Path) -> None:
    settings = settings_for_test(
        redis_url, tmp_path, solver_workers=1, solver_queue=0, daily_solve_s=0.5
    )
    async with running_app(settings) as (base, ctx), aiohttp.ClientSession() as session:
        api = Api(session, base)
        await ctx.daily.deals.stop()
        await wait_for(lambda: ctx.pool.pending == 0, 60, "the daily chooser's last search")
        _, token = await api.player()
        game = (await api.create(token, "caprice", 17))["game_id"]
        resigned = (await api.create(token, "caprice", 18))["game_id"]
        await api.command(token, resigned, {"type": "resign"})
        release = tmp_path / "release"
        blocker = ctx.pool.submit(wait_for_file, str(release), what="a test's blocker", retry_s=1)
        try:
            for path, method in (
                (f"/v1/games/{game}/hint", "POST"),
                (f"/v1/games/{resigned}/solution", "GET"),
            ):
                reply = await api.request(method, path, token, 503)
                assert reply.error["code"] == "unavailable" and "busy" in reply.error["message"]
                assert int(reply.headers["Retry-After"]) >= 1
            # A refused hint is not counted.
            assert (await api.state(game, token))["stats"]["hints"] == 0
            release.touch()
            await blocker
            await wait_for(lambda: ctx.pool.pending == 0, 60, "the pool to drain")
            await hint(api, token, game)  # room again
        finally:
            release.touch()


async def test_the_pool_runs_jobs_in_other_processes(tmp_path: Path) -> None:
    import os

    from service.solving import SolverPool

    pool = SolverPool(1, 0)
    try:
        assert await pool.run(os.getpid, what="a pid", wait_s=60) != os.getpid()
        release = tmp_path / "release"
        first = pool.submit(wait_for_file, str(release), what="a blocker", retry_s=2)
        with pytest.raises(Exception) as refused:
            pool.submit(os.getpid, what="a second job", retry_s=2)
        assert getattr(refused.value, "status", None) == 503
        assert refused.value.headers == {"Retry-After": "2"}  # type: ignore[attr-defined]
        release.touch()
        await first
    finally:
        await pool.aclose()



POOL_CHILD = """
import asyncio, sys, time
from service.solving import SolverPool

async def main():
    pool = SolverPool(2, 0)
    jobs = [pool.submit(time.sleep, 600, what="a long search", retry_s=1) for _ in range(2)]
    while len(pool.pids()) < 2:
        await asyncio.sleep(0.05)
    print(*pool.pids(), flush=True)
    await asyncio.gather(*jobs)

asyncio.run(main())
"""


def test_the_workers_die_with_a_killed_service() -> None:
    # SIGKILL runs no cleanup: without the kernel's help the workers would search on.
    root = Path(__file__).parents[2]
    child = subprocess.Popen([sys.executable, "-c", POOL_CHILD], stdout=subprocess.PIPE, cwd=root,
                             env={**os.environ, "PYTHONPATH": str(root)})
    try:
        assert child.stdout is not None
        workers = [int(pid) for pid in child.stdout.readline().split()]
        assert len(workers) == 2 and all(alive(pid) for pid in workers)
    finally:
        child.kill()
        child.wait()
        if child.stdout is not None:
            child.stdout.close()
    survivors = [pid for pid in workers if not wait_until_dead(pid)]
    for pid in survivors:  # clean up before failing
        os.kill(pid, signal.SIGKILL)
    assert not survivors, f"solver workers {survivors} outlived their killed service"


async def test_background_searches_run_in_their_own_process_at_the_idle_priority(
        tmp_path: Path) -> None:
    from service.solving import SolverPool

    pool = SolverPool(1, 0)
    release = tmp_path / "release"
    try:
        # Three daily-deal searches at once: one runs, the others wait for it.
        daily = [asyncio.ensure_future(pool.background(wait_for_file, str(release), what="a deal"))
                 for _ in range(3)]
        background = await wait_for(lambda: pool.pids(), 60, "the background process")
        await wait_for(lambda: os.sched_getscheduler(background[0]) == os.SCHED_IDLE, 60,
                       "the background process at the idle priority")
        # A request is answered meanwhile, by the request worker (the only one, with no
        # queue: the background work takes none of the requests' room).
        worker = await pool.run(os.getpid, what="a hint", wait_s=60)
        assert worker not in (os.getpid(), background[0])
        assert os.getpriority(os.PRIO_PROCESS, worker) >= os.getpriority(os.PRIO_PROCESS, 0) + 10
        assert pool.pending == 3 and not any(job.done() for job in daily)
        release.touch()
        await asyncio.gather(*daily)
    finally:
        release.touch()
        await pool.aclose()


async def test_searches_leave_a_worker_to_hints_and_have_their_own_room(tmp_path: Path) -> None:
    from service.solving import SolverPool

    pool = SolverPool(2, 2)  # one worker for searches at a time; room for 1 + 2 of them
    release = tmp_path / "release"
    try:
        searches = [pool.submit(wait_for_file, str(release), what="a solution", retry_s=3,
                                search=True) for _ in range(3)]
        with pytest.raises(ApiError) as refused:
            pool.submit(os.getpid, what="a solution", retry_s=3, search=True)
        assert refused.value.status == 503 and refused.value.headers == {"Retry-After": "3"}
        # Hints are answered meanwhile, by the worker searches may not take.
        for _ in range(4):
            assert await pool.run(os.getpid, what="a hint", wait_s=60) != os.getpid()
        assert not any(search.done() for search in searches)
        release.touch()
        await asyncio.gather(*searches)
    finally:
        release.touch()
        await pool.aclose()


async def test_the_pool_starts_no_process_until_used_and_stops_them_when_idle() -> None:
    from service.solving import SolverPool

    pool = SolverPool(2, 0, idle_s=0.5)
    try:
        assert pool.pids() == []
        worker = await pool.run(os.getpid, what="a hint", wait_s=60)
        assert worker in pool.pids()
        await wait_for(lambda: not pool.pids(), 60, "the idle processes to stop")
        assert not alive(worker) or wait_until_dead(worker)
        assert await pool.run(os.getpid, what="a hint", wait_s=60) != worker  # started again
    finally:
        await pool.aclose()


async def test_a_hint_behind_a_busy_pool_is_a_busy_pool_within_the_request_deadline(
        redis_url: str, tmp_path: Path) -> None:
    # The samples' budget is far longer than the request deadline: the answer is still the
    # solver's 503 (retry later), not the deadline's "the store did not answer".
    settings = settings_for_test(redis_url, tmp_path, solver_workers=1, solver_queue=2,
                                 request_deadline_s=3.0, hint_sample_s=60.0)
    async with running_app(settings) as (base, ctx), aiohttp.ClientSession() as session:
        api = Api(session, base)
        await ctx.daily.deals.stop()
        await wait_for(lambda: ctx.pool.pending == 0, 60, "the daily chooser's last search")
        _, token = await api.player()
        game = (await api.create(token, "gate", 13))["game_id"]
        release = tmp_path / "release"
        blocker = ctx.pool.submit(wait_for_file, str(release), what="a test's blocker", retry_s=1)
        try:
            reply = await api.request("POST", f"/v1/games/{game}/hint", token, 503)
            assert "solver is busy" in reply.error["message"], reply.error
            assert int(reply.headers["Retry-After"]) >= 1
        finally:
            release.touch()
            await blocker
