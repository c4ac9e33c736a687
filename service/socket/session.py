"""A live game socket's messages: pings, commands, and hellos again.

Each message of the client is read and answered in turn; the answers go through the
socket's writer (service/socket/writer.py). A command is the owner's (the token of the
socket's first hello), bounded by ``request_deadline_s``, counted against the
player's rate limit, and answered with its diff, then an ``ack`` (or an ``error``
carrying its ``command_id``). A hello again resynchronises the socket.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from time import perf_counter

import msgspec
from aiohttp import WSMsgType

from protocol.codec import command_id_in, decode_client_message, encode
from protocol.errors import bad_request_from
from protocol.ws import Ack, ClientMessage, CommandMessage, Hello, Ping
from service.domain.deadline import deadline
from service.domain.errors import ApiError, internal_error, to_api_error
from service.domain.wire import engine_command
from service.socket.connection import Connection
from service.socket.messages import PONG, Close, close_reason, error_message

log = logging.getLogger(__name__)


# Named once: an enum's class attributes are slow to look up, and every message asks.
_TEXT, _BINARY, _ERROR = WSMsgType.TEXT, WSMsgType.BINARY, WSMsgType.ERROR


async def read_loop(conn: Connection) -> None:
    """Answer the client's messages until the socket closes."""
    ws, writer = conn.ws, conn.writer
    async for msg in ws:
        kind = msg.type
        if kind is _TEXT:
            # Dispatched here, not in a coroutine of its own: a command's waits suspend
            # and resume every coroutine between it and the task (one less).
            message = decoded(conn, msg.data)
            if isinstance(message, CommandMessage):
                await on_command(conn, message)
            elif isinstance(message, Ping):
                writer.send(PONG)
            elif isinstance(message, Hello):  # again on a live socket: resynchronise
                await on_hello_again(conn, message)
        elif kind is _BINARY:
            writer.send(error_message(ApiError("bad_request", "messages are JSON text frames")))
        elif kind is _ERROR:
            break
        outbox = writer.outbox
        if not outbox.empty():
            # Messages that arrived together are read without a pause: let the writer
            # send the answers queued so far, or a burst of pings from a client that
            # reads them would fill the outbox and be closed as too slow. Once it is half
            # full (the writer busy reading the store, or waiting on a client that does
            # not read), read the next message only when the writer has taken them all,
            # for as long as a close frame may wait to be read (ws_close_timeout_s): a
            # client whose own answers stay unread that long is too slow, as one whose
            # diffs fill the outbox.
            if outbox.qsize() * 2 < outbox.maxsize:
                await asyncio.sleep(0)
            elif not writer.closing:
                try:
                    async with asyncio.timeout(conn.ctx.settings.ws_close_timeout_s):
                        await outbox.drained()
                except TimeoutError:
                    writer.too_slow()


def decoded(conn: Connection, data: bytes | str) -> ClientMessage | None:
    """The client's message; None when it does not decode (its ``error`` is sent)."""
    try:
        return decode_client_message(data)
    except msgspec.DecodeError as exc:
        # A command the client can still tell by its id is answered by that id.
        conn.writer.send(error_message(ApiError.of(bad_request_from(exc, "message")),
                                       command_id_in(data)))
        return None


async def on_hello_again(conn: Connection, hello: Hello) -> None:
    ctx, writer = conn.ctx, conn.writer
    try:
        conn.hellos.take()
        await ctx.read_limiter.check(conn.address)
    except Exception as exc:  # noqa: BLE001
        err = (to_api_error(exc)
               or internal_error())
        writer.send(error_message(err))
        return
    if hello.token is not None:
        try:
            player, expires = ctx.tokens.verify_until(hello.token)
        except ApiError as err:
            writer.send(error_message(err))
            return
        if player != conn.player:
            writer.send(error_message(ApiError("bad_request", "a socket keeps the token of its "
                                               "first hello: reconnect to change it")))
            return
        # A fresher token of the same player renews the socket.
        if conn.token_expires is not None:
            conn.token_expires = max(conn.token_expires, expires)
    writer.moves.wanted = hello.moves  # each hello says whether it wants moves
    # Without since, a snapshot (a client that threw its state away, e.g. on a hash
    # that is not the server's), as for a first hello.
    writer.resync(hello.since)


async def on_command(conn: Connection, message: CommandMessage) -> None:
    started = perf_counter()
    ctx, writer = conn.ctx, conn.writer
    writer.hold()  # the feed's items wait: they go out with the answer
    try:
        try:
            if conn.player is None:
                raise ApiError("unauthorized",
                               "this socket has no token: send hello with the owner's token")
            if conn.token_expires is not None and conn.token_expires <= ctx.clock.time():
                await token_expired(conn, message.command_id)
                return
            async with deadline(ctx.settings.request_deadline_s, write=True):
                await ctx.limiter.check(conn.player)
                seq, event = await ctx.games.command(conn.game_id, conn.player,
                                                     engine_command(message.command),
                                                     message.expected_seq, message.command_id)
        except Exception as exc:  # noqa: BLE001 - every failure goes back as an error
            err = to_api_error(exc)
            if err is None:
                log.exception("command failed on game %s", conn.game_id)
                err = internal_error()
            writer.release()
            writer.send(error_message(err, message.command_id))
            return
        # The diff first (unless the feed delivered it already), then the ack.
        writer.answer(seq, event, encode(Ack(command_id=message.command_id, seq=seq)))
        ctx.metrics.websocket_ack.observe(perf_counter() - started)
    finally:
        writer.release()


async def token_expired(conn: Connection, command_id: str) -> None:
    """The token expired while the socket was open: it commands nothing more (1008)."""
    err = ApiError("unauthorized",
                   "the token has expired: create a player again, then reconnect")
    conn.writer.closing = True
    with contextlib.suppress(Exception):
        await conn.ws.send_frame(error_message(err, command_id), WSMsgType.TEXT)
        await conn.ws.close(code=Close.POLICY_VIOLATION, message=close_reason(err.message))
