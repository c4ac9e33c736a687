"""A game socket's first hello: who the client is, and whether it may have the game.

The first message must be a ``hello``, within ``hello_timeout_s``. It is counted
against the socket's hellos and its address's reads; its token, when it has one,
says the player; the game must be one that player (or anyone) may read; and anyone
but the owner is counted among the game's watchers on this instance
(``watchers_per_game``). A ``since`` beyond the game's seq is answered with an
error and the socket waits for a correct hello; any other refusal is an ``error``,
then a close (1013 when retrying later will work, else 1008).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

import msgspec
from aiohttp import WSMsgType

from protocol.codec import decode_client_message
from protocol.errors import bad_request_from
from protocol.ws import Hello
from service.domain.deadline import deadline
from service.domain.errors import ApiError, internal_error, to_api_error
from service.domain.games import Loaded
from service.socket.connection import Connection
from service.socket.messages import Close, close_reason, error_message, since_beyond

log = logging.getLogger(__name__)


def watching(game_id: str) -> str:
    """The per-instance count of a game's watchers."""
    return "watch:" + game_id


async def handshake(conn: Connection) -> tuple[Hello, Loaded] | None:
    """The socket's first accepted hello and the game it read; None once the socket is
    refused or gone."""
    ctx = conn.ctx
    while True:
        hello = await receive_hello(conn)
        if hello is None:
            return None
        try:
            conn.hellos.take()
            async with deadline(ctx.settings.request_deadline_s):
                await ctx.read_limiter.check(conn.address)
                # An empty token is a bad token (401), not a watcher's missing one.
                conn.player, conn.token_expires = (ctx.tokens.verify_until(hello.token)
                                                   if hello.token is not None else (None, None))
                loaded = await ctx.games.load(conn.game_id)
            ctx.games.check_read(loaded, conn.player)
            if hello.since is not None and hello.since > loaded.seq:
                # Not a refusal: the socket stays open for a correct hello.
                await conn.ws.send_frame(error_message(since_beyond(hello.since, loaded.seq)),
                                         WSMsgType.TEXT)
                continue
            await watch(conn, loaded)
            if hello.moves:
                conn.writer.moves.start(loaded)
        except Exception as exc:  # noqa: BLE001
            await refuse(conn, exc)
            return None
        return hello, loaded


async def receive_hello(conn: Connection) -> Hello | None:
    """The first message, if it is a hello in time; else the socket is refused (None)."""
    timeout = conn.ctx.settings.hello_timeout_s
    try:
        # One deadline for the message: aiohttp's own receive timeout restarts at each
        # frame, and a client sending WebSocket pings would wait for ever, hello-less.
        async with asyncio.timeout(timeout):
            msg = await conn.ws.receive()
    except TimeoutError:
        await refuse(conn, ApiError("bad_request",
                                    f"expected a hello message within {timeout:g} s"))
        return None
    if msg.type in (WSMsgType.CLOSE, WSMsgType.CLOSING, WSMsgType.CLOSED):
        return None
    if msg.type is WSMsgType.ERROR:
        # aiohttp's WebSocketError says the close code it closed with (1009: too big).
        too_big = getattr(msg.data, "code", None) == Close.MESSAGE_TOO_BIG
        await refuse(conn, ApiError("bad_request", f"bad frame: {msg.data}"),
                     Close.MESSAGE_TOO_BIG if too_big else Close.POLICY_VIOLATION)
        return None
    if msg.type is not WSMsgType.TEXT:
        await refuse(conn, ApiError("bad_request", "messages are JSON text frames"))
        return None
    try:
        first = decode_client_message(msg.data)
    except msgspec.DecodeError as exc:
        await refuse(conn, ApiError.of(bad_request_from(exc, "hello")))
        return None
    if not isinstance(first, Hello):
        await refuse(conn, ApiError("bad_request", "the first message must be a hello",
                                    {"field": "type"}))
        return None
    return first


async def refuse(conn: Connection, exc: BaseException,
                 code: Close = Close.POLICY_VIOLATION) -> None:
    """Say why (an ``error``), then close: 1013 when retrying later will work."""
    err = to_api_error(exc)
    if err is None:
        log.exception("unexpected error in a WebSocket hello on game %s", conn.game_id,
                      exc_info=exc)
        err = internal_error()
    # Retrying later will work (POLICY_VIOLATION says it won't).
    if err.code in ("unavailable", "rate_limited"):
        code = Close.TRY_AGAIN_LATER
    conn.writer.closing = True
    with contextlib.suppress(Exception):
        await conn.ws.send_frame(error_message(err), WSMsgType.TEXT)
        await conn.ws.close(code=code, message=close_reason(err.message))


async def watch(conn: Connection, loaded: Loaded) -> None:
    """Count the socket among the game's watchers (anyone but the owner) on this instance,
    or 429."""
    if conn.watching or (conn.player is not None and conn.player == loaded.owner):
        return
    ctx = conn.ctx
    cap = ctx.settings.watchers_per_game
    async with deadline(ctx.settings.request_deadline_s):
        full = await ctx.counts.take([(watching(conn.game_id), cap)])
    if full is not None:
        raise ApiError("rate_limited", f"this game has {full.held} watchers on this "
                       f"instance, at most {cap} (watchers_per_game); retry in 30 s",
                       {"limit": "watchers_per_game"}, retry_after_s=30)
    conn.watching = True


async def unwatch(conn: Connection) -> None:
    """The socket is gone: it no longer counts among the game's watchers."""
    if conn.watching:
        conn.watching = False
        await conn.ctx.counts.give_back([watching(conn.game_id)])
