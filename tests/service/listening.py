"""A fan-out listener read the way a test reads it: items in a queue, awaited in order;
and what the store's server sees of an instance's fan-out (its subscriptions and its
subscriber connections), which is how a test tells what the hub holds.

The service's one listener (a WebSocket connection) takes items with a callback into
its own bounded outbox; a test wants to await the next item instead.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from service.store import keys
from service.store.fanout import Hub, Published, Resync
from tests.redis_servers import sync_client


class Queued:
    """The items a listener of one game took, oldest first."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[Published | Resync] = asyncio.Queue()

    async def get(self) -> Published | Resync:
        return await self.queue.get()


@contextlib.asynccontextmanager
async def listen(hub: Hub, game_id: str) -> AsyncIterator[Queued]:
    """``hub.listen(game_id)`` into a queue; entered once the subscription is confirmed."""
    queued = Queued()
    async with hub.listen(game_id, callback=queued.queue.put_nowait):
        yield queued


def subscribers(url: str, game_id: str) -> int:
    """Subscribers of the game's channel on the server at ``url`` (sharded or plain): one
    per instance with a listener of the game, none once its last listener has left."""
    channel = keys.game_channel(game_id)
    with sync_client(url) as client:
        shard = client.execute_command("PUBSUB", "SHARDNUMSUB", channel)
        plain = client.execute_command("PUBSUB", "NUMSUB", channel)
    return int(shard[1]) + int(plain[1])


def fanout_connections(url: str, instance_id: str) -> list[str]:
    """The client ids of instance ``instance_id``'s fan-out subscriber connections on the
    server at ``url`` (CLIENT LIST: the hub names them after the instance)."""
    name = f"name=solitaire-{instance_id}-fanout "
    with sync_client(url) as client:
        listing = client.execute_command("CLIENT", "LIST").decode()
    return [line.split(" ", 1)[0] for line in listing.splitlines() if name in line + " "]
