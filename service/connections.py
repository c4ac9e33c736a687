"""HTTP connections: what aiohttp leaves to the application.

- :func:`close_slow_requests`: a connection that has not sent a complete request's
  headers within ``request_header_timeout_s`` (of opening, or of its previous
  request) is closed. aiohttp has no such timeout: a socket that sent nothing, or a
  header every few seconds, was held for ever.
- :class:`AccessLog`: the access log without query strings (a client that puts
  ``?token=`` in a URL must not have it written down) or any header.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from aiohttp import web, web_protocol
from aiohttp.abc import AbstractAccessLogger

from service.context import CONTEXT

log = logging.getLogger("service.connections")


def _timeout_of(handler: web_protocol.RequestHandler) -> float | None:
    # The app's settings, reached through the server's handler.
    app = getattr(getattr(handler._manager, "request_handler", None), "__self__", None)
    if not isinstance(app, web.Application):
        return None
    ctx = app.get(CONTEXT)  # another aiohttp app in this process (a test's) has none
    return ctx.settings.request_header_timeout_s if ctx is not None else None


def close_slow_requests() -> None:
    """Install the request-header timeout on aiohttp's request handler (once per process)."""
    original = web_protocol.RequestHandler.connection_made
    if getattr(original, "_solitaire_timeout", False):
        return

    def connection_made(self: web_protocol.RequestHandler,
                        transport: asyncio.BaseTransport) -> None:
        original(self, transport)
        timeout = _timeout_of(self)
        if timeout and timeout > 0:
            _arm(self, timeout, self._request_count)

    connection_made._solitaire_timeout = True  # type: ignore[attr-defined]
    web_protocol.RequestHandler.connection_made = connection_made  # type: ignore[method-assign]


def _arm(handler: web_protocol.RequestHandler, timeout: float, count: int) -> None:
    handler._loop.call_later(timeout, _check, handler, timeout, count)


def _check(handler: web_protocol.RequestHandler, timeout: float, count: int) -> None:
    transport = handler.transport
    if transport is None or transport.is_closing():
        return
    if handler._request_count == count:  # no complete request's headers since the timer was set
        log.info("closing a connection from %s: no complete request within %g s",
                 _peer(transport), timeout)
        handler.force_close()
        transport.close()
        return
    if handler._request_in_progress:
        return  # being answered (a WebSocket for its whole life): nothing to time
    _arm(handler, timeout, handler._request_count)  # idle between requests: time the next one


def _peer(transport: asyncio.BaseTransport) -> str:
    peer: Any = transport.get_extra_info("peername")
    return str(peer[0]) if isinstance(peer, tuple) and peer else "unknown"


class AccessLog(AbstractAccessLogger):
    """``<address> "<METHOD> <path>" <status> <bytes> <seconds>``: no query string, no header."""

    def log(self, request: web.BaseRequest, response: web.StreamResponse, time: float) -> None:
        self.logger.info('%s "%s %s" %d %d %.3f', request.remote, request.method, request.path,
                         response.status, response.body_length, time)
