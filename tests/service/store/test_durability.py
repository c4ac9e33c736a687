"""Issue 13, point 1: a command is acknowledged only as durably as
``settings.durability`` says, on real servers (a single server, and the test
cluster of three masters with a replica each)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from service.settings import DURABILITY_LEVELS, Settings
from service.store import GameMeta, StoreUnavailable
from service.store.durability import LEVELS, Durability
from service.store.embedded import EmbeddedServer, appendfsync_for
from tests.redis_servers import durable_waits, served
from tests.stores import Store

META = GameMeta(variant="gilbert", seed=1, owner="p1", rules_version="1",
                created_at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC))


def test_durability_is_a_setting_with_three_honest_levels() -> None:
    assert Settings().durability == "local"
    assert Settings.from_args(["--durability", "replicated"], environ={}).durability == "replicated"
    assert Settings.from_env({"SOLITAIRE_DURABILITY": "memory"}).durability == "memory"
    with pytest.raises(ValueError, match="expected memory, local or replicated"):
        Settings.from_env({"SOLITAIRE_DURABILITY": "fast"})


def test_the_settings_and_the_store_refuse_the_same_levels_and_policies_alike(
        tmp_path: Path) -> None:
    refused = "^durability='fast': expected memory, local or replicated$"
    with pytest.raises(ValueError, match=refused):
        Durability(conn=None, level="fast", timeout_s=1.0)
    with pytest.raises(ValueError, match="^appendfsync='often': expected always, everysec or no$"):
        EmbeddedServer(tmp_path, appendfsync="often")
    with pytest.raises(ValueError, match="=.often.: expected always, everysec or no"):
        Settings.from_env({"SOLITAIRE_APPENDFSYNC": "often"})
    assert tuple(LEVELS) == DURABILITY_LEVELS  # each level's wait is declared


def test_a_durable_level_runs_the_embedded_store_with_appendfsync_always() -> None:
    assert [appendfsync_for(level, "everysec") for level in DURABILITY_LEVELS] == [
        "everysec", "always", "always"]


@pytest.fixture(params=["server", "cluster"])
def url_without_fsync_before_reply(request: pytest.FixtureRequest,
                                   server_factory: Callable[..., EmbeddedServer]) -> str:
    """A store on which ``local`` must wait for WAITAOF: a server that fsyncs once a
    second, or the cluster (whose nodes are not asked how they fsync)."""
    if request.param == "cluster":
        url: str = request.getfixturevalue("cluster_url")
        return url
    return server_factory("everysec", appendfsync="everysec").url


async def test_local_waits_for_an_fsync_and_concurrent_commands_share_one(
        url_without_fsync_before_reply: str,
        store_factory: Callable[..., Awaitable[Store]]) -> None:
    store = await store_factory(url_without_fsync_before_reply, durability="local")
    ids = [f"g{i}" for i in range(40)]
    for game_id in ids:
        await store.games.create(game_id, META, ttl_s=3600)
    async with served(url_without_fsync_before_reply) as commands:
        seqs = await asyncio.gather(*(store.games.append(g, 0, None, b"e") for g in ids))
    assert seqs == [1] * 40
    waits = durable_waits(commands)
    assert waits >= 1
    # Group commit: forty acknowledgements did not take forty WAITAOF round trips.
    assert waits < 40, waits
    if "," not in url_without_fsync_before_reply:
        assert waits <= 4


async def test_local_makes_no_wait_on_a_store_that_fsyncs_before_it_replies(
        redis_url: str, store_factory: Callable[..., Awaitable[Store]]) -> None:
    # The tests' server runs appendfsync always: its reply to the append comes after
    # the fsync, and so does the diff the script publishes.
    store = await store_factory(redis_url, durability="local")
    async with served(redis_url) as commands:
        await store.games.create("g1", META, ttl_s=3600)
        assert await _published_on(
            redis_url, "g1", lambda: store.games.append("g1", 0, "c1", b"e")
        ) == [b"1 e"]
    assert durable_waits(commands) == 0


async def test_local_waits_again_once_the_store_stops_fsyncing_before_it_replies(
        server_factory: Callable[..., EmbeddedServer],
        store_factory: Callable[..., Awaitable[Store]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    import redis.asyncio as aioredis

    from service.store import durability

    monkeypatch.setattr(durability, "CHECK_EVERY_S", 0.0)  # ask the store at every write
    server = server_factory("switched")
    store = await store_factory(server.url, durability="local")
    async with served(server.url) as commands:
        await store.games.create("g1", META, ttl_s=3600)
        assert await store.games.append("g1", 0, "c1", b"e") == 1
    assert durable_waits(commands) == 0
    admin = aioredis.Redis.from_url(server.url)
    try:
        await admin.config_set("appendfsync", "everysec")
    finally:
        await admin.aclose()
    async with served(server.url) as commands:
        assert await _published_on(
            server.url, "g1", lambda: store.games.append("g1", 1, "c2", b"f")
        ) == [b"2 f"]
    assert durable_waits(commands) == 1


async def test_memory_makes_no_wait(
    redis_url: str, store_factory: Callable[..., Awaitable[Store]]
) -> None:
    store = await store_factory(redis_url, durability="memory")
    async with served(redis_url) as commands:
        await store.games.create("g1", META, ttl_s=3600)
        assert await store.games.append("g1", 0, None, b"e") == 1
    assert durable_waits(commands) == 0


async def test_replicated_without_a_replica_is_refused_as_unknown_outcome_not_acknowledged(
        redis_url: str, store_factory: Callable[..., Awaitable[Store]]) -> None:
    store = await store_factory(redis_url, durability="replicated", redis_timeout_s=0.5)
    with pytest.raises(StoreUnavailable) as refused:
        await store.games.create("g1", META, ttl_s=3600)
    assert "replicas with it: 0, needed 1" in str(refused.value)
    assert refused.value.sent


async def test_replicated_on_the_cluster_with_replicas_is_acknowledged(
        cluster_url: str, store_factory: Callable[..., Awaitable[Store]]) -> None:
    store = await store_factory(cluster_url, durability="replicated")
    async with served(cluster_url) as commands:
        for i in range(10):  # games on every master
            await store.games.create(f"g{i}", META, ttl_s=3600)
            assert await store.games.append(f"g{i}", 0, f"c{i}", b"e") == 1
    assert durable_waits(commands) >= 3


async def test_local_against_a_store_without_an_append_only_file_is_503_not_an_ack(
        server_factory: Callable[..., EmbeddedServer],
        store_factory: Callable[..., Awaitable[Store]]) -> None:
    server = server_factory("noaof", config={"appendonly": "no"})
    store = await store_factory(server.url, durability="local")
    with pytest.raises(StoreUnavailable) as refused:
        await store.games.create("g1", META, ttl_s=3600)
    assert "appendonly is disabled" in str(refused.value)


@pytest.mark.parametrize("first_write", ["create", "append"])
async def test_a_store_replaced_by_one_without_an_append_only_file_gets_no_false_ack(
        first_write: str, server_factory: Callable[..., EmbeddedServer],
        store_factory: Callable[..., Awaitable[Store]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The store fsynced before it replied, so the service sent no WAITAOF; then it was
    restarted at the same address without an append-only file. The service's answer about
    the old process must not vouch for the new one: the first write to it is not
    acknowledged (503, outcome unknown), however recently the old one was asked."""
    from service.store import durability

    monkeypatch.setattr(durability, "CHECK_EVERY_S", 1e9)  # the old answer, never stale by age
    first = server_factory("first", port=0)
    store = await store_factory(first.url, durability="local")
    async with served(first.url) as commands:
        await store.games.create("g0", META, ttl_s=3600)
        assert await store.games.append("g0", 0, "c0", b"e") == 1
    assert durable_waits(commands) == 0  # the replies were the fsyncs

    first.kill()
    second = server_factory("second", port=first.port, config={"appendonly": "no"})
    assert second.url == first.url
    # The game is there (written by another client, which vouches for nothing).
    other = await store_factory(second.url, durability="memory")
    await other.games.create("g1", META, ttl_s=3600)
    with pytest.raises(StoreUnavailable) as refused:
        if first_write == "create":
            await store.games.create("g2", META, ttl_s=3600)
        else:
            await store.games.append("g1", 0, "c1", b"e")
    assert refused.value.sent
    assert "appendonly is disabled" in str(refused.value)


async def _published_on(
    url: str, game_id: str, act: Callable[[], Awaitable[object]]
) -> list[bytes]:
    """What a subscriber of the game's channel received while ``act`` ran (and 0.3 s after)."""
    import redis.asyncio as aioredis

    from service.store import keys

    client = aioredis.Redis.from_url(url)
    pubsub = client.pubsub()
    try:
        # The service publishes with SPUBLISH where the store has sharded pub/sub (valkey does).
        await pubsub.ssubscribe(keys.game_channel(game_id))
        await pubsub.get_message(timeout=1.0)  # the subscribe confirmation
        try:
            await act()
        except StoreUnavailable:
            pass
        received: list[bytes] = []
        while (message := await pubsub.get_message(ignore_subscribe_messages=True, timeout=0.3)):
            received.append(message["data"])
        return received
    finally:
        await pubsub.aclose()
        await client.aclose()


async def test_a_diff_is_published_only_once_the_event_is_durable(
        redis_url: str, server_factory: Callable[..., EmbeddedServer],
        store_factory: Callable[..., Awaitable[Store]]) -> None:
    durable = await store_factory(redis_url, durability="local")
    await durable.games.create("g1", META, ttl_s=3600)
    assert await _published_on(
        redis_url, "g1", lambda: durable.games.append("g1", 0, "c1", b"e")
    ) == [b"1 e"]
    # A store that cannot make it durable: the event is written, but nobody hears of it.
    server = server_factory("noaof", config={"appendonly": "no"})
    await (await store_factory(server.url, durability="memory")).games.create(
        "g2", META, ttl_s=3600
    )
    not_durable = await store_factory(server.url, durability="local")
    assert (
        await _published_on(server.url, "g2", lambda: not_durable.games.append("g2", 0, "c1", b"e"))
        == []
    )
