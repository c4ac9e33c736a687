"""The application factory: one place where resources are made and torn down.

``create_app(settings)`` returns an aiohttp application whose ``cleanup_ctx``
connects to the store (``settings.redis_url``), starts the instance-wide
pub/sub hub, and on shutdown closes every WebSocket with 1001 (going away)
before closing the store.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from pathlib import Path

from aiohttp import web

from service.addresses import trusted_networks
from service.auth import Tokens, load_secret
from service.connections import close_slow_requests
from service.clock import Clock
from service.deadline import deadline_middleware
from service.errors import Handler, error_middleware, json_protocol_errors
from service.games import GameService
from service.metrics import Metrics
from service.players import Players
from service.ratelimit import Limiter
from service.hints import Hints
from service.settings import Settings
from service.solutions import Solutions
from service.solving import SolverPool
from service.store.connection import RedisConn
from service.store.errors import StoreError
from service.store.fanout import Hub
from service.store.games import Games
from service.store.ratelimit import RateLimiter
from service.store.solver import SolverStore

log = logging.getLogger("service")
WEB_ROOT = Path(__file__).resolve().parent.parent / "clients" / "web"


@dataclass
class Context:
    """Everything a handler needs, made at start-up."""

    settings: Settings
    clock: Clock
    metrics: Metrics
    redis: RedisConn
    games: GameService
    players: Players
    tokens: Tokens
    limiter: Limiter
    hub: Hub
    pool: SolverPool  # the solver's worker processes
    solutions: Solutions
    hints: Hints
    sockets: set[web.WebSocketResponse] = field(default_factory=set)
    extensions: dict[str, object] = field(default_factory=dict)
    # Reads per client address (REST reads of a game and socket hellos).
    read_limiter: Limiter | None = None
    # Game creation per player and per client address.
    create_limiter: Limiter | None = None
    create_address_limiter: Limiter | None = None
    # Open sockets per client address, and watchers (not the owner) per game, here.
    sockets_by_address: dict[str, int] = field(default_factory=dict)
    watchers: dict[str, int] = field(default_factory=dict)

    async def store_ready(self) -> bool:
        try:
            await self.redis.ping()
        except StoreError:
            return False
        return True


Extension = Callable[["Context"], Awaitable[None]]  # called at start-up with the Context


class Slot:
    """Holds the Context, made at start-up (an app's items are frozen by then)."""

    ctx: Context | None = None


SLOT = web.AppKey("slot", Slot)
EXTENSIONS = web.AppKey("extensions", list)


def context(app: web.Application) -> Context:
    ctx = app[SLOT].ctx
    assert ctx is not None, "the application has not started"
    return ctx


@web.middleware
async def metrics_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    response = await handler(request)
    route = request.match_info.route.resource
    name = route.canonical if route is not None else "unmatched"
    ctx = request.app[SLOT].ctx
    if ctx is not None:
        ctx.metrics.requests.inc(name, request.method, str(response.status))
    return response


def create_app(settings: Settings, clock: Clock | None = None,
               extensions: Sequence[Extension] = ()) -> web.Application:
    """The service as an aiohttp application. ``settings.redis_url`` must be set
    (``python -m service`` starts the embedded store and sets it)."""
    if not settings.redis_url:
        raise ValueError("create_app needs settings.redis_url (python -m service starts an embedded store)")
    from service import daily, rest, solver_rest, ws

    json_protocol_errors()
    close_slow_requests()
    trusted_networks(settings.trusted_proxies)  # a bad entry fails here, not on the first request

    app = web.Application(client_max_size=settings.max_body_bytes,
                          middlewares=[metrics_middleware, error_middleware,
                                       deadline_middleware(settings.request_deadline_s)])
    app[SLOT] = Slot()
    app[EXTENSIONS] = [*extensions, daily.setup]
    app.add_routes(rest.routes)
    app.add_routes(daily.routes)
    app.add_routes(solver_rest.routes)
    app.router.add_get("/v1/games/{game_id}/ws", ws.websocket_handler)
    _add_web_client(app)
    app.cleanup_ctx.append(_resources(settings, clock or Clock()))
    app.on_shutdown.append(_close_sockets)
    app.on_shutdown.append(daily.shutdown)
    return app


def _add_web_client(app: web.Application) -> None:
    index = WEB_ROOT / "index.html"
    if not index.exists():
        return

    async def index_page(request: web.Request) -> web.FileResponse:
        return web.FileResponse(index)

    app.router.add_get("/", index_page)
    app.router.add_static("/web/", WEB_ROOT, show_index=False)
    app.on_response_prepare.append(_revalidate_web_client)


# The web client keeps its token in localStorage: no script but its own modules may
# run, nothing may frame it (clickjacking), and no URL of it leaves in a Referer.
# connect-src 'self' covers the same-origin WebSocket (CSP Level 3).
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'"
)
BROWSER_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


async def _revalidate_web_client(request: web.Request, response: web.StreamResponse) -> None:
    # After a deploy, a browser must not mix cached modules of two versions.
    if request.path == "/" or request.path.startswith("/web/"):
        response.headers["Cache-Control"] = "no-cache"
        response.headers.update(BROWSER_HEADERS)
    else:  # the API's JSON is never a script or a page either
        response.headers.setdefault("X-Content-Type-Options", "nosniff")


def _resources(settings: Settings, clock: Clock):  # type: ignore[no-untyped-def]
    async def resources(app: web.Application) -> AsyncIterator[None]:
        assert settings.redis_url is not None
        metrics = Metrics()
        redis = RedisConn(settings, settings.redis_url)
        hub = Hub(redis)
        tokens = Tokens(load_secret(settings.token_secret, settings.data_dir), settings.token_ttl_s, clock)
        pool = SolverPool(settings.solver_workers, settings.solver_queue)
        ctx = Context(
            settings=settings, clock=clock, metrics=metrics, redis=redis,
            games=GameService(Games(redis), settings, clock, metrics),
            players=Players(redis), tokens=tokens,
            limiter=Limiter(RateLimiter(redis), settings.rate_limit_per_s, settings.rate_limit_burst),
            hub=hub, pool=pool, solutions=Solutions(pool, SolverStore(redis), settings),
            hints=Hints(pool, settings),
            read_limiter=Limiter(RateLimiter(redis), settings.read_rate_per_s, settings.read_burst,
                                 what="reads from this address"),
            create_limiter=Limiter(RateLimiter(redis), settings.create_rate_per_s, settings.create_burst,
                                   what="new games by this player"),
            create_address_limiter=Limiter(RateLimiter(redis), settings.create_per_address_rate_per_s,
                                           settings.create_per_address_burst,
                                           what="new games from this address"),
        )
        app[SLOT].ctx = ctx
        ctx.games.on_final.append(_closed_game(ctx))
        for setup in app[EXTENSIONS]:
            await setup(ctx)
        try:
            yield
        finally:
            await pool.aclose()
            await hub.aclose()
            await redis.aclose()

    return resources




def _closed_game(ctx: Context) -> Callable[[Any], Awaitable[None]]:
    async def closed(loaded: Any) -> None:  # a won or resigned game no longer counts as open
        if loaded.game.status.is_final:
            await ctx.players.closed_game(loaded.owner, loaded.game_id)

    return closed


async def _close_sockets(app: web.Application) -> None:
    ctx = app[SLOT].ctx
    if ctx is None:
        return
    from service.ws import Close

    sockets = list(ctx.sockets)
    with contextlib.suppress(Exception):
        await asyncio.gather(*(s.close(code=Close.GOING_AWAY, message=b"server shutting down")
                               for s in sockets), return_exceptions=True)
