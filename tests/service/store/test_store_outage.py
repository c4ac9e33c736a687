"""The store going away in the middle of play, politely and with kill -9, and coming back
with the same data directory and address (PROTOCOL.md: 503 ``unavailable``, nothing written).

While it is down every request that needs it gets 503 ``unavailable`` and nothing
is half-written; when it is back the same service process recovers by itself:
ready again, commands work, sockets that stayed connected and sockets that
reconnect with ``since`` get every diff, and no acknowledged command is lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from service.app import Context
from service.settings import Settings
from service.socket import writer as ws_writer
from service.store import keys
from service.store.embedded import EmbeddedServer
from tests.live import settings_for_test
from tests.redis_servers import sync_client
from tests.service.helpers import (
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
    wait_for,
)


@pytest.fixture
def restartable_server(server_factory: Callable[..., EmbeddedServer]) -> EmbeddedServer:
    """The suite's restartable server, with ``appendfsync always``: under ``everysec`` the
    server postpones its AOF write (yet still answers) while a background fsync is slow,
    so a kill -9 may lose up to ~2 s of acknowledged writes; "none lost" needs ``always``."""
    return server_factory("restartable", appendfsync="always")


def outage_settings(server: EmbeddedServer, tmp_path: Path) -> Settings:
    """The test settings on ``server``, giving up on a store that does not answer after 1 s
    and one retry."""
    return settings_for_test(server.url, tmp_path / "data", redis_timeout_s=1.0, redis_retries=1)


@pytest.fixture
async def live(
    restartable_server: EmbeddedServer, tmp_path: Path
) -> AsyncIterator[tuple[Api, Context]]:
    settings = outage_settings(restartable_server, tmp_path)
    async with running_app(settings) as (base, ctx), aiohttp.ClientSession() as session:
        yield Api(session, base), ctx


async def public_game(api: Api, variant: str, seed: int) -> tuple[str, str]:
    """A new player's token, and a public game of theirs (its id)."""
    _, token = await api.player()
    return token, (await api.create(token, variant, seed=seed, public=True))["game_id"]


def take_down(server: EmbeddedServer, how: str) -> None:
    server.kill() if how == "kill" else server.stop()


async def ready(api: Api) -> bool:
    return (await api.request("GET", "/readyz")).status == 200


def check_unavailable(reply: Any, retry_after: bool = True) -> None:
    assert reply.status == 503, (reply.status, reply.raw)
    assert reply.error["code"] == "unavailable"
    if retry_after:  # in the header and in the body alike (a socket's error has only the body)
        assert reply.headers.get("Retry-After") == "1"
        assert reply.error["details"]["retry_after_s"] == 1


@pytest.mark.parametrize("how", ["stop", "kill"])
async def test_while_the_store_is_down_requests_get_503_and_after_restart_play_resumes(
        how: str, restartable_server: EmbeddedServer, live: tuple[Api, Context]) -> None:
    api, _ = live
    _, token = await api.player()
    created = await api.create(token, "gilbert", seed=7, public=True)
    game_id = created["game_id"]
    acked = await play_random(api, token, game_id, 6, random.Random(how))
    n = len(acked)
    before = await api.state(game_id, token)
    watcher, hello = await connect(api.session, api.base, game_id)  # stays connected throughout
    owner, _ = await connect(api.session, api.base, game_id, token)
    for sock in (watcher, owner):  # both live: their first look at the log is done
        await sock.send({"type": "ping"})
        assert await sock.recv() == {"type": "pong"}
    try:
        take_down(restartable_server, how)

        assert (await api.request("GET", "/healthz")).status == 200  # alive, not ready
        check_unavailable(await api.request("GET", "/readyz"), retry_after=False)  # a probe
        for method, path, body in [
            ("GET", f"/v1/games/{game_id}", None),
            ("GET", f"/v1/games/{game_id}/moves", None),
            ("GET", f"/v1/games/{game_id}/events", None),
            (
                "POST",
                f"/v1/games/{game_id}/commands",
                {"command": {"type": "draw"}, "expected_seq": n},
            ),
            ("POST", f"/v1/games/{game_id}/commands", {"command": {"type": "undo"}}),
            ("POST", "/v1/games", {"variant": "gate"}),
            ("POST", "/v1/players", {"name": "late"}),
            ("PATCH", "/v1/players/me", {"name": "renamed"}),
        ]:
            check_unavailable(await api.request(method, path, token, json=body))
        lost_cid = await owner.command({"type": "draw"}, expected_seq=n)
        answer = (await owner.until(lambda m: m.get("command_id") == lost_cid))[-1]
        assert answer["type"] == "error" and answer["error"]["code"] == "unavailable"
        assert answer["error"]["details"]["retry_after_s"] == 1  # when to send it again
        async with socket(api.session, api.base, game_id) as refused:
            await refused.send({"type": "hello", "since": 0})
            messages, code = await refused.closed()
        assert [m["error"]["code"] for m in messages] == ["unavailable"]
        assert messages[0]["error"]["details"]["retry_after_s"] == 1
        assert code == 1013  # try again later: not 1008, which tells a client to give up

        restartable_server.start()
        await wait_for(lambda: ready(api), what="readyz 200 after the restart")

        # Nothing was written while it was down; everything acknowledged before is there.
        after = await api.state(game_id, token)
        assert after == before
        events = await api.events(game_id, token)
        assert [e["command"] for e in events] == [r["diff"]["command"] for r in acked]

        # The command refused while down, sent again with its id, is applied now, once.
        again = await api.command(
            token, game_id, {"type": "draw"}, expected_seq=n, command_id=lost_cid
        )
        assert again.body["seq"] == n + 1
        more = await play_random(api, token, game_id, 4, random.Random(1))
        final = await api.state(game_id, token)
        total = final["seq"]
        assert total == n + 1 + len(more)

        # The socket that stayed connected gets every diff after the outage: no gap, no repeat.
        got = await watcher.until(lambda m: m["type"] == "diff" and m["seq"] == total)
        assert [m["seq"] for m in got if m["type"] == "diff"] == list(range(n + 1, total + 1))
        state = game_state(hello[0]["state"])
        for m in got:
            if m["type"] == "diff":
                state = apply(state, m)
        assert same_state(state, game_state(final))

        # A client that reconnects with since gets exactly what it missed.
        back, replay = await connect(api.session, api.base, game_id, since=n)
        await back.ws.close()
        assert [m["seq"] for m in replay if m["type"] == "diff"] == list(range(n + 1, total + 1))
        assert replay[-1] == {"type": "synced", "seq": total}
    finally:
        await watcher.ws.close()
        await owner.ws.close()


@pytest.mark.parametrize("how", ["stop", "kill"])
async def test_no_acknowledged_command_is_lost_when_the_store_dies_under_a_stream_of_commands(
        how: str, restartable_server: EmbeddedServer, live: tuple[Api, Context]) -> None:
    """A client sends commands one after the other, each with its id, and sends a command
    again (same id) after a 503; the store dies and comes back meanwhile. Every command is
    in the log exactly once, in order, and every acknowledged one with the diff it was acked
    with."""
    api, _ = live
    _, token = await api.player()
    created = await api.create(token, "gilbert", seed=11)
    game_id = created["game_id"]
    acks: dict[int, dict[str, Any]] = {}
    refusals = 0
    stop = asyncio.Event()
    ids: list[str] = []

    async def client() -> None:
        nonlocal refusals
        for i in range(1000):
            if stop.is_set():
                return
            ids.append(new_command_id())
            command = {"type": "undo"} if i % 3 == 2 else {"type": "draw"}
            while True:  # a 503: the same command again, with the same id
                reply = await api.command(token, game_id, command, command_id=ids[i], expect=None)
                if reply.status == 200:
                    acks[i] = reply.body
                    break
                check_unavailable(reply)  # never anything else: no 500, no 409, no 422
                refusals += 1
                await asyncio.sleep(0.02)

    sender = asyncio.create_task(client())
    try:
        await wait_for(lambda: len(acks) >= 12, what="a dozen acknowledged commands")
        take_down(restartable_server, how)  # while the client is sending
        await wait_for(lambda: refusals > 0, what="a 503")
        restartable_server.start()
        after_restart = len(acks)
        await wait_for(lambda: len(acks) >= after_restart + 10, what="commands after the restart")
        stop.set()
        await asyncio.wait_for(sender, 60)
    finally:
        if not sender.done():
            sender.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await sender
    total = len(acks)
    assert total == len(ids)

    events = await api.events(game_id, token)
    assert len(events) == total
    for i, event in enumerate(events):
        assert event["seq"] == i + 1
        assert event["command"]["type"] == ("undo" if i % 3 == 2 else "draw")
        assert acks[i]["seq"] == i + 1
    # The acked diffs are the log's, and folding them gives the state.
    sock, replay = await connect(api.session, api.base, game_id, token, since=0)
    await sock.ws.close()
    state = game_state(created["state"])
    for i, m in enumerate(replay[:-1]):
        assert {k: v for k, v in m.items() if k != "type"} == {
            k: v for k, v in acks[i]["diff"].items() if k != "type"
        }
        state = apply(state, m)
    assert same_state(state, game_state(await api.state(game_id, token)))
    # The store agrees with itself: meta seq, log length and command ids.
    with sync_client(restartable_server.url) as r:
        assert int(r.hget(keys.game_meta(game_id), "seq")) == total
        assert r.llen(keys.game_events(game_id)) == total
        mine = {k.decode(): int(v.split(b" ")[0])  # "<seq> <command>"
                for k, v in r.hgetall(keys.game_commands(game_id)).items()}
        assert {cid: mine[cid] for cid in ids} == {cid: i + 1 for i, cid in enumerate(ids)}


async def test_a_service_started_while_the_store_is_down_is_alive_not_ready_and_recovers(
        restartable_server: EmbeddedServer, tmp_path: Path) -> None:
    """The store is down when the service starts (a deploy that comes up before its Redis):
    the service starts, /healthz is 200 and /readyz 503, requests get 503 with
    ``Retry-After``, a hello an error and 1013; once the store is up the same process plays."""
    restartable_server.stop()
    settings = outage_settings(restartable_server, tmp_path)
    async with running_app(settings) as (base, _), aiohttp.ClientSession() as session:
        api = Api(session, base)
        assert (await api.request("GET", "/healthz")).status == 200
        check_unavailable(await api.request("GET", "/readyz"), retry_after=False)
        check_unavailable(await api.request("POST", "/v1/players", json={"name": "early"}))
        check_unavailable(await api.request("GET", "/v1/games/g_0123456789abcdef"))
        async with socket(session, base, "g_0123456789abcdef") as early:
            await early.send({"type": "hello"})
            messages, code = await early.closed()
        assert [m["error"]["code"] for m in messages] == ["unavailable"] and code == 1013

        restartable_server.start()
        await wait_for(lambda: ready(api), what="readyz 200 once the store is up")
        token, game_id = await public_game(api, "gilbert", seed=2)
        watcher, _ = await connect(session, base, game_id)
        try:
            await api.command(token, game_id, {"type": "draw"})
            got = await watcher.until(lambda m: m["type"] == "diff")
            assert got[-1]["seq"] == 1
        finally:
            await watcher.ws.close()


# A store that is up but refuses every write, how it is made to, and what a client is told.
REFUSALS = {
    "out of memory": (("CONFIG", "SET", "maxmemory", "1"), ("CONFIG", "SET", "maxmemory", "0")),
    "read-only replica": (("REPLICAOF", "127.0.0.1", "1"), ("REPLICAOF", "NO", "ONE")),
}


@contextlib.contextmanager
def refusing_writes(server: EmbeddedServer, refusal: str) -> Iterator[None]:
    """``server`` refusing every write as ``refusal`` (a key of REFUSALS) says, until the
    block ends: then it accepts them again."""
    refuse, accept = REFUSALS[refusal]
    with sync_client(server.url) as r:
        r.execute_command(*refuse)
    try:
        yield
    finally:
        with sync_client(server.url) as r:
            r.execute_command(*accept)


@pytest.mark.parametrize("refusal", sorted(REFUSALS))
async def test_a_store_that_refuses_writes_gets_503_saying_why_and_play_resumes_after(
        refusal: str, restartable_server: EmbeddedServer, live: tuple[Api, Context]) -> None:
    """maxmemory reached with noeviction, or a store turned into a replica: it answers, but
    refuses. Every write, over REST or the socket, is 503 ``unavailable`` naming why, never a
    500; once it accepts writes again the refused command, sent again with its id, lands
    once. (Reads may still be answered: the store serves them.)"""
    api, _ = live
    token, game_id = await public_game(api, "gilbert", seed=5)
    owner, _ = await connect(api.session, api.base, game_id, token)
    try:
        with refusing_writes(restartable_server, refusal):
            refused_cid = new_command_id()
            for method, path, body in [
                ("POST", "/v1/players", {"name": "late"}),
                ("POST", "/v1/games", {"variant": "gate"}),
                ("POST", f"/v1/games/{game_id}/commands",
                 {"command": {"type": "draw"}, "command_id": refused_cid}),
            ]:
                reply = await api.request(method, path, token, json=body)
                check_unavailable(reply)
                assert refusal in reply.error["message"], reply.error
            ws_cid = await owner.command({"type": "draw"})
            answer = (await owner.until(lambda m: m.get("command_id") == ws_cid))[-1]
            assert answer["type"] == "error" and answer["error"]["code"] == "unavailable"
            assert refusal in answer["error"]["message"]
            assert answer["error"]["details"]["retry_after_s"] == 1

        again = await api.command(token, game_id, {"type": "draw"}, command_id=refused_cid)
        assert again.body["seq"] == 1
        assert [e["seq"] for e in await api.events(game_id, token)] == [1]
    finally:
        await owner.ws.close()


@pytest.mark.parametrize("refusal", sorted(REFUSALS))
async def test_a_store_that_refuses_writes_still_answers_reads(
        refusal: str, restartable_server: EmbeddedServer, live: tuple[Api, Context],
        caplog: pytest.LogCaptureFixture) -> None:
    """A store that refuses writes still serves reads, and so does the service: a read's
    rate limit (counted in the store) lets it through rather than refuse it for a write it
    does not need, saying so in the log once, not once per read; writes keep their 503."""
    api, _ = live
    token, game_id = await public_game(api, "gilbert", seed=5)
    await api.command(token, game_id, {"type": "draw"})
    caplog.set_level(logging.INFO, logger="service")
    with refusing_writes(restartable_server, refusal):
        for _ in range(3):
            for who in (None, token):
                assert (await api.state(game_id, who))["seq"] == 1
                assert (await api.moves(game_id, who))["seq"] == 1
                assert [e["seq"] for e in await api.events(game_id, who)] == [1]
        watcher, hello = await connect(api.session, api.base, game_id)
        await watcher.ws.close()
        assert [m["type"] for m in hello][-1] == "synced"
        reply = await api.command(token, game_id, {"type": "draw"}, expect=None)
        check_unavailable(reply)
        assert refusal in reply.error["message"]
        warnings = [rec for rec in caplog.records
                    if rec.name == "service.domain.ratelimit" and rec.levelno == logging.WARNING]
        assert len(warnings) == 1, [rec.getMessage() for rec in caplog.records]
        assert refusal in warnings[0].getMessage()
    await api.command(token, game_id, {"type": "draw"})


async def hello_with_listen(
    api: Api, ctx: Context, game_id: str, listen: Callable[..., Any]
) -> tuple[list[dict[str, Any]], int | None]:
    """A hello on ``game_id`` with the feed's ``listen`` replaced by ``listen`` meanwhile
    (the real one back afterwards): the messages until the socket closed, and its code."""
    real = ctx.games.feed.listen
    ctx.games.feed.listen = listen  # type: ignore[method-assign]
    try:
        async with socket(api.session, api.base, game_id) as sock:
            await sock.send({"type": "hello"})
            return await sock.closed()
    finally:
        ctx.games.feed.listen = real  # type: ignore[method-assign]


async def test_a_hello_whose_subscription_fails_gets_unavailable_and_1013(
        restartable_server: EmbeddedServer, live: tuple[Api, Context]) -> None:
    """The store goes away between the hello's read and its subscription."""
    api, ctx = live
    _, game_id = await public_game(api, "gate", seed=3)
    listen: Callable[..., Any] = ctx.games.feed.listen

    @contextlib.asynccontextmanager
    async def listen_after_a_crash(game: str, callback: Any = None) -> AsyncIterator[Any]:
        restartable_server.kill()
        async with listen(game, callback) as listener:
            yield listener

    messages, code = await hello_with_listen(api, ctx, game_id, listen_after_a_crash)
    assert [m["type"] for m in messages] == ["error"]
    assert messages[0]["error"]["code"] == "unavailable"
    assert code == 1013

    restartable_server.start()
    await wait_for(lambda: ready(api), what="readyz 200 after the restart")
    sock2: Socket
    sock2, hello = await connect(api.session, api.base, game_id)
    await sock2.ws.close()
    assert [m["type"] for m in hello] == ["snapshot", "synced"]


async def test_a_socket_whose_log_read_fails_is_closed_with_1013_and_resumes_with_since(
        restartable_server: EmbeddedServer, live: tuple[Api, Context]) -> None:
    """The store dies right after a hello subscribed: the socket is not left mute, it is
    closed with 1013 (try again later), and a hello with since after the restart catches up."""
    api, ctx = live
    token, game_id = await public_game(api, "gilbert", seed=3)
    await api.command(token, game_id, {"type": "draw"})
    listen: Callable[..., Any] = ctx.games.feed.listen

    @contextlib.asynccontextmanager
    async def listen_then_crash(game: str, callback: Any = None) -> AsyncIterator[Any]:
        async with listen(game, callback) as listener:
            restartable_server.kill()
            yield listener

    messages, code = await hello_with_listen(api, ctx, game_id, listen_then_crash)
    assert code == 1013
    assert [m["type"] for m in messages] == ["snapshot", "synced"]
    seq = messages[-1]["seq"]

    restartable_server.start()
    await wait_for(lambda: ready(api), what="readyz 200 after the restart")
    await api.command(token, game_id, {"type": "draw"})
    sock2, replay = await connect(api.session, api.base, game_id, since=seq)
    await sock2.ws.close()
    assert [m["seq"] for m in replay if m["type"] == "diff"] == list(range(seq + 1, 3))
    assert replay[-1] == {"type": "synced", "seq": 2}


async def test_a_store_restarted_while_it_loads_a_large_log_closes_sockets_1013_without_traceback(
        restartable_server: EmbeddedServer, live: tuple[Api, Context],
        caplog: pytest.LogCaptureFixture) -> None:
    """A store restarted with a large append-only file answers LOADING until it has read it:
    a store that is loading is unavailable, as one that is down. A socket whose log read
    meets it is closed with 1013 (reconnect with since), logged in one line, no traceback
    (docs/reliability.md); once loaded, a hello with since catches up."""
    api, _ = live
    token, game_id = await public_game(api, "gilbert", seed=3)
    await api.command(token, game_id, {"type": "draw"})
    with sync_client(restartable_server.url) as r:  # a log long enough to load for seconds
        for batch in range(10):
            with r.pipeline(transaction=False) as pipe:
                for i in range(5000):
                    pipe.set(f"filler:{batch}:{i}", "x")
                pipe.execute()
    # Each command read back at start-up waits 100 µs: about 5 s of LOADING.
    restartable_server.config["key-load-delay"] = "100"
    watcher, hello = await connect(api.session, api.base, game_id)
    await watcher.send({"type": "ping"})
    assert await watcher.recv() == {"type": "pong"}  # live
    caplog.set_level(logging.INFO, logger="service")
    try:
        restartable_server.stop()
        starting = asyncio.create_task(asyncio.to_thread(restartable_server.start))
        messages, code = await watcher.closed(timeout=30)
        await starting
    finally:
        await watcher.ws.close()
    assert code == 1013
    assert messages == []
    closing = [r for r in caplog.records if r.name == ws_writer.log.name]
    assert len(closing) == 1 and closing[0].exc_info is None  # one line
    assert "the store refuses this now: it is loading its data" in closing[0].getMessage()

    await wait_for(lambda: ready(api), what="readyz 200 after the store loaded")
    sock, replay = await connect(api.session, api.base, game_id, since=hello[-1]["seq"])
    await sock.ws.close()
    assert replay[-1] == {"type": "synced", "seq": 1}
