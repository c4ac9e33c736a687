"""Who calls: the player of a request's bearer token, verified once per request.

PROTOCOL.md: a token that is sent is always checked; a malformed, forged or expired one
gets 401, even where no token is needed. :func:`caller_middleware` checks it on every
``/v1`` request before its handler runs, so a request wrong in other ways too is told of
its token first, and an endpoint added later is covered without doing anything; handlers
ask :func:`caller_of` (no token is fine) or :func:`required_player` (401 without one),
which reuse that check. A game's socket is the exception: its
token is its hello's (:mod:`service.socket.handshake`), and a browser cannot set the
header on a socket.
"""

from __future__ import annotations

from aiohttp import web

from service.context import context
from service.domain.auth import bearer_token
from service.domain.errors import ApiError
from service.web.cors import API_PREFIX
from service.web.error_middleware import is_socket
from service.web.responses import Handler

# The request's player: None when it sent no token; absent until checked.
_CALLER = web.RequestKey[str | None]("caller")


def caller_of(request: web.Request) -> str | None:
    """The player whose token ``request`` sent (None when it sent none), or 401 saying
    what is wrong with the token; verified on the first call only."""
    try:
        return request[_CALLER]
    except KeyError:
        pass
    token = bearer_token(request.headers.get("Authorization"))
    player = None if token is None else context(request.app).tokens.verify(token)
    request[_CALLER] = player
    return player


def required_player(request: web.Request) -> str:
    """The caller's player id from the bearer token (401 if absent, or bad)."""
    player = caller_of(request)
    if player is None:
        raise ApiError("unauthorized", "this needs a token: Authorization: Bearer <token> "
                       "(get one from POST /v1/players)")
    return player


@web.middleware
async def caller_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Check the token of every ``/v1`` request that sends one, but a socket's upgrade."""
    if request.path.startswith(API_PREFIX) and not is_socket(request):
        caller_of(request)
    return await handler(request)
