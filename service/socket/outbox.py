"""A socket's outbox: a bounded first-in first-out queue for one writer, light when idle.

What ``asyncio.Queue`` does for a WebSocket's writer (``put_nowait`` raising
``asyncio.QueueFull`` at ``maxsize``, ``await get()``, ``qsize()``), without
its three deques per queue: an idle socket's outbox holds no deque at all
(one is made when a message comes and dropped when the writer has taken the
last one), and the writer waits on one future. With 10,000 idle sockets this
saves about 3 KiB each (benchmarks/README.md, "Idle connections").
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Generic, TypeVar

T = TypeVar("T")


class Outbox(Generic[T]):
    __slots__ = ("_items", "_maxsize", "_waiter", "_drained", "_closed")

    def __init__(self, maxsize: int) -> None:
        self._items: deque[T] | None = None
        self._maxsize = maxsize
        self._waiter: asyncio.Future[None] | None = None  # the writer, waiting for an item
        self._drained: asyncio.Future[None] | None = None  # the reader, waiting for room
        self._closed = False  # the writer is gone: nobody will take the items

    @property
    def maxsize(self) -> int:
        return self._maxsize

    def qsize(self) -> int:
        return len(self._items) if self._items is not None else 0

    def empty(self) -> bool:
        return not self._items

    @property
    def idle(self) -> bool:
        """Its reader waits in :meth:`get` for an item, and none is queued."""
        return self._waiter is not None and not self._items

    def put_nowait(self, item: T) -> None:
        items = self._items
        if items is None:
            items = self._items = deque()
        elif len(items) >= self._maxsize:
            raise asyncio.QueueFull
        items.append(item)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def get_nowait(self) -> T:
        items = self._items
        if not items:
            raise asyncio.QueueEmpty
        item = items.popleft()
        if not items:
            self._items = None
            self._wake_drained()
        return item

    async def drained(self) -> None:
        """Wait until the writer has taken every item (at once if it is gone: :meth:`close`)."""
        if not self._items or self._closed:
            return
        if self._drained is None or self._drained.done():
            self._drained = asyncio.get_running_loop().create_future()
        await self._drained

    def close(self) -> None:
        """The writer is gone: nobody waits in :meth:`drained` for it, now or later."""
        self._closed = True
        self._wake_drained()

    def _wake_drained(self) -> None:
        drained = self._drained
        if drained is not None:
            self._drained = None
            if not drained.done():
                drained.set_result(None)

    async def get(self) -> T:
        while not self._items:
            if self._waiter is not None:
                raise RuntimeError("an outbox has one reader")
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        return self.get_nowait()
