"""Issue 23, points 2 to 5: daily attempts, sign-ups, renames and the leaderboard's integrity.

- A daily attempt is a new game: it counts against its player's and its address's
  game-creation limits, and so does every player an address signs up (point 2).
- Sign-ups have a limit per address of their own, counted in the store, and a player
  that never played is kept only ``unplayed_player_ttl_s`` (point 3).
- A rename is limited per player and writes the player's own hash alone: boards keep
  player ids, and a page reads its players' names in one call (point 4).
- Players made on the day and machine-paced attempts are marked and listed after the
  others (point 5; the threat model is in docs/reliability.md).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime, time, timedelta
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from service.domain.daily.ranking import machine_paced
from service.domain.daily.service import NAME_CACHE_S
from service.store import keys
from tests.fakes import FakeClock
from tests.live import settings_for_test
from tests.redis_servers import sync_client
from tests.service.domain.daily.helpers import (
    DAY,
    MORNING,
    NEXT_DAY,
    VARIANT,
    remember_chosen,
    restore_chosen,
    winning_line,
)
from tests.service.helpers import Api, running_app

SLOW = 0.001  # a rate that refills nothing while a test runs
DAY_S = 86_400
ATTEMPTS = f"/v1/daily/{DAY.isoformat()}/{VARIANT}/attempts"
BOARD = f"/v1/daily/{DAY.isoformat()}/{VARIANT}/leaderboard"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(MORNING)


@contextlib.asynccontextmanager
async def daily_service(redis_url: str, tmp_path: Path, clock: FakeClock,
                        **limits: Any) -> AsyncIterator[Api]:
    """The service at DAY's morning, its deals chosen, with ``limits`` (every other limit
    lifted, as settings_for_test has them)."""
    await restore_chosen(redis_url, tmp_path)
    settings = settings_for_test(redis_url, tmp_path, **limits)
    async with running_app(settings, clock) as (base, _), aiohttp.ClientSession() as session:
        api = Api(session, base)
        await chosen(api)
        yield api
        await remember_chosen(redis_url, tmp_path)


async def chosen(api: Api, patience: int = 9000) -> None:
    """Wait (bounded) until the day's deals are chosen: 503 until then."""
    for _ in range(patience):
        reply = await api.request("GET", "/v1/daily", params={"date": DAY.isoformat()})
        if reply.status == 200:
            return
        assert reply.status == 503, reply.raw
        await asyncio.sleep(0.1)
    raise AssertionError("the day's deals were never chosen")


def check_limited(reply: Any, limit: str) -> None:
    assert reply.status == 429, reply.raw
    assert reply.error["code"] == "rate_limited" and reply.error["details"]["limit"] == limit
    assert int(reply.headers["Retry-After"]) >= 1
    assert reply.error["details"]["retry_after_s"] >= 1


# --- point 2: attempts are new games ----------------------------------------------------------

async def test_new_players_and_their_attempts_share_the_address_game_creation_limit(
        redis_url: str, tmp_path: Path, clock: FakeClock) -> None:
    """The audit's way round the limit: a new player per attempt. Each sign-up and each
    attempt takes one of the address's 10 new games; the 11th of either is refused."""
    async with daily_service(redis_url, tmp_path, clock, create_per_address_rate_per_s=SLOW,
                             create_per_address_burst=10) as daily:
        made = 0
        refused = None
        for i in range(20):  # bounded: the limit is 10
            reply = await daily.request("POST", "/v1/players", json={"name": f"bot{i}"})
            if reply.status != 201:
                refused = reply
                break
            made += 1
            attempt = await daily.request("POST", ATTEMPTS, reply.body["token"])
            if attempt.status != 201:
                refused = attempt
                break
            made += 1
        assert refused is not None and made == 10
        check_limited(refused, "create_per_address_rate_per_s")


async def test_a_daily_attempt_counts_against_its_players_game_creation_limit(
        redis_url: str, tmp_path: Path, clock: FakeClock) -> None:
    async with daily_service(redis_url, tmp_path, clock, create_rate_per_s=SLOW,
                             create_burst=3) as daily:
        _, token = await daily.player("ann")
        for seed in range(3):
            await daily.create(token, "gilbert", seed=seed)
        check_limited(await daily.request("POST", ATTEMPTS, token), "create_rate_per_s")
        _, bob = await daily.player("bob")  # another player's attempt is not held back
        await daily.request("POST", ATTEMPTS, bob, expect=201)


# --- point 3: sign-ups --------------------------------------------------------------------------

async def test_sign_ups_are_limited_per_address_on_their_own(
        redis_url: str, tmp_path: Path, clock: FakeClock) -> None:
    """The sign-up limit is its own (not the command rate, lifted here), per address."""
    async with daily_service(redis_url, tmp_path, clock, signup_per_address_rate_per_s=SLOW,
                             signup_per_address_burst=5, trusted_proxies="127.0.0.1") as daily:
        for i in range(5):
            await daily.player(f"p{i}")
        reply = await daily.request("POST", "/v1/players", json={"name": "p5"})
        check_limited(reply, "signup_per_address_rate_per_s")
        assert "new players from this address" in reply.error["message"]
        other = {"X-Forwarded-For": "198.51.100.7"}  # another client, behind the trusted proxy
        await daily.request("POST", "/v1/players", json={"name": "q"}, headers=other, expect=201)
        bad = await daily.request("POST", "/v1/players", json={"name": ""}, headers=other)
        assert bad.status == 400  # a refused name uses no sign-up
        await daily.request("POST", "/v1/players", json={"name": "q2"}, headers=other, expect=201)


async def test_a_player_that_never_played_is_kept_a_short_while(
        redis_url: str, tmp_path: Path, clock: FakeClock) -> None:
    async with daily_service(redis_url, tmp_path, clock, unplayed_player_ttl_s=3600,
                             player_ttl_days=30) as daily:
        ann, ann_token = await daily.player("ann")
        bob, bob_token = await daily.player("bob")
        with sync_client(redis_url) as client:
            for player in ann, bob:
                assert 0 < client.ttl(keys.player(player)) <= 3600
            # A rename is not play: it does not lengthen the short life.
            await daily.request("PATCH", "/v1/players/me", ann_token, json={"name": "ann2"},
                                expect=200)
            assert 0 < client.ttl(keys.player(ann)) <= 3600
            await daily.create(ann_token, "gilbert", seed=1)  # a first game: kept as every player
            await daily.request("POST", ATTEMPTS, bob_token, expect=201)  # so is a first attempt
            for player in ann, bob:
                assert 29 * DAY_S < client.ttl(keys.player(player)) <= 30 * DAY_S
            await daily.request("PATCH", "/v1/players/me", ann_token, json={"name": "ann3"},
                                expect=200)
            assert 29 * DAY_S < client.ttl(keys.player(ann)) <= 30 * DAY_S
            # A player whose record expired unplayed comes back from a rename as unplayed.
            carl, carl_token = await daily.player("carl")
            client.delete(keys.player(carl))
            await daily.request("PATCH", "/v1/players/me", carl_token, json={"name": "carl2"},
                                expect=200)
            assert 0 < client.ttl(keys.player(carl)) <= 3600


# --- point 4: renames ---------------------------------------------------------------------------

async def test_renames_are_limited_per_player(
        redis_url: str, tmp_path: Path, clock: FakeClock) -> None:
    async with daily_service(redis_url, tmp_path, clock, renames_per_day=3) as daily:
        _, ann = await daily.player("ann")
        _, bob = await daily.player("bob")
        for i in range(3):
            await daily.request("PATCH", "/v1/players/me", ann, json={"name": f"ann{i}"},
                                expect=200)
        reply = await daily.request("PATCH", "/v1/players/me", ann, json={"name": "ann9"})
        check_limited(reply, "renames_per_day")
        assert "3 a day" in reply.error["message"]
        assert int(reply.headers["Retry-After"]) > 3600  # a day's third of a rename
        bad = await daily.request("PATCH", "/v1/players/me", bob, json={"name": ""})
        assert bad.status == 400  # a refused name uses no rename
        for i in range(3):  # another player is not held back
            await daily.request("PATCH", "/v1/players/me", bob, json={"name": f"bob{i}"},
                                expect=200)


def script_calls(client: Any) -> int:
    """Lua scripts the store has run since its last CONFIG RESETSTAT."""
    stats = client.info("commandstats")
    return sum(stats.get(f"cmdstat_{name}", {}).get("calls", 0)
               for name in ("eval", "evalsha", "eval_ro", "evalsha_ro"))


async def resigned_attempt(daily: Api, token: str) -> str:
    game_id: str = (await daily.request("POST", ATTEMPTS, token, expect=201)).body["game_id"]
    await daily.command(token, game_id, {"type": "resign"})
    return game_id


async def test_a_rename_costs_a_few_store_calls_and_shows_on_the_board_at_once(
        redis_url: str, tmp_path: Path, clock: FakeClock) -> None:
    """The audit's rename rewrote every kept board: (daily_keep_days + 2) x 4 = 128
    scripts. The board keeps player ids now: a rename is the player's own hash (and
    its limits), and the next read of any board shows the new name."""
    async with daily_service(redis_url, tmp_path, clock, daily_keep_days=30) as daily:
        ann, ann_token = await daily.player("ann")
        await resigned_attempt(daily, ann_token)
        entries = (await daily.request("GET", BOARD, expect=200)).body["entries"]
        assert [e["name"] for e in entries] == ["ann"]
        with sync_client(redis_url) as client:
            client.config_resetstat()
            await daily.request("PATCH", "/v1/players/me", ann_token, json={"name": "Annie"},
                                expect=200)
            # Its store calls: the command and rename limits and the name. A timer of the
            # service (choosing deals ahead) may run a script meanwhile; never 128.
            assert script_calls(client) <= 6
        body = (await daily.request("GET", BOARD, expect=200)).body
        assert [(e["player_id"], e["name"]) for e in body["entries"]] == [(ann, "Annie")]


async def test_a_page_reads_its_names_in_one_call_and_a_gone_player_shows_its_id(
        redis_url: str, tmp_path: Path, clock: FakeClock) -> None:
    """A page of 30 entries costs the page's script and one call for its names, not one
    per entry; a player whose record is gone is shown under its id (documented)."""
    async with daily_service(redis_url, tmp_path, clock) as daily:
        players = []
        for i in range(30):
            pid, token = await daily.player(f"p{i}")
            await resigned_attempt(daily, token)
            players.append((pid, token))
        gone, _ = players[7]
        with sync_client(redis_url) as client:
            client.delete(keys.player(gone))
            client.config_resetstat()
            body = (await daily.request("GET", BOARD, players[0][1], expect=200,
                                        params={"limit": "100"})).body
            assert script_calls(client) <= 4  # the page, the names (and a timer's, if any)
        names = {e["player_id"]: e["name"] for e in body["entries"]}
        assert len(names) == 30 and names[gone] == gone
        assert all(names[pid] == f"p{i}" for i, (pid, _) in enumerate(players) if pid != gone)
        assert body["me"]["name"] == "p0"


# --- point 5: the leaderboard's integrity -------------------------------------------------------

async def play(daily: Api, clock: FakeClock, token: str, game_id: str,
               commands: Sequence[dict[str, Any]], seconds_each: float) -> None:
    for command in commands:
        clock.advance(seconds_each)
        await daily.command(token, game_id, command)


async def test_a_player_made_on_the_day_ranks_after_every_player_from_before_it(
        redis_url: str, tmp_path: Path, clock: FakeClock) -> None:
    """The scout's way: a throwaway made on the day learns the deal, or is itself the
    one ranked. Players made after the day began are listed, marked ``new_player``,
    after everyone who was there before: a throwaway cannot take a place above them."""
    line = winning_line()
    async with daily_service(redis_url, tmp_path, clock) as daily:
        clock.set(datetime.combine(DAY, time(0), UTC) - timedelta(minutes=1))
        veteran, veteran_token = await daily.player("veteran")
        clock.set(MORNING)
        fresh, fresh_token = await daily.player("fresh")
        # The fresh player wins at a person's pace, the veteran only resigns: the win is
        # listed after the resignation.
        fresh_game = (await daily.request("POST", ATTEMPTS, fresh_token, expect=201)).body
        await play(daily, clock, fresh_token, fresh_game["game_id"], line, 1.0)
        await resigned_attempt(daily, veteran_token)
        body = (await daily.request("GET", BOARD, fresh_token, expect=200)).body
        assert [(e["player_id"], e["rank"], e["won"], e["new_player"], e["machine_paced"])
                for e in body["entries"]] == [(veteran, 1, False, False, False),
                                              (fresh, 2, True, True, False)]
        assert body["me"]["rank"] == 2 and body["me"]["new_player"] is True
        # A past day's board keeps its marks.
        clock.set(NEXT_DAY + timedelta(hours=1))
        past = (await daily.request("GET", BOARD, expect=200)).body
        assert [e["new_player"] for e in past["entries"]] == [False, True]  # marks stay


async def test_an_attempt_faster_than_a_person_is_marked_and_ranked_after_human_paced_ones(
        redis_url: str, tmp_path: Path, clock: FakeClock) -> None:
    """The bot's way: a solver's line sent as fast as the network allows (the audit's
    Shamrocks win: 83 moves in 2.7 s, 33 ms a move). Under machine_pace_ms_per_move
    (100 ms) a move on average, the entry is marked ``machine_paced`` and listed after
    every human-paced one, a slower win included; when the day ends, an attempt left
    open is judged the same way."""
    line = winning_line()
    async with daily_service(redis_url, tmp_path, clock) as daily:
        clock.set(datetime.combine(DAY, time(0), UTC) - timedelta(minutes=1))
        (bot, bot_token), (human, human_token), (idle, idle_token) = [
            await daily.player(name) for name in ("bot", "human", "idle")]
        clock.set(MORNING)
        games = {pid: (await daily.request("POST", ATTEMPTS, token, expect=201)).body["game_id"]
                 for pid, token in ((bot, bot_token), (human, human_token), (idle, idle_token))}
        await play(daily, clock, bot_token, games[bot], line, 0.03)
        await play(daily, clock, human_token, games[human], line, 0.8)
        await play(daily, clock, idle_token, games[idle], line[:40], 0.01)  # left open
        body = (await daily.request("GET", BOARD, expect=200)).body
        assert [(e["player_id"], e["won"], e["machine_paced"]) for e in body["entries"]] == [
            (human, True, False), (bot, True, True)]
        bot_entry = body["entries"][1]
        assert bot_entry["duration_ms"] < 100 * bot_entry["moves"] and bot_entry["rank"] == 2
        clock.set(NEXT_DAY)
        body = (await daily.request("GET", BOARD, expect=200)).body
        assert [(e["player_id"], e["machine_paced"]) for e in body["entries"]] == [
            (human, False), (bot, True), (idle, True)]


def test_the_machine_pace_test_marks_only_what_no_person_plays() -> None:
    assert machine_paced(moves=83, duration_ms=2_700, floor_ms_per_move=100)  # the audit's bot
    assert not machine_paced(moves=83, duration_ms=8_300, floor_ms_per_move=100)
    assert machine_paced(moves=83, duration_ms=8_299, floor_ms_per_move=100)
    assert not machine_paced(moves=9, duration_ms=0, floor_ms_per_move=100)  # too few to say
    assert machine_paced(moves=10, duration_ms=0, floor_ms_per_move=100)


async def test_a_workers_names_are_reused_a_second_and_its_own_renames_show_at_once(
        redis_url: str, tmp_path: Path, clock: FakeClock) -> None:
    """Names read for a page are reused for NAME_CACHE_S (the top page's players are on
    nearly every read); a rename another worker took shows after that, one taken here at
    once."""
    async with daily_service(redis_url, tmp_path, clock) as daily:
        ann, ann_token = await daily.player("ann")
        await resigned_attempt(daily, ann_token)

        async def shown() -> str:
            return str((await daily.request("GET", BOARD, expect=200)).body["entries"][0]["name"])

        assert await shown() == "ann"
        with sync_client(redis_url) as client:  # as another worker's rename writes it
            client.hset(keys.player(ann), "name", "Annie")
        assert await shown() == "ann"
        clock.advance(NAME_CACHE_S)
        assert await shown() == "Annie"
        await daily.request("PATCH", "/v1/players/me", ann_token, json={"name": "Ann B"},
                            expect=200)
        assert await shown() == "Ann B"
