"""Winnable daily deals: chosen ahead by the solver, once, kept across restarts.

Each test uses a date of its own, so the deals another test chose in the same
store do not answer for it; the clock is a FakeClock on that date.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import aiohttp
import msgspec
import pytest

from protocol.daily import DailyDay
from service.domain.daily.challenge import Seeds
from service.settings import Settings
from service.store.connection import RedisConn
from service.store.solver import SolverStore
from tests.fakes import FakeClock
from tests.live import running_service, settings_for_test
from tests.service.domain.daily.helpers import DAILY_SECRET, Api, chosen_many

VARIANTS = ("gilbert", "shamrocks", "gate", "caprice")


def morning(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, 9, tzinfo=UTC)


def settings(redis_url: str, tmp_path: Path, **overrides: Any) -> Settings:
    return settings_for_test(redis_url, tmp_path, **overrides)


@contextlib.asynccontextmanager
async def service(s: Settings, clock: FakeClock) -> AsyncIterator[Api]:
    async with running_service(s, clock) as base, aiohttp.ClientSession() as session:
        yield Api(session, base)


async def chosen_in_store(redis_url: str, tmp_path: Path, day: date) -> dict[str, Any]:
    redis = RedisConn(settings_for_test(redis_url, tmp_path), redis_url)
    try:
        return await chosen_many(SolverStore(redis), day.isoformat(), VARIANTS)
    finally:
        await redis.aclose()


async def replay(
    api: Api, token: str, variant: str, seed: int, commands: list[dict[str, Any]]
) -> str:
    game = (
        await api.call("POST", "/v1/games", token, 201, json={"variant": variant, "seed": seed})
    )["game_id"]
    status = "playing"
    for command in commands:
        assert status == "playing"
        status = (await api.command(token, game, command))["diff"]["status"]
    return status


async def test_a_days_four_challenges_are_winnable_and_their_solutions_win(
        redis_url: str, tmp_path: Path) -> None:
    day = date(2027, 2, 10)
    clock = FakeClock(morning(day))
    async with service(settings(redis_url, tmp_path), clock) as api:
        body = await api.chosen(day)
        msgspec.convert(body, DailyDay)
        assert [c["variant"] for c in body["challenges"]] == list(VARIANTS)
        for c in body["challenges"]:
            assert c["winnable"] is True and isinstance(c["par"], int) and c["par"] > 0, c
            assert c["seed"] is None
        pars = {c["variant"]: c["par"] for c in body["challenges"]}
        _, token = await api.player("Ann")
        attempt = (await api.attempt(token, day=day, variant="gate"))["game_id"]
        await api.command(token, attempt, {"type": "resign"})
        clock.set(morning(day + timedelta(days=1)))
        past = await api.call("GET", "/v1/daily", params={"date": day.isoformat()})
        chosen = await chosen_in_store(redis_url, tmp_path, day)
        seeds = Seeds(DAILY_SECRET.encode())
        for c in past["challenges"]:
            variant = c["variant"]
            assert c["seed"] == seeds.seed(day, variant, chosen[variant].k)
            game = (await api.call("POST", "/v1/games", token, 201,
                                   json={"variant": variant, "seed": c["seed"]}))["game_id"]
            await api.command(token, game, {"type": "resign"})
            solution = await api.call("GET", f"/v1/games/{game}/solution", token)
            assert solution["result"] == "won" and len(solution["commands"]) == pars[variant], (
                solution
            )
            assert await replay(api, token, variant, c["seed"], solution["commands"]) == "won"
        # the day's attempt, now that the day is over, has the same solution
        gate = await api.call("GET", f"/v1/games/{attempt}/solution", token)
        assert len(gate["commands"]) == pars["gate"]


async def test_while_the_days_deals_are_being_chosen_daily_answers_503(
    redis_url: str, tmp_path: Path
) -> None:
    day = date(2027, 2, 16)
    # A budget of one position proves nothing: the choice never ends while the test looks.
    async with service(
        settings(redis_url, tmp_path, daily_solve_nodes=1), FakeClock(morning(day))
    ) as api:
        _, token = await api.player("Ann")
        for method, path in (
            ("GET", "/v1/daily"),
            ("POST", f"/v1/daily/{day.isoformat()}/gate/attempts"),
        ):
            async with api.session.request(method, api.base + path,
                                           headers={"Authorization": f"Bearer {token}"}) as r:
                body = await r.json()
                assert r.status == 503, body
                assert (
                    body["error"]["code"] == "unavailable"
                    and "being chosen" in body["error"]["message"]
                )
                assert int(r.headers["Retry-After"]) >= 1


async def test_a_restart_keeps_the_chosen_deals(redis_url: str, tmp_path: Path) -> None:
    day = date(2027, 2, 12)
    async with service(settings(redis_url, tmp_path), FakeClock(morning(day))) as api:
        first = await api.chosen(day)
    before = await chosen_in_store(redis_url, tmp_path, day)
    # The next instance could not prove any deal (one position per search): it answers
    # at once only because it reads the kept choice.
    async with service(
        settings(redis_url, tmp_path, daily_solve_nodes=1), FakeClock(morning(day))
    ) as api:
        again = await api.call("GET", "/v1/daily")
    assert again == first
    assert await chosen_in_store(redis_url, tmp_path, day) == before


async def test_two_instances_choose_each_deal_once(redis_url: str, tmp_path: Path,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    day = date(2027, 2, 14)
    caplog.set_level(logging.INFO, logger="service.domain.daily.deals")
    s = settings(redis_url, tmp_path)
    async with service(s, FakeClock(morning(day))) as a, service(s, FakeClock(morning(day))) as b:
        bodies = await asyncio.gather(a.chosen(day), b.chosen(day))
    assert bodies[0] == bodies[1]
    choices = [r.getMessage() for r in caplog.records
               if r.getMessage().startswith("chose the") and day.isoformat() in r.getMessage()]
    assert sorted(m.split()[2] for m in choices) == sorted(VARIANTS), choices
