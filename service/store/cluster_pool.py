"""The Redis Cluster client's connections, which stay closed once closed.

redis-py's cluster client keeps a pool of connections per node. Closed, it disconnects
the nodes it knows at that moment, and only if its map of the cluster is current: after a
connection error it means to ask for the cluster's nodes again at its next command, and
its close then closes nothing. And it does not stay closed: a command in flight across the
close loses its connection and is retried, after the client has asked for the cluster's
nodes again, on new connections (a blocking pop is sent again and takes an item nobody will
read). Such connections live on until the garbage collector finds them, long after their
event loop has closed.

:class:`ClusterConnections` makes the close final, as :class:`~service.store.pool.ClosingPool`
does for a single server: every connection the cluster client makes knows it; once closed,
none connects (:class:`~service.store.pool.ClientClosed`, which redis-py does not retry), and
the close disconnects every one of them, as well as any that was connecting meanwhile.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

from redis.asyncio.cluster import RedisCluster
from redis.asyncio.connection import Connection

from service.store.pool import CLOSED, ClientClosed


class _Closing(Connection):
    """A cluster connection known to the :class:`ClusterConnections` of its client."""

    connections: ClusterConnections

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.connections.made(self)

    async def connect_check_health(self, *args: Any, **kwargs: Any) -> None:
        if self.connections.closed:
            raise ClientClosed(CLOSED)
        try:
            await super().connect_check_health(*args, **kwargs)
        except Exception as exc:
            if self.connections.closed:  # cut by the close while it was connecting
                raise ClientClosed(CLOSED) from exc
            raise
        if self.connections.closed:  # closed while this connection was connecting
            await self.disconnect()
            raise ClientClosed(CLOSED)


class ClusterConnections:
    """Every connection of one cluster client; :meth:`aclose` closes them all."""

    def __init__(self) -> None:
        self.closed = False
        self._made: weakref.WeakSet[Connection] = weakref.WeakSet()
        self._classes: dict[type[Connection], type[Connection]] = {}

    def install(self, client: RedisCluster) -> None:
        """Make every connection of ``client`` one of these (before it has any)."""
        # Shared with its nodes manager: the nodes it finds later make theirs with these.
        kwargs = client.connection_kwargs
        kwargs["connection_class"] = self._closing(kwargs["connection_class"])
        for node in client.nodes_manager.startup_nodes.values():
            node.connection_class = self._closing(node.connection_class)

    def _closing(self, base: type[Connection]) -> type[Connection]:
        if base not in self._classes:
            # One subclass per client and connection class (TCP or TLS) that knows this.
            self._classes[base] = type(f"Closing{base.__name__}", (_Closing, base),
                                       {"connections": self})
        return self._classes[base]

    def made(self, connection: Connection) -> None:
        self._made.add(connection)

    async def aclose(self) -> None:
        self.closed = True
        await asyncio.gather(*(connection.disconnect() for connection in list(self._made)),
                             return_exceptions=True)
