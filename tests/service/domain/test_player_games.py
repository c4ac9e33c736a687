"""`GET /v1/players/me` and `GET /v1/players/me/games` through a running instance on a real
store: the caller, and their games newest first, paged, filtered, bounded."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from protocol.rest import PLAYER_GAMES_LIMIT_MAX, PLAYER_GAMES_SCAN_MAX
from service.context import Context
from service.domain.games import DailyTags
from service.store import keys
from service.store.meta import DailyTag
from tests.fakes import FakeClock
from tests.live import settings_for_test
from tests.redis_servers import sync_client
from tests.service.helpers import Api, running_app

START = datetime(2026, 3, 1, 12, tzinfo=UTC)


@pytest.fixture
async def live(redis_url: str, tmp_path: Path) -> AsyncIterator[tuple[Api, Context, FakeClock]]:
    clock = FakeClock(START)
    async with running_app(settings_for_test(redis_url, tmp_path), clock) as (base, ctx), \
            aiohttp.ClientSession() as session:
        yield Api(session, base), ctx, clock


async def make_games(api: Api, clock: FakeClock, token: str, variants: list[str]) -> list[str]:
    """One game of each variant, a second apart, oldest first; their ids."""
    ids = []
    for variant in variants:
        clock.advance(1)
        ids.append((await api.create(token, variant, seed=7))["game_id"])
    return ids


async def every_page(api: Api, token: str, **params: Any) -> list[dict[str, Any]]:
    """The bodies of every page, following next_cursor."""
    pages = []
    query = {k: str(v) for k, v in params.items()}
    while True:
        body = (await api.request("GET", "/v1/players/me/games", token, 200, params=query)).body
        pages.append(body)
        if body["next_cursor"] is None:
            return pages
        query["cursor"] = body["next_cursor"]


async def test_players_me_is_the_caller(live: tuple[Api, Context, FakeClock]) -> None:
    api, _, _ = live
    player_id, token = await api.player("Ann")
    body = (await api.request("GET", "/v1/players/me", token, 200)).body
    assert body == {"player_id": player_id, "name": "Ann", "created_at": "2026-03-01T12:00:00.000Z"}
    await api.request("PATCH", "/v1/players/me", token, 200, json={"name": "Bea"})
    assert (await api.request("GET", "/v1/players/me", token, 200)).body["name"] == "Bea"
    assert (await api.request("GET", "/v1/players/me", None, 401)).error["code"] == "unauthorized"


async def test_the_games_come_newest_first_page_by_page_each_once(
        live: tuple[Api, Context, FakeClock]) -> None:
    api, _, clock = live
    _, token = await api.player("Ann")
    _, other = await api.player("Bob")
    made = await make_games(api, clock, token, ["gilbert", "shamrocks", "gate", "caprice"] * 3)
    await make_games(api, clock, other, ["gilbert"])  # not Ann's
    pages = await every_page(api, token, limit=5)
    assert [len(p["games"]) for p in pages] == [5, 5, 2]
    listed = [g["game_id"] for p in pages for g in p["games"]]
    assert listed == made[::-1]
    first = pages[0]["games"][0]
    assert first == {"game_id": made[-1], "variant": "caprice", "options": first["options"],
                     "status": "playing", "seq": 0, "public": False,
                     "created_at": "2026-03-01T12:00:12.000Z",
                     "updated_at": "2026-03-01T12:00:12.000Z"}


async def test_the_games_are_listed_alike_on_a_cluster(any_redis_url: str, tmp_path: Path) -> None:
    """Redis Cluster: the player's index lives in their slot, their games in others."""
    clock = FakeClock(START)
    async with running_app(settings_for_test(any_redis_url, tmp_path), clock) as (base, _), \
            aiohttp.ClientSession() as session:
        api = Api(session, base)
        _, token = await api.player("Ann")
        made = await make_games(api, clock, token, ["gilbert", "gate"] * 4)
        await api.command(token, made[1], {"type": "resign"})
        pages = await every_page(api, token, limit=3)
        assert [g["game_id"] for p in pages for g in p["games"]] == made[::-1]
        [resigned] = await every_page(api, token, status="resigned", variant="gate")
        assert [g["game_id"] for g in resigned["games"]] == [made[1]]


async def test_games_made_in_the_same_millisecond_come_newest_first_too(
        live: tuple[Api, Context, FakeClock]) -> None:
    api, _, _ = live  # the clock stands still: every game is made at the same time
    _, token = await api.player("Ann")
    made = [(await api.create(token, "gate", seed=n))["game_id"] for n in range(6)]
    pages = await every_page(api, token, limit=4)
    assert [g["game_id"] for p in pages for g in p["games"]] == made[::-1]
    gates = await every_page(api, token, variant="gate", limit=4)
    assert [g["game_id"] for p in gates for g in p["games"]] == made[::-1]
    assert {g["created_at"] for p in pages for g in p["games"]} == {"2026-03-01T12:00:00.000Z"}


async def test_the_filters_keep_a_variant_and_a_status(
        live: tuple[Api, Context, FakeClock]) -> None:
    api, _, clock = live
    _, token = await api.player("Ann")
    made = await make_games(api, clock, token, ["gilbert", "shamrocks", "gilbert", "gate"])
    clock.advance(1)
    await api.command(token, made[2], {"type": "resign"})
    [gilberts] = await every_page(api, token, variant="gilbert")
    assert [g["game_id"] for g in gilberts["games"]] == [made[2], made[0]]
    [resigned] = await every_page(api, token, status="resigned")
    assert [(g["game_id"], g["status"], g["seq"]) for g in resigned["games"]] == [
        (made[2], "resigned", 1)]
    assert resigned["games"][0]["updated_at"] == "2026-03-01T12:00:05.000Z"
    assert resigned["games"][0]["created_at"] == "2026-03-01T12:00:03.000Z"
    playing = await every_page(api, token, status="playing", variant="gilbert")
    assert [g["game_id"] for p in playing for g in p["games"]] == [made[0]]


async def test_a_status_filter_looks_at_a_bounded_number_of_games(
        live: tuple[Api, Context, FakeClock]) -> None:
    """However few games match, one request reads at most PLAYER_GAMES_SCAN_MAX of them; the
    next page goes on from where it stopped."""
    api, ctx, clock = live
    owner, token = await api.player("Ann")
    won_none = await make_games(api, clock, token, ["gilbert"])
    for _ in range(PLAYER_GAMES_SCAN_MAX + 10):
        clock.advance(0.001)
        await ctx.games.create(owner, "gilbert", 1, None, False)
    await api.command(token, won_none[0], {"type": "resign"})
    pages = await every_page(api, token, status="resigned", limit=PLAYER_GAMES_LIMIT_MAX)
    assert [len(p["games"]) for p in pages] == [0, 1]
    assert pages[1]["games"][0]["game_id"] == won_none[0]


async def test_an_expired_game_is_left_out_and_leaves_the_index(
        live: tuple[Api, Context, FakeClock], redis_url: str) -> None:
    api, _, clock = live
    owner, token = await api.player("Ann")
    made = await make_games(api, clock, token, ["gilbert", "gate", "gilbert"])
    with sync_client(redis_url) as r:
        r.delete(*keys.game_keys(made[1]))  # as its TTL would
        [page] = await every_page(api, token)
        assert [g["game_id"] for g in page["games"]] == [made[2], made[0]]
        # A minute on, it is not a game being made: its member goes.
        assert r.zcard(keys.player_games(owner)) == 3
        clock.advance(61)
        [page] = await every_page(api, token)
        assert [g["game_id"] for g in page["games"]] == [made[2], made[0]]
        assert r.zcard(keys.player_games(owner)) == 2
        assert r.zcard(keys.player_games(owner, "gate")) == 0
        # The index lives as long as the player, renewed by each new game.
        assert 0 < r.ttl(keys.player_games(owner)) <= 400 * 86_400


async def test_a_daily_attempt_says_its_day(live: tuple[Api, Context, FakeClock]) -> None:
    api, ctx, _ = live
    owner, token = await api.player("Ann")
    ends = START + timedelta(hours=12)
    loaded = await ctx.games.create(
        owner, "gate", 5, None, False, seed_secret=True,
        daily=DailyTags(DailyTag(START.date(), "gate"), ends, ends, ends))
    [page] = await every_page(api, token)
    assert [(g["game_id"], g["daily"]) for g in page["games"]] == [(loaded.game_id, "2026-03-01")]


def test_a_players_indexes_share_the_players_slot() -> None:
    """Redis Cluster: every index key of a player is tagged by the player, not by a game."""
    for key in (keys.player_games("p_x"), keys.player_games("p_x", "gate"), keys.player("p_x")):
        assert key.split("{")[1].split("}")[0] == "p_x"


@pytest.mark.parametrize("params", [
    {"cursor": "nope"},
    {"cursor": base64.urlsafe_b64encode(b"12 g_x gilbert").decode()},
    {"limit": str(PLAYER_GAMES_LIMIT_MAX + 1)},
    {"limit": "0"},
    {"status": "asleep"},
    {"status": "null"},
    {"variant": "klondike"},
])
async def test_a_bad_query_is_a_400_naming_the_parameter(
        live: tuple[Api, Context, FakeClock], params: dict[str, str]) -> None:
    api, _, _ = live
    _, token = await api.player("Ann")
    err = (await api.request("GET", "/v1/players/me/games", token, 400, params=params)).error
    assert err["code"] == "bad_request"
    [name] = params
    assert name in err["message"] + str(err["details"]), err


async def test_the_games_need_a_token(live: tuple[Api, Context, FakeClock]) -> None:
    api, _, _ = live
    await api.request("GET", "/v1/players/me/games", None, 401)
