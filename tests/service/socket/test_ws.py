"""The WebSocket of a game (PROTOCOL.md): hello, snapshot or missed diffs, synced, then
every diff in seq order to every socket, acks, errors and pings; against a real store."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from service.app import Context
from service.engine import DRAW
from service.socket.gamesocket import AIOHTTP_CHECKED
from tests.live import settings_for_test
from tests.service.helpers import (
    WAIT_S,
    Api,
    Socket,
    apply,
    connect,
    game_state,
    new_command_id,
    play_random,
    running_app,
    same_state,
    socket,
    ws_url,
)


@pytest.fixture
async def live(redis_url: str, tmp_path: Path) -> AsyncIterator[tuple[str, Context]]:
    async with running_app(settings_for_test(redis_url, tmp_path)) as running:
        yield running


@pytest.fixture
def base(live: tuple[str, Context]) -> str:
    return live[0]


@contextlib.asynccontextmanager
async def opened(session: aiohttp.ClientSession, base: str, game_id: str, token: str | None = None,
                 since: int | None = None) -> AsyncIterator[tuple[Socket, list[dict[str, Any]]]]:
    sock, synced = await connect(session, base, game_id, token, since)
    try:
        yield sock, synced
    finally:
        await sock.ws.close()


@contextlib.asynccontextmanager
async def impatient_app(redis_url: str, tmp_path: Path,
                        session: aiohttp.ClientSession) -> AsyncIterator[tuple[str, str]]:
    """A service that waits 0.3 s for a hello, and a public game on it: (base, game id)."""
    async with running_app(settings_for_test(redis_url, tmp_path, hello_timeout_s=0.3)) as (
        base,
        _,
    ):
        api = Api(session, base)
        _, token = await api.player()
        yield base, (await api.create(token, "gilbert", public=True))["game_id"]


@contextlib.asynccontextmanager
async def refused(api: Api, session: aiohttp.ClientSession, base: str,
                  message: Any) -> AsyncIterator[tuple[Socket, dict[str, Any]]]:
    """``message`` sent on the owner's socket of a new game: the socket, still open, and
    the reply, which must be a ``bad_request`` error."""
    _, token = await api.player()
    game_id = (await api.create(token, "gilbert", seed=7))["game_id"]
    async with opened(session, base, game_id, token) as (sock, _):
        await sock.send(message)
        reply = await sock.recv()
        assert reply["type"] == "error" and reply["error"]["code"] == "bad_request", reply
        yield sock, reply


def diffs(messages: list[dict[str, Any]]) -> list[int]:
    return [m["seq"] for m in messages if m["type"] == "diff"]


async def until_seq(sock: Socket, seq: int) -> list[dict[str, Any]]:
    return await sock.until(lambda m: m["type"] == "diff" and m["seq"] >= seq)


# --- the conversation ---------------------------------------------------------------------


async def test_two_sockets_get_every_diff_in_order_and_the_sender_its_ack_after_its_diff(
        api: Api, session: aiohttp.ClientSession, base: str) -> None:
    _, token = await api.player()
    game_id = (await api.create(token, "gilbert", seed=7, public=True))["game_id"]
    async with opened(session, base, game_id, token) as (a, a_hello), \
            opened(session, base, game_id) as (b, b_hello):
        assert (
            [m["type"] for m in a_hello] == ["snapshot", "synced"] == [m["type"] for m in b_hello]
        )
        assert a_hello[-1] == {"type": "synced", "seq": 0}
        start = game_state(a_hello[0]["state"])
        assert same_state(start, game_state(await api.state(game_id, token)))

        rng = random.Random(3)
        a_messages: list[dict[str, Any]] = []
        sent: list[str] = []
        for step in range(14):
            moves = await api.moves(game_id, token)
            if not moves["moves"]:
                break
            command = rng.choice(moves["moves"])
            if step % 3 == 2:  # through REST: the sockets see it all the same
                await api.command(token, game_id, command, expected_seq=moves["seq"])
                a_messages += await until_seq(a, moves["seq"] + 1)
            else:
                cid = await a.command(command, expected_seq=moves["seq"])
                sent.append(cid)
                a_messages += await a.until(lambda m, cid=cid: m.get("command_id") == cid)
        # A burst without waiting for acks: every ack, every diff, in order.
        burst = [await a.command({"type": "draw"}) for _ in range(3)]
        sent += burst
        a_messages += await a.until(lambda m: m["type"] == "ack" and m["command_id"] == burst[-1])
        while not {m.get("command_id") for m in a_messages} >= set(burst):
            a_messages.append(await a.recv())
        final = await api.state(game_id, token)
        n = final["seq"]
        assert not [m for m in a_messages if m["type"] == "error"], a_messages
        assert diffs(a_messages) == list(range(1, n + 1))
        acks = {m["command_id"]: m["seq"] for m in a_messages if m["type"] == "ack"}
        assert set(acks) == set(sent) and len(set(acks.values())) == len(sent)
        for cid, seq in acks.items():
            ack_at = next(
                i for i, m in enumerate(a_messages) if m["type"] == "ack" and m["command_id"] == cid
            )
            diff_at = next(
                i for i, m in enumerate(a_messages) if m["type"] == "diff" and m["seq"] == seq
            )
            assert diff_at < ack_at, (cid, seq)

        b_messages = await until_seq(b, n)
        assert diffs(b_messages) == list(range(1, n + 1))
        assert [m for m in b_messages if m["type"] != "diff"] == []
        state = start
        for m in b_messages:
            state = apply(state, m)
        assert same_state(state, game_state(final))


async def test_reconnecting_with_since_replays_exactly_what_was_missed(
        api: Api, session: aiohttp.ClientSession, base: str) -> None:
    _, token = await api.player()
    game_id = (await api.create(token, "shamrocks", seed=11))["game_id"]
    rng = random.Random(5)
    sent = await play_random(api, token, game_id, 4, rng)
    async with opened(session, base, game_id, token) as (sock, hello):
        assert hello[0]["type"] == "snapshot" and hello[-1]["seq"] == len(sent)
    seen = len(sent)
    sent += await play_random(api, token, game_id, 5, rng, undo_every=3)
    assert len(sent) > seen
    async with opened(session, base, game_id, token, since=seen) as (sock, hello):
        assert [m["type"] for m in hello] == ["diff"] * (len(sent) - seen) + ["synced"]
        assert diffs(hello) == list(range(seen + 1, len(sent) + 1))
        assert hello[-1]["seq"] == len(sent)
        # The replayed diffs are the very diffs the commands returned.
        for m, result in zip(hello, sent[seen:], strict=False):
            assert {k: v for k, v in m.items() if k not in ("type", "at")} == \
                {k: v for k, v in result["diff"].items() if k not in ("type", "at")}
        # Live diffs follow on without a gap or a repeat.
        more = await play_random(api, token, game_id, 2, rng)
        live = await until_seq(sock, len(sent) + len(more))
        assert diffs(live) == list(range(len(sent) + 1, len(sent) + len(more) + 1))
        total = len(sent) + len(more)
    async with opened(session, base, game_id, token, since=0) as (sock, hello):
        assert diffs(hello) == list(range(1, total + 1))
        state = game_state(await api.state(game_id, token))
    async with opened(session, base, game_id, token, since=total) as (sock, hello):
        assert hello == [{"type": "synced", "seq": total}]
    # PROTOCOL.md "later additions": a since beyond the game's seq is a bad_request, and
    # the socket stays open for a correct hello.
    async with socket(session, base, game_id) as sock:
        await sock.send({"type": "hello", "token": token, "since": total + 10})
        refused = await sock.recv()
        assert refused["type"] == "error" and refused["error"]["code"] == "bad_request", refused
        assert refused["error"]["details"] == {"since": total + 10, "seq": total}
        hello = await sock.hello(token)
        assert [m["type"] for m in hello] == ["snapshot", "synced"]
        assert same_state(game_state(hello[0]["state"]), state)


async def test_replayed_and_live_diffs_form_one_unbroken_run_while_commands_keep_coming(
        api: Api, session: aiohttp.ClientSession, base: str) -> None:
    """A watcher that keeps reconnecting (with since, and without) while the owner plays
    sees every seq exactly once in order, and ends at the game's seq with no further command."""
    _, token = await api.player()
    game_id = (await api.create(token, "gilbert", seed=21, public=True))["game_id"]
    done = asyncio.Event()
    total = 40

    async def owner() -> None:
        try:
            for i in range(total):
                await api.command(token, game_id, {"type": "undo"} if i % 2 else {"type": "draw"})
        finally:
            done.set()

    writer = asyncio.create_task(owner())
    run: list[int] = []
    reconnects = 0
    while not done.is_set() or reconnects < 3:
        since = run[-1] if run else 0
        if reconnects % 3 == 2:  # a fresh snapshot now and then: the run restarts from it
            async with opened(session, base, game_id) as (sock, hello):
                assert hello[0]["type"] == "snapshot"
                run = list(range(1, hello[0]["seq"] + 1))
                if hello[0]["seq"] < total:
                    run += diffs(await until_seq(sock, min(hello[0]["seq"] + 2, total)))
        else:
            async with opened(session, base, game_id, since=since) as (sock, hello):
                run += diffs(hello)
                if hello[-1]["seq"] < total:
                    run += diffs(await until_seq(sock, min(hello[-1]["seq"] + 2, total)))
        reconnects += 1
        assert run == list(range(1, len(run) + 1)), run
    await writer
    final = (await api.state(game_id))["seq"]
    assert final == total
    async with opened(session, base, game_id, since=run[-1]) as (sock, hello):
        run += diffs(hello)
    assert run == list(range(1, final + 1))


async def test_a_snapshot_hello_misses_no_diff_appended_while_it_subscribes(
        api: Api, session: aiohttp.ClientSession, live: tuple[str, Context]) -> None:
    """A command that lands after the hello read the game but before its subscription
    is live still reaches the socket, with no further command to reveal the gap."""
    base, ctx = live
    owner_id, token = await api.player()
    game_id = (await api.create(token, "gilbert", seed=7, public=True))["game_id"]
    listen = ctx.games.feed.listen

    @contextlib.asynccontextmanager
    async def listen_late(game: str, callback: Any = None) -> AsyncIterator[Any]:
        # Another client's command, right now.
        await ctx.games.command(game, owner_id, DRAW, None, None)
        async with listen(game, callback) as listener:
            yield listener

    ctx.games.feed.listen = listen_late  # type: ignore[method-assign]
    try:
        async with socket(session, base, game_id) as sock:
            await sock.send({"type": "hello"})
            messages = await sock.until(lambda m: (m["type"] == "diff" and m["seq"] == 1)
                                        or (m["type"] == "synced" and m["seq"] == 1))
    finally:
        ctx.games.feed.listen = listen  # type: ignore[method-assign]
    assert messages[0]["type"] == "snapshot"
    state = game_state(messages[0]["state"])
    for m in messages[1:]:
        if m["type"] == "diff":
            state = apply(state, m)
    assert same_state(state, game_state(await api.state(game_id)))


# --- refusals and errors --------------------------------------------------------------------


async def test_no_hello_in_time_gets_an_error_and_close_1008(
    redis_url: str, tmp_path: Path, session: aiohttp.ClientSession
) -> None:
    async with impatient_app(redis_url, tmp_path, session) as (base, game_id):
        async with socket(session, base, game_id) as sock:
            messages, code = await sock.closed()
    assert code == 1008
    assert [m["type"] for m in messages] == ["error"]
    assert (
        messages[0]["error"]["code"] == "bad_request" and "hello" in messages[0]["error"]["message"]
    )


async def test_pings_do_not_stretch_the_time_for_the_hello(
    redis_url: str, tmp_path: Path, session: aiohttp.ClientSession
) -> None:
    # WebSocket pings (control frames) are not messages: a client that pings and sends
    # no hello is refused when the hello's time is up, as one that sends nothing.
    async with impatient_app(redis_url, tmp_path, session) as (base, game_id):
        async with session.ws_connect(ws_url(base, game_id), autoping=False) as ws:
            for _ in range(100):  # 20 s of pings, each well within the hello's time
                await ws.ping(b"still here")
                msg = await ws.receive(timeout=WAIT_S)
                if msg.type is not aiohttp.WSMsgType.PONG:
                    break
                await asyncio.sleep(0.2)
            assert msg.type is aiohttp.WSMsgType.TEXT, msg
            assert msg.json()["error"]["code"] == "bad_request"
            assert (await ws.receive(timeout=WAIT_S)).type is aiohttp.WSMsgType.CLOSE
            assert ws.close_code == 1008


@pytest.mark.parametrize("live_first", [False, True], ids=["as_the_hello", "on_a_live_socket"])
async def test_a_message_over_the_size_limit_gets_an_error_saying_the_limit_then_1009(
        api: Api, session: aiohttp.ClientSession, base: str, live: tuple[str, Context],
        live_first: bool) -> None:
    """A client told only 1009 cannot tell what the limit is: the error says it, in bytes,
    and which setting sets it."""
    limit = live[1].settings.max_ws_message_bytes
    _, token = await api.player()
    game_id = (await api.create(token, "gilbert", public=True))["game_id"]
    too_big = '{"type": "hello", "token": "' + "x" * limit + '"}'
    async with socket(session, base, game_id) as sock:
        if live_first:
            await sock.hello(token)
        await sock.send(too_big)
        messages, close = await sock.closed()
    assert close == 1009, (close, messages)
    assert [m["type"] for m in messages] == ["error"], messages
    error = messages[0]["error"]
    assert error["code"] == "bad_request"
    assert f"{limit} bytes" in error["message"] and "max_ws_message_bytes" in error["message"]
    assert error["details"] == {"limit": "max_ws_message_bytes", "max_bytes": limit}


async def test_a_message_of_exactly_the_size_limit_is_read_one_byte_more_is_not(
        api: Api, session: aiohttp.ClientSession, base: str, live: tuple[str, Context]) -> None:
    """``max_bytes`` is the most a message may have: a client that fills a message to it
    is answered, not closed."""
    limit = live[1].settings.max_ws_message_bytes
    _, token = await api.player()
    game_id = (await api.create(token, "gilbert", public=True))["game_id"]
    ping = '{"type": "ping"}'
    async with socket(session, base, game_id) as sock:
        await sock.hello(token)
        await sock.send(ping + " " * (limit - len(ping)))
        assert (await sock.until(lambda m: m["type"] == "pong"))[-1]["type"] == "pong"
        await sock.send(ping + " " * (limit + 1 - len(ping)))
        messages, close = await sock.closed()
    assert close == 1009, (close, messages)
    assert [m["type"] for m in messages] == ["error"], messages


def test_the_installed_aiohttp_is_one_the_game_socket_was_checked_against() -> None:
    # service/socket/gamesocket.py relies on how aiohttp closes a socket on a message too big
    # (the test above checks it does): another aiohttp, read its source again, then widen
    # AIOHTTP_CHECKED.
    version = tuple(int(part) for part in aiohttp.__version__.split(".")[:2])
    low, high = AIOHTTP_CHECKED
    assert low <= version < high, (aiohttp.__version__, AIOHTTP_CHECKED)


async def test_a_refused_hello_gets_an_error_then_close_1008(
    api: Api, session: aiohttp.ClientSession, base: str
) -> None:
    _, token = await api.player()
    _, other = await api.player("other")
    private = (await api.create(token, "gilbert"))["game_id"]
    public = (await api.create(token, "gilbert", public=True))["game_id"]
    forged = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
    cases: list[tuple[str, Any, str]] = [
        (private, {"type": "hello"}, "not_found"),
        (private, {"type": "hello", "token": other}, "not_found"),
        (public, {"type": "hello", "token": forged}, "unauthorized"),
        (public, {"type": "hello", "token": "nonsense"}, "unauthorized"),
        ("g_nope", {"type": "hello", "token": token}, "not_found"),
        (public, {"type": "ping"}, "bad_request"),  # the first message must be a hello
        (public, "{not json", "bad_request"),
        (public, {"type": "hello", "since": -1}, "bad_request"),
        (public, {"type": "hello", "colour": "red"}, "bad_request"),
        (public, b"\x00binary", "bad_request"),
    ]
    for game_id, hello, code in cases:
        async with socket(session, base, game_id) as sock:
            await sock.send(hello)
            messages, close = await sock.closed()
        assert close == 1008, (hello, close, messages)
        assert [m["type"] for m in messages] == ["error"], (hello, messages)
        assert messages[0]["error"]["code"] == code, (hello, messages)
        assert set(messages[0]["error"]) == {"code", "message", "details"}


async def test_a_watcher_sees_the_diffs_but_its_commands_are_refused(
        api: Api, session: aiohttp.ClientSession, base: str) -> None:
    _, token = await api.player()
    _, other = await api.player("other")
    game_id = (await api.create(token, "gilbert", seed=7, public=True))["game_id"]
    async with (
        opened(session, base, game_id) as (anon, _),
        opened(session, base, game_id, other) as (rival, _),
    ):
        for sock, code in ((anon, "unauthorized"), (rival, "forbidden")):
            cid = await sock.command({"type": "draw"}, expected_seq=0)
            reply = await sock.recv()
            assert reply["type"] == "error" and reply["command_id"] == cid, reply
            assert reply["error"]["code"] == code
        await api.command(token, game_id, {"type": "draw"})
        for sock in (anon, rival):
            got = await until_seq(sock, 1)
            assert diffs(got) == [1] and [m["type"] for m in got] == ["diff"]
    assert (await api.state(game_id))["seq"] == 1


async def test_a_hello_without_since_on_a_live_socket_gets_a_snapshot_then_synced(
        api: Api, session: aiohttp.ClientSession, base: str) -> None:
    # As a first hello would: how a client that threw its state away (a hash that is not
    # the server's) starts afresh without reconnecting (docs/protocol.md "The hash").
    _, token = await api.player()
    game_id = (await api.create(token, "gilbert", seed=7))["game_id"]
    async with opened(session, base, game_id, token) as (sock, _):
        await sock.command({"type": "draw"}, expected_seq=0)
        await sock.command({"type": "draw"}, expected_seq=1)
        await sock.until(lambda m: m["type"] == "ack" and m["seq"] == 2)
        await sock.send({"type": "hello", "token": token, "moves": True})
        got = await sock.until(lambda m: m["type"] == "moves")
        assert [m["type"] for m in got] == ["snapshot", "synced", "moves"]
        assert got[0]["seq"] == got[1]["seq"] == got[2]["seq"] == 2
        assert same_state(game_state(got[0]["state"]),
                          game_state(await api.state(game_id, token)))
        # Live diffs go on from the snapshot's seq.
        cid = await sock.command({"type": "draw"})
        got = await sock.until(lambda m: m.get("command_id") == cid)
        assert [(m["type"], m["seq"]) for m in got] == [("diff", 3), ("moves", 3), ("ack", 3)]


async def test_a_plain_get_of_the_socket_is_a_bad_request_that_says_why(
        api: Api, base: str) -> None:
    _, token = await api.player()
    game_id = (await api.create(token, "gilbert", public=True))["game_id"]
    reply = await api.request("GET", f"/v1/games/{game_id}/ws", expect=400)
    assert reply.body["error"]["code"] == "bad_request"
    assert "WebSocket" in reply.body["error"]["message"], reply.body


async def test_ping_gets_pong(api: Api, session: aiohttp.ClientSession, base: str) -> None:
    _, token = await api.player()
    game_id = (await api.create(token, "gilbert", public=True))["game_id"]
    async with opened(session, base, game_id) as (sock, _):
        for _ in range(3):
            await sock.send({"type": "ping"})
            assert await sock.recv() == {"type": "pong"}


async def test_a_burst_of_pings_from_a_client_that_reads_gets_every_pong_and_no_close(
        redis_url: str, tmp_path: Path, session: aiohttp.ClientSession) -> None:
    # The outbox limit is for a client that does not read: one that sends many messages
    # at once, and reads the answers, is answered in full however many arrive together.
    queue = 16
    async with running_app(settings_for_test(redis_url, tmp_path, ws_send_queue=queue)) as (
            base, _):
        api = Api(session, base)
        _, token = await api.player()
        game_id = (await api.create(token, "gilbert", public=True))["game_id"]
        async with opened(session, base, game_id) as (sock, _):
            burst = queue * 10
            for _ in range(burst):
                await sock.send({"type": "ping"})
            for _ in range(burst):
                assert await sock.recv() == {"type": "pong"}


@pytest.mark.parametrize("message", [
    "{not json",
    "[]",
    {"type": "fly"},
    {"type": "hello", "since": -1},  # a second hello
    {"type": "command", "command": {"type": "draw"}},  # no command_id
    {"type": "command", "command_id": "c1", "command": {"type": "draw", "n": 2}},
    {"type": "command", "command_id": "c1", "command": {"type": "move", "from": "x", "to": "y"}},
    {"type": "command", "command_id": "", "command": {"type": "draw"}},
    {"type": "ping", "extra": 1},
    b"\x00\x01",
])
async def test_an_invalid_message_gets_a_bad_request_error_and_the_socket_stays_open(
        api: Api, session: aiohttp.ClientSession, base: str, message: Any) -> None:
    async with refused(api, session, base, message) as (sock, reply):
        await sock.send({"type": "ping"})
        assert await sock.recv() == {"type": "pong"}
        cid = await sock.command({"type": "draw"}, expected_seq=0)
        got = await sock.until(lambda m: m.get("command_id") == cid)
        assert [m["type"] for m in got] == ["diff", "ack"] and got[0]["seq"] == 1


@pytest.mark.parametrize("message", [
    {"type": "command", "command_id": "c1", "command": {"type": "fly"}},
    {"type": "command", "command_id": "c1", "command": {"type": "draw", "n": 2}},
    {"type": "command", "command_id": "c1"},
    {"type": "command", "command_id": "c1", "command": {"type": "draw"}, "extra": 1},
    {"type": "command", "command_id": "c1", "expected_seq": -1, "command": {"type": "draw"}},
])
async def test_a_malformed_command_with_a_readable_command_id_gets_an_error_naming_it(
        api: Api, session: aiohttp.ClientSession, base: str, message: dict[str, Any]) -> None:
    # A client waits for the ack or the error of each command_id it sent.
    async with refused(api, session, base, message) as (_, reply):
        assert reply["command_id"] == "c1"


MOVE_FROM_NOWHERE = {"type": "move", "from": "x", "to": "tableau/0"}


@pytest.mark.parametrize(("message", "field"), [
    ({"type": "hello", "since": -1}, "since"),
    ({"type": "hello", "colour": "red"}, "colour"),
    ({"type": "command", "command_id": "c1", "command": MOVE_FROM_NOWHERE}, "command.from"),
    ({"type": "command", "command_id": "c1", "command": {"type": "draw", "n": 2}}, "command.n"),
    ({"type": "command", "command_id": "c1", "command": {"type": "fly"}}, "command.type"),
    ({"type": "command", "command_id": "c1"}, "command"),
    ({"type": "fly"}, "type"),
    # A key given twice: which one was meant is a guess, so neither is taken.
    ('{"type": "command", "command_id": "c1", "command": {"type": "move", "type": "draw"}}',
     "command.type"),
    ('{"type": "command", "command_id": "c1", "expected_seq": 0, "expected_seq": 1, '
     '"command": {"type": "draw"}}', "expected_seq"),
])
async def test_a_message_refused_for_one_field_names_it_as_a_dotted_path(
        api: Api, session: aiohttp.ClientSession, base: str, message: Any, field: str) -> None:
    # As a REST body's 400 does (docs/protocol.md, details.field).
    async with refused(api, session, base, message) as (_, reply):
        assert reply["error"]["details"]["field"] == field, reply


@pytest.mark.parametrize(("hello", "field"), [
    ({"type": "hello", "since": -1}, "since"),
    ({"type": "hello", "token": 5}, "token"),
    ({"type": "hello", "colour": "red"}, "colour"),
    ({"type": "ping"}, "type"),  # the first message must be a hello
    ("{not json", None),  # no one field to blame
    ('{"type": "hello", "token": null, "token": "t"}', "token"),  # a key given twice
])
async def test_a_first_message_refused_for_one_field_names_it(
        api: Api, session: aiohttp.ClientSession, base: str, hello: Any,
        field: str | None) -> None:
    _, token = await api.player()
    game_id = (await api.create(token, "gilbert", public=True))["game_id"]
    async with socket(session, base, game_id) as sock:
        await sock.send(hello)
        messages, close = await sock.closed()
    assert close == 1008 and [m["type"] for m in messages] == ["error"], (close, messages)
    assert messages[0]["error"]["details"].get("field") == field, messages


@pytest.mark.parametrize("message", [
    {"type": "command", "command_id": "", "command": {"type": "draw"}},
    {"type": "command", "command_id": 7, "command": {"type": "draw"}},
    {"type": "hello", "command_id": "c1", "since": -1},
    '{"type": "command", "command_id": "c1", "command": ',
])
async def test_an_error_names_no_command_id_when_the_message_carries_no_valid_one(
        api: Api, session: aiohttp.ClientSession, base: str, message: Any) -> None:
    async with refused(api, session, base, message) as (_, reply):
        assert "command_id" not in reply


async def test_command_errors_name_their_command_and_a_repeat_is_acked_with_the_first_seq(
        api: Api, session: aiohttp.ClientSession, base: str) -> None:
    _, token = await api.player()
    game_id = (await api.create(token, "gilbert", seed=7))["game_id"]
    async with opened(session, base, game_id, token) as (sock, _):
        cid = await sock.command({"type": "move", "from": "waste", "to": "foundation"})
        err = await sock.recv()
        assert err["type"] == "error" and err["command_id"] == cid
        assert (
            err["error"]["code"] == "illegal_move"
            and err["error"]["details"]["rule"] == "nothing_to_move"
        )

        first = await sock.command({"type": "draw"}, expected_seq=0)
        got = await sock.until(lambda m: m.get("command_id") == first)
        assert [(m["type"], m["seq"]) for m in got] == [("diff", 1), ("ack", 1)]

        stale = await sock.command({"type": "draw"}, expected_seq=0)
        err = await sock.recv()
        assert (err["type"], err["command_id"], err["error"]["code"]) == (
            "error",
            stale,
            "conflict",
        )
        assert err["error"]["details"]["seq"] == 1

        # The same command_id again (with its stale expected_seq): the first result, nothing
        # applied.
        await sock.command({"type": "draw"}, expected_seq=0, command_id=first)
        assert await sock.recv() == {"type": "ack", "command_id": first, "seq": 1}
        nxt = await sock.command({"type": "draw"}, expected_seq=1, command_id=new_command_id())
        got = await sock.until(lambda m: m.get("command_id") == nxt)
        assert [(m["type"], m["seq"]) for m in got] == [("diff", 2), ("ack", 2)]
    assert (await api.state(game_id, token))["seq"] == 2


async def test_the_server_closes_sockets_with_1001_when_it_shuts_down(
        redis_url: str, tmp_path: Path, session: aiohttp.ClientSession) -> None:
    async with running_app(settings_for_test(redis_url, tmp_path)) as (base, _):
        api = Api(session, base)
        _, token = await api.player()
        game_id = (await api.create(token, "gilbert", public=True))["game_id"]
        sock, _hello = await connect(session, base, game_id)
        reader = asyncio.create_task(sock.closed())
    try:
        messages, code = await reader
        assert (messages, code) == ([], 1001)
    finally:
        await sock.ws.close()
