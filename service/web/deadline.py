"""Every HTTP request within ``request_deadline_s`` (the deadline itself, and why:
service/domain/deadline.py), its body included."""

from __future__ import annotations

import asyncio

from aiohttp import web
from aiohttp.typedefs import Middleware

from service.domain.deadline import deadline
from service.domain.errors import ApiError
from service.web.error_middleware import is_command
from service.web.responses import Handler


def deadline_middleware(seconds: float) -> Middleware:
    """An aiohttp middleware bounding every request but a WebSocket's (whose
    commands are bounded one by one in :mod:`service.socket.session`)."""

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.headers.get("Upgrade", "").lower() == "websocket":
            return await handler(request)
        budget = seconds
        if seconds > 0 and request.body_exists:
            # The body first (aiohttp keeps it for the handler): one that does not arrive
            # in time is the client's doing, not the store's, and nothing was begun.
            started = asyncio.get_running_loop().time()
            try:
                async with asyncio.timeout(seconds):
                    await request.read()
            except TimeoutError:
                raise ApiError("bad_request", f"the request body did not arrive within the "
                               f"request deadline ({seconds:g} s): send as many bytes as its "
                               "Content-Length says", {"deadline_s": seconds}) from None
            budget = max(seconds - (asyncio.get_running_loop().time() - started), 0.001)
        write = request.method not in ("GET", "HEAD", "OPTIONS")
        async with deadline(budget, write=write, shown=seconds, command=is_command(request)):
            return await handler(request)

    return middleware
