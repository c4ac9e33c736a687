"""Issue 11, point 2: storage a stranger can fill, bounded.

- Every key has a lifetime: a won or resigned game is kept ``finished_game_ttl_days``
  (a daily attempt as long as its leaderboard: tests/service/domain/daily/test_daily_api.py keeps
  those), a player ``player_ttl_days`` after its last write (refreshed on use).
- A player has at most ``open_games_per_player`` open games: past it 429 with
  Retry-After, and a game won or resigned frees its place.
- Game creation is rate-limited per player and per client address (429, Retry-After).
"""

from __future__ import annotations

from pathlib import Path

import aiohttp

from service.store import keys
from tests.live import settings_for_test
from tests.redis_servers import sync_client
from tests.service.helpers import Api, running_app

SLOW = 0.001
DAY_S = 86_400


async def test_finished_games_and_players_have_a_lifetime(redis_url: str, tmp_path: Path) -> None:
    settings = settings_for_test(redis_url, tmp_path, finished_game_ttl_days=7, player_ttl_days=30)
    async with running_app(settings) as (base, _), aiohttp.ClientSession() as session:
        api = Api(session, base)
        player_id, token = await api.player()
        game_id = (await api.create(token, "gilbert", seed=3))["game_id"]
        with sync_client(redis_url) as client:
            assert 29 * DAY_S < client.ttl(keys.player(player_id)) <= 30 * DAY_S
            client.expire(keys.player(player_id), 100)
            for key in keys.game_meta(game_id), keys.game_events(game_id):
                assert client.ttl(key) in (-2, -1) or client.ttl(key) <= settings.game_ttl_s
            await api.command(token, game_id, {"type": "resign"})
            # Meta and events (the others exist only when used).
            for key in keys.game_keys(game_id)[:2]:
                assert 6 * DAY_S < client.ttl(key) <= 7 * DAY_S, key
            await api.create(token, "gilbert", seed=4)  # a use of the player refreshes it
            assert client.ttl(keys.player(player_id)) > 29 * DAY_S
            body = (
                await api.request(
                    "PATCH", "/v1/players/me", token, json={"name": "ann2"}, expect=200
                )
            ).body
            assert body["name"] == "ann2" and client.ttl(keys.player(player_id)) > 29 * DAY_S


async def test_open_games_per_player_are_capped_and_a_finished_one_frees_its_place(
        redis_url: str, tmp_path: Path) -> None:
    settings = settings_for_test(redis_url, tmp_path, open_games_per_player=3)
    async with running_app(settings) as (base, _), aiohttp.ClientSession() as session:
        api = Api(session, base)
        _, token = await api.player()
        games = [(await api.create(token, "gilbert", seed=i))["game_id"] for i in range(3)]
        reply = await api.request("POST", "/v1/games", token, json={"variant": "gilbert"})
        assert reply.status == 429 and reply.error["code"] == "rate_limited"
        assert reply.error["details"]["limit"] == "open_games_per_player"
        assert 0 < int(reply.headers["Retry-After"]) <= settings.game_ttl_s
        assert "resign" in reply.error["message"]
        bad = await api.request("POST", "/v1/games", token, json={"variant": "nope"})
        assert bad.status == 429  # the cap is checked first
        _, other = await api.player("bob")  # another player is not held back
        await api.create(other, "gilbert", seed=1)
        await api.command(token, games[0], {"type": "resign"})
        await api.create(token, "gilbert", seed=9)  # the resigned game's place
        reply = await api.request("POST", "/v1/games", token, json={"variant": "gilbert"})
        assert reply.status == 429


async def test_a_refused_variant_takes_no_place(redis_url: str, tmp_path: Path) -> None:
    settings = settings_for_test(redis_url, tmp_path, open_games_per_player=1)
    async with running_app(settings) as (base, _), aiohttp.ClientSession() as session:
        api = Api(session, base)
        _, token = await api.player()
        for _ in range(3):
            bad = await api.request("POST", "/v1/games", token, json={"variant": "nope"})
            assert bad.status == 400
        await api.create(token, "gilbert", seed=1)


async def test_game_creation_is_limited_per_player_and_per_address(
    redis_url: str, tmp_path: Path
) -> None:
    settings = settings_for_test(redis_url, tmp_path, create_rate_per_s=SLOW, create_burst=5,
                                 create_per_address_rate_per_s=SLOW, create_per_address_burst=8)
    async with running_app(settings) as (base, _), aiohttp.ClientSession() as session:
        api = Api(session, base)
        _, ann = await api.player("ann")
        _, bob = await api.player("bob")
        for i in range(5):
            await api.create(ann, "gilbert", seed=i)
        reply = await api.request("POST", "/v1/games", ann, json={"variant": "gilbert"})
        assert reply.status == 429 and reply.error["details"]["limit"] == "create_rate_per_s"
        assert int(reply.headers["Retry-After"]) >= 1
        # The address's 8th new game: its two players count as two (issue 23: a new player
        # per game must not carry an address past its limit), ann's five, and this one.
        await api.create(bob, "gilbert", seed=0)
        reply = await api.request("POST", "/v1/games", bob, json={"variant": "gilbert"})
        assert (
            reply.status == 429
            and reply.error["details"]["limit"] == "create_per_address_rate_per_s"
        )
        # Behind a proxy the limit follows X-Forwarded-For only when the proxy is trusted.
        reply = await api.request("POST", "/v1/games", bob, json={"variant": "gilbert"},
                                  headers={"X-Forwarded-For": "198.51.100.7"})
        assert reply.status == 429
