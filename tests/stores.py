"""The store's parts bundled for the store tests (the service builds its own, in
``service.app.build_context``)::

    async with open_store(settings) as store:
        await store.games.append(...)
        await store.rate_limiter.allow(...)

``open_store`` starts the embedded server when ``settings.redis_url`` is None. It
does not need Redis to be up: calls fail with ``StoreUnavailable`` until it is.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass

from service.settings import Settings
from service.store.connection import RedisConn
from service.store.embedded import EmbeddedServer
from service.store.fanout import Hub
from service.store.games import Games
from service.store.ratelimit import RateLimiter


@dataclass(eq=False)
class Store:
    """One client of the store and what is built on it."""

    redis: RedisConn
    games: Games
    rate_limiter: RateLimiter
    hub: Hub
    embedded: EmbeddedServer | None = None

    async def ping(self) -> None:
        """Raise ``StoreUnavailable`` unless Redis answers."""
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
