"""The storage layer: games as event logs in Redis, rate limits, and fan-out.

Pure data in, pure data out: events and snapshots are opaque bytes, metadata
small strings; nothing here knows the rules. The app builds its parts on one
:class:`RedisConn` (``service.app.build_context``); none needs Redis to be up:
calls fail with :class:`StoreUnavailable` until it is.
"""

from __future__ import annotations

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
    "StoreError",
    "StoreUnavailable",
    "keys",
]
