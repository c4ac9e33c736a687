"""Who calls (service/web/caller.py): the player of a request's bearer token, checked once, by
the app, before any handler. PROTOCOL.md: a token that is sent is always checked; a
malformed, forged or expired one gets 401, even where no token is needed, and before
anything else the request says is looked at; a game's socket takes its token from the
``hello``, not from a header. A good token acts as its own player, and only as it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from service.app import create_app
from service.domain.auth import Tokens
from tests.fakes import FakeClock
from tests.live import free_port, running_service, settings_for_test
from tests.service.helpers import WAIT_S, Api, check_error, ws_url


@pytest.fixture
def base(live_base: str) -> str:
    return live_base


async def test_a_token_acts_as_its_own_player_and_no_other(api: Api) -> None:
    ann_id, ann = await api.player("Ann")
    bob_id, bob = await api.player("Bob")
    assert (await api.request("GET", "/v1/players/me", ann, 200)).body["player_id"] == ann_id
    assert (await api.request("GET", "/v1/players/me", bob, 200)).body["player_id"] == bob_id
    game = await api.create(ann, "gate", seed=3)
    assert game["state"]["owner"] == ann_id
    listed = (await api.request("GET", "/v1/players/me/games", bob, 200)).body
    assert game["game_id"] not in str(listed)
    # What needs no token works without one, and the same with a good one.
    for token in (None, ann):
        assert (await api.request("GET", "/v1/variants", token)).status == 200


async def test_a_missing_malformed_or_forged_token_is_401(api: Api, owner: tuple[str, str]) -> None:
    player_id, token = owner
    public_id = (await api.create(token, "gilbert", seed=3, public=True))["game_id"]
    payload = token.split(".")[1]
    forged = Tokens(b"another-secret-0123456789abcdef", 3600, FakeClock(datetime.now(UTC))).issue(
        player_id
    )
    bad_tokens = {
        "malformed": "abc",
        "three parts": "v1.abc.def",
        "wrong version": "v2." + token.split(".", 1)[1],
        "forged signature": f"v1.{payload}.{'A' * 43}",
        "signed with another secret": forged,
        "payload swapped": "v1." + forged.split(".")[1] + "." + token.split(".")[2],
    }
    for what, bad in bad_tokens.items():
        for method, path, body in [
            ("POST", "/v1/games", {"variant": "gilbert"}),
            ("POST", f"/v1/games/{public_id}/commands", {"command": {"type": "draw"}}),
            ("GET", f"/v1/games/{public_id}", None),  # a sent token is always checked
            ("GET", f"/v1/games/{public_id}/solution", None),
            ("GET", "/v1/variants", None),  # ... even where none is needed
            ("GET", "/v1/daily", None),
            ("POST", "/v1/players", {"name": "x"}),
            ("PATCH", "/v1/players/me", {"name": "x"}),
        ]:
            reply = await api.request(method, path, bad, json=body)
            assert reply.status == 401, (what, method, path, reply.raw)
            assert reply.error["code"] == "unauthorized"
    for header in ["Basic dXNlcjpwYXNz", "Bearer", "Bearer ", token]:
        reply = await api.request("POST", "/v1/games", headers={"Authorization": header},
                                  json={"variant": "gilbert"})
        check_error(reply, 401, "unauthorized")
    # No token where one is needed
    check_error(
        await api.request("POST", "/v1/games", json={"variant": "gilbert"}), 401, "unauthorized"
    )
    reply = await api.command(None, public_id, {"type": "draw"}, expect=None)
    check_error(reply, 401, "unauthorized")
    assert (await api.state(public_id))["seq"] == 0


async def test_an_expired_token_is_401(redis_url: str, tmp_path: Path) -> None:
    clock = FakeClock(datetime(2026, 5, 1, 12, tzinfo=UTC))
    settings = settings_for_test(redis_url, tmp_path, token_ttl_s=3600)
    async with running_service(settings, clock) as base, aiohttp.ClientSession() as session:
        api = Api(session, base)
        _, token = await api.player("brief")
        game_id = (await api.create(token, "gilbert", seed=3))["game_id"]
        clock.advance(3599)
        await api.command(token, game_id, {"type": "draw"})
        clock.advance(2)
        err = check_error(
            await api.command(token, game_id, {"type": "draw"}, expect=None), 401, "unauthorized"
        )
        assert "expired" in err["message"]
        check_error(await api.request("GET", f"/v1/games/{game_id}", token), 401, "unauthorized")


async def test_a_sent_token_is_checked_first_on_every_v1_endpoint_even_one_added_later(
        redis_url: str, tmp_path: Path) -> None:
    """PROTOCOL.md: a malformed, forged or expired token gets 401, even where no token is
    needed. The app checks it, not each handler: a request wrong in other ways too is told
    of its token first, and an endpoint that never asks who calls is covered as well. A
    socket's token is its hello's (a browser cannot set the header on a socket)."""
    clock = FakeClock(datetime(2026, 5, 1, 12, tzinfo=UTC))
    app = create_app(settings_for_test(redis_url, tmp_path, token_ttl_s=60), clock=clock)

    async def added_later(request: web.Request) -> web.Response:
        return web.json_response({"ok": True})

    app.router.add_get("/v1/added-later", added_later)
    runner = web.AppRunner(app, shutdown_timeout=2.0)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        async with aiohttp.ClientSession() as session:
            api = Api(session, f"http://127.0.0.1:{port}")
            _, token = await api.player("owner")
            game_id = (await api.create(token, "gilbert", seed=3, public=True))["game_id"]
            expired = Tokens(b"test-secret-0123456789abcdef", 60, FakeClock(
                datetime(2026, 5, 1, 11, tzinfo=UTC))).issue("p_gone")
            assert (await api.request("GET", "/v1/added-later", token)).status == 200
            for bad in ("abc", token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB"),
                        expired):
                for method, path in [
                    ("GET", "/v1/added-later"),
                    ("GET", "/v1/daily/2026-13-01/gilbert/leaderboard"),  # a bad date too
                    ("GET", "/v1/daily/2026-05-01/gilbert/leaderboard?cursor=x"),
                    ("GET", "/v1/daily/2026-05-01/nothing/leaderboard"),
                    ("GET", f"/v1/games/{game_id}/events?after=x"),
                ]:
                    check_error(await api.request(method, path, bad), 401, "unauthorized")
            with_header = {"Authorization": "Bearer abc"}
            async with session.ws_connect(ws_url(api.base, game_id), headers=with_header) as ws:
                await ws.send_json({"type": "hello", "token": token})
                assert (await ws.receive_json(timeout=WAIT_S))["type"] == "snapshot"
    finally:
        await runner.cleanup()


