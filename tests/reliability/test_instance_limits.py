"""Limits documented "per instance" hold across the instance's worker processes (issue 23,
point 6): sockets per address, watchers per game, solver searches per address.

An instance runs with ``--workers 2`` (two real processes on one port). Which worker
takes a connection is the kernel's choice; each test finds out by looking up the
connection's server side in the workers' file descriptors (tests/service/runtime/test_workers.py),
and goes on until a worker that holds fewer than the limit itself was refused: the
proof that it counted the other worker's too.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import signal
import struct
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.live import ServiceProcess
from tests.reliability.test_solver_queue import unknown_gilbert_seeds
from tests.service.helpers import Api, wait_for
from tests.service.runtime.test_workers import both_workers_listening, owner_of, workers

ATTEMPTS = 40  # each lands on either worker: 40 all on one would be a 1 in 2^39 event
CAP = 2


class Conn:
    """A raw HTTP connection pinned to one worker, for an upgrade or one request."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 worker: int) -> None:
        self.reader, self.writer, self.worker = reader, writer, worker

    async def upgrade(self, path: str) -> int:
        key = base64.b64encode(os.urandom(16)).decode()
        self.writer.write((f"GET {path} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                           "Sec-WebSocket-Version: 13\r\n\r\n").encode())
        head = await asyncio.wait_for(self.reader.readuntil(b"\r\n\r\n"), 30)
        return int(head.split()[1])

    async def get(self, path: str) -> tuple[int, Any]:
        self.writer.write(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        raw = await asyncio.wait_for(self.reader.read(), 60)
        head, _, body = raw.partition(b"\r\n\r\n")
        return int(head.split()[1]), json.loads(body)

    async def send(self, message: dict[str, Any]) -> None:
        payload = json.dumps(message).encode()
        assert len(payload) < 126
        mask = os.urandom(4)
        self.writer.write(bytes([0x81, 0x80 | len(payload)]) + mask
                          + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))
        await self.writer.drain()

    async def recv(self) -> tuple[int, bytes]:
        first, second = await asyncio.wait_for(self.reader.readexactly(2), 30)
        n = second & 0x7F
        if n == 126:
            (n,) = struct.unpack("!H", await self.reader.readexactly(2))
        elif n == 127:
            (n,) = struct.unpack("!Q", await self.reader.readexactly(8))
        return first & 0x0F, await self.reader.readexactly(n)

    def close(self) -> None:
        self.writer.close()


OPENED: list[Conn] = []  # closed after each test (the fixture)


async def connect(service: ServiceProcess, patience_s: float = 30.0) -> Conn:
    """A connection to the instance, and the worker holding it."""
    assert service.process is not None
    reader, writer = await asyncio.open_connection("127.0.0.1", service.port)
    OPENED.append(Conn(reader, writer, 0))
    port = writer.get_extra_info("sockname")[1]
    supervisor = service.process.pid

    def owner() -> int | None:
        try:  # the workers now: one killed a moment ago is being replaced
            return owner_of(port, service.port, workers(supervisor))
        except OSError:
            return None

    OPENED[-1].worker = await wait_for(owner, patience_s, "the connection's worker")
    return OPENED[-1]


@pytest.fixture(autouse=True)
async def close_connections() -> AsyncIterator[None]:
    yield
    while OPENED:
        conn = OPENED.pop()
        conn.close()
        with contextlib.suppress(OSError):
            await conn.writer.wait_closed()


@pytest.fixture
def instance(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ServiceProcess]:
    """An instance of two workers, the limit named by the test's parameter at CAP."""
    setting = request.param
    env = {"SOLITAIRE_WORKERS": "2", "SOLITAIRE_WS_PER_ADDRESS": "1000",
           "SOLITAIRE_WATCHERS_PER_GAME": "1000", "SOLITAIRE_SOLVER_SEARCHES_PER_ADDRESS": "1000",
           "SOLITAIRE_SOLVER_SEARCHES_PER_PLAYER": "1000", "SOLITAIRE_SOLUTION_SOLVE_S": "20",
           "SOLITAIRE_SOLUTION_SOLVE_NODES": str(10**12), "SOLITAIRE_" + setting.upper(): str(CAP)}
    with ServiceProcess(None, tmp_path / "svc", **env) as process:
        yield process


async def public_game(service: ServiceProcess, seed: int = 3, resign: bool = False) -> str:
    async with aiohttp.ClientSession() as session:
        api = Api(session, service.url)
        _, token = await api.player()
        game = (await api.create(token, "gilbert", seed=seed, public=True))["game_id"]
        if resign:
            await api.command(token, game, {"type": "resign"})
        return game  # type: ignore[no-any-return]


@pytest.mark.parametrize("instance", ["ws_per_address"], indirect=True)
async def test_sockets_per_address_are_counted_across_workers_and_a_killed_workers_expire(
        instance: ServiceProcess) -> None:
    await both_workers_listening(instance)
    game = await public_game(instance)
    held: list[Conn] = []
    refused_below_cap = 0
    try:
        for _ in range(ATTEMPTS):
            conn = await connect(instance)
            here = sum(c.worker == conn.worker for c in held)
            status = await conn.upgrade(f"/v1/games/{game}/ws")
            if status == 101:
                await conn.send({"type": "hello"})  # a watcher, kept open past the hello timeout
                assert (await conn.recv())[0] == 0x1
                held.append(conn)
            else:
                assert status == 429, status
                conn.close()
                refused_below_cap += here < CAP
            assert len(held) <= CAP
            if len(held) == CAP and refused_below_cap:
                break
        assert len(held) == CAP and refused_below_cap, (len(held), refused_below_cap)

        # A worker killed with its sockets: its share stops counting once its lease runs
        # out (service/domain/counts.py), and the address may open that many again.
        victim = held[0].worker
        os.kill(victim, signal.SIGKILL)
        survivors = [c for c in held if c.worker != victim]

        async def reopened() -> Conn | None:
            try:
                # A connection the kernel gave the killed worker's listener is reset: try again.
                conn = await connect(instance, patience_s=5)
                if await conn.upgrade(f"/v1/games/{game}/ws") == 101:
                    return conn
                conn.close()
            except (AssertionError, OSError, asyncio.IncompleteReadError):
                pass
            await asyncio.sleep(0.5)
            return None

        held = survivors + [await wait_for(reopened, 90, "a socket in the dead worker's place")]
    finally:
        for conn in held:
            conn.close()


@pytest.mark.parametrize("instance", ["watchers_per_game"], indirect=True)
async def test_watchers_per_game_are_counted_across_the_instances_workers(
        instance: ServiceProcess) -> None:
    await both_workers_listening(instance)
    game = await public_game(instance)
    watching: list[Conn] = []
    refused_below_cap = 0
    try:
        for _ in range(ATTEMPTS):
            conn = await connect(instance)
            here = sum(c.worker == conn.worker for c in watching)
            assert await conn.upgrade(f"/v1/games/{game}/ws") == 101
            await conn.send({"type": "hello"})
            opcode, payload = await conn.recv()
            message = json.loads(payload)
            if message["type"] == "snapshot":
                watching.append(conn)
            else:
                assert message["error"]["details"]["limit"] == "watchers_per_game", message
                conn.close()
                refused_below_cap += here < CAP
            assert len(watching) <= CAP
            if len(watching) == CAP and refused_below_cap:
                break
        assert len(watching) == CAP and refused_below_cap, (len(watching), refused_below_cap)
    finally:
        for conn in watching:
            conn.close()


@pytest.mark.parametrize("instance", ["solver_searches_per_address"], indirect=True)
async def test_solver_searches_per_address_are_counted_across_the_instances_workers(
        instance: ServiceProcess) -> None:
    pids = await both_workers_listening(instance)
    games = [await public_game(instance, seed, resign=True)
             for seed in unknown_gilbert_seeds(2 * (CAP + 1))]
    # CAP + 1 connections on each worker: one too many for a worker counting alone, so the
    # instance's limit shows only if each counts the other's searches.
    pinned: dict[int, list[Conn]] = {pid: [] for pid in pids}
    for _ in range(ATTEMPTS):
        conn = await connect(instance)
        if len(pinned[conn.worker]) <= CAP:
            pinned[conn.worker].append(conn)
        else:
            conn.close()
        if all(len(conns) == CAP + 1 for conns in pinned.values()):
            break
    conns = [conn for conns in pinned.values() for conn in conns]
    assert len(conns) == 2 * (CAP + 1), {pid: len(c) for pid, c in pinned.items()}
    replies = await asyncio.gather(*(conn.get(f"/v1/games/{game}/solution")
                                     for conn, game in zip(conns, games, strict=True)))
    statuses = sorted(status for status, _ in replies)
    # CAP searches started (answered 503 "still being searched" within the request's
    # deadline); every other one refused, saying the limit.
    assert statuses == [429] * (2 * (CAP + 1) - CAP) + [503] * CAP, (
        f"{json.dumps(replies)}\nthe service's log ends:\n{instance.log()[-3000:]}")
    for status, body in replies:
        if status == 429:
            assert body["error"]["details"]["limit"] == "solver_searches_per_address"
        else:
            assert "still being searched" in body["error"]["message"], body
