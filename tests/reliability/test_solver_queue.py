"""The solver's queue under attack (issue 23, point 1): solutions of deals the solver cannot
decide, asked from several addresses, must not starve anyone's hints.

The deals are Gilbert seeds that benchmarks/data/winnability-gilbert.csv lists as unknown
(no line found within the default budget); the searches here get a budget of
``SEARCH_S`` seconds and no node limit, so each runs for all of it and the test stays
bounded. Every client is its own loopback address (127.0.0.x), as separate clients are.
"""

from __future__ import annotations

import asyncio
import csv
from pathlib import Path
from typing import Any

import aiohttp

from service.settings import Settings
from tests.live import settings_for_test
from tests.service.helpers import Api, running_app, wait_for

ROOT = Path(__file__).resolve().parents[2]
SEARCH_S = 2.0
LONG_SEARCH_S = 15.0


def unknown_gilbert_seeds(n: int) -> list[int]:
    with open(ROOT / "benchmarks" / "data" / "winnability-gilbert.csv") as f:
        seeds = [int(row["seed"]) for row in csv.DictReader(f) if row["result"] == "unknown"]
    assert len(seeds) >= n
    return seeds[:n]


def client(address: str) -> aiohttp.ClientSession:
    """A client whose requests come from ``address`` (a loopback address of its own)."""
    return aiohttp.ClientSession(connector=aiohttp.TCPConnector(local_addr=(address, 0)))


def settings(redis_url: str, tmp_path: Path, **overrides: Any) -> Settings:
    """The default pool and search limits; searches of ``SEARCH_S`` with no node limit."""
    return settings_for_test(redis_url, tmp_path, **{
        "solver_workers": 2, "solver_queue": 8, "solver_searches_per_address": 2,
        "solver_searches_per_player": 2, "solution_solve_s": SEARCH_S,
        "solution_solve_nodes": 10**12, "request_deadline_s": 5.0, **overrides})


async def resigned_unknown_deals(api: Api, token: str, seeds: list[int]) -> list[str]:
    """Public Gilbert games of ``seeds``, resigned: their solutions may be asked for."""
    games = []
    for seed in seeds:
        game = (await api.create(token, "gilbert", seed, public=True))["game_id"]
        await api.command(token, game, {"type": "resign"})
        games.append(game)
    return games


async def test_solutions_of_undecidable_deals_from_many_addresses_leave_every_hint_answered(
        redis_url: str, tmp_path: Path) -> None:
    attackers = [f"127.0.0.{i}" for i in range(2, 6)]  # 4 addresses, 2 searches each
    players = [f"127.0.0.{i}" for i in range(10, 18)]  # 8 honest players, one address each
    seeds = iter(unknown_gilbert_seeds(2 * len(attackers)))
    async with running_app(settings(redis_url, tmp_path)) as (base, ctx):
        await ctx.daily.deals.stop()  # its searches run in a process of their own anyway
        sessions = {address: client(address) for address in attackers + players}
        try:
            apis = {address: Api(session, base) for address, session in sessions.items()}
            asked = []
            for address in attackers:
                api = apis[address]
                _, token = await api.player("mallory")
                games = await resigned_unknown_deals(api, token, [next(seeds), next(seeds)])
                asked += [api.request("GET", f"/v1/games/{game}/solution", token)
                          for game in games]
            hinted = []
            for address in players:
                api = apis[address]
                _, token = await api.player("ann")
                game = (await api.create(token, "gate", 13))["game_id"]
                hinted.append((api, token, game))
            # The searches first: all eight running or waiting in the pool...
            attack = [asyncio.ensure_future(request) for request in asked]
            await wait_for(lambda: ctx.pool.pending >= len(asked), 60, "the attack's searches")
            # ...then every player asks for a hint at once.
            hints = await asyncio.gather(*(api.request("POST", f"/v1/games/{game}/hint", token)
                                           for api, token, game in hinted))
            assert [h.status for h in hints] == [200] * len(players), [
                (h.status, h.error.get("message")) for h in hints if h.status != 200]
            assert all(h.body["command"] is not None for h in hints)
            # The attack itself got its searches (answered, or "still being searched").
            solutions = await asyncio.gather(*attack)
            assert {s.status for s in solutions} <= {200, 503}, [s.status for s in solutions]
        finally:
            for session in sessions.values():
                await session.close()


async def test_a_player_has_at_most_its_searches_at_once_whatever_its_addresses(
        redis_url: str, tmp_path: Path) -> None:
    # Searches long enough to be running still when the third is asked for.
    async with running_app(settings(redis_url, tmp_path, solver_searches_per_address=100,
                                    solution_solve_s=LONG_SEARCH_S)) as (base, ctx):
        await ctx.daily.deals.stop()
        addresses = [f"127.0.0.{i}" for i in range(20, 23)]
        sessions = [client(address) for address in addresses]
        try:
            apis = [Api(session, base) for session in sessions]
            _, token = await apis[0].player("mallory")
            games = await resigned_unknown_deals(apis[0], token, unknown_gilbert_seeds(3))
            # One search each from three addresses, as the player: the third is one too many.
            first = [asyncio.ensure_future(api.request("GET", f"/v1/games/{game}/solution",
                                                       token))
                     for api, game in zip(apis[:2], games[:2], strict=True)]
            await wait_for(lambda: ctx.pool.pending >= 2, 60, "the player's two searches")
            refused = await apis[2].request("GET", f"/v1/games/{games[2]}/solution", token, 429)
            assert refused.error["details"]["limit"] == "solver_searches_per_player"
            assert int(refused.headers["Retry-After"]) >= 1
            assert "at most 2" in refused.error["message"]
            # Anyone else's search of that deal goes ahead (the limit is the player's).
            others = await apis[2].request("GET", f"/v1/games/{games[2]}/solution")
            assert others.status in (200, 503), others.error
            await asyncio.gather(*first)
        finally:
            for session in sessions:
                await session.close()


async def test_a_deal_searched_before_is_answered_from_the_store_without_a_search(
        redis_url: str, tmp_path: Path) -> None:
    # Searches long enough that the second is running still when the deal is asked again.
    async with running_app(settings(redis_url, tmp_path, solver_searches_per_address=1,
                                    solution_solve_s=LONG_SEARCH_S)) as (
            base, ctx), client("127.0.0.30") as session:
        await ctx.daily.deals.stop()
        api = Api(session, base)
        _, token = await api.player("ann")
        seed, other = unknown_gilbert_seeds(2)
        first, again = await resigned_unknown_deals(api, token, [seed, seed])
        searched = await wait_for(
            lambda: _answered(api, f"/v1/games/{first}/solution"), 60, "the first search")
        assert searched.body["result"] == "unknown"
        await wait_for(lambda: ctx.pool.pending == 0, 60, "the search to end")
        # The address's one search is taken by another deal: a new search would be 429...
        blocker = (await resigned_unknown_deals(api, token, [other]))[0]
        started = asyncio.ensure_future(api.request("GET", f"/v1/games/{blocker}/solution"))
        await wait_for(lambda: ctx.pool.pending == 1, 60, "the other search")
        # ...but another game of the searched deal is answered from the store.
        kept = await api.request("GET", f"/v1/games/{again}/solution", expect=200)
        assert kept.raw == searched.raw
        assert ctx.pool.pending == 1  # the address's search was running all along
        assert (await started).status == 503  # "still being searched": come back later


async def _answered(api: Api, path: str):  # type: ignore[no-untyped-def]
    reply = await api.request("GET", path)
    assert reply.status in (200, 503), reply.error
    return reply if reply.status == 200 else None


async def test_a_deal_being_searched_by_another_instance_is_not_searched_again(
        redis_url: str, tmp_path: Path) -> None:
    # Two instances on one store (as two workers of one would be): one search of the deal.
    long = settings(redis_url, tmp_path, solution_solve_s=LONG_SEARCH_S)
    async with (running_app(long) as (base, ctx), running_app(long) as (other_base, other),
                client("127.0.0.40") as session):
        for c in (ctx, other):
            await c.daily.deals.stop()
        api = Api(session, base)
        _, token = await api.player("ann")
        game = (await resigned_unknown_deals(api, token, unknown_gilbert_seeds(1)))[0]
        first = asyncio.ensure_future(api.request("GET", f"/v1/games/{game}/solution"))
        await wait_for(lambda: ctx.pool.pending == 1, 60, "the first instance's search")
        again = await Api(session, other_base).request("GET", f"/v1/games/{game}/solution",
                                                       expect=503)
        assert "still being searched" in again.error["message"]
        assert int(again.headers["Retry-After"]) >= 1
        assert other.pool.pending == 0  # the second instance started no search
        assert (await first).status == 503  # the first search goes on past the deadline
