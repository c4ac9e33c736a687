"""Daily challenges through the running service (real Redis, an injected FakeClock)."""

from __future__ import annotations

import asyncio
import itertools
import random
from collections.abc import AsyncIterator
from datetime import UTC, datetime, time, timedelta
from pathlib import Path
from typing import Any

import aiohttp
import msgspec
import pytest

from protocol.daily import DailyDay, Leaderboard
from protocol.rest import GameCreated
from service.domain.daily.challenge import Seeds
from service.domain.daily.ranking import Standing
from service.settings import Settings
from service.store import GameMeta, keys
from service.store.connection import RedisConn
from service.store.daily import DailyStore, Record
from service.store.games import Games
from service.store.meta import DailyTag
from service.store.solver import ChosenDeal, SolverStore
from tests.fakes import FakeClock
from tests.live import running_service, settings_for_test
from tests.service.domain.daily.helpers import (
    DAILY_SECRET,
    DAY,
    MORNING,
    NEXT_DAY,
    VARIANT,
    Api,
    chosen_many,
    remember_chosen,
    restore_chosen,
    spec_order,
    winning_line,
)

SEED = Seeds(DAILY_SECRET.encode()).seed(DAY, VARIANT)  # candidate k = 0: checked below
VARIANTS = ("gilbert", "shamrocks", "gate", "caprice")
D, NEXT = DAY.isoformat(), (DAY + timedelta(days=1)).isoformat()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(MORNING)


@pytest.fixture
async def api(any_redis_url: str, tmp_path: Path, clock: FakeClock) -> AsyncIterator[Api]:
    """The service on a single server, then on a Redis Cluster (each test runs twice)."""
    await restore_chosen(any_redis_url, tmp_path)
    async with running_service(settings_for_test(any_redis_url, tmp_path), clock) as base, \
            aiohttp.ClientSession() as session:
        api = Api(session, base)
        await api.chosen()  # the day's deals are chosen at start-up (503 until then)
        yield api
        await remember_chosen(any_redis_url, tmp_path)


def check_board(body: Any) -> Leaderboard:
    """The body has exactly the contract's shape."""
    return msgspec.convert(body, Leaderboard)


# --- the challenge ---------------------------------------------------------------------------


async def test_the_daily_challenges_default_to_today_and_hide_their_seeds(api: Api) -> None:
    body = await api.call("GET", "/v1/daily")
    msgspec.convert(body, DailyDay)
    assert body["date"] == D
    assert [c["variant"] for c in body["challenges"]] == ["gilbert", "shamrocks", "gate", "caprice"]
    for c in body["challenges"]:
        assert c == {
            "variant": c["variant"],
            "date": D,
            "starts_at": f"{D}T00:00:00.000Z",
            "ends_at": f"{NEXT}T00:00:00.000Z",
            "seed": None,
            "winnable": True,
            "par": c["par"],
        }
        assert isinstance(c["par"], int) and c["par"] > 0
    future = await api.chosen(DAY + timedelta(days=1))  # tomorrow's, chosen right after today's
    assert all(c["seed"] is None for c in future["challenges"])
    assert future["challenges"][0]["starts_at"] == body["challenges"][0]["ends_at"]


async def test_a_past_challenge_shows_its_seed_the_chosen_candidate_of_its_day(
        api: Api, clock: FakeClock, any_redis_url: str, tmp_path: Path) -> None:
    clock.set(NEXT_DAY)
    body = await api.call("GET", "/v1/daily", params={"date": D})
    seeds = Seeds(DAILY_SECRET.encode())
    redis = RedisConn(settings_for_test(any_redis_url, tmp_path), any_redis_url)
    try:
        chosen = await chosen_many(SolverStore(redis), D, VARIANTS)
    finally:
        await redis.aclose()
    assert [c["seed"] for c in body["challenges"]] == [
        seeds.seed(DAY, v, chosen[v].k) for v in VARIANTS]  # type: ignore[union-attr]
    assert [c["par"] for c in body["challenges"]] == [chosen[v].par for v in VARIANTS]  # type: ignore[union-attr]
    assert chosen[VARIANT].k == 0  # type: ignore[union-attr]  # SEED above; winning_line() proves it winnable


async def test_a_day_never_chosen_is_not_found(api: Api) -> None:
    for date in ("2026-10-01", "2026-11-20"):  # long past, and beyond tomorrow
        err = await api.call("GET", "/v1/daily", params={"date": date}, expect=404)
        assert err["error"]["code"] == "not_found" and date in err["error"]["message"]


async def test_a_recent_day_that_had_no_challenge_says_none_was_chosen(api: Api) -> None:
    """Within the days a challenge is kept, a day without one never had one: the answer
    says so instead of blaming how long challenges are kept."""
    date = (DAY - timedelta(days=3)).isoformat()
    err = await api.call("GET", "/v1/daily", params={"date": date}, expect=404)
    assert err["error"]["message"] == f"no challenge was chosen for {date}"


async def test_a_date_in_the_query_is_refused_in_the_words_of_a_date_in_the_path(
        api: Api) -> None:
    query = await api.call("GET", "/v1/daily", params={"date": "yesterday"}, expect=400)
    path = await api.call("GET", f"/v1/daily/yesterday/{VARIANT}/leaderboard", expect=400)
    assert query == path
    assert query["error"]["message"] == "'yesterday' is not a UTC calendar date (YYYY-MM-DD)"


@pytest.mark.parametrize(
    "date", ["2026-02-30", "2026-13-01", "yesterday", "2026-1-1", "9999-12-31"]
)
async def test_a_malformed_date_is_a_bad_request(api: Api, date: str) -> None:
    _, token = await api.player("Ann")
    err = await api.call("GET", "/v1/daily", params={"date": date}, expect=400)
    assert err["error"]["code"] == "bad_request"
    await api.call("POST", f"/v1/daily/{date}/{VARIANT}/attempts", token, expect=400)
    await api.call("GET", f"/v1/daily/{date}/{VARIANT}/leaderboard", expect=400)


# --- attempts ----------------------------------------------------------------------------------


async def test_an_attempt_is_a_private_game_of_the_day_with_its_seed_hidden(api: Api) -> None:
    pid, token = await api.player("Ann")
    body = await api.attempt(token)
    msgspec.convert(body, GameCreated)
    state = body["state"]
    assert body["game_id"] == state["game_id"]
    assert (state["variant"], state["seq"], state["owner"], state["public"], state["seed"]) == \
        (VARIANT, 0, pid, False, None)
    assert (await api.call("GET", f"/v1/games/{body['game_id']}", token))["seed"] is None


async def test_every_player_gets_the_same_deal(api: Api) -> None:
    _, a = await api.player("Ann")
    _, b = await api.player("Bob")
    ga, gb = (await api.attempt(a))["state"], (await api.attempt(b))["state"]
    assert ga["piles"] == gb["piles"]


async def test_a_second_ranked_attempt_is_a_conflict(api: Api) -> None:
    _, token = await api.player("Ann")
    first = await api.attempt(token)
    err = await api.attempt(token, expect=409)
    assert err["error"]["code"] == "conflict"
    assert err["error"]["details"]["game_ids"] == [first["game_id"]]
    await api.attempt(token, variant="gilbert")  # one per challenge: another variant is another one


async def test_only_todays_challenge_can_be_attempted(api: Api) -> None:
    _, token = await api.player("Ann")
    for day in (DAY - timedelta(days=1), DAY + timedelta(days=1)):
        err = await api.attempt(token, day=day, expect=403)
        assert err["error"]["code"] == "forbidden"
        assert "only today's (2026-11-13)" in err["error"]["message"]
    await api.attempt(token)  # the refusals used no attempt


async def test_an_attempt_needs_a_token_and_a_known_variant(api: Api) -> None:
    _, token = await api.player("Ann")
    refused = await api.call("POST", f"/v1/daily/{D}/{VARIANT}/attempts", expect=401)
    assert refused["error"]["code"] == "unauthorized"
    refused = await api.attempt(token, variant="klondike", expect=404)
    assert refused["error"]["code"] == "not_found"
    await api.board(variant="klondike", expect=404)


async def test_a_client_cannot_submit_a_score(api: Api) -> None:
    pid, token = await api.player("Ann")
    err = await api.call("POST", f"/v1/daily/{D}/{VARIANT}/attempts", token, 400,
                         json={"score": 999, "won": True})
    assert err["error"]["code"] == "bad_request"
    game = (await api.attempt(token))["game_id"]  # the refused request used no attempt
    entry = {"player_id": pid, "won": True, "foundation_cards": 52, "moves": 1, "duration_ms": 1}
    await api.call("POST", f"/v1/daily/{D}/{VARIANT}/leaderboard", token, 405, json=entry)
    await api.call("PUT", f"/v1/daily/{D}/{VARIANT}/leaderboard", token, 405, json=entry)
    await api.call("POST", f"/v1/daily/{D}/{VARIANT}/scores", token, 404, json=entry)
    await api.call("POST", f"/v1/games/{game}/commands", token, 400,
                   json={"command": {"type": "resign"}, "score": 999})
    await api.call("POST", f"/v1/games/{game}/commands", token, 400,
                   json={"command": {"type": "resign", "won": True}})
    assert (await api.board(token))["entries"] == []


async def test_nobody_else_may_read_or_watch_an_attempt_before_the_day_is_over(api: Api) -> None:
    _, owner = await api.player("Ann")
    _, other = await api.player("Bob")
    game = (await api.attempt(owner))["game_id"]
    for path in (f"/v1/games/{game}", f"/v1/games/{game}/moves", f"/v1/games/{game}/events"):
        assert (await api.call("GET", path, other, 404))["error"]["code"] == "not_found"
        await api.call("GET", path, None, 404)
    await api.command(other, game, {"type": "draw"}, expect=404)
    for token in (other, None):
        async with api.session.ws_connect(
            api.base.replace("http", "ws") + f"/v1/games/{game}/ws"
        ) as ws:
            await ws.send_json({"type": "hello", **({"token": token} if token else {})})
            msg = await ws.receive_json(timeout=5)
            assert msg["type"] == "error" and msg["error"]["code"] == "not_found"
            await ws.receive(timeout=5)
            assert ws.close_code == 1008


# --- the leaderboard ---------------------------------------------------------------------------


async def test_many_players_at_once_are_ranked_by_the_server(api: Api, clock: FakeClock) -> None:
    line = winning_line()
    rng = random.Random(3)
    players = [await api.player(f"Player {i}") for i in range(30)]
    games: dict[str, str] = {}
    plans: dict[str, str] = {}

    async def tick() -> None:  # time passes while they play: durations differ
        while True:
            await asyncio.sleep(0.005)
            clock.advance(0.25)

    async def play(i: int, pid: str, token: str) -> None:
        game = (await api.attempt(token))["game_id"]
        games[pid] = game
        if i < 8:  # winners; some take a detour of a draw and its undo
            plan = "won"
            detour = [{"type": "draw"}, {"type": "undo"}] * (i % 3)
            commands = detour + list(line)
        elif i < 22:
            plan = "resigned"
            commands = list(line[:rng.randrange(0, len(line) - 10)]) + [{"type": "resign"}]
        else:  # left open: ranked when the day ends
            plan = "playing"
            commands = list(line[:rng.randrange(0, 40)])
        plans[pid] = plan
        for command in commands:
            await api.command(token, game, command)

    ticker = asyncio.create_task(tick())
    try:
        await asyncio.gather(*(play(i, pid, token) for i, (pid, token) in enumerate(players)))
    finally:
        ticker.cancel()

    # During the day: the finished attempts, ranked; the open ones not listed.
    entries = await api.whole_board(limit=7)
    ended = {pid for pid, plan in plans.items() if plan != "playing"}
    assert {e["player_id"] for e in entries} == ended and len(entries) == len(ended)
    assert entries == sorted(entries, key=spec_order)
    assert [e["rank"] for e in entries] == list(range(1, len(ended) + 1))
    by_pid = dict(players)
    for e in entries:  # every figure is the game's own; nobody else may look at it yet
        await api.call("GET", f"/v1/games/{e['game_id']}", None, 404)
        state = await api.call("GET", f"/v1/games/{e['game_id']}", by_pid[e["player_id"]])
        stats = state["stats"]
        assert (
            e["status"],
            e["won"],
            e["foundation_cards"],
            e["moves"],
            e["duration_ms"],
            e["finished_at"],
        ) == (
            state["status"],
            state["status"] == "won",
            stats["foundation_cards"],
            stats["moves"],
            stats["duration_ms"],
            stats["finished_at"],
        )
        assert e["name"] == f"Player {[p for p, _ in players].index(e['player_id'])}"
    assert [e["status"] for e in entries[:8]] == ["won"] * 8
    open_pid, open_token = next((p, t) for p, t in players if plans[p] == "playing")
    assert (await api.board(open_token))["me"] is None

    # The day ends: the open attempts are ranked as they stand, and nothing moves any more.
    clock.set(NEXT_DAY)
    err = await api.command(open_token, games[open_pid], {"type": "resign"}, expect=403)
    assert err["error"] == {"code": "forbidden", "message": "the challenge is over",
                            "details": {"closes_at": f"{NEXT}T00:00:00.000Z"}}
    final = await api.whole_board(limit=6)
    assert len(final) == 30 and len({e["player_id"] for e in final}) == 30
    assert final == sorted(final, key=spec_order)
    for e in final:
        if plans[e["player_id"]] == "playing":
            assert e["status"] == "playing" and e["finished_at"] is None
        state = await api.call("GET", f"/v1/games/{e['game_id']}")  # readable by anyone now
        assert state["seed"] == SEED
        assert (state["stats"]["foundation_cards"], state["stats"]["moves"]) == \
            (e["foundation_cards"], e["moves"])


async def test_me_is_my_entry_with_two_neighbours_each_side(api: Api) -> None:
    line = winning_line()
    players = [await api.player(f"P{i}") for i in range(7)]
    for i, (_, token) in enumerate(players):
        game = (await api.attempt(token))["game_id"]
        for command in line[:i * 12]:
            await api.command(token, game, command)
        await api.command(token, game, {"type": "resign"})
    whole = await api.whole_board(limit=100)
    assert len(whole) == 7
    mid = whole[3]
    token = dict(players)[mid["player_id"]]
    body = await api.board(token, limit=2)
    check_board(body)
    me = body["me"]
    assert {k: v for k, v in me.items() if k != "around"} == mid
    assert me["around"] == whole[1:3] + whole[4:6]
    top = (await api.board(dict(players)[whole[0]["player_id"]]))["me"]
    assert top["rank"] == 1 and top["around"] == whole[1:3]
    last = (await api.board(dict(players)[whole[6]["player_id"]]))["me"]
    assert last["rank"] == 7 and last["around"] == whole[4:6]
    assert (await api.board())["me"] is None
    assert body["entries"] == whole[:2] and body["next_cursor"] is not None


async def test_limits_and_cursors_are_checked(api: Api) -> None:
    for query in ({"limit": 0}, {"limit": 101}, {"limit": "x"}, {"cursor": "not-a-cursor"}):
        err = await api.board(expect=400, **query)
        assert err["error"]["code"] == "bad_request"
    assert (await api.board(limit=100))["next_cursor"] is None


async def test_pages_skip_and_repeat_nothing_while_entries_are_added(api: Api, any_redis_url: str,
                                                                     tmp_path: Path) -> None:
    conn = RedisConn(
        Settings(redis_url=any_redis_url, data_dir=tmp_path, instance_id="t"), any_redis_url
    )
    store = DailyStore(conn)
    rng = random.Random(5)
    end_ms = 1_700_000_000_000

    def records(prefix: str, n: int) -> list[Record]:
        out = []
        for i in range(n):
            s = Standing(
                player_id=f"p_{prefix}{i}",
                game_id=f"g_{prefix}{i}",
                seq=1,
                status=rng.choice(["won", "resigned"]),
                foundation_cards=rng.randrange(53),
                moves=rng.randrange(300),
                duration_ms=rng.randrange(10**6),
                finished_at=None,
                finish_ms=end_ms,
            )
            out.append(Record(s.player_id, s.game_id, s.seq, s.sort_key(), s.entry_json()))
        return out

    try:
        before = records("old", 150)
        await store.record(D, VARIANT, before, 3600)
        later = records("new", 150)

        async def writer() -> None:
            for i in range(0, len(later), 3):
                await store.record(D, VARIANT, later[i:i + 3], 3600)
                await asyncio.sleep(0.001)

        pages: list[Any] = []

        async def reader() -> None:
            pages.extend(await api.whole_board(limit=9))

        await asyncio.gather(writer(), reader())
        seen = [e["player_id"] for e in pages]
        assert len(seen) == len(set(seen)), "an entry was repeated"
        assert {r.player_id for r in before} <= set(seen), (
            "an entry that was there all along was skipped"
        )
        assert pages == sorted(pages, key=spec_order)
        assert all(b["rank"] > a["rank"] for a, b in itertools.pairwise(pages))
    finally:
        await conn.aclose()


async def test_names_are_the_players_current_names(api: Api) -> None:
    _pid, token = await api.player("Ann")
    game = (await api.attempt(token))["game_id"]
    await api.command(token, game, {"type": "resign"})
    assert (await api.board())["entries"][0]["name"] == "Ann"
    for bad in ("", "x" * 33, "a\u0000b", "  ", "-dash first", "two  spaces"):
        await api.call("PATCH", "/v1/players/me", token, 400, json={"name": bad})
    await api.call("PATCH", "/v1/players/me", token, json={"name": "Annie B."})
    body = await api.board(token)  # the player sees their new name at once...
    assert body["entries"][0]["name"] == body["me"]["name"] == "Annie B."
    assert (await api.board())["entries"][0]["name"] == "Annie B."  # ...and so does everyone else


async def test_more_attempts_when_the_setting_allows_and_the_best_counts(
        any_redis_url: str, tmp_path: Path, clock: FakeClock) -> None:
    settings = settings_for_test(any_redis_url, tmp_path, daily_attempts=2)
    line = winning_line()
    await restore_chosen(any_redis_url, tmp_path)
    async with running_service(settings, clock) as base, aiohttp.ClientSession() as session:
        api = Api(session, base)
        await api.chosen()
        _, token = await api.player("Ann")
        first = (await api.attempt(token))["game_id"]
        for command in line[:60]:
            await api.command(token, first, command)
            clock.advance(0.25)  # paced like a person: a machine-paced one ranks below any other
        await api.command(token, first, {"type": "resign"})
        good = (await api.board(token))["me"]
        assert not good["machine_paced"]
        second = (await api.attempt(token))["game_id"]
        await api.command(token, second, {"type": "resign"})
        await api.attempt(token, expect=409)
        body = await api.board(token)
        assert len(body["entries"]) == 1 and body["me"]["game_id"] == first
        assert body["me"]["foundation_cards"] == good["foundation_cards"]


# --- the day's end -------------------------------------------------------------------------------


async def test_day_rollover_ranks_open_attempts_reveals_the_seed_and_opens_the_next_day(
        any_redis_url: str, tmp_path: Path, clock: FakeClock) -> None:
    """Two instances share the store; both are read at the moment the day is over."""
    settings = settings_for_test(any_redis_url, tmp_path)
    line = winning_line()
    await restore_chosen(any_redis_url, tmp_path)
    async with running_service(settings, clock) as one, running_service(settings, clock) as two, \
            aiohttp.ClientSession() as session:
        a, b = Api(session, one), Api(session, two)
        await a.chosen()
        clock.set(datetime.combine(DAY, time(0), UTC) - timedelta(hours=1))  # players from
        players = [await (a if i % 2 else b).player(f"P{i}") for i in range(12)]  # before the day
        clock.set(MORNING)
        games = {}
        for i, (pid, token) in enumerate(players):
            games[pid] = (await (a if i % 2 else b).attempt(token))["game_id"]
            for command in line[:i * 5]:
                await a.command(token, games[pid], command)
            clock.advance(10)
        winner_pid, winner = players[0]
        for command in line:
            clock.advance(1)  # a person's pace (a move a second)
            await b.command(winner, games[winner_pid], command)
        _, stranger = await a.player("Stranger")
        await a.call("GET", f"/v1/games/{games[winner_pid]}", stranger, 404)
        assert [e["player_id"] for e in (await a.board())["entries"]] == [winner_pid]
        # A lost attempt (made in the store: the deal rarely gets there) is ranked too.
        conn = RedisConn(
            Settings(redis_url=any_redis_url, data_dir=tmp_path, instance_id="t"), any_redis_url
        )
        try:
            await conn.execute("EXISTS", "warm-up")
            store = DailyStore(conn)
            meta = GameMeta(variant=VARIANT, seed=SEED, owner="p_lost", rules_version="1",
                            created_at=datetime.combine(DAY, time(10), UTC),
                            daily=DailyTag(DAY, VARIANT))
            await Games(conn).create("g_lost", meta, 3600)
            await Games(conn).append("g_lost", 0, "c", b"{}", {
                "status": "lost", "moves": "1", "foundation_cards": "3",
                "started_at": f"{D}T10:00:00.000Z", "last_at": f"{D}T10:00:02.000Z"}, 3600)
            assert (await store.reserve(D, VARIANT, "p_lost", "g_lost", 1, 3600))[0] == "ok"
        finally:
            await conn.aclose()

        clock.set(NEXT_DAY)
        boards = await asyncio.gather(*(api.whole_board(limit=5) for api in (a, b, a, b)))
        assert all(board == boards[0] for board in boards)
        final = boards[0]
        assert len(final) == 13 and len({e["player_id"] for e in final}) == 13
        assert final == sorted(final, key=spec_order)
        assert final[0]["player_id"] == winner_pid and final[0]["won"]
        lost = next(e for e in final if e["player_id"] == "p_lost")
        assert (
            lost["status"],
            lost["foundation_cards"],
            lost["duration_ms"],
            lost["finished_at"],
        ) == ("lost", 3, 2000, None)
        for e in final[1:]:
            assert e["finished_at"] is None and e["status"] in ("playing", "lost")

        # The seed is out, the attempts are open to all, and the next day has begun.
        day = await b.call("GET", "/v1/daily", params={"date": D})
        assert next(c["seed"] for c in day["challenges"] if c["variant"] == VARIANT) == SEED
        state = await a.call("GET", f"/v1/games/{games[winner_pid]}", stranger)
        assert state["seed"] == SEED and state["status"] == "won"
        events = await b.call("GET", f"/v1/games/{games[winner_pid]}/events")
        assert len(events["events"]) == len(line)
        async with session.ws_connect(
            one.replace("http", "ws") + f"/v1/games/{games[winner_pid]}/ws"
        ) as ws:
            await ws.send_json({"type": "hello"})
            assert (await ws.receive_json(timeout=5))["type"] == "snapshot"
        today = await a.call("GET", "/v1/daily")
        assert today["date"] == NEXT and all(c["seed"] is None for c in today["challenges"])
        _, token = players[1]
        await a.attempt(token, day=DAY, expect=403)
        fresh = await a.attempt(token, day=DAY + timedelta(days=1))
        assert fresh["state"]["piles"] != state["piles"]


async def test_an_attempt_takes_no_command_once_its_day_is_over(api: Api, clock: FakeClock) -> None:
    _, token = await api.player("Ann")
    game = (await api.attempt(token))["game_id"]
    await api.command(token, game, winning_line()[0])
    clock.set(NEXT_DAY)
    for command in ({"type": "draw"}, {"type": "undo"}, {"type": "resign"}):
        err = await api.command(token, game, command, expect=403)
        assert err["error"]["message"] == "the challenge is over"
    async with api.session.ws_connect(
        api.base.replace("http", "ws") + f"/v1/games/{game}/ws"
    ) as ws:
        await ws.send_json({"type": "hello", "token": token})
        assert (await ws.receive_json(timeout=5))["type"] == "snapshot"
        assert (await ws.receive_json(timeout=5))["type"] == "synced"
        await ws.send_json({"type": "command", "command_id": "c1", "command": {"type": "resign"}})
        msg = await ws.receive_json(timeout=5)
        assert msg["type"] == "error" and msg["error"]["code"] == "forbidden"
    assert (await api.call("GET", f"/v1/games/{game}", token))["seq"] == 1


async def test_an_attempt_has_no_legal_moves_once_its_day_is_over(
        api: Api, clock: FakeClock) -> None:
    """GET /moves and the socket's moves list what a client can offer: once the day is over
    every command is refused (403), so they list none, and no undo."""
    _, token = await api.player("Ann")
    game = (await api.attempt(token))["game_id"]
    await api.command(token, game, winning_line()[0])
    during = await api.call("GET", f"/v1/games/{game}/moves", token)
    assert during["moves"] and during["can_undo"]
    clock.set(NEXT_DAY)
    assert await api.call("GET", f"/v1/games/{game}/moves", token) == {
        "seq": 1, "moves": [], "can_undo": False}
    async with api.session.ws_connect(
        api.base.replace("http", "ws") + f"/v1/games/{game}/ws"
    ) as ws:
        await ws.send_json({"type": "hello", "token": token, "moves": True})
        assert (await ws.receive_json(timeout=5))["type"] == "snapshot"
        assert (await ws.receive_json(timeout=5))["type"] == "synced"
        assert await ws.receive_json(timeout=5) == {
            "type": "moves", "seq": 1, "moves": [], "can_undo": False}
    await api.command(token, game, {"type": "undo"}, expect=403)  # as the lists say


async def test_past_days_are_kept_daily_keep_days(
    api: Api, any_redis_url: str, tmp_path: Path
) -> None:
    _, token = await api.player("Ann")
    game = (await api.attempt(token))["game_id"]
    await api.command(token, game, {"type": "resign"})
    conn = RedisConn(
        Settings(redis_url=any_redis_url, data_dir=tmp_path, instance_id="t"), any_redis_url
    )
    try:
        ttl = await conn.execute("TTL", keys.daily_keys(D, VARIANT).board)
    finally:
        await conn.aclose()
    # MORNING is 15 h before the day's end; the board goes 30 days after it.
    assert 30 * 86400 + 15 * 3600 - 60 < ttl <= 30 * 86400 + 15 * 3600


# --- the solver --------------------------------------------------------------------------------


async def test_a_ranked_attempt_refuses_hints(api: Api) -> None:
    _, token = await api.player("Ann")
    game = (await api.attempt(token))["game_id"]
    err = await api.call("POST", f"/v1/games/{game}/hint", token, 403)
    assert err["error"]["code"] == "forbidden" and "daily" in err["error"]["message"]
    assert err["error"]["details"]["daily"] == f"{D}/{VARIANT}"  # the attempt's challenge
    assert (await api.call("GET", f"/v1/games/{game}", token))["stats"]["hints"] == 0


async def assert_wins_a_new_game(api: Api, token: str, commands: list[Any]) -> None:
    """``commands`` sent one by one to a new game of the day's deal win it."""
    fresh = (
        await api.call("POST", "/v1/games", token, 201, json={"variant": VARIANT, "seed": SEED})
    )["game_id"]
    status = "playing"
    for command in commands:
        status = (await api.command(token, fresh, command))["diff"]["status"]
    assert status == "won"


async def test_an_attempts_solution_is_shown_once_the_day_is_over(
    api: Api, clock: FakeClock
) -> None:
    _, token = await api.player("Ann")
    game = (await api.attempt(token))["game_id"]
    await api.command(token, game, {"type": "resign"})
    err = await api.call("GET", f"/v1/games/{game}/solution", token, 403)
    assert err["error"]["code"] == "forbidden" and "day is over" in err["error"]["message"]
    assert err["error"]["details"]["available_at"] == f"{NEXT}T00:00:00.000Z"
    clock.set(NEXT_DAY)
    solution = await api.call("GET", f"/v1/games/{game}/solution", token)
    assert solution["result"] == "won"
    await assert_wins_a_new_game(api, token, solution["commands"])


async def test_an_attempt_left_open_at_its_days_end_shows_its_solution_too(
    api: Api, clock: FakeClock
) -> None:
    """Once its day is over an attempt takes no more commands (it can no longer be won or
    resigned) and its seed is public: it is over, and its solution is shown, not a 409
    that asks for a resignation the server would refuse."""
    _, token = await api.player("Ann")
    game = (await api.attempt(token))["game_id"]
    await api.command(token, game, winning_line()[0])
    err = await api.call("GET", f"/v1/games/{game}/solution", token, 409)
    assert err["error"]["details"]["status"] == "playing"
    assert f"{NEXT}T00:00:00.000Z" in err["error"]["message"]  # when it will be shown
    clock.set(NEXT_DAY)
    await api.command(token, game, {"type": "resign"}, expect=403)
    solution = await api.call("GET", f"/v1/games/{game}/solution")  # anyone may read it now
    assert solution["result"] == "won"
    await assert_wins_a_new_game(api, token, solution["commands"])


async def test_the_leaderboard_of_a_day_with_no_challenge_is_404_as_the_day_is(
        redis_url: str, tmp_path: Path, clock: FakeClock) -> None:
    """A day with no challenge has no leaderboard: the board says so as /v1/daily does for
    that date (404), not an empty board that a client would show as a challenge nobody
    played (a date beyond tomorrow, mistyped or not). A fresh instance never chose
    yesterday's deals (nor those of a day it was down): it answers at once, neither
    needing the deal nor waiting on the day's ranking lock until the deadline (503)."""
    settings = settings_for_test(redis_url, tmp_path, request_deadline_s=2.0)
    async with running_service(settings, clock) as base, aiohttp.ClientSession() as session:
        api = Api(session, base)
        _, token = await api.player("Ann")
        for day in (DAY - timedelta(days=1), DAY - timedelta(days=20), DAY + timedelta(days=5)):
            daily = await api.call("GET", "/v1/daily", params={"date": day.isoformat()},
                                   expect=404)
            for who in (None, token):
                board = await api.board(who, day=day, expect=404)
                assert board == daily, (board, daily)
                assert board["error"]["details"]["date"] == day.isoformat()


async def test_a_board_being_ranked_elsewhere_is_a_503_that_says_so_within_the_deadline(
        redis_url: str, tmp_path: Path, clock: FakeClock) -> None:
    """Another instance holds the day's ranking lock: a read of the board waits for it no
    longer than the request's deadline allows, then answers 503 ``unavailable`` with
    ``Retry-After``, blaming the ranking (not the store, which answered all along); once
    the other instance is done, the board is there."""
    settings = settings_for_test(redis_url, tmp_path, request_deadline_s=1.0)
    past = (DAY - timedelta(days=2)).isoformat()  # not yesterday: the service's own job ranks that
    redis = RedisConn(settings, redis_url)
    store = DailyStore(redis)
    try:
        await SolverStore(redis).keep_chosen(past, VARIANT, ChosenDeal(k=0, par=1), 86400)
        async with running_service(settings, clock) as base, aiohttp.ClientSession() as session:
            assert (await store.begin_close(past, VARIANT, "another-instance", 60_000,
                                            86400)).state == "mine"
            path = f"{base}/v1/daily/{past}/{VARIANT}/leaderboard"
            async with session.get(path) as r:
                body = await r.json()
                assert r.status == 503, body
                assert int(r.headers["Retry-After"]) >= 1
            error = body["error"]
            assert error["code"] == "unavailable"
            assert "being ranked" in error["message"] and "store" not in error["message"], error
            assert error["details"]["retry_after_s"] == int(r.headers["Retry-After"])
            assert (error["details"]["date"], error["details"]["variant"]) == (past, VARIANT)
            await store.finish_close(past, VARIANT, "another-instance", 86400)
            board = await Api(session, base).call("GET", f"/v1/daily/{past}/{VARIANT}/leaderboard")
            assert check_board(board) == Leaderboard(entries=[], next_cursor=None, me=None)
    finally:
        await redis.aclose()
