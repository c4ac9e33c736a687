"""The rate limit: a burst, then one request per interval, held in Redis across instances."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

import aiohttp
import pytest

from service.domain.errors import ApiError
from service.domain.ratelimit import Limiter
from service.store import RateDecision, RateLimiter, keys
from tests.fakes import FakeClock
from tests.live import running_service, settings_for_test
from tests.redis_servers import sync_client
from tests.service.helpers import Api, connect
from tests.stores import Store


def at(seconds: float) -> FakeClock:
    """A clock standing at ``seconds`` past the epoch, for the limiter to count by."""
    return FakeClock(datetime.fromtimestamp(seconds, UTC))


async def test_a_burst_is_allowed_then_requests_are_refused_with_the_wait(store: Store) -> None:
    key = keys.command_limit("p1")
    limiter = RateLimiter(store.redis, at(1000.0))
    decisions = [await limiter.allow(key, 2.0, 5) for _ in range(6)]
    assert decisions[:5] == [RateDecision(True, 0.0)] * 5
    assert decisions[5] == RateDecision(False, 0.5)


async def test_the_bucket_refills_at_the_rate(store: Store) -> None:
    key = keys.command_limit("p1")
    clock = at(50.0)
    limiter = RateLimiter(store.redis, clock)
    for _ in range(3):
        assert (await limiter.allow(key, 1.0, 3)).allowed
    assert await limiter.allow(key, 1.0, 3) == RateDecision(False, 1.0)
    clock.advance(0.25)
    assert await limiter.allow(key, 1.0, 3) == RateDecision(False, 0.75)
    clock.advance(0.75)
    assert (await limiter.allow(key, 1.0, 3)).allowed  # one token back
    assert not (await limiter.allow(key, 1.0, 3)).allowed
    clock.advance(49.0)
    for _ in range(3):  # long idle: the full burst again, no more
        assert (await limiter.allow(key, 1.0, 3)).allowed
    assert not (await limiter.allow(key, 1.0, 3)).allowed


async def test_a_refused_request_does_not_use_up_a_token(store: Store) -> None:
    key = keys.command_limit("p1")
    clock = at(10.0)
    limiter = RateLimiter(store.redis, clock)
    assert (await limiter.allow(key, 1.0, 1)).allowed
    clock.advance(0.5)
    for _ in range(5):
        assert not (await limiter.allow(key, 1.0, 1)).allowed
    clock.advance(0.5)
    assert (await limiter.allow(key, 1.0, 1)).allowed


async def test_the_limit_holds_across_two_instances(
        any_redis_url: str, store_factory: Callable[..., Awaitable[Store]]) -> None:
    one, two = await store_factory(any_redis_url), await store_factory(any_redis_url)
    key = keys.command_limit("p1")
    clock = at(7.0)
    limiters = [RateLimiter(one.redis, clock), RateLimiter(two.redis, clock)]
    allowed = []
    for i in range(10):
        allowed.append((await limiters[i % 2].allow(key, 1.0, 4)).allowed)
    assert allowed == [True] * 4 + [False] * 6


async def test_players_have_separate_limits(store: Store) -> None:
    limiter = RateLimiter(store.redis, at(1.0))
    for _ in range(2):
        assert (await limiter.allow(keys.command_limit("p1"), 1.0, 2)).allowed
    assert not (await limiter.allow(keys.command_limit("p1"), 1.0, 2)).allowed
    assert (await limiter.allow(keys.command_limit("p2"), 1.0, 2)).allowed


async def test_the_servers_clock_is_used_when_none_is_given(store: Store) -> None:
    # A rate so low that no token comes back while the test runs.
    key = keys.command_limit("p1")
    decisions = [await store.rate_limiter.allow(key, 0.001, 3) for _ in range(4)]
    assert [d.allowed for d in decisions] == [True, True, True, False]
    assert 0 < decisions[3].retry_after_s <= 1000
    # The key expires once the bucket would be full again.
    ttl_ms = await store.redis.execute("PTTL", key)
    assert 0 < ttl_ms <= 3000 * 1000


async def test_a_cost_counts_several_requests_at_once_or_none(store: Store) -> None:
    key = keys.command_limit("p1")
    limiter = RateLimiter(store.redis, at(5.0))
    assert (await limiter.allow(key, 1.0, 10, cost=4)).allowed
    assert (await limiter.allow(key, 1.0, 10, cost=4)).allowed
    assert await limiter.allow(key, 1.0, 10, cost=4) == RateDecision(False, 2.0)
    # The refusal took nothing.
    assert (await limiter.allow(key, 1.0, 10, cost=2)).allowed
    assert not (await limiter.allow(key, 1.0, 10)).allowed


async def test_nonsense_limits_are_refused(store: Store) -> None:
    with pytest.raises(ValueError):
        await store.rate_limiter.allow(keys.command_limit("p1"), 0, 5)
    with pytest.raises(ValueError):
        await store.rate_limiter.allow(keys.command_limit("p1"), 1, 0)
    with pytest.raises(ValueError):
        await store.rate_limiter.allow(keys.command_limit("p1"), 1, 5, cost=6)


async def test_each_limit_of_the_service_counts_in_the_bucket_its_key_names(
        redis_url: str, tmp_path: Path) -> None:
    # service/store/keys.py names each limit's bucket: a player's and an address's limits
    # are counted there, each apart from the others. Slow rates: a bucket's key lives until
    # the bucket is full again.
    slow = {"rate_per_s": 0.01, "burst": 100}
    settings = settings_for_test(redis_url, tmp_path, **{
        f"{limit}_{part}": value
        for limit in ("read", "create", "create_per_address", "signup_per_address")
        for part, value in slow.items()},
        rate_limit_per_s=0.01, rate_limit_burst=100, renames_per_day=100)
    async with running_service(settings) as base, \
            aiohttp.ClientSession() as session:
        api = Api(session, base)
        player, token = await api.player("ann")  # a sign-up: a new player, and a new game's
        game_id = (await api.create(token, "gilbert"))["game_id"]
        await api.command(token, game_id, {"type": "draw"})
        await api.request("PATCH", "/v1/players/me", token, 200, json={"name": "bea"})
        sock, _ = await connect(session, base, game_id, token)  # a hello is a read
        await sock.ws.close()
    address = "127.0.0.1"
    with sync_client(redis_url) as r:
        buckets = {key.decode() for key in r.scan_iter("rl:*")}
    assert buckets == {
        keys.command_limit(player), keys.rename_limit(player), keys.create_limit(player),
        keys.read_limit(address), keys.create_address_limit(address),
        keys.signup_limit(address),
    }


def _renames(bucket: RateLimiter) -> Limiter:
    """A worker's limiter of renames, as the service makes it: 10 a day."""
    return Limiter(bucket, keys.rename_limit, 10 / 86_400, 10,
                   what="renames of this player", setting="renames_per_day",
                   shown_rate="10 a day")


async def test_a_slow_limit_allows_its_whole_burst_whichever_worker_each_request_reaches(
        store: Store) -> None:
    # Two workers of one instance, each with its own limiter on the one store. A rename
    # leased in one worker and left unspent once made the other refuse the 10th rename.
    bucket = RateLimiter(store.redis, at(1000.0))  # the clock stands still
    first, second = _renames(bucket), _renames(bucket)
    for limiter in [first] + [second] * 9:
        await limiter.check("p1")
    for limiter in (first, second):
        with pytest.raises(ApiError) as refused:
            await limiter.check("p1")
        # which limit, and a day's tenth to wait for the next rename
        assert refused.value.details["limit"] == "renames_per_day"
        assert refused.value.details["retry_after_s"] == 8_640


async def test_a_fast_limit_leases_what_its_bucket_refills_in_a_second(store: Store) -> None:
    # 3 a second, bursts of 40: a lease of 3 (what the bucket refills in LEASE_S; not
    # the 8 a burst of 40 would allow), so a busy player costs one store call per three
    # requests, and a lease left unspent costs no more than a second's refill.
    bucket = RateLimiter(store.redis, at(1000.0))  # the clock stands still: no refill
    await Limiter(bucket, keys.command_limit, 3.0, 40).check("p1")
    key = keys.command_limit("p1")
    assert not (await bucket.allow(key, 3.0, 40, cost=38)).allowed
    assert (await bucket.allow(key, 3.0, 40, cost=37)).allowed  # 40 - 3: one call took 3
