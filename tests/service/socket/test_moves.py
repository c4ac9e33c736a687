"""The socket's ``moves`` messages (docs/protocol.md, "Legal moves on the socket"): a hello
with ``"moves": true`` gets, after ``synced`` and after the diff of each later seq, the
body ``GET /v1/games/{id}/moves`` answers at that seq; a hello without gets none; the
readers GET /moves answers (watchers of a public game too) may ask, no one else."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.live import settings_for_test
from tests.service.helpers import Api, Socket, connect, running_app, socket


@pytest.fixture
async def base(redis_url: str, tmp_path: Path) -> AsyncIterator[str]:
    async with running_app(settings_for_test(redis_url, tmp_path)) as (url, _):
        yield url


def types(messages: list[dict[str, Any]]) -> list[str]:
    return [m["type"] for m in messages]


def body(moves: dict[str, Any]) -> dict[str, Any]:
    """A ``moves`` message as the GET /moves body it must equal."""
    assert moves["type"] == "moves", moves
    return {k: v for k, v in moves.items() if k != "type"}


async def hello(sock: Socket, token: str | None = None, since: int | None = None,
                moves: bool | None = None) -> list[dict[str, Any]]:
    """Send hello; every message up to ``synced``, and the ``moves`` after it if asked."""
    message: dict[str, Any] = {"type": "hello"}
    for key, value in (("token", token), ("since", since), ("moves", moves)):
        if value is not None:
            message[key] = value
    await sock.send(message)
    got = await sock.until(lambda m: m["type"] == "synced")
    if moves:
        got.append(await sock.recv())
    return got


async def nothing_more(sock: Socket) -> list[dict[str, Any]]:
    """Every message the socket had queued: a ping's pong comes after all of them."""
    await sock.send({"type": "ping"})
    return (await sock.until(lambda m: m["type"] == "pong"))[:-1]


async def test_the_owner_gets_the_moves_after_synced_and_after_each_diff(
        api: Api, session: aiohttp.ClientSession, base: str) -> None:
    _, token = await api.player()
    game_id = (await api.create(token, "gilbert", seed=7))["game_id"]
    async with socket(session, base, game_id) as sock:
        start = await hello(sock, token, moves=True)
        assert types(start) == ["snapshot", "synced", "moves"]
        assert body(start[-1]) == await api.moves(game_id, token)
        legal = body(start[-1])
        rng = random.Random(5)
        undone = False
        for step in range(16):
            if legal["can_undo"] and step % 5 == 4:
                command: dict[str, Any] = {"type": "undo"}
                undone = True
            elif legal["moves"]:
                command = rng.choice(legal["moves"])  # the socket's own list is what it may play
            else:
                break
            if step % 4 == 3:  # another client's command (REST): the socket gets it the same
                await api.command(token, game_id, command, expected_seq=legal["seq"])
                got = await sock.until(lambda m: m["type"] == "moves")
                assert types(got) == ["diff", "moves"]
            else:
                cid = await sock.command(command, expected_seq=legal["seq"])
                got = await sock.until(lambda m, cid=cid: m.get("command_id") == cid)
                assert types(got) == ["diff", "moves", "ack"], got  # the diff first, then its moves
            diff, moves = got[0], got[1]
            assert diff["seq"] == moves["seq"] == legal["seq"] + 1
            legal = body(moves)
            assert legal == await api.moves(game_id, token), step
        assert undone and legal["seq"] >= 10
        assert await nothing_more(sock) == []
        # The end of a game: the moves say nothing is left to play.
        cid = await sock.command({"type": "resign"})
        got = await sock.until(lambda m, cid=cid: m.get("command_id") == cid)
        assert types(got) == ["diff", "moves", "ack"]
        assert body(got[1]) == {"seq": legal["seq"] + 1, "moves": [], "can_undo": False}
        assert body(got[1]) == await api.moves(game_id, token)


async def test_a_socket_that_does_not_ask_gets_no_moves(
        api: Api, session: aiohttp.ClientSession, base: str) -> None:
    _, token = await api.player()
    game_id = (await api.create(token, "shamrocks", seed=3))["game_id"]
    for asked in (None, False):
        async with socket(session, base, game_id) as sock:
            start = await hello(sock, token, moves=asked)
            assert types(start) == ["snapshot", "synced"]
            seq = start[-1]["seq"]
            command = (await api.moves(game_id, token))["moves"][0]
            cid = await sock.command(command, expected_seq=seq)
            got = await sock.until(lambda m, cid=cid: m.get("command_id") == cid)
            assert types(got) == ["diff", "ack"]
            assert await nothing_more(sock) == []


async def test_a_resumed_socket_gets_the_missed_diffs_then_synced_then_the_moves(
        api: Api, session: aiohttp.ClientSession, base: str) -> None:
    _, token = await api.player()
    game_id = (await api.create(token, "gilbert", seed=1))["game_id"]
    for _ in range(5):
        await api.command(token, game_id, {"type": "draw"})
    async with socket(session, base, game_id) as sock:
        got = await hello(sock, token, since=2, moves=True)
        assert types(got) == ["diff", "diff", "diff", "synced", "moves"]
        assert got[-1]["seq"] == 5
        assert body(got[-1]) == await api.moves(game_id, token)


async def test_a_later_hello_turns_the_moves_on_and_off(
        api: Api, session: aiohttp.ClientSession, base: str) -> None:
    _, token = await api.player()
    game_id = (await api.create(token, "gilbert", seed=1))["game_id"]
    async with socket(session, base, game_id) as sock:
        assert types(await hello(sock, token)) == ["snapshot", "synced"]
        await api.command(token, game_id, {"type": "draw"})
        assert types(await sock.until(lambda m: m["type"] == "diff")) == ["diff"]
        assert await nothing_more(sock) == []

        got = await hello(sock, since=1, moves=True)  # on, at the seq it holds
        assert types(got) == ["synced", "moves"]
        assert body(got[-1]) == await api.moves(game_id, token)
        await api.command(token, game_id, {"type": "draw"})
        got = await sock.until(lambda m: m["type"] == "moves")
        assert types(got) == ["diff", "moves"] and got[1]["seq"] == 2
        assert body(got[1]) == await api.moves(game_id, token)

        assert types(await hello(sock, since=2)) == ["synced"]  # off
        await api.command(token, game_id, {"type": "draw"})
        assert types(await sock.until(lambda m: m["type"] == "diff")) == ["diff"]
        assert await nothing_more(sock) == []


async def test_a_watcher_may_ask_for_the_moves_as_get_moves_gives_them_to_it(
        api: Api, session: aiohttp.ClientSession, base: str) -> None:
    """GET /moves answers whoever may read the game, not only its owner: so does the
    socket. A watcher of a public game (no token, or another player's) gets the same
    moves; a private game's socket refuses the hello as GET refuses the read (404)."""
    _, token = await api.player()
    _, other = await api.player("other")
    public = (await api.create(token, "gate", seed=13, public=True))["game_id"]
    anonymous = await api.moves(public)
    assert anonymous == await api.moves(public, other) == await api.moves(public, token)
    for watcher in (None, other):
        async with socket(session, base, public) as sock:
            start = await hello(sock, watcher, moves=True)
            assert types(start) == ["snapshot", "synced", "moves"]
            assert body(start[-1]) == await api.moves(public, watcher)
            await api.command(token, public, (await api.moves(public))["moves"][0])
            got = await sock.until(lambda m: m["type"] == "moves")
            assert types(got) == ["diff", "moves"]
            assert body(got[1]) == await api.moves(public, watcher)
            cid = await sock.command({"type": "draw"})  # watching is not commanding
            reply = await sock.recv()
            assert reply["type"] == "error" and reply["command_id"] == cid
            assert await nothing_more(sock) == []

    private = (await api.create(token, "gate", seed=13))["game_id"]
    refused = await api.request("GET", f"/v1/games/{private}/moves", other)
    assert refused.status == 404 and refused.error["code"] == "not_found"
    async with socket(session, base, private) as sock:
        await sock.send({"type": "hello", "token": other, "moves": True})
        messages, code = await sock.closed()
    assert code == 1008 and types(messages) == ["error"]
    assert messages[0]["error"]["code"] == "not_found"


async def test_moves_must_be_a_boolean(api: Api, session: aiohttp.ClientSession, base: str) -> None:
    _, token = await api.player()
    game_id = (await api.create(token, "gilbert", seed=1))["game_id"]
    async with socket(session, base, game_id) as sock:
        await sock.send({"type": "hello", "token": token, "moves": "yes"})
        messages, code = await sock.closed()
    assert code == 1008 and messages[0]["error"]["code"] == "bad_request"
    # And a socket that asked keeps getting them across its own resynchronisation.
    sock, got = await connect(session, base, game_id, token)
    try:
        assert types(got) == ["snapshot", "synced"]
        assert types(await hello(sock, since=0, moves=True)) == ["synced", "moves"]
        assert types(await hello(sock, since=0, moves=True)) == ["synced", "moves"]
    finally:
        await sock.ws.close()
