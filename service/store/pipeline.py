"""Automatic pipelining: the commands many coroutines issue at the same moment
travel to Redis together.

Under load, a hundred WebSocket clients each wait on one EVALSHA; sending each
on its own costs redis-py a pool checkout, a write and a read per command,
which is most of a command's CPU. :class:`AutoPipeline` queues commands issued
in the same event-loop turn and sends them as one pipeline (not a
transaction: each keeps its own reply or error), with a few pipelines in
flight at once. Under light load a batch is one command, and the cost is one
extra loop turn.

A batch is packed here (:func:`~service.store.resp.pack_commands`) and written on a
connection the pipeline holds between batches (one per batch in flight, taken from the
client's pool once), and its replies are read with redis-py's parser and response
callbacks: what redis-py's ``Pipeline`` does, without its per-batch object, pool
checkout (with a check that the connection has nothing unread), per-argument encoding
and bookkeeping, which were about a tenth of a command's CPU (benchmarks/README.md). As
with redis-py's pipeline, a connection error or timeout retries the whole batch on a
fresh connection (the client's retry policy): an append sent twice finds its
command_id and reports the first application. A batch's write and replies have one
deadline, the connections' socket timeout, and the batches' deadlines share one timer
(service/runtime/timeouts.py).

A batch runs in a task of its own, which outlives a caller that stops waiting (its
deadline passed, its job was stopped): :meth:`AutoPipeline.aclose`, before the client
closes, ends the batches still queued or in flight, so none of them uses a connection
after the close.
"""

from __future__ import annotations

import asyncio
import inspect
import math
from typing import Any, cast

from redis.asyncio import Redis
from redis.asyncio.connection import AbstractConnection, Connection
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from service.runtime.timeouts import Watch
from service.store.pool import ClientClosed
from service.store.resp import pack_commands


class AutoPipeline:
    def __init__(self, client: Redis, max_in_flight: int = 4, max_batch: int = 256) -> None:
        self.client = client
        self.max_in_flight = max_in_flight
        self.max_batch = max_batch
        self._pending: list[tuple[tuple[Any, ...], asyncio.Future[Any]]] = []
        self._in_flight = 0
        self._scheduled = False
        # The loop keeps only weak references to tasks: hold the batches in flight.
        self._tasks: set[asyncio.Task[None]] = set()
        self._held: list[AbstractConnection] = []  # idle between batches, at most max_in_flight
        self.batches = 0
        self.commands = 0
        self._closed = False
        self._watch: Watch | None = None  # the batches' deadlines, under one timer

    async def execute(self, *args: Any) -> Any:
        """Run one command as part of the next batch; its reply, or its error raised."""
        if self._closed:
            raise ClientClosed("the store client is closed (the instance is shutting down)")
        # The loop asked for once: with Python 3.11 every ``get_running_loop`` (and
        # ``current_task()`` without its loop) is a ``getpid`` system call.
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._pending.append((args, future))
        if not self._scheduled and self._in_flight < self.max_in_flight:
            self._scheduled = True
            loop.call_soon(self._launch, loop)
        return await future

    def _launch(self, loop: asyncio.AbstractEventLoop) -> None:
        self._scheduled = False
        if self._closed:
            return
        # A waiter that gave up (its request deadline passed) is not sent at all: its
        # client was told the outcome is unknown, and nothing is better than late.
        self._pending = [entry for entry in self._pending if not entry[1].done()]
        while self._pending and self._in_flight < self.max_in_flight:
            batch = self._pending[: self.max_batch]
            del self._pending[: self.max_batch]
            self._in_flight += 1
            task = loop.create_task(self._send(batch, loop))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _send(self, batch: list[tuple[tuple[Any, ...], asyncio.Future[Any]]],
                    loop: asyncio.AbstractEventLoop) -> None:
        try:
            try:
                replies = await self._exchange([args for args, _ in batch], loop)
            except BaseException as exc:  # every waiter must hear of it
                heard: BaseException = exc
                if isinstance(exc, asyncio.CancelledError):  # the client is closing
                    heard = ClientClosed("the store client closed with this command in "
                                         "flight: its outcome is unknown")
                for _, future in batch:
                    if not future.done():
                        future.set_exception(heard)
                if isinstance(exc, asyncio.CancelledError):
                    raise
                return
            self.batches += 1
            self.commands += len(batch)
            for (_, future), reply in zip(batch, replies, strict=True):
                if future.done():
                    continue
                if isinstance(reply, Exception):
                    future.set_exception(reply)
                else:
                    future.set_result(reply)
        finally:
            self._in_flight -= 1
            if self._pending and not self._scheduled:
                self._scheduled = True
                loop.call_soon(self._launch, loop)

    async def _exchange(self, commands: list[tuple[Any, ...]],
                        loop: asyncio.AbstractEventLoop) -> list[Any]:
        """Each command's reply (an error reply as its exception), in order; a failure of
        the connection raised once the retries are spent."""
        packed = pack_commands(commands)  # a DataError for a bad argument: nothing sent
        pool = self.client.connection_pool
        get = pool.get_connection
        conn: AbstractConnection = (self._held.pop() if self._held
                                    else await get())  # type: ignore[no-untyped-call]
        done = False
        try:
            replies: list[Any] = await conn.retry.call_with_retry(
                lambda: self._round_trip(conn, packed, commands, loop),
                lambda _: conn.disconnect())
            done = True
            return replies
        finally:
            if done and not self._closed:
                self._held.append(conn)
            else:  # the pool disconnects it if it is closed
                await pool.release(conn)

    async def _round_trip(self, conn: AbstractConnection, packed: bytes,
                          commands: list[tuple[Any, ...]],
                          loop: asyncio.AbstractEventLoop) -> list[Any]:
        # One deadline for the batch's write and replies (the connection's socket
        # timeout), not one per step as redis-py's have: its write's own deadline is an
        # ``asyncio.wait_for``, a task and a timer per batch, and its reads have one per
        # reply (benchmarks/README.md).
        timeout = conn.socket_timeout
        entry = None
        if timeout is not None:
            # The batches' deadlines share one timer (service/runtime/timeouts.py), where
            # asyncio.timeout made one per batch.
            task = asyncio.current_task(loop)
            assert task is not None
            watch = self._watch
            if watch is None or watch.loop is not loop:
                watch = self._watch = Watch(loop)
            entry = watch.add(task, loop.time() + timeout)
        try:
            if entry is None:  # no timeout, or the watch could not take it
                async with asyncio.timeout(timeout):
                    replies = await self._write_and_read(conn, packed, commands)
            else:
                replies = await self._write_and_read(conn, packed, commands)
        except BaseException as exc:
            # Cancelled, timed out or failed with replies still unread: the connection is
            # not reused for anything else (a retry connects again).
            expired = entry is not None and self._watch is not None and self._watch.done(entry)
            entry = None
            await conn.disconnect(nowait=True)
            if isinstance(exc, TimeoutError) or (expired
                                                 and isinstance(exc, asyncio.CancelledError)):
                # the batch's deadline: retried as redis-py's timeouts are
                raise RedisTimeoutError("Timeout in an exchange with the store") from exc
            raise
        finally:
            if entry is not None and self._watch is not None:
                self._watch.done(entry)
        return replies

    async def _write_and_read(self, conn: AbstractConnection, packed: bytes,
                              commands: list[tuple[Any, ...]]) -> list[Any]:
        # The connection is this batch's alone until it is answered: without a socket
        # timeout, redis-py writes without a deadline of its own (the batch has one).
        timeout = conn.socket_timeout
        conn.socket_timeout = None
        try:
            await conn.send_packed_command(packed)
        finally:
            conn.socket_timeout = timeout
        if str(conn.protocol) != "3":  # RESP2 (asked for, or a server without HELLO 3):
            return await self._read_each(conn, commands)  # redis-py's own reading
        return await self._read_replies(conn, commands)

    async def _read_replies(self, conn: AbstractConnection,
                            commands: list[tuple[Any, ...]]) -> list[Any]:
        """The batch's replies, read by the pipeline itself (RESP3), redis-py's reply
        callbacks applied."""
        callbacks = self.client.response_callbacks
        replies: list[Any] = []
        for args in commands:
            try:
                reply = await conn.read_response(timeout=math.inf)
            except ResponseError as exc:
                replies.append(exc)
                continue
            callback = callbacks.get(args[0])
            if callback is not None:
                reply = callback(reply)
                if inspect.isawaitable(reply):
                    reply = await reply
            replies.append(reply)
        return replies

    async def _read_each(self, conn: AbstractConnection,
                         commands: list[tuple[Any, ...]]) -> list[Any]:
        parse = self.client.parse_response
        replies: list[Any] = []
        try:
            for args in commands:
                try:
                    replies.append(await parse(cast(Connection, conn), args[0]))
                except ResponseError as exc:
                    replies.append(exc)
        except BaseException:
            await conn.disconnect(nowait=True)
            raise
        return replies

    async def aclose(self) -> None:
        """End every batch: the queued ones are not sent, the ones in flight are cancelled
        (their connections are closed, not reused); their callers hear ClientClosed.
        Returns once no batch holds a connection any more."""
        self._closed = True
        pending, self._pending = self._pending, []
        for _, future in pending:
            if not future.done():
                future.set_exception(ClientClosed("the store client closed before this "
                                                  "command was sent"))
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        held, self._held = self._held, []
        for conn in held:
            await self.client.connection_pool.release(conn)
