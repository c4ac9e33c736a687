"""The automatic pipeline's own packing and connections (service/store/pipeline.py,
resp.py): the bytes redis-py would send, its refusals, and a held connection that the
store dropped between batches, which the next batch replaces without its caller hearing."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Callable
from typing import Any

import pytest
from redis.asyncio import Redis
from redis.asyncio.connection import Connection
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import DataError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from service.settings import Settings
from service.store import resp
from service.store.connection import RedisConn
from service.store.embedded import EmbeddedServer
from service.store.pipeline import AutoPipeline
from service.store.resp import pack_commands
from tests.redis_servers import sync_client


@pytest.mark.parametrize("args", [
    ("PING",),
    ("EVALSHA", "0123abcd", 2, "game:{g1}:log", "game:{g1}:meta", b"\x00\xff bytes", -7, 0),
    ("SET", "k", 1.5), ("SET", "k", "é ü"), ("SET", "k", bytearray(b"ab")),
    ("SET", "k", memoryview(b"cd")), ("SET", "k", b""), ("SET", "k", 10**20),
])
def test_commands_are_packed_as_redis_py_packs_them(args: tuple[Any, ...]) -> None:
    expected = b"".join(bytes(part) for part in Connection().pack_commands([args, ("PING",)]))
    assert pack_commands([args, ("PING",)]) == expected
    assert resp._pack_commands([args, ("PING",)]) == expected  # without hiredis too


@pytest.mark.parametrize("bad", [True, None, object(), [1]])
def test_what_redis_py_refuses_is_refused(bad: Any) -> None:
    with pytest.raises(DataError):
        pack_commands([("SET", "k", bad)])
    with pytest.raises(DataError):
        resp._pack_commands([("SET", "k", bad)])


async def test_a_held_connection_the_store_dropped_is_replaced_for_the_next_batch(
        redis_url: str, make_settings: Callable[..., Settings]) -> None:
    redis = RedisConn(make_settings(redis_url, instance_id="held"), redis_url)
    try:
        # One batch: every command of it on one connection, held for the next batches.
        ids = await asyncio.gather(*(redis.execute("CLIENT", "ID") for _ in range(5)))
        assert len(set(ids)) == 1
        assert await redis.execute("CLIENT", "ID") == ids[0]
        with sync_client(redis_url) as admin:
            assert admin.execute_command("CLIENT", "KILL", "ID", ids[0]) == 1
        # The batch after the kill goes out on a new connection, its reply as before.
        assert await redis.execute("SET", "k", "v") is True
        assert await redis.execute("GET", "k") == b"v"
        assert await redis.execute("CLIENT", "ID") != ids[0]
        assert await redis.execute("HGETALL", "nothing") == {}  # redis-py's reply callbacks
    finally:
        await redis.aclose()


@pytest.mark.parametrize("protocol", [2, 3])
async def test_replies_are_the_same_whichever_protocol_the_connection_speaks(
        protocol: int, redis_url: str, make_settings: Callable[..., Settings]) -> None:
    """RESP3 replies are read by the pipeline itself, RESP2 ones (asked for, or from a server
    that has no HELLO 3) by redis-py: a caller sees the same values either way."""
    sep = "&" if "?" in redis_url else "?"
    url = f"{redis_url}{sep}protocol={protocol}"
    redis = RedisConn(make_settings(url, instance_id=f"resp{protocol}"), url)
    try:
        await redis.execute("DEL", f"h{protocol}")
        replies = await asyncio.gather(
            redis.execute("HSET", f"h{protocol}", "a", "1"),
            redis.execute("HGETALL", f"h{protocol}"),
            redis.execute("SET", f"s{protocol}", "v"),
            redis.execute("GET", f"s{protocol}"),
            redis.execute("HELLO"))
        assert replies[:4] == [1, {b"a": b"1"}, True, b"v"]
        hello = replies[4]
        if isinstance(hello, list):  # RESP2: a flat list of names and values
            hello = dict(zip(hello[::2], hello[1::2], strict=True))
        assert hello[b"proto"] == protocol
    finally:
        await redis.aclose()


async def test_a_batch_gives_its_connection_back_with_its_socket_timeout(redis_url: str) -> None:
    """A batch's write and replies run under one deadline of the pipeline's own (the
    connection's socket timeout), not redis-py's deadline per write and per reply: the
    connection writes without its timeout meanwhile, and has it again afterwards, for
    whoever takes it from the pool next."""
    client = Redis.from_url(redis_url, socket_timeout=2.5)
    auto = AutoPipeline(client)
    try:
        replies = await asyncio.gather(*(auto.execute("ECHO", f"m{i}") for i in range(3)),
                                       auto.execute("NO-SUCH-COMMAND"), return_exceptions=True)
        assert replies[:3] == [b"m0", b"m1", b"m2"]
        assert isinstance(replies[3], ResponseError)
        await auto.aclose()  # the held connection goes back to the pool
        conn = await client.connection_pool.get_connection()  # type: ignore[no-untyped-call]
        try:
            assert conn.socket_timeout == 2.5
            await conn.send_command("PING")
            assert await conn.read_response() in (b"PONG", "PONG")
        finally:
            await client.connection_pool.release(conn)
    finally:
        await client.aclose()


async def test_a_batch_to_a_paused_store_ends_at_its_deadline_and_the_next_one_is_answered(
        server_factory: Callable[..., EmbeddedServer]) -> None:
    """A batch's deadline (the connections' socket timeout, kept for every batch under one
    timer: service/runtime/timeouts.py) ends a batch the store does not answer, as redis-py's
    own timeout would: a timeout error, the connection dropped, a later batch on a new one."""
    server = server_factory("tcp", port=0)
    client = Redis.from_url(server.url, socket_timeout=0.3, retry=Retry(NoBackoff(), 0))
    auto = AutoPipeline(client)
    try:
        assert await auto.execute("PING") is True
        assert server.pid is not None
        os.kill(server.pid, signal.SIGSTOP)
        try:
            # A generous bound, not a figure: without its deadline the batch waits for good.
            async with asyncio.timeout(30):
                with pytest.raises(RedisTimeoutError):
                    await auto.execute("PING")
        finally:
            os.kill(server.pid, signal.SIGCONT)
        assert await auto.execute("ECHO", "back") == b"back"
    finally:
        await auto.aclose()
        await client.aclose()
