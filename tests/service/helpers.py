"""Helpers for the service tests: a thin REST client, a WebSocket client, random play.

Both clients talk to a real running instance (``tests.live.running_service``)
over loopback, like any thin client; each can record every byte the service
sent (``Api.received`` / ``Socket.received``) for the hidden-information checks.
Waiting is always for a condition, with a generous timeout: never a sleep
followed by an assertion.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import json
import random
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import msgspec
from aiohttp import web

from protocol.apply import apply_diff
from protocol.codec import decode_diff, decode_game_state
from protocol.diffs import GameState
from service.app import create_app
from service.context import CONTEXT, Context
from service.runtime.clock import Clock
from service.settings import Settings
from service.web.connections import app_runner
from tests.live import free_port

VARIANTS = ("gilbert", "shamrocks", "gate", "caprice")
# Every variant, and every option that changes how it plays.
CONFIGS: list[tuple[str, dict[str, Any]]] = [
    ("gilbert", {}), ("shamrocks", {}), ("gate", {}), ("gate", {"single_card_moves": True}),
    ("caprice", {}),
]
WAIT_S = 30.0  # generous: a condition that holds arrives long before this
REQUEST_S = 120.0  # the longest any request of a test may take (a solver's hint included)

_ids = itertools.count(1)


def new_command_id() -> str:
    return f"c{next(_ids)}-{random.getrandbits(32):08x}"


def ws_url(base: str, game_id: str) -> str:
    return base.replace("http://", "ws://", 1) + f"/v1/games/{game_id}/ws"


def bearer(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


@dataclass
class Reply:
    status: int
    raw: bytes
    headers: Any

    @property
    def body(self) -> Any:
        return json.loads(self.raw) if self.raw else None

    @property
    def error(self) -> dict[str, Any]:
        """The ``error`` object, after checking the contract's error shape."""
        body = self.body
        assert set(body) == {"error"}, body
        err = body["error"]
        assert set(err) == {"code", "message", "details"}, err
        assert isinstance(err["code"], str) and isinstance(err["message"], str) and err["message"]
        assert isinstance(err["details"], dict)
        return err  # type: ignore[no-any-return]


def check_error(reply: Reply, status: int, code: str) -> dict[str, Any]:
    """The ``error`` of a ``status`` answer in the contract's JSON shape, with ``code``."""
    assert reply.status == status, (reply.status, reply.raw)
    assert reply.headers["Content-Type"].startswith("application/json")
    err = reply.error
    assert err["code"] == code, err
    return err


@dataclass
class Api:
    """Calls the service like a thin client; ``received`` keeps every body it got."""

    session: aiohttp.ClientSession
    base: str
    received: list[bytes] = field(default_factory=list)

    async def request(
        self,
        method: str,
        path: str,
        token: str | None = None,
        expect: int | None = None,
        *,
        headers: dict[str, str] | None = None,
        **kwargs: Any,
    ) -> Reply:
        all_headers = {**bearer(token), **(headers or {})}
        # An answer (or a failure) within REQUEST_S, waiting for a free connection
        # included: a test never waits on a request with no deadline.
        kwargs.setdefault("timeout", aiohttp.ClientTimeout(total=REQUEST_S))
        async with self.session.request(
            method, self.base + path, headers=all_headers, **kwargs
        ) as r:
            raw = await r.read()
            reply = Reply(r.status, raw, r.headers)
        self.received.append(raw)
        if expect is not None:
            assert reply.status == expect, (method, path, reply.status, raw[:500])
        return reply

    async def player(self, name: str = "ann") -> tuple[str, str]:
        body = (await self.request("POST", "/v1/players", json={"name": name}, expect=201)).body
        return body["player_id"], body["token"]

    async def create(self, token: str, variant: str, seed: int | None = None,
                     options: dict[str, Any] | None = None, public: bool = False) -> dict[str, Any]:
        req: dict[str, Any] = {"variant": variant}
        if seed is not None:
            req["seed"] = seed
        if options is not None:
            req["options"] = options
        if public:
            req["public"] = True
        body = (await self.request("POST", "/v1/games", token, 201, json=req)).body
        return body  # type: ignore[no-any-return]

    async def state(self, game_id: str, token: str | None = None) -> dict[str, Any]:
        return (await self.request("GET", f"/v1/games/{game_id}", token, 200)).body  # type: ignore[no-any-return]

    async def moves(self, game_id: str, token: str | None = None) -> dict[str, Any]:
        return (await self.request("GET", f"/v1/games/{game_id}/moves", token, 200)).body  # type: ignore[no-any-return]

    async def events(
        self, game_id: str, token: str | None = None, after: int | None = None
    ) -> list[Any]:
        """The whole log after ``after``, page by page (``next_after``)."""
        out: list[Any] = []
        while True:
            params = {} if after is None else {"after": str(after)}
            body = (
                await self.request("GET", f"/v1/games/{game_id}/events", token, 200, params=params)
            ).body
            out += body["events"]
            if body["next_after"] is None:
                return out
            after = body["next_after"]

    async def command(self, token: str | None, game_id: str, command: dict[str, Any],
                      expected_seq: int | None = None, command_id: str | None = None,
                      expect: int | None = 200) -> Reply:
        req: dict[str, Any] = {"command": command}
        if expected_seq is not None:
            req["expected_seq"] = expected_seq
        if command_id is not None:
            req["command_id"] = command_id
        return await self.request("POST", f"/v1/games/{game_id}/commands", token, expect, json=req)


class Closed(Exception):
    """The server closed the socket; ``code`` is its close code."""

    def __init__(self, code: int | None) -> None:
        super().__init__(f"closed with {code}")
        self.code = code


@dataclass
class Socket:
    """One client WebSocket on a game; ``received`` keeps every message the server sent."""

    ws: aiohttp.ClientWebSocketResponse
    received: list[bytes] = field(default_factory=list)

    async def send(self, message: dict[str, Any] | str | bytes) -> None:
        if isinstance(message, bytes):
            await self.ws.send_bytes(message)
        elif isinstance(message, str):
            await self.ws.send_str(message)
        else:
            await self.ws.send_str(json.dumps(message))

    async def recv(self, timeout: float = WAIT_S) -> dict[str, Any]:
        msg = await self.ws.receive(timeout=timeout)
        if msg.type in (
            aiohttp.WSMsgType.CLOSE,
            aiohttp.WSMsgType.CLOSING,
            aiohttp.WSMsgType.CLOSED,
        ):
            raise Closed(self.ws.close_code)
        assert msg.type is aiohttp.WSMsgType.TEXT, msg
        raw = msg.data.encode() if isinstance(msg.data, str) else msg.data
        self.received.append(raw)
        return json.loads(raw)  # type: ignore[no-any-return]

    async def hello(
        self, token: str | None = None, since: int | None = None
    ) -> list[dict[str, Any]]:
        """Send hello; every message up to and including ``synced``."""
        message: dict[str, Any] = {"type": "hello"}
        if token is not None:
            message["token"] = token
        if since is not None:
            message["since"] = since
        await self.send(message)
        return await self.until(lambda m: m["type"] == "synced")

    async def until(self, done: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
        """Every message up to and including the first one ``done`` accepts."""
        out = []
        while True:
            m = await self.recv()
            out.append(m)
            if done(m):
                return out

    async def command(self, command: dict[str, Any], expected_seq: int | None = None,
                      command_id: str | None = None) -> str:
        cid = command_id or new_command_id()
        message: dict[str, Any] = {"type": "command", "command_id": cid, "command": command}
        if expected_seq is not None:
            message["expected_seq"] = expected_seq
        await self.send(message)
        return cid

    async def closed(self, timeout: float = WAIT_S) -> tuple[list[dict[str, Any]], int | None]:
        """Every message until the server closes; and the close code."""
        out = []
        while True:
            try:
                out.append(await self.recv(timeout))
            except Closed as c:
                return out, c.code


@contextlib.asynccontextmanager
async def socket(session: aiohttp.ClientSession, base: str, game_id: str) -> AsyncIterator[Socket]:
    async with session.ws_connect(ws_url(base, game_id), autoping=True, max_msg_size=0) as ws:
        yield Socket(ws)


async def connect(session: aiohttp.ClientSession, base: str, game_id: str, token: str | None = None,
                  since: int | None = None) -> tuple[Socket, list[dict[str, Any]]]:
    """A socket past its hello (the caller closes ``sock.ws``)."""
    ws = await session.ws_connect(ws_url(base, game_id), max_msg_size=0)
    sock = Socket(ws)
    return sock, await sock.hello(token, since)


@contextlib.asynccontextmanager
async def running_app(
    settings: Settings, clock: Clock | None = None
) -> AsyncIterator[tuple[str, Context]]:
    """As ``tests.live.running_service``, and also the instance's Context (to reach inside it)."""
    port = free_port()
    app = create_app(dataclasses.replace(settings, port=port), clock=clock)
    runner = app_runner(app, shutdown_timeout=2.0)
    await runner.setup()
    try:
        await web.TCPSite(runner, "127.0.0.1", port).start()
        yield f"http://127.0.0.1:{port}", app[CONTEXT]
    finally:
        await runner.cleanup()


# --- states and diffs -------------------------------------------------------------------


def game_state(body: Any) -> GameState:
    """A GET /v1/games/{id} body (or a snapshot's state) as the contract's Struct."""
    return decode_game_state(json.dumps(body))


def apply(state: GameState, diff: Any) -> GameState:
    """``diff`` (a REST diff or a WebSocket diff message, as JSON) applied to ``state``."""
    data = {k: v for k, v in diff.items() if k != "type"}
    return apply_diff(state, decode_diff(json.dumps(data)))


def same_state(a: GameState, b: GameState) -> bool:
    return msgspec.to_builtins(a) == msgspec.to_builtins(b)  # type: ignore[no-any-return]


# --- play ---------------------------------------------------------------------------------


async def play_random(api: Api, token: str, game_id: str, steps: int, rng: random.Random,
                      undo_every: int = 0) -> list[dict[str, Any]]:
    """Play up to ``steps`` legal commands picked from /moves (and undo every
    ``undo_every``-th step); the REST results ``{"seq", "diff"}`` in order."""
    results = []
    for step in range(steps):
        moves = await api.moves(game_id, token)
        options = list(moves["moves"])
        if undo_every and step % undo_every == undo_every - 1 and moves["can_undo"]:
            options = [{"type": "undo"}]
        if not options:
            break
        command = rng.choice(options)
        reply = await api.command(token, game_id, command, expected_seq=moves["seq"],
                                  command_id=new_command_id())
        results.append(reply.body)
    return results


def wait_for_file(path: str) -> None:
    """A job that holds a solver worker until ``path`` exists (runs in a worker process):
    the pool busy for as long as a test needs."""
    deadline = time.monotonic() + 120
    while not Path(path).exists() and time.monotonic() < deadline:
        time.sleep(0.02)


async def wait_for(
    condition: Callable[[], Any], timeout: float = WAIT_S, what: str = "a condition"
) -> Any:
    """Poll an async (or plain) ``condition`` until it returns something truthy."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = condition()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return value
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        await asyncio.sleep(0.05)
