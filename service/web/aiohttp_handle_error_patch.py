"""A patch of aiohttp: its own answers to HTTP it could not parse become the contract's
JSON error (``{"error": {...}}``, with a code), not aiohttp's plain text.

Checked against aiohttp 3.14.5, the version the lock installs; it holds for the range
:data:`CHECKED` (``>=3.14, <3.15``). ``tests/service/web/test_aiohttp_handle_error_patch.py``
fails when the installed aiohttp leaves that range, or no longer does what the patch
relies on:

- a request aiohttp cannot parse (a header over its 8 KiB limit, a malformed request
  line or method) never reaches the application or its middlewares: the protocol
  handler answers it itself, with ``RequestHandler.handle_error(request, status, exc,
  message)``, ``exc`` the parser's :class:`HttpProcessingError`; so does a handler's
  exception that escapes every middleware (500) or a handler's timeout (504);
- ``handle_error`` logs, raises ConnectionError once a response was started, and
  returns the response to send (the connection then closes).

No public way exists: ``web.Server`` makes its ``RequestHandler`` itself (no class to
pass), and ``handle_error`` is the only hook the parse errors reach.
"""

from __future__ import annotations

import logging
from http import HTTPStatus
from typing import Any, Final

from aiohttp import web, web_protocol
from aiohttp.http_exceptions import (
    BadHttpMethod,
    BadStatusLine,
    HttpProcessingError,
    InvalidHeader,
    LineTooLong,
)

from protocol.errors import error_body, error_code
from service.domain.errors import internal_error
from service.web.responses import json_response

log = logging.getLogger("service.domain.errors")

# The aiohttp versions the patch was checked against: at least the first, below the second.
CHECKED: Final = ((3, 14), (3, 15))
# aiohttp's own handle_error, as the patch found it (the test checks its signature).
ORIGINAL: Final = web_protocol.RequestHandler.handle_error


def json_protocol_errors() -> None:
    """Patch ``RequestHandler.handle_error`` (once: a second call changes nothing)."""
    if web_protocol.RequestHandler.handle_error is not ORIGINAL:
        return

    def handle_error(self: web_protocol.RequestHandler, request: Any, status: int = 500,
                     exc: BaseException | None = None,
                     message: str | None = None) -> web.StreamResponse:
        if status < 500 and isinstance(exc, HttpProcessingError):
            # aiohttp's message (and its log line) quote the offending bytes: a header may
            # hold a token or a cookie. Say which rule was broken, never what was sent.
            reason = describe_bad_http(exc)
            log.info("malformed HTTP request from %s: %s", request.remote, reason)
            if request.writer.output_size > 0:
                raise ConnectionError("a response was started: no error response can follow")
            text = f"malformed HTTP request: {reason}"
        else:
            # logs, and raises if a response was started
            ORIGINAL(self, request, status, exc, message)
            text = (f"malformed HTTP request: {HTTPStatus(status).phrase}" if status < 500
                    else internal_error().message)
        response = json_response(error_body(error_code(status), text), status)
        response.force_close()
        return response

    web_protocol.RequestHandler.handle_error = handle_error  # type: ignore[method-assign]


def describe_bad_http(exc: HttpProcessingError) -> str:
    """What was wrong with an unparsable request, without quoting any of it."""
    if isinstance(exc, LineTooLong):
        return "the request line or a header is longer than the 8 KiB limit"
    if isinstance(exc, InvalidHeader):
        return "a header is not valid HTTP"
    if isinstance(exc, BadHttpMethod):
        return "the method is not valid HTTP"
    if isinstance(exc, BadStatusLine):
        return "the request line is not valid HTTP"
    return "the request is not valid HTTP/1.1"
