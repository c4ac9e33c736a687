"""A fan-out listener read the way a test reads it: items in a queue, awaited in order.

The service's one listener (a WebSocket connection) takes items with a callback into
its own bounded outbox; a test wants to await the next item instead.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from service.store.fanout import Hub, Published, Resync


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
