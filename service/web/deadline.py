"""Every HTTP request within ``request_deadline_s`` (the deadline itself, and why:
service/domain/deadline.py), its body included; and the body's own refusals (too large,
or not readable as its Content-Encoding says), each a 4xx that says why."""

from __future__ import annotations

import asyncio

from aiohttp import web
from aiohttp.typedefs import Middleware

from protocol.errors import PAYLOAD_TOO_LARGE
from service.domain.deadline import deadline
from service.domain.errors import ApiError
from service.web.error_middleware import is_command, is_socket
from service.web.responses import Handler


def too_large(max_bytes: int) -> ApiError:
    """A body over ``max_bytes`` (``--max-body-bytes``; a compressed body counts as it
    decompresses): 413, saying the limit, as the socket's error before 1009 does."""
    return ApiError("bad_request", f"the request body is larger than {max_bytes} bytes, the "
                    "most a request may carry (decompressed, if it is compressed)",
                    {"limit": "max_body_bytes", "max_bytes": max_bytes}, status=PAYLOAD_TOO_LARGE)


def deadline_middleware(seconds: float, max_body_bytes: int) -> Middleware:
    """An aiohttp middleware bounding every request but a WebSocket's (whose
    commands are bounded one by one in :mod:`service.socket.session`), and reading its
    body first: a ``Content-Length`` over ``max_body_bytes`` (of a body not compressed:
    a compressed one counts as it decompresses) is refused before a byte of the body is
    waited for."""

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        if is_socket(request):
            return await handler(request)
        budget = seconds
        if request.body_exists:
            encoded = "Content-Encoding" in request.headers  # counted as it decompresses
            if not encoded and (request.content_length or 0) > max_body_bytes:
                raise too_large(max_body_bytes)
            # The body first (aiohttp keeps it for the handler): one that does not arrive
            # in time is the client's doing, not the store's, and nothing was begun.
            started = asyncio.get_running_loop().time()
            try:
                async with asyncio.timeout(seconds if seconds > 0 else None):
                    await request.read()
            except TimeoutError:
                raise ApiError("bad_request", f"the request body did not arrive within the "
                               f"request deadline ({seconds:g} s): send as many bytes as its "
                               "Content-Length says", {"deadline_s": seconds}) from None
            except web.HTTPRequestEntityTooLarge:
                raise too_large(max_body_bytes) from None
            except web.RequestPayloadError:
                # Bytes that are not what Content-Encoding says (gzip that is not gzip):
                # the client's input, so a 400, and nothing was begun.
                encoding = request.headers.get("Content-Encoding", "none")
                raise ApiError("bad_request", "the request body could not be decoded as its "
                               f"Content-Encoding ({encoding}) says: send it so encoded "
                               "(gzip or deflate), or not encoded at all") from None
            if seconds > 0:  # 0: no deadline (service/domain/deadline.py)
                budget = max(seconds - (asyncio.get_running_loop().time() - started), 0.001)
        write = request.method not in ("GET", "HEAD", "OPTIONS")
        async with deadline(budget, write=write, shown=seconds, command=is_command(request)):
            return await handler(request)

    return middleware
