"""Several WebSocket text frames in one write: aiohttp's socket written around.

A command's socket gets its diff and its ack at the same moment; aiohttp writes
each frame with a ``send`` of its own, and on this machine a ``send`` on a
loopback or LAN socket was the largest single cost of a command. aiohttp has no
public way to send several frames at once, so when a socket's writer has several
frames ready, :func:`send_text_frames` writes them with one ``transport.write``
on the request's transport (public: ``request.transport``): the same bytes
aiohttp would write, in the same order.

It falls back to aiohttp's own ``send_frame``, frame by frame, for a single frame
and whenever aiohttp must be in charge: the socket is closing, or the transport
holds more than :data:`DIRECT_WRITE_LIMIT` bytes not yet sent (the transport has
then paused its protocol, and aiohttp's ``send_frame`` waits for the client to
read: its flow control).

Checked against aiohttp 3.14 (:data:`AIOHTTP_CHECKED`; read in the source of
3.14.5, ``aiohttp/_websocket/writer.py``), which this relies on:

- a server's uncompressed text frame is FIN and the text opcode, an unmasked
  length in its shortest encoding, then the payload (RFC 6455 section 5.2): what
  :func:`text_frame` makes. The service's sockets do not negotiate compression
  (``compress=False``);
- aiohttp's ``send_frame`` writes an uncompressed frame to that transport before it
  returns, keeping nothing back: frames written here keep their order with its own.

tests/service/socket/test_frames.py fails when an aiohttp outside that range is installed,
or when aiohttp writes other bytes than :func:`text_frame` for the same payloads.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from aiohttp import WSMsgType, web

# The versions of aiohttp this module was checked against: at least the first, below the second.
AIOHTTP_CHECKED = ((3, 14), (3, 15))
# asyncio's default high-water mark of a transport's write buffer: above it, the transport
# pauses its protocol, and aiohttp waits for it to drain before it writes again.
DIRECT_WRITE_LIMIT = 65536

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


def writable(ws: web.WebSocketResponse,
             transport: asyncio.Transport | None) -> asyncio.Transport | None:
    """The transport, when frames may be written on it directly now; else None (aiohttp
    must be in charge: see the module's docstring)."""
    if (transport is not None and not ws.closed and not transport.is_closing()
            and transport.get_write_buffer_size() <= DIRECT_WRITE_LIMIT):
        return transport
    return None


async def send_text_frames(ws: web.WebSocketResponse, transport: asyncio.Transport | None,
                           payloads: Sequence[bytes]) -> None:
    """Send ``payloads`` as text frames, in order, in one write when it is safe."""
    if len(payloads) > 1:
        direct = writable(ws, transport)
        if direct is not None:
            direct.write(b"".join([text_frame(p) for p in payloads]))
            return
    for payload in payloads:
        await ws.send_frame(payload, WSMsgType.TEXT)
