"""The HTTP error middleware: every failure of a request leaves as the contract's JSON
error (service/domain/errors.py names it), never aiohttp's plain text: an :class:`ApiError` as
it is, aiohttp's own refusals (404, 405...) in the contract's codes (a body's refusals,
413 among them, are service/web/deadline.py's), what the engine,
the codecs or the store raised as :func:`~service.domain.errors.to_api_error` says, and anything
else as a logged 500 (:func:`~service.domain.errors.internal_error`)."""

from __future__ import annotations

import logging
import uuid

from aiohttp import web

from protocol.errors import error_code
from service.domain.errors import ApiError, internal_error, to_api_error
from service.web.responses import Handler, error_response

log = logging.getLogger("service.domain.errors")

# The REST door of commands (rest.py serves it): the one request whose writes have a command_id.
COMMANDS_ROUTE = "/v1/games/{game_id}/commands"
# A game's WebSocket (service/socket/endpoint.py serves it; app.py routes it here).
SOCKET_ROUTE = "/v1/games/{game_id}/ws"


def is_command(request: web.Request) -> bool:
    """Whether ``request`` is a command (``POST`` of :data:`COMMANDS_ROUTE`)."""
    resource = request.match_info.route.resource
    return resource is not None and resource.canonical == COMMANDS_ROUTE


def is_socket(request: web.Request) -> bool:
    """Whether ``request`` opens a game's socket: by its route, not by its headers (an
    ``Upgrade`` header on any other request changes nothing)."""
    resource = request.match_info.route.resource
    return (request.method == "GET" and resource is not None
            and resource.canonical == SOCKET_ROUTE)


@web.middleware
async def error_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        message = {404: f"no such endpoint: {request.method} {request.path}",
                   405: f"method {request.method} is not allowed on {request.path}",
                   }.get(exc.status, exc.reason)
        # A 405 keeps aiohttp's Allow header: which methods the resource has.
        allow = {"Allow": exc.headers["Allow"]} if "Allow" in exc.headers else None
        return error_response(ApiError(error_code(exc.status), message, status=exc.status,
                                       headers=allow))
    except Exception as exc:  # noqa: BLE001 - every failure must leave as the contract's JSON
        err = to_api_error(exc, command=is_command(request))
        if err is None:
            incident = uuid.uuid4().hex[:12]
            log.exception("unhandled error %s on %s %s", incident, request.method, request.path)
            err = internal_error(incident)
        return error_response(err)
