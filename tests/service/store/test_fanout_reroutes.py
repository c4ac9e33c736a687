"""Issue 13, point 3: fan-out re-routes converge on real clusters: a slot moved
while the first slot-map refresh fails, a second move requested while a re-route
runs, and a replica promoted by failover. Listeners end up live on the node that
owns their game's slot, and nowhere else."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from redis.asyncio.cluster import NodesManager
from redis.exceptions import ConnectionError as RedisConnectionError

from service.store import RESYNC, Published, keys
from tests.redis_servers import LocalCluster, sync_client
from tests.service.listening import listen
from tests.service.store.clusters import META, migrate_slot, slot, subscribers
from tests.stores import Store


async def test_a_moved_slot_whose_first_refresh_fails_is_re_routed_after_a_retry(
        private_cluster: LocalCluster, store_factory: Callable[..., Awaitable[Store]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    store = await store_factory(private_cluster.url)
    writer = await store_factory(private_cluster.url)
    hub = store.hub
    hub.sweep_interval_s = 0  # no safety net here: the re-route itself must converge
    failures = [RedisConnectionError("the cluster did not answer (injected)")]
    await store.games.create("g1", META, ttl_s=3600)
    # The hub re-reads the slot map with redis-py's own refresh: its next one fails.
    nodes = store.redis.client.nodes_manager
    real_refresh = NodesManager.initialize

    async def failing_once(self: NodesManager, *args: Any, **kwargs: Any) -> Any:
        if self is nodes and failures:
            raise failures.pop()
        return await real_refresh(self, *args, **kwargs)

    monkeypatch.setattr(NodesManager, "initialize", failing_once)
    source = private_cluster.nodes.index(private_cluster.node_for_key(keys.game_meta("g1")))
    target = (source + 1) % 3
    async with listen(hub, "g1") as listener:
        await writer.games.append("g1", 0, None, b"e1")
        async with asyncio.timeout(30):
            assert await listener.get() == Published(1, b"e1")
        migrate_slot(private_cluster, slot(private_cluster, keys.game_meta("g1")), source, target)
        async with asyncio.timeout(30):
            assert await listener.get() is RESYNC
        await writer.games.append("g1", 1, None, b"e2")
        async with asyncio.timeout(30):
            assert await listener.get() == Published(2, b"e2")
        assert failures == []  # the first pass's refresh failed: a later pass re-routed
        assert subscribers(private_cluster, "g1") == {source: 0, target: 1, 3 - source - target: 0}


async def test_a_re_route_asked_for_while_one_runs_is_not_dropped(
        private_cluster: LocalCluster, store_factory: Callable[..., Awaitable[Store]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    store = await store_factory(private_cluster.url)
    hub = store.hub
    hub.sweep_interval_s = 0
    started, release = asyncio.Event(), asyncio.Event()
    await store.games.create("g1", META, ttl_s=3600)
    # The hub re-reads the slot map with redis-py's own refresh: its next one is held.
    nodes = store.redis.client.nodes_manager
    real_refresh = NodesManager.initialize
    calls = 0

    async def slow_first(self: NodesManager, *args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        if self is not nodes:
            return await real_refresh(self, *args, **kwargs)
        calls += 1
        result = await real_refresh(self, *args, **kwargs)
        if calls == 1:  # the first pass reads the slot map before the move...
            started.set()
            await release.wait()
        return result

    monkeypatch.setattr(NodesManager, "initialize", slow_first)
    source = private_cluster.nodes.index(private_cluster.node_for_key(keys.game_meta("g1")))
    target = (source + 1) % 3
    async with listen(hub, "g1") as listener:
        hub._reroute_soon()
        await asyncio.wait_for(started.wait(), 30)
        # ...the slot moves meanwhile, and the node's sunsubscribe asks for another pass.
        migrate_slot(private_cluster, slot(private_cluster, keys.game_meta("g1")), source, target)
        async with asyncio.timeout(30):
            while subscribers(private_cluster, "g1").get(source, 0):
                await asyncio.sleep(0.05)
        await asyncio.sleep(0.2)  # the sunsubscribe reaches the hub while the first pass waits
        release.set()
        async with asyncio.timeout(30):
            assert await listener.get() is RESYNC
        async with asyncio.timeout(30):
            while subscribers(private_cluster, "g1") != {
                source: 0,
                target: 1,
                3 - source - target: 0,
            }:
                await asyncio.sleep(0.05)
        assert calls >= 2


async def test_after_a_failover_listeners_follow_the_promoted_replica_and_leave_the_demoted_master(
    cluster_with_replicas: LocalCluster, store_factory: Callable[..., Awaitable[Store]]
) -> None:
    cluster = cluster_with_replicas
    store = await store_factory(cluster.url, redis_health_check_s=1.0)
    writer = await store_factory(cluster.url)
    store.hub.sweep_interval_s = 0.5
    await store.games.create("g1", META, ttl_s=3600)
    old_master = cluster.nodes.index(cluster.node_for_key(keys.game_meta("g1")))
    replica = old_master + cluster.masters  # replica j=0 of master i is node masters + i
    async with listen(store.hub, "g1") as listener:
        await writer.games.append("g1", 0, None, b"e1")
        async with asyncio.timeout(30):
            assert await listener.get() == Published(1, b"e1")
        assert subscribers(cluster, "g1")[old_master] == 1
        # A manual failover: the replica takes over, the master becomes its replica.
        with sync_client(cluster.nodes[replica].url) as client:
            client.execute_command("CLUSTER", "FAILOVER")
        async with asyncio.timeout(60):
            while True:
                with sync_client(cluster.nodes[replica].url) as client:
                    if client.info("replication")["role"] == "master":
                        break
                await asyncio.sleep(0.05)
        seq = 1
        async with asyncio.timeout(60):
            while subscribers(cluster, "g1") != {
                **{i: 0 for i in range(len(cluster.nodes))},
                replica: 1,
            }:
                await asyncio.sleep(0.1)
        # The listener hears events appended on the promoted node.
        while True:
            try:
                seq = await writer.games.append("g1", seq, None, b"e%d" % (seq + 1))
                break
            except Exception:  # noqa: BLE001 - the writer's slot map may still be catching up
                await asyncio.sleep(0.1)
        async with asyncio.timeout(30):
            while True:
                item = await listener.get()
                if isinstance(item, Published) and item.seq == seq:
                    break
