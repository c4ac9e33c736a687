"""Cross-origin calls (service/web/cors.py): PROTOCOL.md's thin clients include JS front ends,
and a browser lets a page from another origin read the API's answers only with CORS.
Every ``/v1`` answer, each refusal included, allows any origin and exposes
``Retry-After``; a preflight gets 204 naming the methods and headers the API takes; no
credential rides along; the rest of the site (the web client, the probes) is not the
API and gets none of it."""

from __future__ import annotations

from pathlib import Path

import aiohttp
import pytest

from tests.live import running_service, settings_for_test
from tests.service.helpers import WAIT_S, Api, Reply, ws_url

ORIGIN = {"Origin": "https://cards.example"}


@pytest.fixture
def base(live_base: str) -> str:
    return live_base


async def test_a_js_front_end_on_another_origin_may_call_the_api(api: Api,
                                                                 owner: tuple[str, str]) -> None:
    """PROTOCOL.md's thin clients include JS front ends: a browser lets one served from
    another origin read the answers (errors included, and Retry-After) only with CORS, and
    asks first (a preflight) before a request with a token or a JSON body."""
    origin = {"Origin": "https://cards.example"}
    preflight = await api.request("OPTIONS", "/v1/games", headers={
        **origin, "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type"})
    assert preflight.status == 204, preflight.raw
    h = preflight.headers
    assert h["Access-Control-Allow-Origin"] == "*"
    assert {"POST", "GET", "PATCH"} <= {m.strip() for m in h["Access-Control-Allow-Methods"]
                                          .split(",")}
    assert {"authorization", "content-type"} <= {
        x.strip().lower() for x in h["Access-Control-Allow-Headers"].split(",")}
    created = await api.request("POST", "/v1/games", owner[1], json={"variant": "gilbert"},
                                headers=origin)
    assert created.status == 201 and created.headers["Access-Control-Allow-Origin"] == "*"
    refused = await api.request("GET", "/v1/games/g_nope", headers=origin)
    assert refused.status == 404 and refused.headers["Access-Control-Allow-Origin"] == "*"
    assert "Retry-After" in refused.headers["Access-Control-Expose-Headers"]
    # No credentials ride along (the token is a header the page sets): no cookie is trusted.
    assert "Access-Control-Allow-Credentials" not in created.headers
    # An OPTIONS that is not a preflight is still an unknown method.
    assert (await api.request("OPTIONS", "/v1/games")).status == 405


async def test_every_refusal_is_readable_by_a_page_of_another_origin(
        redis_url: str, tmp_path: Path) -> None:
    """A page must be able to read why it was refused and when to retry: a bad token
    (refused before any handler runs), a body too large, a limit's 429 and its Retry-After."""
    settings = settings_for_test(redis_url, tmp_path, rate_limit_per_s=0.001, rate_limit_burst=3)
    async with running_service(settings) as base, aiohttp.ClientSession() as session:
        api = Api(session, base)
        _, token = await api.player("ann")
        game_id = (await api.create(token, "gilbert", seed=3))["game_id"]
        refusals = [
            await api.request("GET", "/v1/variants", "not-a-token", 401, headers=ORIGIN),
            await api.request("POST", "/v1/players", expect=413, data=b"{" + b" " * 20_000 + b"}",
                              headers={**ORIGIN, "Content-Type": "application/json"}),
        ]
        limited: Reply | None = None
        for _ in range(5):  # the game's creation and two draws fill the burst of 3
            reply = await api.request("POST", f"/v1/games/{game_id}/commands", token,
                                      headers=ORIGIN, json={"command": {"type": "draw"}})
            if reply.status == 429:
                limited = reply
                break
            assert reply.status == 200, reply.raw
        assert limited is not None, "the rate limit never refused"
        refusals.append(limited)
    for reply in refusals:
        assert reply.headers["Access-Control-Allow-Origin"] == "*", (reply.status, reply.headers)
        assert "Retry-After" in reply.headers["Access-Control-Expose-Headers"], reply.status
    assert int(limited.headers["Retry-After"]) >= 1


async def test_a_preflight_anywhere_under_v1_is_answered_before_the_route_or_the_token(
        api: Api) -> None:
    """A browser's preflight carries no token and may name any API path: it is answered
    there and then, for a path that needs a token, or one that does not exist."""
    for path in ("/v1/players/me", "/v1/games/g_nope/commands", "/v1/nothing"):
        reply = await api.request("OPTIONS", path, headers={
            **ORIGIN, "Access-Control-Request-Method": "PATCH"})
        assert reply.status == 204, (path, reply.raw)
        assert "PATCH" in reply.headers["Access-Control-Allow-Methods"]
        assert int(reply.headers["Access-Control-Max-Age"]) > 0


async def test_what_is_not_the_api_gets_no_cors_headers(api: Api) -> None:
    for path in ("/", "/healthz", "/openapi.yaml"):
        reply = await api.request("GET", path, headers=ORIGIN)
        assert reply.status == 200, (path, reply.status)
        assert "Access-Control-Allow-Origin" not in reply.headers, path
    preflight = await api.request("OPTIONS", "/healthz", headers={
        **ORIGIN, "Access-Control-Request-Method": "GET"})
    assert preflight.status != 204 and "Access-Control-Allow-Origin" not in preflight.headers


async def test_a_game_socket_opens_from_a_page_of_another_origin(api: Api) -> None:
    """A socket's upgrade is answered by the socket itself, its headers sent already: the
    CORS layer leaves it alone, and a page elsewhere plays as any client does."""
    _, token = await api.player("ann")
    game_id = (await api.create(token, "gilbert", seed=3))["game_id"]
    async with api.session.ws_connect(ws_url(api.base, game_id), headers=ORIGIN) as ws:
        await ws.send_json({"type": "hello", "token": token})
        assert (await ws.receive_json(timeout=WAIT_S))["type"] == "snapshot"
        await ws.send_json({"type": "command", "command_id": "c1", "command": {"type": "draw"}})
        kinds = set()
        while not {"ack", "diff"} <= kinds:
            kinds.add((await ws.receive_json(timeout=WAIT_S))["type"])
