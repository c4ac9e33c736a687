"""A TCP proxy between a WebSocket client and the service, that a test can cut.

It forwards bytes both ways, and understands just enough of the server's side
(the HTTP response head, then unmasked WebSocket frames) to drop whole frames:
``drop_frames = 2`` loses the next two messages the server sends, the way a
flaky network loses what was in flight when a connection dies. ``cut()`` aborts
every connection; ``refuse`` closes new ones at once, as a network that is down.
"""

from __future__ import annotations

import asyncio
import contextlib
import struct
from typing import Self
from urllib.parse import urlsplit


class Proxy:
    def __init__(self, target_url: str) -> None:
        parts = urlsplit(target_url)
        assert parts.hostname is not None and parts.port is not None
        self.target = (parts.hostname, parts.port)
        self.refuse = False
        self.drop_frames = 0  # server -> client frames still to drop
        self.dropped = 0  # frames dropped so far
        self.accepted = 0  # connections accepted (refused ones excluded)
        self.url = ""
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> Self:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def cut(self) -> None:
        """Abort every open connection, both sides, without a close handshake."""
        for writer in list(self._writers):
            writer.transport.abort()
        self._writers.clear()
        await asyncio.sleep(0)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        await self.cut()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, OSError):
                await task

    async def __aenter__(self) -> Self:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.refuse:
            writer.transport.abort()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.transport.abort()
            return
        self.accepted += 1
        self._writers.update((writer, up_writer))
        for coro in (self._pump(reader, up_writer, None), self._pump(up_reader, writer, _Frames())):
            task = asyncio.create_task(coro)
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _pump(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, frames: _Frames | None
    ) -> None:
        try:
            while data := await reader.read(65536):
                if frames is not None:
                    data = frames.feed(data, self)
                if data:
                    writer.write(data)
                    await writer.drain()
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.transport.abort()
            self._writers.discard(writer)


class _Frames:
    """The server's byte stream cut into the HTTP head and whole WebSocket frames."""

    def __init__(self) -> None:
        self.buffer = b""
        self.head_done = False

    def feed(self, data: bytes, proxy: Proxy) -> bytes:
        self.buffer += data
        out = b""
        if not self.head_done:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return b""
            out, self.buffer = self.buffer[: end + 4], self.buffer[end + 4 :]
            self.head_done = True
        while (size := _frame_size(self.buffer)) is not None:
            frame, self.buffer = self.buffer[:size], self.buffer[size:]
            if proxy.drop_frames > 0:
                proxy.drop_frames -= 1
                proxy.dropped += 1
            else:
                out += frame
        return out


def _frame_size(buffer: bytes) -> int | None:
    """The size of the first whole frame in ``buffer`` (server frames are unmasked)."""
    if len(buffer) < 2:
        return None
    length = buffer[1] & 0x7F
    header = 2
    if length == 126:
        if len(buffer) < 4:
            return None
        length, header = struct.unpack("!H", buffer[2:4])[0], 4
    elif length == 127:
        if len(buffer) < 10:
            return None
        length, header = struct.unpack("!Q", buffer[2:10])[0], 10
    if buffer[1] & 0x80:
        header += 4
    total = header + length
    return total if len(buffer) >= total else None
