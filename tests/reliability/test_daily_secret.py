"""Issue 11, point 6: the daily challenges have a secret of their own.

Rotating the token secret leaves every day's deal where it was; the daily seeds
follow the daily secret alone, which, unset, is generated once into the data
folder (0600) like the token secret and kept across restarts.
"""

from __future__ import annotations

import asyncio
import dataclasses
import stat
from datetime import UTC, date, datetime
from pathlib import Path

import aiohttp

from service.domain.daily import Seeds
from tests.fakes import FakeClock
from tests.live import settings_for_test
from tests.service.helpers import running_app

DAY = date(2026, 12, 1)
NOW = datetime(2026, 12, 1, 9, tzinfo=UTC)
AFTER = datetime(2026, 12, 2, 0, 0, 5, tzinfo=UTC)  # the day is over: its seeds are shown
VARIANTS = ("gilbert", "shamrocks", "gate", "caprice")


async def past_seeds(base: str, clock: FakeClock) -> list[int]:
    """The seeds of DAY's challenges: once the service has chosen them, and the day is over."""
    async with aiohttp.ClientSession() as session:
        for _ in range(1200):  # 503 while the service chooses them (seconds here)
            async with session.get(base + "/v1/daily", params={"date": DAY.isoformat()}) as r:
                if r.status == 200:
                    break
                assert r.status == 503, r.status
            await asyncio.sleep(0.5)
        clock.set(AFTER)
        async with session.get(base + "/v1/daily", params={"date": DAY.isoformat()}) as r:
            assert r.status == 200
            return [c["seed"] for c in (await r.json())["challenges"]]


def candidates(secret: bytes) -> list[set[int]]:
    """Per variant, the first candidates of DAY's secret sequence (the deal is one of them)."""
    seeds = Seeds(secret)
    return [{seeds.seed(DAY, v, k) for k in range(200)} for v in VARIANTS]


async def test_daily_seeds_follow_the_daily_secret_not_the_token_secret(
    redis_url: str, tmp_path: Path
) -> None:
    clock = FakeClock(NOW)
    first = settings_for_test(redis_url, tmp_path, token_secret="token-secret-one-0123456789",
                              daily_secret="the-daily-secret-0123456789")
    rotated = dataclasses.replace(first, token_secret="token-secret-two-0123456789")
    async with running_app(first, clock) as (base, _):
        before = await past_seeds(base, clock)
    async with running_app(rotated, clock) as (base, _):
        assert await past_seeds(base, clock) == before  # the token secret rotated: no deal moved
    options_per_variant = candidates(b"the-daily-secret-0123456789")
    assert all(seed in options for seed, options in zip(before, options_per_variant, strict=True))
    other = dataclasses.replace(first, daily_secret="another-daily-secret-0123456789")
    async with running_app(other, clock) as (base, _):
        # The chosen candidates are kept (k, not the seed): another secret deals other deals.
        assert await past_seeds(base, clock) != before


async def test_an_unset_daily_secret_is_generated_once_into_the_data_folder(
    redis_url: str, tmp_path: Path
) -> None:
    clock = FakeClock(NOW)
    settings = dataclasses.replace(
        settings_for_test(redis_url, tmp_path / "data"), daily_secret=None
    )
    async with running_app(settings, clock) as (base, _):
        first = await past_seeds(base, clock)
    path = tmp_path / "data" / "daily_secret"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    secret = path.read_text().strip()
    assert len(secret) >= 32 and secret != settings.token_secret
    async with running_app(settings, clock) as (base, _):
        assert await past_seeds(base, clock) == first  # kept across restarts
    options_per_variant = candidates(secret.encode())
    assert all(seed in options for seed, options in zip(first, options_per_variant, strict=True))
