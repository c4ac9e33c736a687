"""Abuse: what a hostile or broken client can try, and what it gets (PROTOCOL.md "Auth").

- Commands on someone else's game through every door (REST, a watcher's socket, a
  socket re-hello'd with another token, the owner's command ids) change nothing.
- A forged, expired or tampered token is a 401 everywhere (a property test over
  mutations of a real token), never a 500, never another player.
- Flooding: the rate limit holds across two instances sharing one store, for REST
  and WebSocket commands alike; the flooder's neighbour is not slowed down.
- A thousand connections opened and dropped in every rude way leave nothing behind:
  no socket, no fan-out listener, no subscription, no file descriptor.
- A replayed command id is answered with its first result and changes nothing.

tests/service/web/test_rest.py and test_daily_api.py have the plain cases (one bad token
of each kind over REST, a private game is 404, another player's daily attempt is
404); these go through the other doors and compare the store itself before and after.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import os
import random
import re
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.app import Context
from tests.fakes import FakeClock
from tests.live import daily_chosen, settings_for_test
from tests.reliability.helpers import WAIT_S, RawClosed, RawSocket, StoredGame, stored_game
from tests.service.helpers import Api, connect, new_command_id, running_app, wait_for, ws_url
from tests.service.listening import subscribers

SECRET = "test-secret-0123456789abcdef"  # tests.live.settings_for_test's


@pytest.fixture
async def live(redis_url: str, tmp_path: Path) -> AsyncIterator[tuple[Api, Context]]:
    async with running_app(settings_for_test(redis_url, tmp_path)) as (base, ctx), \
            aiohttp.ClientSession() as session:
        yield Api(session, base), ctx


def check_error(reply: Any, status: int, code: str) -> dict[str, Any]:
    assert reply.status == status, (reply.status, reply.raw[:300])
    err = reply.error  # the contract's shape, checked
    assert err["code"] == code, err
    return err


def unchanged(before: StoredGame, after: StoredGame) -> None:
    """The store holds exactly what it held: meta (seq, status, times), log, command ids."""
    assert after.meta == before.meta
    assert after.events == before.events
    assert after.command_ids == before.command_ids
    assert after.snapshot == before.snapshot


def sign(payload: bytes, secret: str = SECRET) -> str:
    """A token with any payload, signed as the service signs (for payloads no player gets)."""
    body = base64.urlsafe_b64encode(payload).rstrip(b"=").decode()
    mac = hmac.new(secret.encode(), f"v1.{body}".encode(), hashlib.sha256).digest()
    return f"v1.{body}.{base64.urlsafe_b64encode(mac).rstrip(b'=').decode()}"


async def hello_answer(api: Api, game_id: str,
                       token: str) -> tuple[list[dict[str, Any]], int | None]:
    async with api.session.ws_connect(ws_url(api.base, game_id), max_msg_size=0) as ws:
        await ws.send_str(json.dumps({"type": "hello", "token": token}))
        out = []
        while True:
            msg = await ws.receive(timeout=WAIT_S)
            if msg.type is not aiohttp.WSMsgType.TEXT:
                return out, ws.close_code
            out.append(json.loads(msg.data))
            if out[-1]["type"] == "synced":  # accepted
                return out, None


# --- someone else's game ---------------------------------------------------------------------


async def test_no_one_but_the_owner_changes_a_game_through_any_door(live: tuple[Api, Context],
                                                                     redis_url: str) -> None:
    api, _ = live
    owner_id, owner = await api.player("owner")
    _, other = await api.player("other")
    games = {"public": (await api.create(owner, "gilbert", seed=5, public=True))["game_id"],
             "private": (await api.create(owner, "gate", seed=5))["game_id"]}
    await daily_chosen(api.base)  # attempts are a 503 until the day's deals are chosen
    attempt = await api.request("POST",
                                f"/v1/daily/{datetime.now(UTC).date().isoformat()}/caprice/attempts",
                                owner)
    if attempt.status == 201:
        games["daily attempt"] = attempt.body["game_id"]
    else:  # the daily endpoints are another engineer's: only a missing route may skip this part
        assert attempt.status == 404 and "no such endpoint" in attempt.error["message"], attempt.raw
    ids = {}
    for kind, game_id in games.items():
        ids[kind] = new_command_id()
        await api.command(owner, game_id,
                          {"type": "draw"} if kind != "daily attempt" else {"type": "resign"},
                          command_id=ids[kind])
    before = {kind: stored_game(redis_url, g) for kind, g in games.items()}

    for kind, game_id in games.items():
        readable = kind == "public"
        # REST, with another player's token and with none; with the owner's command id too.
        for token in (other, None):
            for command_id in (None, ids[kind], new_command_id()):
                reply = await api.command(token, game_id, {"type": "undo"}, command_id=command_id,
                                          expect=None)
                if token is None:  # before anything is looked up: says nothing of the game
                    check_error(reply, 401, "unauthorized")
                else:
                    check_error(reply, 403 if readable else 404,
                                "forbidden" if readable else "not_found")
        # A socket with another player's token: refused at hello unless the game is public.
        messages, code = await hello_answer(api, game_id, other)
        if not readable:
            codes = [m["error"]["code"] for m in messages]
            assert codes == ["not_found"] and code == 1008, (messages, code)
            continue
        assert messages[-1]["type"] == "synced"
        for token in (other, None):
            sock, _ = await connect(api.session, api.base, game_id, token)
            try:
                cid = await sock.command({"type": "undo"}, command_id=ids[kind])
                answer = (await sock.until(lambda m, cid=cid: m.get("command_id") == cid))[-1]
                assert answer["type"] == "error"
                assert answer["error"]["code"] == ("forbidden" if token else "unauthorized"), answer
                # Taking the owner's token on a live socket is refused, and so is the command after.
                await sock.send({"type": "hello", "token": owner, "since": 0})
                refusal = await sock.until(lambda m: m["type"] == "error")
                assert refusal[-1]["error"]["code"] == "bad_request", refusal
                cid = await sock.command({"type": "undo"})
                answer = (await sock.until(lambda m, cid=cid: m.get("command_id") == cid))[-1]
                assert answer["type"] == "error", answer
                await sock.send({"type": "ping"})
                assert (await sock.until(lambda m: m["type"] == "pong"))[-1] == {"type": "pong"}
            finally:
                await sock.ws.close()

    for kind, game_id in games.items():
        unchanged(before[kind], stored_game(redis_url, game_id))
    # The owner still plays, and is answered for the id used before with its first result
    # (and with 409 for another command under it).
    again = await api.command(owner, games["public"], {"type": "draw"}, command_id=ids["public"])
    assert again.body["seq"] == 1 and again.body["diff"]["command"] == {"type": "draw"}
    await api.command(owner, games["public"], {"type": "undo"}, command_id=ids["public"],
                      expect=409)
    assert owner_id == (await api.state(games["public"]))["owner"]


# --- tokens ----------------------------------------------------------------------------------

_UNICODE = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1,
                   max_size=4)


KINDS = ["replace", "insert", "delete", "parts", "case", "pad", "unicode", "truncate"]
MUTATIONS = st.tuples(st.sampled_from(KINDS), st.integers(0, 10_000),
                      st.sampled_from("ABCxyz0189-_=.+/ "),
                      st.sampled_from(["A", ".", "=", "==", "%00", "\t", "A" * 200, ".x"]),
                      st.permutations(range(3)), st.integers(0, 3), _UNICODE)


def tampered(token: str, mutation: tuple[Any, ...]) -> str:
    """A real token, changed a little: a character replaced, inserted or removed, parts
    swapped or dropped, the case changed, padding or foreign characters added."""
    kind, at, char, extra, order, keep, foreign = mutation
    i = at % len(token)
    parts = token.split(".")
    out = {
        "replace": token[:i] + char + token[i + 1:],
        "insert": token[:i] + extra + token[i:],
        "delete": token[:i] + token[i + 1:],
        "parts": ".".join([parts[j] for j in order][:keep] if keep < 3
                          else [parts[j] for j in order]),
        "case": token.swapcase(),
        "pad": token + extra,
        "unicode": token[:i] + foreign + token[i:],
        "truncate": token[:i],
    }[kind]
    # Whitespace around a header value is not part of it (HTTP strips it): a token that
    # differs only there is the same token, not a tampered one.
    return out if out.strip(" \t") != token else token + "x"


_SIGNED_NONSENSE = [
    b"", b"null", b"[]", b"{}", b"\xff\xfe", b'{"sub": 7, "exp": 99999999999}', b'{"sub": "p_x"}',
    b'{"sub": "p_x", "exp": "99999999999"}', b'{"sub": "p_x", "exp": 1e30}',
    b'{"sub": "p_x", "exp": true}',
    b'{"sub": "p_x", "exp": 1}', b'{"sub": null, "exp": 99999999999}',
    b'{"sub": ["p_x"], "exp": 99999999999}',
]


async def test_signed_tokens_with_a_nonsense_payload_are_401(live: tuple[Api, Context]) -> None:
    """Only the holder of the secret could make these; the service must still not trip on them."""
    api, _ = live
    _, owner = await api.player()
    game_id = (await api.create(owner, "gilbert", seed=1, public=True))["game_id"]
    for payload in _SIGNED_NONSENSE:
        token = sign(payload)
        for method, path, body in [("GET", f"/v1/games/{game_id}", None),
                                   ("POST", f"/v1/games/{game_id}/commands",
                                    {"command": {"type": "draw"}})]:
            check_error(await api.request(method, path, token, json=body), 401, "unauthorized")
        messages, code = await hello_answer(api, game_id, token)
        codes = [m["error"]["code"] for m in messages]
        assert codes == ["unauthorized"] and code == 1008, (payload, messages)
    assert (await api.state(game_id))["seq"] == 0


class Target:
    """The owner's game and live socket that the tampered tokens are tried on (short repr:
    Hypothesis prints the arguments of a failing example)."""

    def __init__(self, api: Api, owner: str, game_id: str, sock: Any) -> None:
        self.api, self.owner, self.game_id, self.sock = api, owner, game_id, sock

    def __repr__(self) -> str:
        return f"Target({self.game_id})"


@pytest.fixture
async def target(live: tuple[Api, Context]) -> AsyncIterator[Target]:
    api, _ = live
    _, owner = await api.player("owner")
    game_id = (await api.create(owner, "gilbert", seed=2, public=True))["game_id"]
    sock, _ = await connect(api.session, api.base, game_id, owner)
    yield Target(api, owner, game_id, sock)
    await sock.ws.close()


@settings(max_examples=60, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(mutation=MUTATIONS)
async def test_a_tampered_token_is_401_on_every_door_and_never_another_player(
        target: Target, mutation: tuple[Any, ...]) -> None:
    api, game_id, sock = target.api, target.game_id, target.sock
    api.received.clear()
    bad = tampered(target.owner, mutation)
    header = bad.encode("utf-8").decode("latin-1")  # what arrives for any byte put there
    # Control characters but tab cannot go in a header at all (the HTTP client refuses to
    # send them): only the socket can be tried with such a token.
    sendable = not re.search(r"[\x00-\x08\x0a-\x1f\x7f]", header)
    doors = [("GET", f"/v1/games/{game_id}", None),
             ("GET", f"/v1/games/{game_id}/moves", None),
             ("POST", f"/v1/games/{game_id}/commands", {"command": {"type": "draw"}}),
             ("POST", "/v1/games", {"variant": "gate"}),
             ("PATCH", "/v1/players/me", {"name": "mallory"})] if sendable else []
    for method, path, body in doors:
        reply = await api.request(method, path, headers={"Authorization": f"Bearer {header}"},
                                  json=body)
        check_error(reply, 401, "unauthorized")
    messages, code = await hello_answer(api, game_id, bad)
    assert [m["error"]["code"] for m in messages] == ["unauthorized"], (bad, messages, code)
    assert code == 1008, (bad, messages, code)
    # On a live socket a hello with a bad token is refused, and the socket stays the owner's.
    await sock.send({"type": "hello", "token": bad, "since": 0})
    refusal = (await sock.until(lambda m: m["type"] == "error"))[-1]
    assert refusal["error"]["code"] == "unauthorized", refusal
    await sock.send({"type": "ping"})
    assert (await sock.until(lambda m: m["type"] == "pong"))[-1] == {"type": "pong"}
    sock.received.clear()
    assert (await api.state(game_id))["seq"] == 0


async def test_an_expired_token_opens_no_socket_and_a_live_socket_cannot_renew_with_it(
        redis_url: str, tmp_path: Path) -> None:
    clock = FakeClock(datetime(2026, 5, 1, 12, tzinfo=UTC))
    settings_ = settings_for_test(redis_url, tmp_path, token_ttl_s=60)
    async with running_app(settings_, clock) as (base, _), aiohttp.ClientSession() as session:
        api = Api(session, base)
        _, token = await api.player()
        game_id = (await api.create(token, "gilbert", seed=3))["game_id"]
        sock, _ = await connect(session, base, game_id, token)
        try:
            clock.advance(61)
            messages, code = await hello_answer(api, game_id, token)
            assert [m["error"]["code"] for m in messages] == ["unauthorized"] and code == 1008
            await sock.send({"type": "hello", "token": token, "since": 0})
            refusal = (await sock.until(lambda m: m["type"] == "error"))[-1]
            assert refusal["error"]["code"] == "unauthorized"
            assert "expired" in refusal["error"]["message"]
            check_error(await api.command(token, game_id, {"type": "draw"}, expect=None), 401,
                        "unauthorized")
        finally:
            await sock.ws.close()


# --- flooding --------------------------------------------------------------------------------

RATE, BURST = 5.0, 10


@pytest.fixture
async def two_limited(redis_url: str, tmp_path: Path) -> AsyncIterator[tuple[Api, Api]]:
    """Two instances on one store, each with the small limit of 5 requests/s, bursts of 10."""
    limits = {"rate_limit_per_s": RATE, "rate_limit_burst": BURST}
    async with running_app(settings_for_test(redis_url, tmp_path / "a", instance_id="a",
                                             **limits)) as (a, _), \
            running_app(settings_for_test(redis_url, tmp_path / "b", instance_id="b",
                                          **limits)) as (b, _), \
            aiohttp.ClientSession() as session:
        yield Api(session, a), Api(session, b)


def check_rate_limited(status: int, error: dict[str, Any], headers: Any = None) -> None:
    assert status == 429
    assert error["code"] == "rate_limited" and error["details"]["retry_after_s"] >= 1, error
    if headers is not None:
        assert int(headers["Retry-After"]) >= 1


async def test_the_rate_limit_holds_across_two_instances_for_rest_and_websocket_commands(
        two_limited: tuple[Api, Api], redis_url: str) -> None:
    """One player floods both instances (REST commands, socket commands, new games) at once:
    across both, no more requests get through than the bucket holds (a burst, then the rate),
    every other one is a clean 429 or rate_limited error, and only what was accepted is in the
    log."""
    a, b = two_limited
    _, flooder = await a.player("flooder")
    _, neighbour = await b.player("neighbour")
    game_id = (await a.create(flooder, "gilbert", seed=8))["game_id"]
    n_game = (await b.create(neighbour, "gilbert", seed=8))["game_id"]
    socks = [(await connect(api.session, api.base, game_id, flooder))[0] for api in (a, b)]
    await asyncio.sleep(1.0 / RATE * BURST + 0.5)  # wait out what the setup used: a full bucket

    async def rest(api: Api, i: int) -> tuple[str, int, Any]:
        if i % 5 == 4:
            reply = await api.request("POST", "/v1/games", flooder, json={"variant": "gate"})
            return "game", reply.status, reply
        reply = await api.command(flooder, game_id, {"type": "draw"}, command_id=new_command_id(),
                                  expect=None)
        return "command", reply.status, reply

    async def ws(sock: Any, n: int) -> list[tuple[str, int, Any]]:
        """``n`` commands at once through one socket (one reader: its answers, by command id)."""
        cids = [await sock.command({"type": "draw"}) for _ in range(n)]
        answers: dict[str, dict[str, Any]] = {}
        while len(answers) < n:
            m = await sock.recv()
            if m.get("command_id") in cids and m["type"] in ("ack", "error"):
                answers[m["command_id"]] = m
        return [("ws", 200 if m["type"] == "ack"
                 else 409 if m["error"]["code"] == "conflict" else 429, m)
                for m in answers.values()]

    started = time.monotonic()
    results: list[tuple[str, int, Any]] = []
    for done in await asyncio.gather(ws(socks[0], 10), ws(socks[1], 10),
                                     *(rest((a, b)[i % 2], i) for i in range(60))):
        results += done if isinstance(done, list) else [done]
    elapsed = time.monotonic() - started
    # The neighbour is not limited by the flood: its own bucket is full.
    for api in (a, b):
        await api.command(neighbour, n_game, {"type": "draw"})

    # Past the limit: accepted, or (a command racing the others on its game) a clean 409.
    passed = [r for r in results if r[1] in (200, 201, 409)]
    for what, status, reply in results:
        if status in (200, 201):
            continue
        if status == 409:
            assert (reply["error"] if what == "ws" else reply.error)["code"] == "conflict"
        elif what == "ws":
            check_rate_limited(429, reply["error"])
        else:
            check_rate_limited(status, reply.error, reply.headers)
    # GCRA: at most the burst plus what the rate refilled meanwhile (leases only ever hold some
    # back).
    allowed = BURST + RATE * elapsed
    print(f"{len(passed)} of {len(results)} let through in {elapsed:.2f} s (bucket: {allowed:.1f})")
    assert len(passed) <= allowed
    assert len(passed) >= BURST - 2  # at most one unspent lease (of 2) per instance
    accepted_commands = sum(1 for what, status, _ in results
                            if what in ("command", "ws") and status == 200)
    assert stored_game(redis_url, game_id).seq == accepted_commands
    for sock in socks:
        await sock.ws.close()


@pytest.fixture
async def two_signup_limited(redis_url: str, tmp_path: Path) -> AsyncIterator[tuple[Api, Api]]:
    """Two instances on one store, each with sign-ups limited to 5/s, bursts of 10, per
    address (the sign-up limit of its own, issue 23)."""
    limits = {"signup_per_address_rate_per_s": RATE, "signup_per_address_burst": BURST}
    async with running_app(settings_for_test(redis_url, tmp_path / "a", instance_id="a",
                                             **limits)) as (a, _), \
            running_app(settings_for_test(redis_url, tmp_path / "b", instance_id="b",
                                          **limits)) as (b, _), \
            aiohttp.ClientSession() as session:
        yield Api(session, a), Api(session, b)


async def test_creating_players_is_limited_per_address_across_two_instances(
        two_signup_limited: tuple[Api, Api]) -> None:
    a, b = two_signup_limited
    started = time.monotonic()
    replies = await asyncio.gather(*((a, b)[i % 2].request("POST", "/v1/players",
                                                           json={"name": f"bot{i}"})
                                     for i in range(40)))
    elapsed = time.monotonic() - started
    ok = [r for r in replies if r.status == 201]
    for r in replies:
        if r.status != 201:
            check_rate_limited(r.status, r.error, r.headers)
            assert r.error["details"]["limit"] == "signup_per_address_rate_per_s"
    assert BURST - 2 <= len(ok) <= BURST + RATE * elapsed


# --- a thousand connections --------------------------------------------------------------------

CONNECTIONS = 1000
AT_ONCE = 50


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


async def test_a_thousand_connections_opened_and_dropped_leave_nothing_behind(
        live: tuple[Api, Context], redis_url: str) -> None:
    """Every rude way to leave: a reset before or after hello, a close frame, half a
    handshake, a command sent and the socket dropped before its answer. Afterwards the
    instance holds no socket, no listener, no subscription, no extra file descriptor,
    and plays on."""
    api, ctx = live
    _, token = await api.player()
    games = [(await api.create(token, "gilbert", seed=i, public=True))["game_id"] for i in range(8)]
    loop = asyncio.get_running_loop()
    fds_before = open_fds()
    rng = random.Random(1000)
    kinds = ["reset before hello", "reset after hello", "close frame", "half handshake",
             "command then reset", "ping then close"]
    done: dict[str, int] = dict.fromkeys(kinds, 0)

    async def one(i: int) -> None:
        kind = kinds[i % len(kinds)]
        game_id = rng.choice(games)
        path = f"/v1/games/{game_id}/ws"
        if kind == "half handshake":
            import socket as socket_
            sock = socket_.socket()
            sock.setblocking(False)
            await loop.sock_connect(sock, ("127.0.0.1", int(api.base.rsplit(":", 1)[1])))
            await loop.sock_sendall(sock,
                                    f"GET {path} HTTP/1.1\r\nHost: x\r\nUpgrade: webs".encode())
            sock.close()
            done[kind] += 1
            return
        raw = await RawSocket.connect(api.base, path)
        try:
            if kind != "reset before hello":
                await raw.send_json({"type": "hello", "token": token} if i % 2
                                    else {"type": "hello"})
                while (await raw.recv())["type"] != "synced":
                    pass
            if kind == "command then reset":
                await raw.send_json({"type": "command", "command_id": f"k{i}",
                                     "command": {"type": "undo"}})
            if kind == "ping then close":
                await raw.send_json({"type": "ping"})
                assert (await raw.recv()) == {"type": "pong"}
            if kind in ("close frame", "ping then close"):
                await raw.send_frame(b"\x03\xe8", 0x8)
                try:
                    await raw.recv()
                except RawClosed as closed:
                    assert closed.code == 1000
        finally:
            if kind == "close frame" or kind == "ping then close":
                raw.close()
            else:
                raw.abort()
        done[kind] += 1

    for start in range(0, CONNECTIONS, AT_ONCE):
        await asyncio.gather(*(one(i) for i in range(start, min(start + AT_ONCE, CONNECTIONS))))
    assert sum(done.values()) == CONNECTIONS, done

    await wait_for(lambda: not ctx.sockets and not any(subscribers(redis_url, g) for g in games),
                   what="every socket and subscription gone")
    assert ctx.metrics.value("solitaire_websocket_connections") == 0
    await wait_for(lambda: open_fds() <= fds_before + 2,
                   what=f"the file descriptors back to {fds_before}")
    assert (await api.request("GET", "/healthz")).status == 200
    assert (await api.request("GET", "/readyz")).status == 200
    sock, hello = await connect(api.session, api.base, games[0], token)
    try:
        cid = await sock.command({"type": "draw"}, expected_seq=hello[0]["seq"])
        got = await sock.until(lambda m: m.get("command_id") == cid)
        assert got[-1]["type"] == "ack", got
    finally:
        await sock.ws.close()
    # The "command then reset" sockets sent undo on fresh games: refused, nothing written.
    assert all(stored_game(redis_url, g).seq == (1 if g == games[0] else 0) for g in games)


# --- replayed command ids ------------------------------------------------------------------------


async def test_a_replayed_command_id_is_answered_with_its_first_result_and_changes_nothing(
        live: tuple[Api, Context], redis_url: str, tmp_path: Path) -> None:
    """Replays through REST, the socket and another instance; with a stale or a future
    expected_seq, after more commands and after the game is over: the same command gets the
    first result, another command a 409 naming the first; nobody sees a diff for either, and
    the store is untouched."""
    api, _ = live
    _, token = await api.player()
    game_id = (await api.create(token, "gilbert", seed=21, public=True))["game_id"]
    watcher, _ = await connect(api.session, api.base, game_id)
    owner, _ = await connect(api.session, api.base, game_id, token)
    first: dict[str, dict[str, Any]] = {}
    for i, command in enumerate([{"type": "draw"}, {"type": "draw"}, {"type": "undo"}]):
        cid = new_command_id()
        first[cid] = (await api.command(token, game_id, command, expected_seq=i,
                                        command_id=cid)).body
    ws_cid = await owner.command({"type": "draw"}, expected_seq=3)
    got = await owner.until(lambda m: m.get("command_id") == ws_cid)
    diff = next(m for m in got if m["type"] == "diff" and m["seq"] == 4)
    first[ws_cid] = {"seq": 4, "diff": {k: v for k, v in diff.items() if k != "type"}}
    await watcher.until(lambda m: m["type"] == "diff" and m["seq"] == 4)
    before = stored_game(redis_url, game_id)

    async with running_app(settings_for_test(redis_url, tmp_path / "b",
                                             instance_id="b")) as (b_base, _):
        b = Api(api.session, b_base)
        for cid, result in first.items():
            same = result["diff"]["command"]
            other = {"type": "resign"}
            for door in (api, b):
                for expected in (None, 0, 99, result["seq"] - 1):
                    reply = await door.command(token, game_id, same, expected_seq=expected,
                                               command_id=cid)
                    assert reply.body["seq"] == result["seq"]
                    assert ({k: v for k, v in reply.body["diff"].items()
                             if k not in ("type", "at")}
                            == {k: v for k, v in result["diff"].items()
                                if k not in ("type", "at")})
                    refused = await door.command(token, game_id, other, expected_seq=expected,
                                                 command_id=cid, expect=409)
                    assert refused.error["details"] == {"command_id": cid, "command": same,
                                                        "seq": result["seq"]}
            await owner.command(same, expected_seq=0, command_id=cid)
            answer = (await owner.until(lambda m, cid=cid: m.get("command_id") == cid))[-1]
            assert answer == {"type": "ack", "command_id": cid, "seq": result["seq"]}
            await owner.command(other, expected_seq=0, command_id=cid)
            answer = (await owner.until(lambda m, cid=cid: m.get("command_id") == cid))[-1]
            assert (answer["type"], answer["error"]["code"]) == ("error", "conflict"), answer
        unchanged(before, stored_game(redis_url, game_id))

        # After the game is over, a replay still gets its first result, not "the game is over".
        resign = new_command_id()
        assert (await api.command(token, game_id, {"type": "resign"},
                                  command_id=resign)).body["seq"] == 5
        over = stored_game(redis_url, game_id)
        for cid, result in [*first.items(),
                            (resign, {"seq": 5, "diff": {"command": {"type": "resign"}}})]:
            for door in (api, b):
                reply = await door.command(token, game_id, result["diff"]["command"],
                                           command_id=cid)
                assert reply.body["seq"] == result["seq"]
                other = {"type": "draw" if result["diff"]["command"]["type"] != "draw"
                         else "undo"}
                await door.command(token, game_id, other, command_id=cid, expect=409)
        unchanged(over, stored_game(redis_url, game_id))

    # The watcher saw each applied command once, and nothing for the replays.
    seen = await watcher.until(lambda m: m["type"] == "diff" and m["seq"] == 5)
    assert [m["seq"] for m in seen if m["type"] == "diff"] == [5]
    await watcher.send({"type": "ping"})
    assert (await watcher.recv()) == {"type": "pong"}  # nothing queued behind it
    await watcher.ws.close()
    await owner.ws.close()
