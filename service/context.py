"""The Context: everything a handler needs, made once by ``create_app``.

Handlers reach it with :func:`context` (``context(request.app)``); the app keeps it
under the typed key :data:`CONTEXT`. Its own module, so that the handlers and the
app factory both import it and neither imports the other back.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from aiohttp import web

from service.domain.auth import Tokens
from service.domain.counts import InstanceCounts
from service.domain.daily.service import DailyService
from service.domain.games import GameService
from service.domain.hints import Hints
from service.domain.players import Players
from service.domain.ratelimit import Limiter
from service.domain.solutions import Solutions
from service.domain.solving import SolverPool
from service.runtime.clock import Clock
from service.runtime.metrics import Metrics
from service.settings import Settings
from service.store.connection import RedisConn
from service.store.errors import StoreError
from service.store.persistence import replicas_missing

# How long /readyz waits for the store's PING: well within the readiness probes'
# timeouts (deploy/: 2 s), so a paused store makes the probe see a 503, not a timeout.
READY_PING_S = 1.0


@dataclass(eq=False)
class Context:
    """The instance's resources and its per-instance counts."""

    settings: Settings
    clock: Clock
    metrics: Metrics
    redis: RedisConn
    games: GameService
    players: Players
    tokens: Tokens
    limiter: Limiter  # commands and writes per player
    read_limiter: Limiter  # reads per client address (REST reads of a game and socket hellos)
    create_limiter: Limiter  # game creation per player
    create_address_limiter: Limiter  # game creation per client address
    signup_limiter: Limiter  # sign-ups per client address
    rename_limiter: Limiter  # renames per player
    pool: SolverPool  # the solver's worker processes
    solutions: Solutions
    hints: Hints
    daily: DailyService
    # The per-instance limits' counts (sockets per address, watchers per game, searches),
    # this worker's share and the instance's, in the store.
    counts: InstanceCounts
    sockets: set[web.WebSocketResponse] = field(default_factory=set)

    async def store_ready(self) -> bool:
        """Whether the store answers a PING within :data:`READY_PING_S`."""
        try:
            async with asyncio.timeout(READY_PING_S):
                await self.redis.ping()
        except (StoreError, TimeoutError):
            return False
        return True

    async def not_ready(self) -> str | None:
        """Why the instance cannot serve writes now, or None: the store does not answer a
        PING within :data:`READY_PING_S`, or (``durability replicated``) a master of it
        has no replica, so that no write could be acknowledged."""
        if not await self.store_ready():
            return (f"the game store is unreachable or did not answer a PING within "
                    f"{READY_PING_S:g} s")
        if self.settings.durability == "replicated":
            try:
                return await replicas_missing(self.redis, READY_PING_S)
            except (StoreError, TimeoutError):
                return (f"durability replicated: the game store did not say within "
                        f"{READY_PING_S:g} s whether a replica is attached")
        return None


CONTEXT = web.AppKey("context", Context)


def context(app: web.Application) -> Context:
    """The app's Context (set by ``create_app``)."""
    return app[CONTEXT]
