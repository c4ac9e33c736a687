"""Closing the store's client (an instance shutting down): nothing of it outlives the close.

A command still in flight when the client closes (a background job stopped mid-call, a
batch of the automatic pipeline) is abandoned: its caller hears ``StoreUnavailable``, and
it is not sent again on a new connection, which nobody would close. A closed client
refuses every later command without connecting.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from service.settings import Settings
from service.store.connection import RedisConn
from service.store.errors import StoreUnavailable
from tests.redis_servers import LocalCluster, sync_client
from tests.service.helpers import wait_for
from tests.stores import Store


async def blocked_clients(store: Store) -> int:
    info: dict[str, Any] = await store.redis.execute("INFO", "clients")
    return int(info["blocked_clients"])


async def clients_named(store: Store, name: str) -> int:
    listing = (await store.redis.execute("CLIENT", "LIST")).decode()
    return sum(f" name={name} " in f" {line} " for line in listing.splitlines())


async def test_a_command_in_flight_when_the_client_closes_is_abandoned_not_sent_again(
        redis_url: str, make_settings: Callable[..., Settings],
        store_factory: Callable[..., Awaitable[Store]]) -> None:
    other = await store_factory(redis_url)
    redis = RedisConn(make_settings(redis_url, instance_id="closing"), redis_url)
    # A pop that waits for a push: in flight for as long as the test wants.
    waiting = asyncio.ensure_future(redis.execute("BLPOP", "queue", 0))
    await wait_for(lambda: blocked_clients(other), what="the pop to wait in the store")
    await redis.aclose()
    with pytest.raises(StoreUnavailable):
        await waiting

    async def gone() -> bool:
        return await clients_named(other, "solitaire-closing") == 0

    # The store serves a blocked pop until it has seen its connection close: push after.
    await wait_for(gone, what="the closed client's connection to be closed in the store")
    await other.redis.execute("LPUSH", "queue", "item")
    # The closed client took nothing: its pop was not sent again after the close.
    assert await other.redis.execute("LPOP", "queue") == b"item"


async def test_a_closed_client_refuses_commands_without_connecting(
        redis_url: str, make_settings: Callable[..., Settings],
        store_factory: Callable[..., Awaitable[Store]]) -> None:
    other = await store_factory(redis_url)
    redis = RedisConn(make_settings(redis_url, instance_id="closed"), redis_url)
    await redis.aclose()
    calls: list[Callable[[], Awaitable[Any]]] = [
        lambda: redis.execute("PING"),
        lambda: redis.pipeline([("PING",)]),
        lambda: redis.ping(),
    ]
    for call in calls:
        with pytest.raises(StoreUnavailable, match="closed"):
            await call()
    assert await clients_named(other, "solitaire-closed") == 0


async def test_a_connection_in_use_across_the_close_is_closed_when_it_comes_back(
        redis_url: str, make_settings: Callable[..., Settings],
        store_factory: Callable[..., Awaitable[Store]]) -> None:
    """Without the automatic pipeline a command runs in its caller's task, which the close
    does not end: the connection it holds is closed when it is given back."""
    other = await store_factory(redis_url)
    settings = make_settings(redis_url, instance_id="direct", redis_autopipeline=False)
    redis = RedisConn(settings, redis_url)
    waiting = asyncio.ensure_future(redis.execute("BLPOP", "queue", 0))
    await wait_for(lambda: blocked_clients(other), what="the pop to wait in the store")
    await redis.aclose()
    await other.redis.execute("LPUSH", "queue", "item")
    with contextlib.suppress(StoreUnavailable):  # answered after a reconnect, or failed
        await waiting
    await wait_for(lambda: not_connected(other, "solitaire-direct"),
                   what="the closed client's last connection to be closed")


async def not_connected(store: Store, name: str) -> bool:
    return await clients_named(store, name) == 0


async def test_callers_waiting_for_durability_when_the_client_closes_hear_it_is_closing(
        redis_url: str, make_settings: Callable[..., Settings],
        store_factory: Callable[..., Awaitable[Store]]) -> None:
    """A write's caller waits until the store confirms the write as durable; when the
    client closes first, the caller hears that the store is closing (the write was sent,
    its durability is unknown), and waits no longer."""
    other = await store_factory(redis_url)
    # No replica ever confirms: the shared wait stays in flight for as long as the test wants.
    settings = make_settings(redis_url, instance_id="closing", durability="replicated",
                             redis_timeout_s=3600.0)
    redis = RedisConn(settings, redis_url)
    in_flight = asyncio.ensure_future(redis.durable("marker:1"))
    await wait_for(lambda: blocked_clients(other), what="the wait for a replica to block")
    # A second caller gathers into the next shared wait (it joins without awaiting anything
    # before it waits: one turn of the loop takes it there).
    gathering = asyncio.ensure_future(redis.durable("marker:2"))
    await asyncio.sleep(0)
    await redis.aclose()
    for caller in (in_flight, gathering):
        await wait_for(caller.done, what="the waiting caller to hear of the close")
        with pytest.raises(StoreUnavailable, match="closing") as refused:
            caller.result()
        assert refused.value.sent
    with pytest.raises(StoreUnavailable, match="clos"):
        await redis.durable("marker:3")


# -- Redis Cluster: a client of per-node pools, which closes as finally ---------------------


def cluster_clients_named(cluster: LocalCluster, name: str) -> int:
    """The connections named ``name`` on every node of the cluster, replicas included."""
    count = 0
    for node in cluster.nodes:
        with sync_client(node.url) as client:
            listing = client.execute_command("CLIENT", "LIST")
        listing = listing.decode() if isinstance(listing, bytes) else listing
        count += sum(f" name={name} " in f" {line} " for line in listing.splitlines())
    return count


def not_connected_to_the_cluster(cluster: LocalCluster, name: str) -> bool:
    return cluster_clients_named(cluster, name) == 0


async def test_a_closed_cluster_client_refuses_commands_and_keeps_no_connection(
        cluster_url: str, redis_cluster: LocalCluster,
        make_settings: Callable[..., Settings]) -> None:
    redis = RedisConn(make_settings(cluster_url, instance_id="closed-cluster"), cluster_url)
    await redis.ping()  # a connection to every node
    assert cluster_clients_named(redis_cluster, "solitaire-closed-cluster") > 0
    await redis.aclose()
    calls: list[Callable[[], Awaitable[Any]]] = [
        lambda: redis.execute("PING"),
        lambda: redis.pipeline([("GET", "a"), ("GET", "b")]),
        lambda: redis.ping(),
        lambda: redis.cluster(),
    ]
    for call in calls:
        with pytest.raises(StoreUnavailable, match="closed"):
            await call()
    await wait_for(lambda: not_connected_to_the_cluster(redis_cluster, "solitaire-closed-cluster"),
                   what="the closed cluster client's connections to be closed")

async def test_a_cluster_client_closed_after_a_connection_failed_keeps_no_connection(
        cluster_url: str, redis_cluster: LocalCluster,
        make_settings: Callable[..., Settings]) -> None:
    """A failed connection makes the cluster client ask for the cluster's nodes again at its
    next command; closed before that, it still closes the connections it has to every node."""
    settings = make_settings(cluster_url, instance_id="failed-cluster", redis_retries=0)
    redis = RedisConn(settings, cluster_url)
    await redis.ping()  # a connection to every node
    owner = redis_cluster.node_for_key("key")
    with sync_client(owner.url) as client:
        for line in client.execute_command("CLIENT", "LIST").decode().splitlines():
            fields = dict(field.split("=", 1) for field in line.split(" ") if "=" in field)
            if fields["name"] == "solitaire-failed-cluster":
                client.execute_command("CLIENT", "KILL", "ID", fields["id"])
    with pytest.raises(StoreUnavailable):
        await redis.execute("GET", "key")
    await redis.aclose()
    await wait_for(lambda: not_connected_to_the_cluster(redis_cluster, "solitaire-failed-cluster"),
                   what="the closed cluster client's connections to be closed")

def blocked_on(cluster: LocalCluster, key: str) -> int:
    with sync_client(cluster.node_for_key(key).url) as client:
        return int(client.info("clients")["blocked_clients"])


async def test_a_command_in_flight_when_the_cluster_client_closes_is_abandoned_not_sent_again(
        cluster_url: str, redis_cluster: LocalCluster,
        make_settings: Callable[..., Settings]) -> None:
    """A command that loses its connection is retried on a new one, after the client asked
    the cluster for its nodes again: not once the client is closed."""
    settings = make_settings(cluster_url, instance_id="closing-cluster")
    redis = RedisConn(settings, cluster_url)
    waiting = asyncio.ensure_future(redis.execute("BLPOP", "queue", 0))
    await wait_for(lambda: blocked_on(redis_cluster, "queue"),
                   what="the pop to wait in the store")
    await redis.aclose()
    await wait_for(waiting.done, what="the pop to hear of the close")
    with pytest.raises(StoreUnavailable, match="^the store client is closed"):
        waiting.result()
    # The store serves a blocked pop until it has seen its connection close.
    await wait_for(lambda: not_connected_to_the_cluster(redis_cluster, "solitaire-closing-cluster"),
                   what="the closed cluster client's connections to be closed")
    with sync_client(redis_cluster.node_for_key("queue").url) as owner:
        owner.lpush("queue", "item")
        # The closed client took nothing: its pop was not sent again after the close.
        assert owner.lpop("queue") == b"item"

