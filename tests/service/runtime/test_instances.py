"""Two service instances on one store: a command through either reaches every socket
on both, in seq order, and neither instance's cache can refuse what the log allows."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from tests.live import running_service, settings_for_test
from tests.service.helpers import Api, apply, connect, game_state, same_state


@pytest.fixture
async def two(any_redis_url: str, tmp_path: Path) -> AsyncIterator[tuple[Api, Api]]:
    """Two instances on one store (a single server, then a cluster), and a client of each."""
    async with (
        running_service(settings_for_test(any_redis_url, tmp_path / "a", instance_id="a")) as a,
        running_service(settings_for_test(any_redis_url, tmp_path / "b", instance_id="b")) as b,
        aiohttp.ClientSession() as session,
    ):
        yield Api(session, a), Api(session, b)


async def test_a_command_through_one_instance_reaches_sockets_on_both_in_order(
    two: tuple[Api, Api],
) -> None:
    a, b = two
    _, token = await a.player()
    created = await a.create(token, "gilbert", seed=99, public=True)
    game_id = created["game_id"]
    on_a, hello_a = await connect(a.session, a.base, game_id, token)
    on_b, hello_b = await connect(b.session, b.base, game_id)
    watchers = [(on_a, hello_a), (on_b, hello_b)]
    try:
        rng = random.Random(1)
        n = 0
        for step in range(16):
            moves = await a.moves(game_id, token)
            if not moves["moves"]:
                break
            command = rng.choice(moves["moves"])
            if step % 4 == 3:  # through the socket on a: b's socket sees it too
                cid = await on_a.command(command, expected_seq=moves["seq"])
                hello_a += await on_a.until(lambda m, cid=cid: m.get("command_id") == cid)
            else:
                await (a, b)[step % 2].command(token, game_id, command, expected_seq=moves["seq"])
            n = moves["seq"] + 1
        final = await b.state(game_id)
        assert final["seq"] == n
        for sock, messages in watchers:
            if not any(m["type"] == "diff" and m["seq"] == n for m in messages):
                messages += await sock.until(lambda m: m["type"] == "diff" and m["seq"] == n)
            assert [m["seq"] for m in messages if m["type"] == "diff"] == list(range(1, n + 1))
            state = game_state(messages[0]["state"])
            for m in messages:
                if m["type"] == "diff":
                    state = apply(state, m)
            assert same_state(state, game_state(final))
    finally:
        await on_a.ws.close()
        await on_b.ws.close()


async def test_a_command_is_judged_by_the_log_not_by_a_stale_cache(two: tuple[Api, Api]) -> None:
    """b read the game at seq 0 and a moved it on: b accepts what is legal now."""
    a, b = two
    _, token = await a.player()
    game_id = (await a.create(token, "gilbert", seed=7))["game_id"]
    assert (await b.state(game_id, token))["seq"] == 0  # b has the game at seq 0
    await a.command(token, game_id, {"type": "draw"})
    # At seq 0 there is nothing to undo; at seq 1 there is.
    reply = await b.command(token, game_id, {"type": "undo"})
    assert reply.body["seq"] == 2
    # With an expected_seq behind the log, the answer is 409, not 422.
    await a.command(token, game_id, {"type": "resign"}, expected_seq=2)
    err = (await b.command(token, game_id, {"type": "draw"}, expected_seq=2, expect=409)).error
    assert err["details"]["seq"] == 3
    err = (await b.command(token, game_id, {"type": "draw"}, expect=422)).error
    assert err["details"]["rule"] == "game_over"


async def test_a_game_made_on_one_instance_is_played_on_the_other(two: tuple[Api, Api]) -> None:
    a, b = two
    _, token = await b.player()
    created = await a.create(token, "caprice", seed=3)
    game_id = created["game_id"]
    state = game_state(created["state"])
    for i in range(6):
        api = (a, b)[i % 2]
        moves = await api.moves(game_id, token)
        reply = await api.command(token, game_id, moves["moves"][0], expected_seq=moves["seq"])
        state = apply(state, reply.body["diff"])
        for other in (a, b):
            assert same_state(state, game_state(await other.state(game_id, token)))


async def test_a_hint_taken_through_one_instance_is_counted_in_the_others_next_diff(
        two: tuple[Api, Api]) -> None:
    """a has the game cached when b counts a hint: a's next diff, stored in the log for
    good, counts it, and so does a's state."""
    a, b = two
    _, token = await a.player()
    game_id = (await a.create(token, "gilbert", seed=7))["game_id"]
    await a.command(token, game_id, {"type": "draw"})
    await b.request("POST", f"/v1/games/{game_id}/hint", token, 200)
    diff = (await a.command(token, game_id, {"type": "draw"})).body["diff"]
    assert diff["stats"]["hints"] == 1  # the diff is the event as stored
    assert (await a.state(game_id, token))["stats"]["hints"] == 1
