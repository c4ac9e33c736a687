"""Fixtures of the client tests: a real service (on the suite's store) and SDK clients of it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import msgspec
import pytest

from clients.python.rest import EVENTS_PAGE, Client
from protocol import Draw, GameCreated, GameState
from tests.clients.proxy import Proxy
from tests.live import running_service, settings_for_test

VARIANTS = ("gilbert", "shamrocks", "gate", "caprice")


@pytest.fixture
async def service_url(redis_url: str, tmp_path: Path) -> AsyncIterator[str]:
    async with running_service(settings_for_test(redis_url, tmp_path)) as url:
        yield url


@pytest.fixture
async def client(service_url: str) -> AsyncIterator[Client]:
    """A client acting as a new player."""
    async with Client(service_url) as c:
        await c.create_player("tester")
        yield c


@pytest.fixture
async def other(service_url: str) -> AsyncIterator[Client]:
    """A client acting as another player."""
    async with Client(service_url) as c:
        await c.create_player("other")
        yield c


@pytest.fixture
async def proxy(service_url: str) -> AsyncIterator[Proxy]:
    async with Proxy(service_url) as p:
        yield p


@pytest.fixture
async def long_game(client: Client) -> GameCreated:
    """A game with more commands than the service sends in one page of events."""
    game = await client.create_game("gilbert", seed=1)  # draws cycle the stock forever
    async with client.socket(game.game_id, state=game.state) as sock:
        for _ in range(EVENTS_PAGE + 5):
            await sock.send(Draw())
    return game


async def eventually(predicate: Callable[[], bool], what: str, timeout_s: float = 15.0) -> None:
    """Wait until ``predicate()`` holds; fail naming ``what`` if it never does. The
    deadline only bounds a hang: nothing here asserts how long anything takes."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while not predicate():
        if loop.time() > deadline:
            pytest.fail(f"never happened: {what}")
        await asyncio.sleep(0.01)


# The service computes a diff's duration_ms from microsecond times but GET from the
# millisecond times it stored, so the two may differ by 1 ms (reported; see
# test_rest.py::test_diff_stats_equal_get_stats_with_sub_millisecond_times). Set to 0
# once the service is fixed.
DURATION_MS_SLACK = 0


def assert_same_state(local: GameState, server: GameState) -> None:
    """``local`` (rebuilt from diffs) is the state the server has, exactly, but for the
    known duration_ms slack above."""
    slack = abs(local.stats.duration_ms - server.stats.duration_ms)
    assert slack <= DURATION_MS_SLACK, (local.stats, server.stats)
    stats = msgspec.structs.replace(local.stats, duration_ms=server.stats.duration_ms)
    assert msgspec.structs.replace(local, stats=stats) == server
