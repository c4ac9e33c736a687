"""HTTP connections: what aiohttp leaves to the application.

- :func:`app_runner`: the service's aiohttp runner. A connection that has not sent a
  complete request's headers within ``request_header_timeout_s`` of opening, or of its
  previous answer (idle keep-alive), is closed. aiohttp's own keep-alive timer does the
  closing: it is set when a connection opens and again when an answer has been sent,
  and at its time closes the connection if it is waiting for a request (none yet, or
  part of one's headers). Its length is the runner's public ``keepalive_timeout``
  option, our setting; aiohttp's default keeps such a connection for an hour.
- :class:`AccessLog`: the access log without query strings (a client that puts
  ``?token=`` in a URL must not have it written down) or any header.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web
from aiohttp.abc import AbstractAccessLogger

from service.context import context


def app_runner(app: web.Application, **options: Any) -> web.AppRunner:
    """The runner of the service's ``app`` (made by ``create_app``), with its connections'
    request-header timeout and its access log; ``options`` go to aiohttp's runner too."""
    return web.AppRunner(app, keepalive_timeout=context(app).settings.request_header_timeout_s,
                         access_log_class=AccessLog, **options)


class AccessLog(AbstractAccessLogger):
    """``<address> "<METHOD> <path>" <status> <bytes> <seconds>``: no query string, no header."""

    def log(self, request: web.BaseRequest, response: web.StreamResponse, time: float) -> None:
        self.logger.info('%s "%s %s" %d %d %.3f', request.remote, request.method, request.path,
                         response.status, response.body_length, time)
