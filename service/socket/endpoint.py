"""The WebSocket of a game: ``GET /v1/games/{id}/ws`` (PROTOCOL.md).

:func:`websocket_handler` counts the socket against its address's limit, upgrades
the request, and runs the socket through its states (service/socket/connection.py):
its first hello (service/socket/handshake.py), its first sync, then its messages
(service/socket/session.py) while its writer (service/socket/writer.py) sends everything
else, in order.
"""

from __future__ import annotations

import asyncio

from aiohttp import web

from service.context import Context, context
from service.domain.errors import ApiError, StoreError
from service.socket.connection import Connection, State
from service.socket.gamesocket import GameSocket
from service.socket.handshake import handshake, refuse, unwatch
from service.socket.session import read_loop
from service.web.addresses import client_address


async def run(conn: Connection) -> None:
    """The socket's life: its hello, then, subscribed to the game's feed, live."""
    admitted = await handshake(conn)
    if admitted is None:
        return
    hello, loaded = admitted
    conn.state = State.SYNCING
    writer = conn.writer
    try:
        # The feed goes straight into the writer's outbox, from the moment the
        # subscription exists: subscribed first, then read, nothing published
        # meanwhile can be missed.
        async with conn.ctx.games.subscribe(conn.game_id, writer.from_feed):
            await writer.sync(hello.since, loaded)
            conn.state = State.LIVE
            writer.start()
            try:
                await read_loop(conn)
            finally:
                await writer.stop()
    except StoreError as exc:  # the store went away before the socket was live
        if conn.state is State.SYNCING and not writer.closing:
            await refuse(conn, exc)
        else:
            raise


def sockets_from(address: str) -> str:
    """The per-instance count of a client address's open sockets (service/domain/counts.py)."""
    return "ws:" + address


async def websocket_handler(request: web.Request) -> web.StreamResponse:
    ctx: Context = context(request.app)
    address = client_address(request.remote, request.headers.get("X-Forwarded-For", ""),
                             ctx.settings.trusted_proxies)
    cap = ctx.settings.ws_per_address
    # Counted before the upgrade, so concurrent upgrades cannot overshoot.
    full = await ctx.counts.take([(sockets_from(address), cap)])
    if full is not None:
        # Before the upgrade: a plain 429 (the error middleware shapes it).
        raise ApiError("rate_limited", f"too many open sockets from this address: {full.held} "
                       f"on this instance, at most {cap} (ws_per_address); close one, or retry "
                       "in 5 s", {"limit": "ws_per_address"}, retry_after_s=5)
    try:
        ws = GameSocket(max_msg_size=ctx.settings.max_ws_message_bytes, heartbeat=30.0)
        if not ws.can_prepare(request).ok:
            raise ApiError("bad_request", "this is a game's WebSocket: open it with a WebSocket "
                           "client (a GET with Upgrade: websocket), then send a hello")
        await ws.prepare(request)
        conn = Connection(ctx, ws, request.match_info["game_id"], address)
        conn.writer.transport = request.transport
        ctx.sockets.add(ws)
        ctx.metrics.ws_connections.inc()
        try:
            # The socket's life in a task of its own: every wait of a command (on the
            # store, then on the client's next message) suspends and resumes that task's
            # own short chain of coroutines, and no longer also the request's middlewares
            # and aiohttp's handler around it (a few % of a command's CPU at saturation,
            # benchmarks/README.md). Cancelling the handler (a shutdown) cancels the task
            # it awaits, as before; its errors come out of the await as they came out of run.
            await asyncio.get_running_loop().create_task(run(conn))
        finally:
            ctx.sockets.discard(ws)
            ctx.metrics.ws_connections.dec()
            try:
                await unwatch(conn)
            finally:
                if not ws.closed:
                    await ws.close()
    finally:
        await ctx.counts.give_back([sockets_from(address)])
    return ws
