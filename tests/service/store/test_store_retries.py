"""Issue 13, points 4 to 7, on real servers: retried writes apply once, and the smaller
contract breaks (racing commands without expected_seq, hooks of duplicates, resends on a
closed attempt, a log that does not add up). A paused store's 503 within the request
deadline, and its unknown outcome, are the deadline's: tests/service/domain/test_deadline.py.

Lost replies are made by :class:`tests.lost_replies.LostReplies`, a proxy that
lets a command reach the real server and throws its reply away, as a broken
connection does: redis-py then sends the command again.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from service.domain.errors import to_api_error
from service.domain.games import DailyTags, GameService, Loaded
from service.engine import DRAW, RESIGN
from service.runtime.metrics import Metrics
from service.store import GameMeta, Inconsistent, keys
from service.store.daily import _RESERVE, DailyStore
from service.store.embedded import EmbeddedServer
from service.store.fanout import Hub
from service.store.games import _APPEND, _CREATE, Games
from service.store.meta import DailyTag
from service.store.ratelimit import _GCRA, RateLimiter
from service.store.solver import SolverStore
from tests.fakes import FakeClock
from tests.live import settings_for_test
from tests.lost_replies import LostReplies
from tests.service.helpers import Api, running_app
from tests.stores import Store

META = GameMeta(variant="gilbert", seed=1, owner="p1", rules_version="1",
                created_at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC))


@pytest.fixture
async def tcp_server(server_factory: Callable[..., EmbeddedServer]) -> EmbeddedServer:
    return server_factory("tcp", port=0)


@pytest.fixture
async def lossy(tcp_server: EmbeddedServer) -> AsyncIterator[LostReplies]:
    assert tcp_server.port is not None
    async with LostReplies("127.0.0.1", tcp_server.port) as proxy:
        yield proxy


async def primed(store: Store, *scripts: Any) -> None:
    """Load the scripts, so that the call under test is the EVALSHA the proxy watches."""
    for script in scripts:
        await store.redis.execute("SCRIPT", "LOAD", script.source)


# --- 5: retried writes apply once ------------------------------------------------------

async def test_a_game_creation_whose_reply_was_lost_is_retried_and_succeeds_once(
        lossy: LostReplies, store_factory: Callable[..., Awaitable[Store]]) -> None:
    store = await store_factory(lossy.url)
    await primed(store, _CREATE)
    lossy.lose_next_reply_to(_CREATE.sha.encode())
    await store.games.create("g1", META, ttl_s=3600)  # was GameExists for the game it had just made
    assert lossy.lost == 1
    assert (await store.games.load("g1")).meta == META
    # Another creation of the same id is still refused.
    from service.store import GameExists
    with pytest.raises(GameExists):
        await store.games.create("g1", META, ttl_s=3600)


async def test_a_daily_reservation_whose_reply_was_lost_uses_one_attempt(
        lossy: LostReplies, store_factory: Callable[..., Awaitable[Store]]) -> None:
    store = await store_factory(lossy.url)
    daily = DailyStore(store.redis)
    await primed(store, _RESERVE)
    lossy.lose_next_reply_to(_RESERVE.sha.encode())
    assert await daily.reserve("2026-11-13", "gate", "p1", "g1", 2, 3600) == ("ok", [])
    assert lossy.lost == 1
    assert await daily.attempts("2026-11-13", "gate", "p1") == ["g1"]
    # The player still has their second attempt.
    assert await daily.reserve("2026-11-13", "gate", "p1", "g2", 2, 3600) == ("ok", [])
    assert await daily.reserve("2026-11-13", "gate", "p1", "g3", 2, 3600) == ("used", ["g1", "g2"])


async def test_a_rate_limit_charge_whose_reply_was_lost_is_charged_once(
        lossy: LostReplies, store_factory: Callable[..., Awaitable[Store]]) -> None:
    store = await store_factory(lossy.url)
    await primed(store, _GCRA)
    key = keys.command_limit("p1")
    limiter = RateLimiter(store.redis, FakeClock(datetime.fromtimestamp(1000.0, UTC)))
    lossy.lose_next_reply_to(_GCRA.sha.encode())
    assert (await limiter.allow(key, 1.0, 2)).allowed
    assert lossy.lost == 1
    assert (await limiter.allow(key, 1.0, 2)).allowed  # the second token
    assert not (await limiter.allow(key, 1.0, 2)).allowed


async def test_an_append_whose_reply_was_lost_is_applied_once(
        lossy: LostReplies, store_factory: Callable[..., Awaitable[Store]]) -> None:
    store = await store_factory(lossy.url)
    await store.games.create("g1", META, ttl_s=3600)
    await primed(store, _APPEND)
    lossy.lose_next_reply_to(_APPEND.sha.encode())
    assert await store.games.append("g1", 0, None, b"e1") == 1
    assert lossy.lost == 1
    assert (await store.games.load("g1")).events == [b"e1"]


# --- 4 and 6: a paused store, bounded; the 503 says what it means ----------------------

async def test_retries_against_a_paused_store_do_not_multiply(
        tcp_server: EmbeddedServer, lossy: LostReplies,
        store_factory: Callable[..., Awaitable[Store]]) -> None:
    """redis-py retries a command, the connect() inside it and the health-check PING
    inside that, with the same Retry object, so the attempts multiply. Only the
    outermost retries now: at most one new connection per attempt (with the nested
    retries this call opened 4)."""
    from service.store import StoreUnavailable

    store = await store_factory(lossy.url, redis_retries=2, redis_timeout_s=0.3,
                                redis_autopipeline=False, redis_health_check_s=0.05)
    await store.ping()
    await asyncio.sleep(0.2)  # the pooled connection is due a health-check PING
    assert tcp_server.pid is not None
    before = lossy.connections
    os.kill(tcp_server.pid, signal.SIGSTOP)
    try:
        with pytest.raises(StoreUnavailable):
            await store.games.load("g1")
    finally:
        os.kill(tcp_server.pid, signal.SIGCONT)
    # The first attempt may use the pooled connection; each retry opens one.
    assert lossy.connections - before <= 3, lossy.connections - before
    await store.ping()  # and the client works again


# --- 7: the smaller contract breaks -------------------------------------------------------

@pytest.fixture
async def service_parts(redis_url: str, store_factory: Callable[..., Awaitable[Store]],
                        tmp_path: Path) -> tuple[Games, Any, FakeClock]:
    store = await store_factory(redis_url)
    return (
        store.games,
        settings_for_test(redis_url, tmp_path),
        FakeClock(datetime(2026, 5, 1, 9, tzinfo=UTC)),
    )


def game_service(games: Games, settings: Any, clock: FakeClock, **kwargs: Any) -> GameService:
    return GameService(games, SolverStore(games.redis), settings, clock, Metrics(),
                       Hub(games.redis), **kwargs)


async def test_a_duplicate_of_a_final_command_runs_the_final_hooks_the_first_missed(
        service_parts: tuple[Games, Any, FakeClock]) -> None:
    games, settings, clock = service_parts
    # The first instance applied the command and died before its hooks ran.
    first = game_service(games, settings, clock)
    seen: list[tuple[str, int, str]] = []

    async def hook(loaded: Loaded) -> None:
        seen.append((loaded.game_id, loaded.seq, loaded.game.status.value))

    second = game_service(games, settings, clock, on_final=[hook])
    created = await first.create("p1", "gilbert", 3, None, False)
    seq, _ = await first.command(created.game_id, "p1", RESIGN, None, "c-resign")
    assert seen == []
    again, _ = await second.command(created.game_id, "p1", RESIGN, None, "c-resign")
    assert again == seq == 1
    assert seen == [(created.game_id, 1, "resigned")]
    assert second.cache.get(created.game_id).seq == 1  # remembered, as an applied command is


async def test_a_resend_on_a_closed_attempt_gets_its_first_result_and_a_new_command_403(
        service_parts: tuple[Games, Any, FakeClock]) -> None:
    games, settings, clock = service_parts
    service = game_service(games, settings, clock)
    closes = clock.now() + timedelta(hours=1)
    hidden = closes + timedelta(hours=1)  # from others, still, when the command comes
    tags = DailyTags(DailyTag(closes.date(), "gilbert"), readable_from=hidden, seed_from=hidden,
                     closes_at=closes)
    created = await service.create("p1", "gilbert", 3, None, False, daily=tags)
    seq, event = await service.command(created.game_id, "p1", DRAW, None, "c1")
    clock.set(closes + timedelta(seconds=1))
    assert await service.command(created.game_id, "p1", DRAW, None, "c1") == (
        seq,
        event,
    )
    from service.domain.errors import ApiError
    with pytest.raises(ApiError) as refused:
        await service.command(created.game_id, "p1", DRAW, None, "c2")
    assert refused.value.code == "forbidden"
    with pytest.raises(ApiError) as other:  # another player learns nothing of the owner's commands
        await service.command(created.game_id, "p2", DRAW, None, "c1")
    assert other.value.code == "not_found"


async def test_a_log_that_does_not_add_up_is_refused_loudly(
        redis_url: str, store_factory: Callable[..., Awaitable[Store]],
        caplog: pytest.LogCaptureFixture) -> None:
    store = await store_factory(redis_url)
    await store.games.create("g1", META, ttl_s=3600)
    for i in range(3):
        await store.games.append("g1", i, f"c{i}", b"e%d" % i)
    # Lost its last event, meta still at 3.
    await store.redis.execute("RPOP", keys.game_events("g1"))
    with pytest.raises(Inconsistent) as refused:
        await store.games.load("g1")
    assert "snapshot is at seq 0 and 2 events follow, but it is at seq 3" in str(refused.value)
    assert any("g1" in r.getMessage() and r.levelname == "ERROR" for r in caplog.records)
    err = to_api_error(refused.value)
    assert err is not None and err.status == 500 and "inconsistent" in err.message


async def test_readyz_answers_503_within_its_ping_bound_when_the_store_is_paused(
        tcp_server: EmbeddedServer, tmp_path: Path) -> None:
    """A paused store keeps its connections open and answers nothing: the readiness
    probe (2 s in deploy/) must get the 503 that says so, not wait for the request's
    deadline (5 s) and time out."""
    settings = settings_for_test(tcp_server.url, tmp_path, request_deadline_s=5.0,
                                 redis_timeout_s=10.0)
    async with running_app(settings) as (base, _ctx), aiohttp.ClientSession() as session:
        api = Api(session, base)
        assert (await api.request("GET", "/readyz", expect=200)).body == {"status": "ok"}
        assert tcp_server.pid is not None
        os.kill(tcp_server.pid, signal.SIGSTOP)
        try:
            ready = await api.request("GET", "/readyz", expect=503)
        finally:
            os.kill(tcp_server.pid, signal.SIGCONT)
        assert ready.error["code"] == "unavailable"
        assert "did not answer a PING within 1 s" in ready.error["message"], ready.error
        assert (await api.request("GET", "/readyz", expect=200)).body == {"status": "ok"}
