"""Several text frames in one write (service/socket/frames.py), read by a real WebSocket client,
and compared with the bytes aiohttp writes itself."""

from __future__ import annotations

import asyncio
import base64
import os
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
from aiohttp import WSMsgType, web

from service.socket.frames import AIOHTTP_CHECKED, DIRECT_WRITE_LIMIT, send_text_frames, text_frame
from tests.service.helpers import WAIT_S

# Each length of RFC 6455's three encodings, and their edges.
SIZES = [0, 1, 125, 126, 127, 65535, 65536, 70000]


def _payload(size: int) -> bytes:
    return (b"%d:" % size + b"x" * size)[:size]


def test_a_frame_is_header_then_payload_in_the_shortest_length_encoding() -> None:
    assert text_frame(b"ab") == b"\x81\x02ab"
    assert text_frame(b"x" * 126)[:4] == b"\x81\x7e\x00\x7e"
    assert text_frame(b"x" * 65536)[:10] == b"\x81\x7f" + (65536).to_bytes(8, "big")


async def _received(aiohttp_client: Callable[..., Awaitable[Any]],
                    payloads: list[list[bytes]]) -> list[bytes]:
    """What a client reads when the server sends each group of ``payloads`` together."""

    async def handler(request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(compress=False)
        await ws.prepare(request)
        for group in payloads:
            await send_text_frames(ws, request.transport, group)
        await ws.close()
        return ws

    app = web.Application()
    app.router.add_get("/ws", handler)
    client = await aiohttp_client(app)
    received = []
    async with client.ws_connect("/ws", max_msg_size=0) as ws:
        async for msg in ws:
            assert msg.type is WSMsgType.TEXT
            received.append(msg.data.encode())
    return received


async def test_frames_sent_together_arrive_whole_and_in_order(
        aiohttp_client: Callable[..., Awaitable[Any]]) -> None:
    sent = [_payload(size) for size in SIZES]
    assert await _received(aiohttp_client, [sent]) == sent


async def test_single_frames_and_groups_keep_their_order(
        aiohttp_client: Callable[..., Awaitable[Any]]) -> None:
    groups = [[b"a"], [b"b", b"c"], [], [b"d"], [b"e", b"f", b"g"]]
    assert await _received(aiohttp_client, groups) == [b"a", b"b", b"c", b"d", b"e", b"f", b"g"]


# --- what frames.py relies on in aiohttp (its docstring) ----------------------------------


def test_the_installed_aiohttp_is_one_frames_was_checked_against() -> None:
    # Another aiohttp may write frames otherwise: read its source again (the module's
    # docstring says what to look for), then widen AIOHTTP_CHECKED.
    version = tuple(int(part) for part in aiohttp.__version__.split(".")[:2])
    low, high = AIOHTTP_CHECKED
    assert low <= version < high, (aiohttp.__version__, AIOHTTP_CHECKED)


async def test_frames_written_together_are_the_bytes_aiohttp_writes_one_by_one(
        aiohttp_client: Callable[..., Awaitable[Any]]) -> None:
    payloads = [_payload(size) for size in SIZES]
    limits: list[tuple[int, int]] = []

    async def handler(request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(compress=False)
        await ws.prepare(request)
        assert request.transport is not None
        limits.append(request.transport.get_write_buffer_limits())
        # Ours first, in one write (the transport holds nothing yet), then aiohttp's own.
        assert request.transport.get_write_buffer_size() <= DIRECT_WRITE_LIMIT
        await send_text_frames(ws, request.transport, payloads)
        for payload in payloads:
            await ws.send_frame(payload, WSMsgType.TEXT)
        await ws.receive()  # until the client goes
        return ws

    app = web.Application()
    app.router.add_get("/ws", handler)
    client = await aiohttp_client(app)
    # A client that reads the bytes as they come (aiohttp's client would parse them).
    reader, writer = await asyncio.open_connection(client.server.host, client.server.port)
    try:
        key = base64.b64encode(os.urandom(16)).decode()
        writer.write(f"GET /ws HTTP/1.1\r\nHost: test\r\nUpgrade: websocket\r\n"
                     f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                     "Sec-WebSocket-Version: 13\r\n\r\n".encode())
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), WAIT_S)
        assert head.startswith(b"HTTP/1.1 101"), head
        expected = b"".join(text_frame(p) for p in payloads)
        stream = await asyncio.wait_for(reader.readexactly(2 * len(expected)), WAIT_S)
    finally:
        writer.close()
    assert stream[len(expected):] == expected  # aiohttp's frames are text_frame's
    assert stream[:len(expected)] == expected  # and so are ours
    # Past the limit, aiohttp writes: it is the transport's mark, above which it pauses.
    assert limits[0][1] == DIRECT_WRITE_LIMIT
