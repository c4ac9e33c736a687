"""Errors as the contract shapes them: ``{"error": {"code", "message", "details"}}``.

Handlers raise :class:`ApiError`; :func:`error_middleware` turns it, and every
other failure, into that body with the code's HTTP status. Bad input is never a 500.
"""

from __future__ import annotations

import logging
import math
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import msgspec
from aiohttp import web
from aiohttp.http_exceptions import (
    BadHttpMethod,
    BadStatusLine,
    HttpProcessingError,
    InvalidHeader,
    LineTooLong,
)

from protocol.codec import encode
from protocol.errors import (
    PAYLOAD_TOO_LARGE,
    ErrorBody,
    ErrorCode,
    bad_request_from,
    error_body,
    http_status,
)
from service.engine import BadCommand, BadOptions, IllegalCommand, UnknownVariant
from service.store.errors import Inconsistent, StoreUnavailable

log = logging.getLogger("service.errors")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


# What a 503 says when the store failed after a write was sent: it may have been applied.
UNKNOWN_OUTCOME = ("unknown outcome: it may or may not have been applied; resend it with the same "
                   "command_id (a command is applied at most once per command_id)")
# ... after any other write (a new player, game or daily attempt, a rename, a hint), which has
# no command_id: sent again, it is done again.
UNKNOWN_OUTCOME_OF_A_REQUEST = (
    "unknown outcome: it may or may not have been done; sent again, it is done again "
    "(a second player or game; a second daily attempt gets 409 conflict naming the first)")
# The REST door of commands (rest.py serves it): the one request whose writes have a command_id.
COMMANDS_ROUTE = "/v1/games/{game_id}/commands"


def unknown_outcome(command: bool) -> str:
    """What a 503 after a sent write tells the client to do: a command (REST or socket) is
    resent with its command_id; any other request has none."""
    return UNKNOWN_OUTCOME if command else UNKNOWN_OUTCOME_OF_A_REQUEST


def is_command(request: web.Request) -> bool:
    """Whether ``request`` is a command (``POST`` of :data:`COMMANDS_ROUTE`)."""
    resource = request.match_info.route.resource
    return resource is not None and resource.canonical == COMMANDS_ROUTE


class ApiError(Exception):
    """An error the client should see, with the contract's ``code``."""

    def __init__(self, code: ErrorCode, message: str, details: Mapping[str, Any] | None = None,
                 status: int | None = None, headers: Mapping[str, str] | None = None,
                 retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.code: ErrorCode = code
        self.message = message
        self.details = dict(details or {})
        self.status = status or http_status(code)
        self.headers = dict(headers or {})
        if retry_after_s is not None:
            # When to try again: whole seconds, at least 1, in the body and the header alike.
            retry = retry_seconds(retry_after_s)
            self.details["retry_after_s"] = retry
            self.headers["Retry-After"] = str(retry)

    @classmethod
    def of(cls, body: ErrorBody) -> ApiError:
        """The error whose body is ``body``."""
        return cls(body.error.code, body.error.message, body.error.details)

    @property
    def retry_after_s(self) -> int | None:
        value = self.details.get("retry_after_s")
        return value if isinstance(value, int) else None


def retry_seconds(seconds: float) -> int:
    """A wait as a client is told it: whole seconds, rounded up, at least 1."""
    return max(1, math.ceil(seconds))


def to_api_error(exc: BaseException, command: bool = True) -> ApiError | None:
    """The contract's error for an exception raised by the engine, the codecs or the store;
    ``command``: raised by a command (else by another request: see :func:`unknown_outcome`)."""
    if isinstance(exc, ApiError):
        return exc
    if isinstance(exc, IllegalCommand):
        return ApiError("illegal_move", exc.message, {"rule": exc.rule})
    if isinstance(exc, UnknownVariant):
        return ApiError("bad_request", str(exc), {"field": "variant"})
    if isinstance(exc, BadOptions):
        return ApiError("bad_request", str(exc), {"field": "options"})
    if isinstance(exc, BadCommand):
        return ApiError("bad_request", str(exc))
    if isinstance(exc, msgspec.DecodeError):
        return ApiError.of(bad_request_from(exc))
    if isinstance(exc, Inconsistent):
        log.error("%s", exc)
        return ApiError("unavailable", f"{exc}: the game is refused rather than served in a wrong "
                        "state; an operator must repair it", status=500)
    if isinstance(exc, StoreUnavailable):
        # A store that answers but refuses (out of memory, a read-only replica) says why.
        why = f" ({exc.reason})" if exc.reason else ""
        if exc.sent:
            what = "command" if command else "request"
            return ApiError("unavailable", f"the game store failed during the {what}{why}: "
                            f"{unknown_outcome(command)}", {"outcome": "unknown"}, retry_after_s=1)
        state = f"refuses to serve this now{why}" if exc.reason else "is unreachable"
        return ApiError("unavailable", f"the game store {state}; nothing was written, try again",
                        retry_after_s=1)
    return None


def json_response(body: msgspec.Struct, status: int = 200,
                  headers: Mapping[str, str] | None = None) -> web.Response:
    """A JSON response whose body is one of protocol/'s Structs, encoded by msgspec."""
    return web.Response(body=encode(body), status=status, content_type="application/json",
                        headers=headers)


def error_response(err: ApiError) -> web.Response:
    return json_response(error_body(err.code, err.message, err.details), err.status, err.headers)


_HTTP_CODES: dict[int, ErrorCode] = {
    400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found", 405: "bad_request",
    409: "conflict", PAYLOAD_TOO_LARGE: "bad_request", 415: "bad_request", 422: "illegal_move",
    429: "rate_limited", 503: "unavailable",
}


def json_protocol_errors() -> None:
    """Make aiohttp's own answers to unparsable HTTP (a header over its 8 KiB limit, a
    malformed request line) the contract's JSON error instead of plain text. They are
    produced below every middleware, so the only hook is the protocol handler itself."""
    from http import HTTPStatus

    from aiohttp import web_protocol

    original = web_protocol.RequestHandler.handle_error
    if getattr(original, "_solitaire_json", False):
        return

    def handle_error(self: web_protocol.RequestHandler, request: Any, status: int = 500,
                     exc: BaseException | None = None,
                     message: str | None = None) -> web.StreamResponse:
        if status < 500 and isinstance(exc, HttpProcessingError):
            # aiohttp's message (and its log line) quote the offending bytes: a header may
            # hold a token or a cookie. Say which rule was broken, never what was sent.
            reason = _describe_bad_http(exc)
            log.info("malformed HTTP request from %s: %s", request.remote, reason)
            if request.writer.output_size > 0:
                raise ConnectionError("a response was started: no error response can follow")
        else:
            # logs, and raises if a response was started
            original(self, request, status, exc, message)
            reason = HTTPStatus(status).phrase
        code = _HTTP_CODES.get(status, "unavailable" if status >= 500 else "bad_request")
        text = (f"malformed HTTP request: {reason}" if status < 500
                else "internal error; try again")
        response = json_response(error_body(code, text), status)
        response.force_close()
        return response

    handle_error._solitaire_json = True  # type: ignore[attr-defined]
    web_protocol.RequestHandler.handle_error = handle_error  # type: ignore[method-assign]


def _describe_bad_http(exc: HttpProcessingError) -> str:
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


@web.middleware
async def error_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        code = _HTTP_CODES.get(exc.status, "bad_request")
        message = {404: f"no such endpoint: {request.method} {request.path}",
                   405: f"method {request.method} is not allowed on {request.path}",
                   PAYLOAD_TOO_LARGE: "the request body is too large"}.get(exc.status, exc.reason)
        # A 405 keeps aiohttp's Allow header: which methods the resource has.
        allow = {"Allow": exc.headers["Allow"]} if "Allow" in exc.headers else None
        return error_response(ApiError(code, message, status=exc.status, headers=allow))
    except Exception as exc:  # noqa: BLE001 - every failure must leave as the contract's JSON
        err = to_api_error(exc, command=is_command(request))
        if err is None:
            incident = uuid.uuid4().hex[:12]
            log.exception("unhandled error %s on %s %s", incident, request.method, request.path)
            err = ApiError("unavailable", f"internal error (incident {incident}); try again",
                           status=500)
        return error_response(err)
