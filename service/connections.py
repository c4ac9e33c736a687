"""HTTP connections: what aiohttp leaves to the application.

- :func:`close_slow_requests`: a connection that has not sent a complete request's
  headers within ``request_header_timeout_s`` of opening, or of its previous answer
  (idle keep-alive), is closed. aiohttp's default keeps one for an hour: a socket
  that sent nothing, or a header every few seconds, was held that long.
- :class:`AccessLog`: the access log without query strings (a client that puts
  ``?token=`` in a URL must not have it written down) or any header.
"""

from __future__ import annotations

import asyncio

from aiohttp import web, web_protocol
from aiohttp.abc import AbstractAccessLogger

from service.context import CONTEXT


def _timeout_of(handler: web_protocol.RequestHandler) -> float | None:
    # The app's settings, reached through the server's handler.
    app = getattr(getattr(handler._manager, "request_handler", None), "__self__", None)
    if not isinstance(app, web.Application):
        return None
    ctx = app.get(CONTEXT)  # another aiohttp app in this process (a test's) has none
    return ctx.settings.request_header_timeout_s if ctx is not None else None


def close_slow_requests() -> None:
    """Install the request-header timeout on aiohttp's request handler (once per process).

    aiohttp's own keep-alive timer does the closing: it is set when a connection opens
    and again when an answer has been sent, and at its time closes the connection if it
    is waiting for a request (none yet, or part of one's headers). Its length is our
    setting. (Our earlier timer, checked every ``timeout`` from the connection's opening,
    closed an idle keep-alive connection between one and two timeouts after its answer.)
    """
    original = web_protocol.RequestHandler.connection_made
    if getattr(original, "_solitaire_timeout", False):
        return

    def connection_made(self: web_protocol.RequestHandler,
                        transport: asyncio.BaseTransport) -> None:
        timeout = _timeout_of(self)
        if timeout and timeout > 0:
            self._keepalive_timeout = timeout  # read by connection_made and after each answer
        original(self, transport)

    connection_made._solitaire_timeout = True  # type: ignore[attr-defined]
    web_protocol.RequestHandler.connection_made = connection_made  # type: ignore[method-assign]


class AccessLog(AbstractAccessLogger):
    """``<address> "<METHOD> <path>" <status> <bytes> <seconds>``: no query string, no header."""

    def log(self, request: web.BaseRequest, response: web.StreamResponse, time: float) -> None:
        self.logger.info('%s "%s %s" %d %d %.3f', request.remote, request.method, request.path,
                         response.status, response.body_length, time)
