"""aiohttp's server socket, which says why before it closes with 1009.

aiohttp closes a socket itself on reading a message over ``max_msg_size``, and only
then hands the service the error: too late to say which limit it was. aiohttp has no
public hook for it, so :class:`GameSocket` overrides the public ``close`` that aiohttp
calls then, and sends the ``error`` message first.

Checked against aiohttp 3.14 (:data:`AIOHTTP_CHECKED`; read in the source of 3.14.5,
``aiohttp/web_ws.py``): ``WebSocketResponse.receive`` answers a frame the reader
refuses (a ``WebSocketError``, 1009 for a message too big) with
``await self.close(code=exc.code)``, then returns the error. tests/service/socket/test_ws.py
fails when an aiohttp outside that range is installed, or when the error no longer
comes before the 1009.
"""

from __future__ import annotations

import contextlib

from aiohttp import WSMsgType, web

from service.socket.messages import Close, close_reason, error_message, too_big

# The versions of aiohttp this module was checked against: at least the first, below the second.
AIOHTTP_CHECKED = ((3, 14), (3, 15))


class GameSocket(web.WebSocketResponse):
    """A game's socket: no compression, messages read as bytes, and an ``error`` message
    saying the limit before a 1009 close."""

    def __init__(self, *, max_msg_size: int, heartbeat: float) -> None:
        # aiohttp refuses a message of ``max_msg_size`` bytes itself (its reader checks
        # ``>=``); the contract's ``max_bytes`` is the most a message may have, so one
        # more is given (tests/service/socket/test_ws.py holds both edges).
        super().__init__(compress=False, max_msg_size=max_msg_size + 1, heartbeat=heartbeat,
                         decode_text=False)
        self.max_msg_size = max_msg_size

    async def close(self, *, code: int = Close.NORMAL, message: bytes = b"",
                    drain: bool = True) -> bool:
        if code == Close.MESSAGE_TOO_BIG and not self.closed:
            err = too_big(self.max_msg_size)
            with contextlib.suppress(Exception):  # the client may be gone already
                await self.send_frame(error_message(err), WSMsgType.TEXT)
            message = message or close_reason(err.message)
        return await super().close(code=code, message=message, drain=drain)
