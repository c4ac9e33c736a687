"""The request deadline (PROTOCOL.md, "Limits": a request's time in the service): every
HTTP request, WebSocket hello and WebSocket command answers within
``request_deadline_s``. Past it the work is cut short and the client gets 503
``unavailable`` with ``Retry-After``; a write's outcome is then unknown (a command says to
resend it with the same ``command_id``), a read says nothing was written; and a body that
never arrives is the client's fault (400), not the store's.

The first tests hold :func:`service.domain.deadline.deadline` and :func:`time_left` to that on
their own (a block that outlasts its deadline is cancelled: no clock is read by the
assertions); the last ones go through a running instance on a real store.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import pytest

from service.domain.counts import ANSWER_WITHIN_S
from service.domain.deadline import deadline, time_left
from service.domain.errors import ApiError
from service.store.embedded import EmbeddedServer
from tests.live import running_service, settings_for_test
from tests.service.helpers import Api, connect, new_command_id, running_app

FOREVER_S = 3600.0  # a block that would outlast any deadline of these tests


# --- the deadline on its own ---------------------------------------------------------------


async def test_no_deadline_bounds_work_outside_a_request() -> None:
    assert time_left() is None
    async with deadline(0):  # a deadline of 0 bounds nothing
        assert time_left() is None
        await asyncio.sleep(0)


async def test_time_left_says_the_sooner_of_nested_deadlines_and_ends_with_them() -> None:
    async with deadline(30):
        outer = time_left()
        assert outer is not None and 0 < outer <= 30
        async with deadline(600):  # an inner deadline cannot lengthen the request's
            inner = time_left()
            assert inner is not None and inner <= 30
        async with deadline(10):
            inner = time_left()
            assert inner is not None and inner <= 10
        assert time_left() is not None
    assert time_left() is None


async def test_a_read_past_its_deadline_is_a_503_saying_nothing_was_written() -> None:
    with pytest.raises(ApiError) as refused:
        async with deadline(0.05, write=False, shown=2.0):
            await asyncio.sleep(FOREVER_S)
    err = refused.value
    assert (err.status, err.code) == (503, "unavailable")
    assert err.headers["Retry-After"] == "2" and err.details["retry_after_s"] == 2
    assert err.details["deadline_s"] == 2.0  # the deadline the client knows, not what was left
    assert "outcome" not in err.details
    assert "nothing was written" in err.message and "2 s" in err.message


async def test_a_command_past_its_deadline_has_an_unknown_outcome_and_is_resent_by_its_id() -> None:
    with pytest.raises(ApiError) as refused:
        async with deadline(0.05, write=True):
            await asyncio.sleep(FOREVER_S)
    err = refused.value
    assert err.status == 503 and err.details["outcome"] == "unknown"
    assert "unknown outcome" in err.message and "same command_id" in err.message
    assert err.headers["Retry-After"] == "1"  # whole seconds, at least 1


async def test_another_write_past_its_deadline_has_an_unknown_outcome_but_no_command_id() -> None:
    with pytest.raises(ApiError) as refused:
        async with deadline(0.05, write=True, command=False):
            await asyncio.sleep(FOREVER_S)
    err = refused.value
    assert err.details["outcome"] == "unknown" and "unknown outcome" in err.message
    assert "command_id" not in err.message


async def test_a_timeout_of_an_inner_call_is_that_calls_own_not_the_requests() -> None:
    """A call's own timeout within a request goes on as the TimeoutError it is, through
    the request's deadline, for the code that knows the call to answer; only the
    request's own deadline passing is the 503."""
    with pytest.raises(TimeoutError):
        async with deadline(FOREVER_S, write=True):
            async with asyncio.timeout(0.01):
                await asyncio.sleep(FOREVER_S)
    assert time_left() is None


async def test_work_within_its_deadline_is_not_touched() -> None:
    async with deadline(FOREVER_S, write=True):
        await asyncio.sleep(0)
        result = 42
    assert result == 42


async def test_a_shorter_deadline_inside_a_longer_one_passes_first() -> None:
    # The loop's deadlines share one timer in the order they pass; one that passes before
    # those already running (a shorter one, nested) still passes on time.
    with pytest.raises(ApiError) as refused:
        async with deadline(FOREVER_S, write=True):
            async with deadline(0.05, write=False, shown=2.0):
                await asyncio.sleep(FOREVER_S)
    assert refused.value.details["deadline_s"] == 2.0  # the inner one's


async def test_blocks_that_ended_are_not_kept_until_their_deadline() -> None:
    # A command's deadline is a place in the loop's queue (service/domain/deadline.py):
    # ended blocks leave it, or a busy socket would hold every command of the last
    # request_deadline_s.
    from service.domain.deadline import _watch

    async def one() -> None:
        async with deadline(FOREVER_S, write=True):
            await asyncio.sleep(0)

    await asyncio.gather(*(one() for _ in range(100)))
    for _ in range(100):
        await one()
    assert not _watch(asyncio.get_running_loop()).entries


async def test_a_block_that_outlasts_its_deadline_among_many_that_do_not() -> None:
    async def quick() -> None:
        async with deadline(0.05, write=True):
            await asyncio.sleep(0)

    async def stuck() -> None:
        async with deadline(0.05, write=True):
            await asyncio.sleep(FOREVER_S)

    results = await asyncio.gather(quick(), stuck(), quick(), return_exceptions=True)
    assert results[0] is None and results[2] is None
    assert isinstance(results[1], ApiError) and results[1].status == 503


# --- through the service ---------------------------------------------------------------


@pytest.fixture
async def tcp_server(server_factory: Callable[..., EmbeddedServer]) -> EmbeddedServer:
    return server_factory("tcp", port=0)


async def test_a_paused_store_gets_503_within_the_deadline_and_a_resend_applies_once(
        tcp_server: EmbeddedServer, tmp_path: Path) -> None:
    settings = settings_for_test(
        tcp_server.url, tmp_path, request_deadline_s=1.0, redis_timeout_s=2.0, redis_retries=3
    )
    # A generous client timeout: before the fix the command hung for minutes; a
    # regression fails here instead of hanging the suite.
    timeout = aiohttp.ClientTimeout(total=60)
    async with (
        running_app(settings) as (base, _ctx),
        aiohttp.ClientSession(timeout=timeout) as session,
    ):
        api = Api(session, base)
        _, token = await api.player()
        game_id = (await api.create(token, "gilbert", seed=5))["game_id"]
        sock, _ = await connect(session, base, game_id, token)
        await sock.send({"type": "ping"})  # the writer's first read of the log is done
        await sock.until(lambda m: m["type"] == "pong")
        assert tcp_server.pid is not None
        os.kill(tcp_server.pid, signal.SIGSTOP)
        try:
            cid = new_command_id()
            reply = await api.command(token, game_id, {"type": "draw"}, command_id=cid, expect=503)
            assert reply.headers["Retry-After"] == "1"
            assert reply.error["code"] == "unavailable"
            assert "unknown outcome" in reply.error["message"]
            assert "same command_id" in reply.error["message"]
            read = await api.request("GET", f"/v1/games/{game_id}", token, 503)
            assert "nothing was written" in read.error["message"]
            assert read.headers["Retry-After"] == "1"
            # A write that is not a command has no command_id to resend it with: its
            # outcome is unknown, and the advice is not the command's.
            for path, body in [("/v1/players", {"name": "bo"}), ("/v1/games", {"variant": "gate"})]:
                other = await api.request("POST", path, token, 503, json=body)
                assert other.error["details"]["outcome"] == "unknown"
                assert "unknown outcome" in other.error["message"]
                assert "command_id" not in other.error["message"], other.error
            # On the socket: an error for the command, and the socket stays usable.
            await sock.send({"type": "command", "command": {"type": "draw"}, "command_id": "ws-1"})
            err = await sock.until(lambda m: m["type"] == "error")
            assert err[-1]["error"]["code"] == "unavailable"
            assert err[-1]["command_id"] == "ws-1"
            assert "unknown outcome" in err[-1]["error"]["message"]
        finally:
            os.kill(tcp_server.pid, signal.SIGCONT)
        again = await api.command(token, game_id, {"type": "draw"}, command_id=cid)
        assert again.body["seq"] == 1
        assert (await api.state(game_id, token))["seq"] == 1  # applied once, whatever the first did
        await sock.ws.close()


async def test_a_socket_opened_while_the_store_is_paused_is_answered_within_the_deadline(
        tcp_server: EmbeddedServer, tmp_path: Path) -> None:
    """The upgrade counts the socket against its address in the store (a per-instance
    limit): a store that does not answer is waited for a second at most, and the hello
    then gets its 503 within the deadline and the close 1013. The store's own timeout is
    set far longer here (30 s, 3 retries): before the fix the upgrade waited for it."""
    settings = settings_for_test(
        tcp_server.url, tmp_path, request_deadline_s=2.0, redis_timeout_s=30.0, redis_retries=3
    )
    async with (
        running_app(settings) as (base, _ctx),
        aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=120)) as session,
    ):
        api = Api(session, base)
        _, token = await api.player()
        game_id = (await api.create(token, "gilbert", seed=5))["game_id"]
        assert tcp_server.pid is not None
        os.kill(tcp_server.pid, signal.SIGSTOP)
        try:
            # the count's second, the hello's deadline, and room for a slow machine
            async with asyncio.timeout(ANSWER_WITHIN_S + settings.request_deadline_s + 3):
                ws = await session.ws_connect(f"{base}/v1/games/{game_id}/ws")
                await ws.send_json({"type": "hello", "token": token})
                msg = await ws.receive()
                assert msg.type is aiohttp.WSMsgType.TEXT, msg
                error = json.loads(msg.data)["error"]
                assert error["code"] == "unavailable" and error["details"]["retry_after_s"] >= 1
                assert (await ws.receive()).type is aiohttp.WSMsgType.CLOSE
                assert ws.close_code == 1013
        finally:
            os.kill(tcp_server.pid, signal.SIGCONT)
        # The store back: the same address opens a socket and plays.
        sock, _ = await connect(session, base, game_id, token)
        await sock.ws.close()


async def test_a_body_that_never_arrives_is_the_clients_fault_not_the_stores(
        redis_url: str, tmp_path: Path) -> None:
    """A request whose Content-Length promises more than is sent waits until the request
    deadline; the answer then says so (400), rather than a 503 blaming the store and an
    'unknown outcome' of a write that never began."""
    settings = settings_for_test(redis_url, tmp_path, request_deadline_s=0.5)
    async with running_service(settings) as base:
        url = urlsplit(base)
        reader, writer = await asyncio.open_connection(url.hostname, url.port)
        writer.write(b"POST /v1/players HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 100\r\n\r\n" + b'{"name": "Ann"}')
        await writer.drain()
        head = (await reader.readuntil(b"\r\n\r\n")).decode()
        length = int(next(line.split(":")[1] for line in head.split("\r\n")
                          if line.lower().startswith("content-length")))
        body = json.loads(await reader.readexactly(length))
        writer.close()
    assert head.startswith("HTTP/1.1 400"), head
    assert body["error"]["code"] == "bad_request", body
    assert "body" in body["error"]["message"] and "outcome" not in body["error"]["details"]


async def _raw_answer(base: str, request: bytes) -> tuple[str, dict[str, Any]]:
    """The status line and JSON body of one request sent as raw bytes."""
    url = urlsplit(base)
    reader, writer = await asyncio.open_connection(url.hostname, url.port)
    try:
        writer.write(request)
        await writer.drain()
        head = (await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)).decode()
        length = int(next(line.split(":")[1] for line in head.split("\r\n")
                          if line.lower().startswith("content-length")))
        return head.split("\r\n")[0], json.loads(await reader.readexactly(length))
    finally:
        writer.close()


async def test_a_content_length_over_the_limit_is_refused_before_the_body_is_waited_for(
        redis_url: str, tmp_path: Path) -> None:
    """No byte of the body is sent: the answer comes from the header alone, long before
    the (here hour-long) deadline, and says the limit."""
    settings = settings_for_test(redis_url, tmp_path, request_deadline_s=FOREVER_S,
                                 max_body_bytes=2000)
    async with running_service(settings) as base:
        status, body = await _raw_answer(
            base, b"POST /v1/players HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 2001\r\n\r\n")
    assert status.startswith("HTTP/1.1 413"), status
    assert body["error"]["code"] == "bad_request"
    assert body["error"]["details"] == {"limit": "max_body_bytes", "max_bytes": 2000}
    assert "2000 bytes" in body["error"]["message"]


def _post_player(body: bytes, headers: bytes = b"") -> bytes:
    return (b"POST /v1/players HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            + headers + b"Content-Length: %d\r\n\r\n" % len(body) + body)


# An Upgrade header on a request that is not a game's socket changes nothing.
_UPGRADE = b"Upgrade: websocket\r\nConnection: Upgrade\r\n"


async def test_a_body_that_is_not_what_its_content_encoding_says_is_400_not_500(
        redis_url: str, tmp_path: Path) -> None:
    settings = settings_for_test(redis_url, tmp_path)
    gzipped = b"Content-Encoding: gzip\r\n"
    async with running_service(settings) as base:
        good = gzip.compress(b'{"name": "Ann"}')
        for body, more in [(b"abcd", b""), (good[:10] + b"\x00" * 20, b""), (b"abcd", _UPGRADE)]:
            status, answer = await _raw_answer(base, _post_player(body, gzipped + more))
            assert status.startswith("HTTP/1.1 400"), (body, status, answer)
            assert answer["error"]["code"] == "bad_request"
            assert "Content-Encoding (gzip)" in answer["error"]["message"]
        status, answer = await _raw_answer(base, _post_player(good, gzipped))
    assert status.startswith("HTTP/1.1 201"), (status, answer)
    assert answer["name"] == "Ann"


async def test_a_compressed_body_counts_as_it_decompresses(redis_url: str,
                                                           tmp_path: Path) -> None:
    """Stored, not compressed (level 0), a body under the limit is sent in more bytes
    than the limit: it is read (here, a 400 for the name too long, not a 413); the same
    body decompressing to one byte more than the limit is a 413 saying it."""
    settings = settings_for_test(redis_url, tmp_path, max_body_bytes=2000)
    gzipped = b"Content-Encoding: gzip\r\n"
    async with running_service(settings) as base:
        under = b'{"name": "' + b"a" * (2000 - 12) + b'"}'
        body = gzip.compress(under, compresslevel=0)
        assert len(under) == 2000 < len(body)
        status, answer = await _raw_answer(base, _post_player(body, gzipped))
        assert status.startswith("HTTP/1.1 400"), (status, answer)
        assert answer["error"]["details"]["field"] == "name"
        over = gzip.compress(under + b" ")
        for more in (b"", _UPGRADE):
            status, answer = await _raw_answer(base, _post_player(over, gzipped + more))
            assert status.startswith("HTTP/1.1 413"), (status, answer)
            assert answer["error"]["details"] == {"limit": "max_body_bytes", "max_bytes": 2000}
