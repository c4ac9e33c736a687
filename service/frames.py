"""Several WebSocket text frames in one write.

A command's socket gets its diff and its ack at the same moment; aiohttp writes
each frame with a ``send`` of its own, and on this machine a ``send`` on a
loopback or LAN socket was the largest single cost of a command. When a socket's
writer has several frames ready, :func:`send_text_frames` writes them with one
``transport.write``: the same bytes aiohttp would write (RFC 6455 section 5.2: FIN,
text opcode, no mask from a server, no compression: the service's sockets do not
negotiate it), in the same order.

It falls back to aiohttp's own ``send_frame``, frame by frame, for a single frame
and whenever aiohttp must be in charge: the socket is closing, or the transport
holds more than :data:`DIRECT_WRITE_LIMIT` bytes not yet sent (aiohttp then waits
for the client to read, which is its flow control).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from aiohttp import WSMsgType, web

DIRECT_WRITE_LIMIT = 65536  # aiohttp's default writer limit

_FIN_TEXT = 0x81


def text_frame(payload: bytes) -> bytes:
    """One unmasked, final, uncompressed text frame carrying ``payload``."""
    size = len(payload)
    if size < 126:
        header = bytes((_FIN_TEXT, size))
    elif size < 65536:
        header = bytes((_FIN_TEXT, 126)) + size.to_bytes(2, "big")
    else:
        header = bytes((_FIN_TEXT, 127)) + size.to_bytes(8, "big")
    return header + payload


async def send_text_frames(ws: web.WebSocketResponse, transport: asyncio.Transport | None,
                           payloads: Sequence[bytes]) -> None:
    """Send ``payloads`` as text frames, in order, in one write when it is safe."""
    if (len(payloads) > 1 and transport is not None and not ws.closed
            and not transport.is_closing()
            and transport.get_write_buffer_size() <= DIRECT_WRITE_LIMIT):
        transport.write(b"".join([text_frame(p) for p in payloads]))
        return
    for payload in payloads:
        await ws.send_frame(payload, WSMsgType.TEXT)
