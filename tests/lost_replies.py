"""A loopback TCP proxy in front of a real store that can lose one reply.

``LostReplies`` forwards bytes both ways. After :meth:`lose_next_reply_to`
(a marker, e.g. a script's SHA or ``b"EVAL"``), the next client chunk holding
the marker is forwarded to the server, the server's reply is read and thrown
away, and the client's connection is cut: the command ran, its sender cannot
know. That is how a broken connection (or redis-py's timeout) looks to the
service, and redis-py answers it by sending the command again.
"""

from __future__ import annotations

import asyncio
import contextlib


class LostReplies:
    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.marker: bytes | None = None
        self.lost = 0  # replies thrown away so far
        self.connections = 0  # client connections accepted so far
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.port = 0

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}"

    def lose_next_reply_to(self, marker: bytes) -> None:
        self.marker = marker

    async def __aenter__(self) -> LostReplies:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()

    async def _serve(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        self.connections += 1
        server_r, server_w = await asyncio.open_connection(*self.target)
        cut = asyncio.Event()

        async def upstream() -> None:
            while data := await client_r.read(65536):
                if self.marker is not None and self.marker in data:
                    self.marker = None
                    cut.set()  # the reply to this goes nowhere
                server_w.write(data)
                await server_w.drain()
                if cut.is_set():
                    return

        async def downstream() -> None:
            while data := await server_r.read(65536):
                if cut.is_set():
                    self.lost += 1
                    return
                client_w.write(data)
                await client_w.drain()

        up = asyncio.ensure_future(upstream())
        down = asyncio.ensure_future(downstream())
        for task in (up, down):
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        try:
            done, _ = await asyncio.wait([up, down], return_when=asyncio.FIRST_COMPLETED)
            if up in done and cut.is_set():
                await asyncio.wait([down], timeout=10)  # the lost reply arrives, then the cut
        finally:
            up.cancel()
            down.cancel()
            for w in (client_w, server_w):
                with contextlib.suppress(Exception):
                    w.close()
