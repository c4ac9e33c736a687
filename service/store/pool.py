"""The single server's connection pool, which stays closed once closed.

redis-py's pool, closed, only disconnects the connections it holds at that moment; it
goes on handing out connections, and takes back the ones in use across the close. So a
command still running when the instance shuts down (a batch of the automatic pipeline, a
job stopped mid-call) could leave a connection open that nobody closes: its connect was
under way during the close, or a retry reconnected it after the close cut it. It lives on
until the garbage collector finds it, long after its event loop has closed.

:class:`ClosingPool` makes the close final: a closed pool hands out no connection
(:class:`ClientClosed`, a ``ConnectionError``: redis-py retries nothing for it, the store
answers ``StoreUnavailable``), and disconnects any connection that comes back to it.

It also tells its ``on_connect`` listeners of every connection made, or made again: a new
connection may reach another store process than the old ones did (restarted, replaced),
whose settings nobody has asked yet (durability.py asks again how it fsyncs).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from redis.asyncio import BlockingConnectionPool
from redis.asyncio.connection import AbstractConnection
from redis.exceptions import ConnectionError as RedisConnectionError


class ClientClosed(RedisConnectionError):
    """A command for a store client that was closed (the instance is shutting down)."""


CLOSED = "the store client is closed (the instance is shutting down)"


class ClosingPool(BlockingConnectionPool):
    """A ``BlockingConnectionPool`` that hands out nothing, and keeps nothing open, once
    closed."""

    closed = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.on_connect: list[Callable[[], None]] = []
        super().__init__(*args, **kwargs)

    def make_connection(self) -> AbstractConnection:
        connection: AbstractConnection = super().make_connection()  # type: ignore[no-untyped-call]
        connection.register_connect_callback(self._connected)  # type: ignore[no-untyped-call]
        return connection

    def _connected(self, connection: AbstractConnection) -> None:
        for listener in self.on_connect:
            listener()

    async def get_connection(self, *args: Any, **kwargs: Any) -> AbstractConnection:
        if self.closed:
            raise ClientClosed(CLOSED)
        get = super().get_connection
        connection: AbstractConnection = await get(*args, **kwargs)  # type: ignore[no-untyped-call]
        if self.closed:  # closed while this connection was connecting
            await self.release(connection)
            raise ClientClosed(CLOSED)
        return connection

    async def release(self, connection: AbstractConnection) -> None:
        await super().release(connection)
        if self.closed:  # in use across the close, perhaps reconnected since by a retry
            await connection.disconnect(nowait=True)

    async def aclose(self) -> None:
        self.closed = True
        await super().aclose()
