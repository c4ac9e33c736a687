"""The storage layer: games as event logs in Redis, rate limits, and fan-out.

Pure data in, pure data out: events and snapshots are opaque bytes, metadata
small strings; nothing here knows the rules. One entry point::

    async with open_store(settings) as store:
        await store.games.append(...)
        await store.rate_limiter.allow(...)
        async with store.hub.listen(game_id) as listener: ...

``open_store`` starts the embedded server when ``settings.redis_url`` is None.
It does not need Redis to be up: calls fail with :class:`StoreUnavailable`
until it is (``await store.ping()`` for a readiness probe).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass

from service.settings import Settings
from service.store import keys
from service.store.connection import RedisConn
from service.store.embedded import EmbeddedServer, EmbeddedServerError
from service.store.errors import (
    Conflict,
    Duplicate,
    GameExists,
    Inconsistent,
    NotFound,
    StoreError,
    StoreUnavailable,
)
from service.store.fanout import RESYNC, Hub, Listener, Published, Resync
from service.store.games import GameMeta, Games, LoadedGame
from service.store.ratelimit import RateDecision, RateLimiter

__all__ = [
    "RESYNC",
    "Conflict",
    "Duplicate",
    "EmbeddedServer",
    "EmbeddedServerError",
    "GameExists",
    "GameMeta",
    "Inconsistent",
    "Games",
    "Hub",
    "Listener",
    "LoadedGame",
    "NotFound",
    "Published",
    "RateDecision",
    "RateLimiter",
    "RedisConn",
    "Resync",
    "Store",
    "StoreError",
    "StoreUnavailable",
    "keys",
    "open_store",
]

logger = logging.getLogger(__name__)


@dataclass(eq=False)
class Store:
    """Everything the HTTP and WebSocket layers use, built by :func:`open_store`."""

    redis: RedisConn
    games: Games
    rate_limiter: RateLimiter
    hub: Hub
    embedded: EmbeddedServer | None = None

    async def ping(self) -> None:
        """Raise :class:`StoreUnavailable` unless Redis answers (for ``/readyz``)."""
        await self.redis.ping()

    async def aclose(self) -> None:
        await self.hub.aclose()
        await self.redis.aclose()


@contextlib.asynccontextmanager
async def open_store(settings: Settings) -> AsyncIterator[Store]:
    """Connect (starting the embedded server if ``redis_url`` is None); close on exit."""
    embedded: EmbeddedServer | None = None
    url = settings.redis_url
    if url is None:
        embedded = EmbeddedServer.from_settings(settings)
        await embedded.astart()
        url = embedded.url
    try:
        redis = RedisConn(settings, url)
        store = Store(redis, Games(redis), RateLimiter(redis), Hub(redis), embedded)
        try:
            yield store
        finally:
            await store.aclose()
    finally:
        if embedded is not None:
            await embedded.astop()
