"""Fan-out: every appended event reaches the listeners of its game on every instance."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

import pytest

from service.store import RESYNC, GameMeta, Published, Resync, StoreUnavailable
from service.store.embedded import EmbeddedServer
from tests.service.listening import Queued, fanout_connections, listen, subscribers
from tests.stores import Store

META = GameMeta(variant="gilbert", seed=1, owner="p1", rules_version="1",
                created_at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC))

# A guard against a hung test, not a speed requirement.
PATIENCE_S = 30.0


async def next_item(listener: Queued) -> Published | Resync:
    async with asyncio.timeout(PATIENCE_S):
        return await listener.get()


async def next_event(listener: Queued) -> Published:
    item = await next_item(listener)
    assert isinstance(item, Published), item
    return item


async def test_events_reach_listeners_on_two_instances_in_order(
        any_redis_url: str, store_factory: Callable[..., Awaitable[Store]]) -> None:
    one, two = await store_factory(any_redis_url), await store_factory(any_redis_url)
    await one.games.create("g1", META, ttl_s=3600)
    async with listen(one.hub, "g1") as a, listen(two.hub, "g1") as b, listen(two.hub, "g1") as c:
        for seq in range(1, 21):
            writer = one if seq % 2 else two
            await writer.games.append("g1", seq - 1, f"c{seq}", b'{"seq":%d}' % seq)
        for listener in (a, b, c):
            got = [await next_event(listener) for _ in range(20)]
            assert got == [Published(seq, b'{"seq":%d}' % seq) for seq in range(1, 21)]
            assert listener.queue.empty()


async def test_a_listener_hears_only_its_own_game(
        any_redis_url: str, store_factory: Callable[..., Awaitable[Store]]) -> None:
    store = await store_factory(any_redis_url)
    for game_id in ("g1", "g2", "g3"):
        await store.games.create(game_id, META, ttl_s=3600)
    async with listen(store.hub, "g1") as one, listen(store.hub, "g2") as two:
        await store.games.append("g3", 0, None, b"g3e1")
        await store.games.append("g2", 0, None, b"g2e1")
        await store.games.append("g1", 0, None, b"g1e1")
        assert await next_event(one) == Published(1, b"g1e1")
        assert await next_event(two) == Published(1, b"g2e1")
        assert one.queue.empty() and two.queue.empty()


async def test_an_event_appended_right_after_joining_is_heard(
        any_redis_url: str, store_factory: Callable[..., Awaitable[Store]]) -> None:
    store = await store_factory(any_redis_url)
    other = await store_factory(any_redis_url)
    await store.games.create("g1", META, ttl_s=3600)
    for seq in range(1, 11):
        async with listen(store.hub, "g1") as listener:
            await other.games.append("g1", seq - 1, None, b"e%d" % seq)
            assert await next_event(listener) == Published(seq, b"e%d" % seq)


async def test_one_subscription_per_game_and_instance_until_the_last_listener_leaves(
        redis_url: str, store_factory: Callable[..., Awaitable[Store]]) -> None:
    store = await store_factory(redis_url, instance_id="one")
    await store.games.create("g1", META, ttl_s=3600)
    assert subscribers(redis_url, "g1") == 0
    async with listen(store.hub, "g1") as first:
        async with listen(store.hub, "g1") as second:
            assert subscribers(redis_url, "g1") == 1
            await store.games.append("g1", 0, None, b"e1")  # one subscription, both hear it
            assert await next_event(first) == await next_event(second) == Published(1, b"e1")
        assert subscribers(redis_url, "g1") == 1
    await store.redis.execute("PING")  # the unsubscribe is on its way; let it arrive
    for _ in range(100):
        if subscribers(redis_url, "g1") == 0:
            break
        await asyncio.sleep(0.01)
    assert subscribers(redis_url, "g1") == 0
    assert len(fanout_connections(redis_url, "one")) == 1  # kept for the next listener
    # And it can subscribe again.
    async with listen(store.hub, "g1") as listener:
        await store.games.append("g1", 1, None, b"e2")
        assert await next_event(listener) == Published(2, b"e2")


async def test_leaving_and_rejoining_at_once_still_delivers(
        any_redis_url: str, store_factory: Callable[..., Awaitable[Store]]) -> None:
    store = await store_factory(any_redis_url)
    await store.games.create("g1", META, ttl_s=3600)
    for _ in range(20):
        async with listen(store.hub, "g1"):
            pass
    async with listen(store.hub, "g1") as listener:
        await store.games.append("g1", 0, None, b"e1")
        assert await next_event(listener) == Published(1, b"e1")


@pytest.mark.parametrize("how", ["kill", "stop"])
async def test_after_the_server_restarts_listeners_get_resync_then_new_events(
        how: str, restartable_server: EmbeddedServer,
        store_factory: Callable[..., Awaitable[Store]]) -> None:
    one = await store_factory(restartable_server.url)
    two = await store_factory(restartable_server.url)
    await one.games.create("g1", META, ttl_s=3600)
    async with listen(one.hub, "g1") as a, listen(two.hub, "g1") as b:
        await one.games.append("g1", 0, None, b"e1")
        assert await next_event(a) == Published(1, b"e1")
        assert await next_event(b) == Published(1, b"e1")
        restartable_server.kill() if how == "kill" else restartable_server.stop()
        restartable_server.start()
        assert await next_item(a) is RESYNC
        assert await next_item(b) is RESYNC
        # The log survived (AOF), and new events flow again.
        assert await one.games.events("g1") == [b"e1"]
        await two.games.append("g1", 1, None, b"e2")
        assert await next_event(a) == Published(2, b"e2")
        assert await next_event(b) == Published(2, b"e2")


async def test_listening_while_the_store_is_down_is_unavailable_then_works_again(
        restartable_server: EmbeddedServer,
        store_factory: Callable[..., Awaitable[Store]]) -> None:
    store = await store_factory(restartable_server.url, redis_timeout_s=0.5)
    await store.games.create("g1", META, ttl_s=3600)
    async with listen(store.hub, "g1"):
        pass
    restartable_server.stop()
    with pytest.raises(StoreUnavailable):
        async with listen(store.hub, "g2"):
            pass
    restartable_server.start()
    async with asyncio.timeout(PATIENCE_S):
        while True:  # the subscriber reconnects on its own, with backoff
            try:
                async with listen(store.hub, "g1") as listener:
                    await store.games.append("g1", 0, None, b"e1")
                    assert await next_event(listener) == Published(1, b"e1")
                    break
            except StoreUnavailable:
                await asyncio.sleep(0.05)
    # The refused listen left nothing behind: reconnected, the hub subscribed every game
    # it still held (before g1's, on the same connection), and g2 is not one of them.
    assert subscribers(restartable_server.url, "g2") == 0


async def silent_until_noticed(server: EmbeddedServer, caplog: pytest.LogCaptureFixture) -> None:
    """Stops ``server`` (its connections stay open, nothing answers) until the hub says it
    dropped its subscriber connection, then lets it go on."""
    pid = server.pid
    assert pid is not None
    os.kill(pid, signal.SIGSTOP)
    try:
        async with asyncio.timeout(PATIENCE_S):
            while not any("no answer to PING" in r.getMessage() for r in caplog.records):
                await asyncio.sleep(0.05)
    finally:
        os.kill(pid, signal.SIGCONT)


async def test_a_silent_server_is_noticed_by_the_ping_and_listeners_resync(
        restartable_server: EmbeddedServer,
        store_factory: Callable[..., Awaitable[Store]], caplog: pytest.LogCaptureFixture) -> None:
    store = await store_factory(restartable_server.url, redis_health_check_s=0.2)
    await store.games.create("g1", META, ttl_s=3600)
    caplog.set_level(logging.WARNING, logger="service.store.fanout")
    async with listen(store.hub, "g1") as listener:
        await silent_until_noticed(restartable_server, caplog)
        assert await next_item(listener) is RESYNC
        await store.games.append("g1", 0, None, b"e1")
        assert await next_event(listener) == Published(1, b"e1")


async def test_a_quiet_server_that_answers_the_pings_keeps_its_subscriber_connection(
        redis_url: str, store_factory: Callable[..., Awaitable[Store]]) -> None:
    store = await store_factory(redis_url, redis_health_check_s=0.25, instance_id="quiet")
    await store.games.create("g1", META, ttl_s=3600)
    async with listen(store.hub, "g1") as listener:
        connected = fanout_connections(redis_url, "quiet")
        await asyncio.sleep(2.0)  # about eight PINGs of a connection that carries nothing else
        assert fanout_connections(redis_url, "quiet") == connected and len(connected) == 1
        await store.games.append("g1", 0, None, b"e1")
        assert await next_event(listener) == Published(1, b"e1")


async def test_a_listener_gets_its_items_through_its_callback_and_a_broken_one_harms_none(
        redis_url: str, store_factory: Callable[..., Awaitable[Store]]) -> None:
    store = await store_factory(redis_url)
    await store.games.create("g1", META, ttl_s=3600)
    got: list[Published | Resync] = []
    arrived = asyncio.Event()

    def take(item: Published | Resync) -> None:
        got.append(item)
        arrived.set()

    def broken(item: Published | Resync) -> None:
        raise RuntimeError("a bug in one listener")

    async with store.hub.listen("g1", callback=broken), store.hub.listen("g1", callback=take):
        await store.games.append("g1", 0, None, b"e1")
        async with asyncio.timeout(PATIENCE_S):
            await arrived.wait()
        assert got == [Published(1, b"e1")]
        # The broken listener cost nobody anything: the subscription is still up.
        arrived.clear()
        await store.games.append("g1", 1, None, b"e2")
        async with asyncio.timeout(PATIENCE_S):
            await arrived.wait()
        assert got == [Published(1, b"e1"), Published(2, b"e2")]


async def test_a_listen_joining_when_the_hub_closes_is_refused_and_leaves_no_connection(
        redis_url: str, store_factory: Callable[..., Awaitable[Store]]) -> None:
    store = await store_factory(redis_url, instance_id="closing")
    hub = store.hub

    async def join() -> None:
        async with hub.listen("g1", callback=lambda item: None):
            pass

    # The first listen asks the store whether it has sharded pub/sub before it makes a
    # subscriber connection: the hub closes meanwhile.
    joining = asyncio.ensure_future(join())
    await asyncio.sleep(0)
    assert not joining.done()
    await hub.aclose()
    with pytest.raises(StoreUnavailable, match="the fan-out hub is closed"):
        await joining
    # Nothing of the hub outlives its close: no subscriber connection, no subscription.
    assert fanout_connections(redis_url, "closing") == []
    assert subscribers(redis_url, "g1") == 0
    with pytest.raises(StoreUnavailable, match="the fan-out hub is closed"):
        await join()


async def test_replies_read_one_at_a_time_reach_listeners_in_order_and_a_silence_is_noticed(
        restartable_server: EmbeddedServer, store_factory: Callable[..., Awaitable[Store]],
        caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where redis-py's reader of a connection is not found (it is not public), the
    subscriber reads its replies through redis-py's public ``read_response``: the same
    events, in order, and a silent server still noticed."""
    from service.store import fanout
    monkeypatch.setattr(fanout, "stream_reader", lambda conn: None)
    one = await store_factory(restartable_server.url, redis_health_check_s=0.2)
    two = await store_factory(restartable_server.url, redis_health_check_s=0.2)
    await one.games.create("g1", META, ttl_s=3600)
    caplog.set_level(logging.WARNING, logger="service.store.fanout")
    async with listen(one.hub, "g1") as a, listen(two.hub, "g1") as b:
        for seq in range(1, 21):
            writer = one if seq % 2 else two
            await writer.games.append("g1", seq - 1, f"c{seq}", b'{"seq":%d}' % seq)
        for listener in (a, b):
            got = [await next_event(listener) for _ in range(20)]
            assert got == [Published(seq, b'{"seq":%d}' % seq) for seq in range(1, 21)]
        await silent_until_noticed(restartable_server, caplog)
        assert await next_item(a) is RESYNC
        await one.games.append("g1", 20, None, b"e21")
        assert await next_event(a) == Published(21, b"e21")
