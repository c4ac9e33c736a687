"""aiohttp's server socket, which says why before it closes with 1009, and puts off its
heartbeat's ping at less cost.

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

With a ``heartbeat``, aiohttp calls ``_on_data_received`` on every read from the client
and resets the heartbeat on the next loop turn (``_flush_heartbeat_reset``, then
``_reset_heartbeat``): with the ping's timer armed (``_heartbeat_cb``) and no pong awaited
(``_pong_response_cb``), that reset only sets ``_heartbeat_when``, the time the next ping
is due, which ``_send_heartbeat`` waits for when its timer fires early. :class:`GameSocket`
sets it at once in that case, without the loop turn (tests/service/socket/test_ws.py: an
idle client is still pinged; a read moves the next ping).
"""

from __future__ import annotations

import contextlib
from math import ceil

from aiohttp import WSMsgType, web

from service.socket.messages import Close, close_reason, error_message, too_big

# The versions of aiohttp this module was checked against: at least the first, below the second.
AIOHTTP_CHECKED = ((3, 14), (3, 15))
_CEIL_THRESHOLD_S = 5  # aiohttp's default timeout_ceil_threshold


class GameSocket(web.WebSocketResponse):
    """A game's socket: no compression, messages read as bytes, and an ``error`` message
    saying the limit before a 1009 close."""

    def __init__(self, *, max_msg_size: int, heartbeat: float) -> None:
        super().__init__(compress=False, max_msg_size=max_msg_size, heartbeat=heartbeat,
                         decode_text=False)
        self.max_msg_size = max_msg_size

    def _on_data_received(self) -> None:
        # aiohttp calls this for every read from the client, to put off its next ping, and
        # does it on a later loop turn (call_soon) to make one reset of reads that came
        # together: a callback per command, about as dear as a command's decoding. When
        # the ping's timer is armed and no pong is awaited, that reset is only the time
        # the next ping is due (the timer, firing early, waits until then): set here at
        # once. Anything else (a pong awaited, no timer yet) goes aiohttp's way.
        if (self._heartbeat_cb is not None and self._pong_response_cb is None
                and not self._need_heartbeat_reset and self._heartbeat is not None
                and self._loop is not None):
            when = self._loop.time() + self._heartbeat
            # As aiohttp's calculate_timeout_when, at its default ceiling threshold (the
            # service sets none): a heartbeat over it is due on a whole second.
            self._heartbeat_when = ceil(when) if self._heartbeat > _CEIL_THRESHOLD_S else when
            return
        super()._on_data_received()

    async def close(self, *, code: int = Close.NORMAL, message: bytes = b"",
                    drain: bool = True) -> bool:
        if code == Close.MESSAGE_TOO_BIG and not self.closed:
            err = too_big(self.max_msg_size)
            with contextlib.suppress(Exception):  # the client may be gone already
                await self.send_frame(error_message(err), WSMsgType.TEXT)
            message = message or close_reason(err.message)
        return await super().close(code=code, message=message, drain=drain)
