"""Issue 11, points 1 and 9: what one client can make the service do, bounded.

- hellos are rate-limited per socket (an ``error`` ``rate_limited`` with the wait,
  the socket stays open), reads (REST reads of a game, socket hellos) per client
  address across instances (429 with ``Retry-After``);
- a resync further behind than ``replay_max_diffs`` gets a snapshot, not the diffs;
- ``/events`` pages (tests/service/web/test_rest.py has the paging itself): a stranger's
  read of a long log is one page;
- a token that expires while its socket is open commands nothing more: the command
  gets ``unauthorized`` and the socket is closed with 1008.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import aiohttp

from service.engine import DRAW, UNDO
from service.socket.messages import Close
from tests.fakes import FakeClock
from tests.live import settings_for_test
from tests.service.helpers import Api, running_app, socket

SLOW = 0.001  # a refill rate so slow that no token comes back during a test


async def test_hellos_on_one_socket_are_rate_limited_and_the_socket_stays_open(
        redis_url: str, tmp_path: Path) -> None:
    settings = settings_for_test(redis_url, tmp_path, hello_rate_per_s=SLOW, hello_burst=5)
    async with running_app(settings) as (base, ctx), aiohttp.ClientSession() as session:
        api = Api(session, base)
        owner, token = await api.player()
        game_id = (await api.create(token, "gilbert", seed=3, public=True))["game_id"]
        for i in range(30):
            await ctx.games.command(game_id, owner, UNDO if i % 2 else DRAW, i, None)
        async with socket(session, base, game_id) as sock:
            await sock.hello(since=0)  # 1 of 5
            for _ in range(4):
                replay = await sock.hello(since=0)
                assert len(replay) == 31  # 30 diffs and synced
            await sock.send({"type": "hello", "since": 0})
            refused = await sock.recv()
            assert refused["type"] == "error" and refused["error"]["code"] == "rate_limited", (
                refused
            )
            details = refused["error"]["details"]
            assert details["limit"] == "hello_rate_per_s"  # its setting's name, as over REST
            assert details["retry_after_s"] >= 1
            assert "hellos on this socket" in refused["error"]["message"]
            assert "retry in" in refused["error"]["message"]
            await sock.send({"type": "ping"})
            assert await sock.recv() == {"type": "pong"}  # still open, and nothing replayed


async def test_reads_are_limited_per_address_across_two_instances(
    redis_url: str, tmp_path: Path
) -> None:
    settings = settings_for_test(redis_url, tmp_path, read_rate_per_s=SLOW, read_burst=12)
    async with running_app(settings) as (base_a, _), running_app(settings) as (base_b, _), \
            aiohttp.ClientSession() as session:
        a, b = Api(session, base_a), Api(session, base_b)
        _, token = await a.player()
        game_id = (await a.create(token, "gilbert", seed=3, public=True))["game_id"]
        statuses = []
        for i in range(20):
            api = a if i % 2 else b
            path = f"/v1/games/{game_id}" + ("/moves", "", "/events")[i % 3]
            statuses.append((await api.request("GET", path)).status)
        # The shared bucket counts every read of either instance (a limit this slow
        # leases nothing): the burst, exactly.
        assert statuses.count(200) == 12, statuses
        reply = await a.request("GET", f"/v1/games/{game_id}")
        assert reply.status == 429 and reply.error["code"] == "rate_limited"
        assert int(reply.headers["Retry-After"]) >= 1
        assert reply.error["details"]["limit"] == "read_rate_per_s"  # its setting's name
        assert "reads from this address" in reply.error["message"]
        # A socket's hello is a read too: refused, and closed with 1013 (try again later).
        async with socket(session, base_a, game_id) as sock:
            await sock.send({"type": "hello"})
            messages, code = await sock.closed()
            assert messages[0]["error"]["code"] == "rate_limited" and code == Close.TRY_AGAIN_LATER


async def test_a_solution_is_a_read_of_its_game_and_counts_against_the_address(
        redis_url: str, tmp_path: Path) -> None:
    # Anyone may read a finished public game's solution, without a token: each read loads
    # the game and the kept line, as a GET of the game does, and is limited the same way.
    settings = settings_for_test(redis_url, tmp_path, read_rate_per_s=SLOW, read_burst=6)
    async with running_app(settings) as (base, _), aiohttp.ClientSession() as session:
        api = Api(session, base)
        _, token = await api.player()
        game_id = (await api.create(token, "gate", seed=13, public=True))["game_id"]
        await api.command(token, game_id, {"type": "resign"})
        statuses = [(await api.request("GET", f"/v1/games/{game_id}/solution")).status
                    for _ in range(12)]
        assert statuses.count(429) == 12 - 6, statuses  # past the burst
        reply = await api.request("GET", f"/v1/games/{game_id}/solution")
        assert reply.status == 429 and reply.error["details"]["limit"] == "read_rate_per_s"
        assert int(reply.headers["Retry-After"]) >= 1


async def test_a_resync_further_behind_than_a_snapshot_is_worth_gets_a_snapshot(
        redis_url: str, tmp_path: Path) -> None:
    settings = settings_for_test(redis_url, tmp_path, replay_max_diffs=20)
    async with running_app(settings) as (base, ctx), aiohttp.ClientSession() as session:
        api = Api(session, base)
        owner, token = await api.player()
        game_id = (await api.create(token, "gilbert", seed=3, public=True))["game_id"]
        for i in range(50):
            await ctx.games.command(game_id, owner, UNDO if i % 2 else DRAW, i, None)
        async with socket(session, base, game_id) as sock:
            first = await sock.hello(since=0)
            assert [m["type"] for m in first] == ["snapshot", "synced"] and first[0]["seq"] == 50
            near = await sock.hello(since=30)  # on the live socket: 20 diffs are replayed
            assert [m["seq"] for m in near if m["type"] == "diff"] == list(range(31, 51))
            far = await sock.hello(since=29)
            assert [m["type"] for m in far] == ["snapshot", "synced"]
            assert far[0]["state"] == await api.state(game_id)
        async with socket(session, base, game_id) as sock:
            near = await sock.hello(since=30)  # a new socket likewise
            assert [m["type"] for m in near] == ["diff"] * 20 + ["synced"]


async def test_a_token_that_expires_on_a_live_socket_commands_nothing_more(
        redis_url: str, tmp_path: Path) -> None:
    clock = FakeClock(datetime(2026, 12, 1, 12, tzinfo=UTC))
    settings = settings_for_test(redis_url, tmp_path, token_ttl_s=600)
    async with running_app(settings, clock) as (base, _), aiohttp.ClientSession() as session:
        api = Api(session, base)
        _, token = await api.player()
        game_id = (await api.create(token, "gilbert", seed=3))["game_id"]
        async with socket(session, base, game_id) as sock:
            await sock.hello(token)
            await sock.command({"type": "draw"}, expected_seq=0)
            assert [m["type"] for m in await sock.until(lambda m: m["type"] == "ack")] == [
                "diff",
                "ack",
            ]
            clock.advance(599)
            await sock.command({"type": "draw"}, expected_seq=1)
            await sock.until(lambda m: m["type"] == "ack")
            clock.advance(1)  # the token's exp has come
            cid = await sock.command({"type": "draw"}, expected_seq=2)
            messages, code = await sock.closed()
            assert code == Close.POLICY_VIOLATION
            assert messages == [{"type": "error", "command_id": cid, "error": {
                "code": "unauthorized", "message": messages[0]["error"]["message"], "details": {}}}]
            assert "expired" in messages[0]["error"]["message"]
        ctx_state = await api.request("GET", f"/v1/games/{game_id}/events", token)
        assert ctx_state.status == 401  # REST says the same of the token


async def test_a_hello_with_a_fresher_token_of_the_same_player_renews_the_socket(
        redis_url: str, tmp_path: Path) -> None:
    clock = FakeClock(datetime(2026, 12, 1, 12, tzinfo=UTC))
    settings = settings_for_test(redis_url, tmp_path, token_ttl_s=600)
    async with running_app(settings, clock) as (base, ctx), aiohttp.ClientSession() as session:
        api = Api(session, base)
        player, token = await api.player()
        game_id = (await api.create(token, "gilbert", seed=3))["game_id"]
        async with socket(session, base, game_id) as sock:
            await sock.hello(token)
            clock.advance(300)
            assert await sock.hello(ctx.tokens.issue(player), since=0) == [
                {"type": "synced", "seq": 0}
            ]
            clock.advance(400)  # past the first token's exp, within the second's
            await sock.command({"type": "draw"}, expected_seq=0)
            assert [m["type"] for m in await sock.until(lambda m: m["type"] == "ack")] == [
                "diff",
                "ack",
            ]
