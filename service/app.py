"""The application factory: one place where resources are made and torn down.

``create_app(settings)`` makes the :class:`~service.context.Context` (the store's
client for ``settings.redis_url``, the pub/sub hub, the solver's pool, the daily
challenges...) and returns an aiohttp application that keeps it; its one
``cleanup_ctx`` runs the background tasks while the app runs and closes every
resource after it. On shutdown every WebSocket is closed first, with 1001 (going
away).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import datetime
from pathlib import Path

from aiohttp import web

from service.context import CONTEXT, Context
from service.domain.auth import Tokens, load_secret
from service.domain.counts import InstanceCounts
from service.domain.daily.challenge import Seeds, epoch_ms
from service.domain.daily.deals import DailyDeals
from service.domain.daily.service import DailyService
from service.domain.errors import ApiError
from service.domain.games import GameService, Loaded
from service.domain.hints import Hints
from service.domain.players import Players
from service.domain.ratelimit import Limiter
from service.domain.searches import Searches
from service.domain.solutions import Solutions
from service.domain.solving import SolverPool
from service.runtime.clock import Clock
from service.runtime.looplag import LoopLag
from service.runtime.memory import Trimmer
from service.runtime.metrics import Metrics
from service.runtime.workers import instance_of
from service.settings import Settings
from service.socket import endpoint as ws
from service.socket.messages import Close
from service.store import keys
from service.store.connection import RedisConn
from service.store.counts import CountsStore
from service.store.daily import DailyStore
from service.store.fanout import Hub
from service.store.games import Games
from service.store.ratelimit import RateLimiter
from service.store.solver import SolverStore
from service.web import rest
from service.web import solver as solver_rest
from service.web.addresses import trusted_networks
from service.web.aiohttp_handle_error_patch import json_protocol_errors
from service.web.caller import caller_middleware
from service.web.cors import cors_middleware
from service.web.daily import routes as daily_routes
from service.web.deadline import deadline_middleware
from service.web.error_middleware import SOCKET_ROUTE, error_middleware
from service.web.responses import Handler

log = logging.getLogger("service")
WEB_ROOT = Path(__file__).resolve().parent.parent / "clients" / "web"
# The JavaScript client package's modules, which the web client imports as ../js/src/.
JS_CLIENT_ROOT = WEB_ROOT.parent / "js" / "src"


@web.middleware
async def metrics_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    response = await handler(request)
    route = request.match_info.route.resource
    name = route.canonical if route is not None else "unmatched"
    request.app[CONTEXT].metrics.requests.inc(name, request.method, str(response.status))
    return response


def create_app(settings: Settings, clock: Clock | None = None) -> web.Application:
    """The service as an aiohttp application. ``settings.redis_url`` must be set
    (``python -m service`` starts the embedded store and sets it)."""
    if not settings.redis_url:
        raise ValueError("create_app needs settings.redis_url "
                         "(python -m service starts an embedded store)")
    json_protocol_errors()
    trusted_networks(settings.trusted_proxies)  # a bad entry fails here, not on the first request

    app = web.Application(client_max_size=settings.max_body_bytes,
                          middlewares=[metrics_middleware, cors_middleware, error_middleware,
                                       caller_middleware,
                                       deadline_middleware(settings.request_deadline_s,
                                                           settings.max_body_bytes)])
    app[CONTEXT] = build_context(settings, settings.redis_url, clock or Clock())
    app.add_routes(rest.routes)
    app.add_routes(daily_routes)
    app.add_routes(solver_rest.routes)
    app.router.add_get(SOCKET_ROUTE, ws.websocket_handler)
    _add_web_client(app)
    app.cleanup_ctx.append(_running)
    # Before aiohttp waits for the handlers still running (a socket's, for ever), not after.
    app.on_shutdown.append(_close_sockets)
    return app


def build_context(settings: Settings, redis_url: str, clock: Clock) -> Context:
    """Every resource of the instance, made (nothing started: see :func:`_running`)."""
    redis = RedisConn(settings, redis_url)
    pool = SolverPool(settings.solver_workers, settings.solver_queue, settings.solver_idle_s)
    counts = InstanceCounts(CountsStore(redis, instance_of(settings), secrets.token_hex(8)))
    searches = Searches(counts, settings)
    metrics = Metrics()
    solver_store = SolverStore(redis)
    games = GameService(Games(redis), solver_store, settings, clock, metrics, Hub(redis))
    solutions = Solutions(pool, solver_store, searches, settings)
    seeds = Seeds(load_secret(settings.daily_secret, settings.data_dir, "daily_secret"))
    deals = DailyDeals(settings, clock, solver_store, seeds, pool, solutions)
    metrics.solver_jobs.set_function(lambda: pool.pending)
    metrics.daily_deals_ready.set_function(lambda: float(deals.ready))
    rates = RateLimiter(redis)
    secret = load_secret(settings.token_secret, settings.data_dir)
    ctx = Context(
        settings=settings, clock=clock, metrics=metrics, redis=redis, games=games,
        players=Players(redis), tokens=Tokens(secret, settings.token_ttl_s, clock),
        limiter=Limiter(rates, keys.command_limit, settings.rate_limit_per_s,
                        settings.rate_limit_burst),
        read_limiter=Limiter(rates, keys.read_limit, settings.read_rate_per_s,
                             settings.read_burst, what="reads from this address",
                             setting="read_rate_per_s", reads=True),
        create_limiter=Limiter(rates, keys.create_limit, settings.create_rate_per_s,
                               settings.create_burst, what="new games by this player",
                               setting="create_rate_per_s"),
        create_address_limiter=Limiter(rates, keys.create_address_limit,
                                       settings.create_per_address_rate_per_s,
                                       settings.create_per_address_burst,
                                       what="new games from this address",
                                       setting="create_per_address_rate_per_s"),
        signup_limiter=Limiter(rates, keys.signup_limit, settings.signup_per_address_rate_per_s,
                               settings.signup_per_address_burst,
                               what="new players from this address",
                               setting="signup_per_address_rate_per_s"),
        rename_limiter=Limiter(rates, keys.rename_limit, settings.renames_per_day / 86_400,
                               settings.renames_per_day, what="renames of this player",
                               setting="renames_per_day",
                               shown_rate=f"{settings.renames_per_day} a day"),
        pool=pool, solutions=solutions, hints=Hints(pool, searches, settings),
        daily=DailyService(settings, clock, games, DailyStore(redis), deals), counts=counts,
    )

    async def closed(loaded: Loaded) -> None:  # a won or resigned game no longer counts as open
        if loaded.game.status.is_final:
            await ctx.players.closed_game(loaded.owner, loaded.game_id, loaded.game.variant.id,
                                          games.final_ttl_s(loaded))

    async def made(owner: str, game_id: str, variant: str, created_at: datetime) -> None:
        await ctx.players.add_game(owner, game_id, variant, epoch_ms(created_at),
                                   settings.player_ttl_s)

    games.on_final.append(closed)
    games.on_create.append(made)  # the player's index of their games
    games.on_final.append(ctx.daily.on_final)  # a daily attempt takes its place on the board
    return ctx


def _add_web_client(app: web.Application) -> None:
    index = WEB_ROOT / "index.html"
    if not index.exists():
        return

    async def index_page(request: web.Request) -> web.FileResponse:
        return web.FileResponse(index)

    def assets(root: Path) -> Callable[[web.Request], Awaitable[web.FileResponse]]:
        async def asset(request: web.Request) -> web.FileResponse:
            name = request.match_info["path"]
            path = web_asset(name, root)
            if path is None:
                raise ApiError("not_found", f"no web client asset {name!r}")
            return web.FileResponse(path)

        return asset

    app.router.add_get("/", index_page)
    app.router.add_get("/web/{path:.+}", assets(WEB_ROOT))
    app.router.add_get("/js/src/{path:.+}", assets(JS_CLIENT_ROOT))  # the package's modules
    app.on_response_prepare.append(_revalidate_web_client)


# What the browser loads: the page, its modules, styles, images and fonts. Nothing else
# under clients/web is served (its README, a developer's notes or stray files).
WEB_ASSET_SUFFIXES = frozenset({".html", ".js", ".mjs", ".css", ".svg", ".png", ".ico",
                                ".webmanifest", ".woff2"})


def web_asset(name: str, root: Path = WEB_ROOT) -> Path | None:
    """The file of the web client's asset ``name`` (a path under /web/, or under /js/src/
    for the client package's modules in ``root``), or None when it is not one: not an
    asset's suffix, hidden, outside the folder, or not there."""
    path = (root / name).resolve()
    if (path.suffix not in WEB_ASSET_SUFFIXES or not path.is_relative_to(root)
            or any(part.startswith(".") for part in path.relative_to(root).parts)
            or not path.is_file()):
        return None
    return path


# The web client keeps its token in localStorage: no script but its own modules may
# run, nothing may frame it (clickjacking), and no URL of it leaves in a Referer.
# connect-src 'self' covers the same-origin WebSocket (CSP Level 3).
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'"
)
BROWSER_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


async def _revalidate_web_client(request: web.Request, response: web.StreamResponse) -> None:
    # After a deploy, a browser must not mix cached modules of two versions.
    if request.path == "/" or request.path.startswith(("/web/", "/js/src/")):
        response.headers["Cache-Control"] = "no-cache"
        response.headers.update(BROWSER_HEADERS)
    else:  # the API's JSON is never a script or a page either
        response.headers.setdefault("X-Content-Type-Options", "nosniff")


async def _running(app: web.Application) -> AsyncIterator[None]:
    """The background tasks run while the app does; every resource is closed after it."""
    ctx = app[CONTEXT]
    daily = ctx.daily
    lag = LoopLag(ctx.metrics.loop_lag)
    # Memory given back after a burst of sockets closes; the games they read are read again.
    trimmer = Trimmer(ctx.sockets, forget=ctx.games.cache.forget)
    try:
        lag.start()
        trimmer.start()
        ctx.counts.start()
        daily.deals.start()  # choosing the deals ahead
        daily.start()  # ranking the days that end
        yield
    finally:
        # The tasks stop before the store they use closes.
        await lag.stop()
        await trimmer.stop()
        await daily.deals.stop()
        await daily.stop()
        await ctx.counts.stop()  # after the sockets closed: whatever is left stops counting
        await ctx.pool.aclose()
        await ctx.games.feed.aclose()
        await ctx.redis.aclose()


async def _close_sockets(app: web.Application) -> None:
    sockets = list(app[CONTEXT].sockets)
    with contextlib.suppress(Exception):
        await asyncio.gather(*(s.close(code=Close.GOING_AWAY, message=b"server shutting down")
                               for s in sockets), return_exceptions=True)
