"""Cross-origin calls to the API: PROTOCOL.md's thin clients include JS front ends, and a
browser lets a page served from another origin read the API's answers only with CORS.

Every ``/v1`` answer, errors included, says ``Access-Control-Allow-Origin: *`` and exposes
``Retry-After``; a preflight (``OPTIONS`` with ``Access-Control-Request-Method``) gets 204.
A wildcard is safe here: the API trusts no cookie, only the bearer token the page itself
sends, so another site's page can do nothing a script outside the browser could not.
"""

from __future__ import annotations

from aiohttp import web

from service.web.responses import Handler

API_PREFIX = "/v1/"
ALLOW_ORIGIN = {"Access-Control-Allow-Origin": "*",
                "Access-Control-Expose-Headers": "Retry-After"}
PREFLIGHT = {
    **ALLOW_ORIGIN,
    "Access-Control-Allow-Methods": "GET, POST, PATCH",
    "Access-Control-Allow-Headers": "Authorization, Content-Type",
    "Access-Control-Max-Age": "86400",
}


@web.middleware
async def cors_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    if not request.path.startswith(API_PREFIX):
        return await handler(request)
    if request.method == "OPTIONS" and "Access-Control-Request-Method" in request.headers:
        return web.Response(status=204, headers=PREFLIGHT)
    response = await handler(request)
    if not response.prepared:  # a WebSocket's answer is sent already, and needs none
        response.headers.update(ALLOW_ORIGIN)
    return response
