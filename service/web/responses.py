"""What an HTTP handler returns: a JSON response whose body is one of protocol/'s Structs
(an error too, from its :class:`~service.domain.errors.ApiError`), and the type of a handler
that middlewares wrap."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

import msgspec
from aiohttp import web

from protocol.codec import encode
from protocol.errors import error_body
from service.domain.errors import ApiError

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def json_response(body: msgspec.Struct, status: int = 200,
                  headers: Mapping[str, str] | None = None) -> web.Response:
    """A JSON response whose body is one of protocol/'s Structs, encoded by msgspec."""
    return web.Response(body=encode(body), status=status, content_type="application/json",
                        headers=headers)


def error_response(err: ApiError) -> web.Response:
    """The contract's error body, with the error's status and headers (Retry-After...)."""
    return json_response(error_body(err.code, err.message, err.details), err.status, err.headers)
