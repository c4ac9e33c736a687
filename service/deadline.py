"""The request deadline: every request answers within ``request_deadline_s``.

redis-py's timeouts and retries bound one call, not a request: a request makes
several calls, and a paused store (SIGSTOP, a stalled disk, a partition that
drops packets) held one for minutes. :func:`deadline` bounds the whole of it;
when it passes, the work is cancelled and the client gets 503 ``unavailable``
with ``Retry-After``. A command cut short may have been applied: the error
says so, and a resend with the same ``command_id`` returns the first result.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from aiohttp import web

from service.errors import UNKNOWN_OUTCOME, ApiError, Handler


def too_late(seconds: float, write: bool) -> ApiError:
    what = (f"the game store did not answer within the request deadline ({seconds:g} s); "
            + (UNKNOWN_OUTCOME if write else "nothing was written, try again"))
    # A read has no outcome to tell: nothing was written (as the store's own 503 says).
    details: dict[str, object] = {"deadline_s": seconds}
    if write:
        details["outcome"] = "unknown"
    return ApiError("unavailable", what, details, retry_after_s=seconds)


@contextlib.asynccontextmanager
async def deadline(seconds: float, write: bool = False) -> AsyncIterator[None]:
    """Run the block within ``seconds``, else raise the 503 :class:`ApiError`."""
    if seconds <= 0:
        yield
        return
    timeout = asyncio.timeout(seconds)
    try:
        async with timeout:
            yield
    except TimeoutError:
        if not timeout.expired():
            raise  # a timeout of an inner call, not ours
        raise too_late(seconds, write) from None


def deadline_middleware(seconds: float) -> object:
    """An aiohttp middleware bounding every request but a WebSocket's (whose
    commands are bounded one by one in :mod:`service.ws`)."""

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.headers.get("Upgrade", "").lower() == "websocket":
            return await handler(request)
        async with deadline(seconds, write=request.method not in ("GET", "HEAD", "OPTIONS")):
            return await handler(request)

    return middleware
