"""Several text frames in one write (service/frames.py), read by a real WebSocket client."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import WSMsgType, web

from service.frames import send_text_frames, text_frame

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
