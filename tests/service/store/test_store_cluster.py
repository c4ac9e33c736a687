"""What only a Redis Cluster can show: one slot per game, games on every node,
sharded subscriptions on the node that owns the game's slot."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from service.store import RESYNC, Published, keys
from tests.redis_servers import LocalCluster, sync_client
from tests.service.listening import fanout_connections, listen
from tests.service.store.clusters import META, migrate_slot, slot
from tests.stores import Store


def game_ids_on_every_node(cluster: LocalCluster, per_node: int = 2) -> list[str]:
    found: dict[int, list[str]] = {}
    i = 0
    while min((len(found.get(p, [])) for p in range(cluster.masters)), default=0) < per_node:
        game_id = f"g{i}"
        node = cluster.nodes.index(cluster.node_for_key(keys.game_meta(game_id)))
        found.setdefault(node, []).append(game_id)
        i += 1
    return [g for ids in found.values() for g in ids[:per_node]]


def test_all_keys_and_the_channel_of_a_game_share_one_slot(redis_cluster: LocalCluster) -> None:
    for game_id in ("g_1", "g_abc", "g_{weird}"):
        names = [*keys.game_keys(game_id), keys.game_channel(game_id)]
        assert len({slot(redis_cluster, name) for name in names}) == 1


async def test_games_on_every_node_append_and_load(
        cluster_url: str, redis_cluster: LocalCluster,
        store_factory: Callable[..., Awaitable[Store]]) -> None:
    store = await store_factory(cluster_url)
    ids = game_ids_on_every_node(redis_cluster)
    for game_id in ids:
        await store.games.create(game_id, META, ttl_s=3600)
        await store.games.append(game_id, 0, "c1", b"e1", snapshot=b"s1")
        await store.games.append(game_id, 1, "c2", b"e2")
    for game_id in ids:
        loaded = await store.games.load(game_id)
        assert (loaded.snapshot, loaded.snapshot_seq, loaded.events) == (b"s1", 1, [b"e2"])
        node = redis_cluster.node_for_key(keys.game_meta(game_id))
        with sync_client(node.url) as client:  # the data is on the node owning the slot
            assert client.llen(keys.game_events(game_id)) == 2


async def test_each_game_is_subscribed_on_the_node_that_owns_its_slot(
        cluster_url: str, redis_cluster: LocalCluster,
        store_factory: Callable[..., Awaitable[Store]]) -> None:
    one = await store_factory(cluster_url, instance_id="one")
    two = await store_factory(cluster_url)
    ids = game_ids_on_every_node(redis_cluster, per_node=1)
    for game_id in ids:
        await one.games.create(game_id, META, ttl_s=3600)
    async with (
        listen(one.hub, ids[0]) as l0,
        listen(one.hub, ids[1]) as l1,
        listen(one.hub, ids[2]) as l2,
    ):
        listeners = dict(zip(ids, (l0, l1, l2), strict=True))
        for game_id in ids:
            owner = redis_cluster.node_for_key(keys.game_channel(game_id))
            for node in redis_cluster.nodes:
                with sync_client(node.url) as client:
                    count = client.execute_command(
                        "PUBSUB", "SHARDNUMSUB", keys.game_channel(game_id)
                    )
                assert int(count[1]) == (1 if node is owner else 0), (game_id, node)
        # One subscriber connection to each node that owns a game's slot (never one per
        # game), and none to the others (replicas).
        owners = {redis_cluster.node_for_key(keys.game_channel(g)).url for g in ids}
        assert len(owners) == 3
        assert {node.url: len(fanout_connections(node.url, "one"))
                for node in redis_cluster.nodes} == {node.url: int(node.url in owners)
                                                     for node in redis_cluster.nodes}
        for game_id in ids:
            await two.games.append(game_id, 0, None, b"e-" + game_id.encode())
        for game_id, listener in listeners.items():
            async with asyncio.timeout(30):
                assert await listener.get() == Published(1, b"e-" + game_id.encode())


async def test_a_cluster_url_without_schemes_works(
        redis_cluster: LocalCluster, store_factory: Callable[..., Awaitable[Store]]) -> None:
    redis_cluster.flush()
    url = ",".join(f"127.0.0.1:{node.port}" for node in redis_cluster.nodes)
    store = await store_factory(url)
    await store.ping()
    await store.games.create("g1", META, ttl_s=3600)
    assert (await store.games.load("g1")).meta.seq == 0


async def test_when_a_games_slot_moves_its_listeners_resync_and_hear_the_new_owner(
        private_cluster: LocalCluster, store_factory: Callable[..., Awaitable[Store]]) -> None:
    store = await store_factory(private_cluster.url)
    writer = await store_factory(private_cluster.url)
    await store.games.create("g1", META, ttl_s=3600)
    source = private_cluster.nodes.index(private_cluster.node_for_key(keys.game_meta("g1")))
    target = (source + 1) % 3
    async with listen(store.hub, "g1") as listener:
        await writer.games.append("g1", 0, None, b"e1")
        async with asyncio.timeout(30):
            assert await listener.get() == Published(1, b"e1")
        migrate_slot(private_cluster, slot(private_cluster, keys.game_meta("g1")), source, target)
        async with asyncio.timeout(30):
            assert await listener.get() is RESYNC
        await writer.games.append("g1", 1, None, b"e2")  # follows the MOVED to the new owner
        async with asyncio.timeout(30):
            assert await listener.get() == Published(2, b"e2")
        with sync_client(private_cluster.nodes[target].url) as client:
            assert (
                int(client.execute_command("PUBSUB", "SHARDNUMSUB", keys.game_channel("g1"))[1])
                == 1
            )
        assert (await store.games.load("g1")).events == [b"e1", b"e2"]
