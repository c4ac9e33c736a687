"""A WebSocket client that stops reading (PROTOCOL.md "WebSocket"; service/socket/writer.py Writer).

The slow client is a raw socket with a tiny receive buffer that reads its snapshot
and then nothing more, so TCP backs up all the way to the service. Meanwhile the
owner plays hundreds of commands through another socket and a third one watches:

- the owner's commands keep being acknowledged, and the watcher gets every diff in
  order: the slow client slows nobody down;
- what the service holds for the slow client stays bounded (its outbox never holds
  more than ``ws_send_queue`` messages, its transport buffer stays small), then it is
  closed with 1013 (try again later) — and, since it does not read even its close
  frame, dropped after ``ws_close_timeout_s``: no socket, no listener, no outbox left;
- when the client reads again it finds diffs in order with no gap, then the close
  (or the end of the connection), and a reconnect with ``since`` gives it the rest.

A second test has the client resume reading right after it was judged too slow:
it then gets its close frame, with 1013.

A third has the client send pings without reading: its own answers fill its outbox,
and it is closed and dropped the same way, although it keeps the service's reader busy.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from service.context import Context
from service.socket.messages import Close
from tests.live import settings_for_test
from tests.reliability.helpers import RawSocket
from tests.service.helpers import Api, Socket, connect, running_app, wait_for
from tests.service.listening import subscribers

QUEUE = 64  # ws_send_queue for these tests: a small outbox fills sooner
MAX_COMMANDS = 6000  # a bound; the slow client is closed long before


@pytest.fixture
async def service(redis_url: str, tmp_path: Path, request: pytest.FixtureRequest
                  ) -> AsyncIterator[tuple[Api, Context]]:
    close_timeout = getattr(request, "param", 1.0)
    settings = settings_for_test(redis_url, tmp_path, ws_send_queue=QUEUE,
                                 ws_close_timeout_s=close_timeout)
    async with running_app(settings) as (base, ctx), aiohttp.ClientSession() as session:
        yield Api(session, base), ctx


def connections(ctx: Context, game_id: str) -> set[Any]:
    """The service's socket writers on a game (each is one fan-out listener's callback's
    owner: service/socket/writer.py Writer, with the socket and its outbox)."""
    from service.store import keys

    channel = ctx.games.feed._channels.get(keys.game_channel(game_id).encode())
    if channel is None:
        return set()
    return {listener.callback.__self__ for listener in channel.listeners
            if hasattr(listener.callback, "__self__")}


def subscribed(ctx: Context, game_id: str) -> bool:
    """Whether the instance is still subscribed to the game's feed: it unsubscribes when
    the game's last socket is gone."""
    assert ctx.settings.redis_url is not None
    return subscribers(ctx.settings.redis_url, game_id) > 0


class Play:
    """The owner sends draws (always legal in Gilbert: the stock turns over forever), one
    after the other, each waiting for its ack, until told to stop."""

    def __init__(self, owner: Socket) -> None:
        self.owner = owner
        self.acked = 0
        self.stop = asyncio.Event()

    async def run(self) -> None:
        for _ in range(MAX_COMMANDS):
            if self.stop.is_set():
                return
            cid = await self.owner.command({"type": "draw"}, expected_seq=self.acked)
            answer = (await self.owner.until(lambda m, cid=cid: m.get("command_id") == cid))[-1]
            assert answer == {"type": "ack", "command_id": cid, "seq": self.acked + 1}, answer
            self.acked += 1
            self.owner.received.clear()


async def watch(sock: Socket, seqs: list[int]) -> None:
    while True:
        m = await sock.recv()
        if m["type"] == "diff":
            seqs.append(m["seq"])
        sock.received.clear()


async def setup_game(api: Api, ctx: Context) -> tuple[str, Socket, Socket, RawSocket, Any]:
    """A public game, its owner's socket, a watcher's, the slow client, and the service's
    writer of the slow client's socket."""
    _, token = await api.player("owner")
    game_id = (await api.create(token, "gilbert", seed=12, public=True))["game_id"]
    owner, _ = await connect(api.session, api.base, game_id, token)
    watcher, _ = await connect(api.session, api.base, game_id)
    others = connections(ctx, game_id)
    slow = await RawSocket.connect(api.base, f"/v1/games/{game_id}/ws", rcvbuf=2048)
    await slow.send_json({"type": "hello"})
    assert (await slow.recv())["type"] == "snapshot"
    assert (await slow.recv()) == {"type": "synced", "seq": 0}
    (conn,) = connections(ctx, game_id) - others
    # The kernel would buffer up to 4 MiB for it (tcp_wmem): a small send buffer on the
    # service's side of this one connection backs TCP up after a few kilobytes instead.
    server_socket = conn.ws._req.transport.get_extra_info("socket")
    server_socket.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    return game_id, owner, watcher, slow, conn


async def play_until(play: Play, done: Callable[[], bool], what: str) -> None:
    task = asyncio.create_task(play.run())
    try:
        await wait_for(lambda: done() or task.done(), timeout=120, what=what)
        assert not task.done() or task.exception() is None, task.exception()
        assert done(), f"{MAX_COMMANDS} commands and still not {what}"
    finally:
        play.stop.set()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def test_a_client_that_stops_reading_is_closed_dropped_and_slows_nobody(
        service: tuple[Api, Context]) -> None:
    api, ctx = service
    game_id, owner, watcher, slow, conn = await setup_game(api, ctx)
    seen: list[int] = []
    watching = asyncio.create_task(watch(watcher, seen))
    play = Play(owner)
    worst = {"outbox": 0, "buffer": 0}
    transport = conn.ws._req.transport

    def sample() -> bool:
        worst["outbox"] = max(worst["outbox"], conn.outbox.qsize())
        worst["buffer"] = max(worst["buffer"], transport.get_write_buffer_size())
        return ctx.metrics.value("solitaire_websocket_slow_closed_total") >= 1

    try:
        await play_until(play, sample, "the slow client judged too slow")
        print(f"closed as slow after {play.acked} commands; outbox at most {worst['outbox']}, "
              f"transport buffer at most {worst['buffer']} bytes")
        assert worst["outbox"] <= QUEUE
        # Bounded: aiohttp stops writing while its buffer is full.
        assert worst["buffer"] <= 1024 * 1024
        # Not reading even its close frame: dropped, and nothing of it is left.
        await wait_for(lambda: conn.ws not in ctx.sockets and conn not in connections(ctx, game_id),
                       what="the slow client's socket and listener gone")
        assert len(ctx.sockets) == 2 and len(connections(ctx, game_id)) == 2
        assert transport.is_closing()
        # Meanwhile and since, the others are served: more commands, every diff to the watcher.
        more = Play(owner)
        more.acked = play.acked
        await play_until(more, lambda: more.acked >= play.acked + 20, "20 more commands acked")
        await wait_for(lambda: len(seen) >= more.acked, what="the watcher caught up")
        assert seen == list(range(1, more.acked + 1))
    finally:
        watching.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watching

    # The slow client reads at last: diffs in order from seq 1, then the end.
    messages, code = await slow.until_closed()
    slow.close()
    got = [m["seq"] for m in messages if m["type"] == "diff"]
    assert got == list(range(1, len(got) + 1)), got[:20]
    assert code in (Close.TRY_AGAIN_LATER, None)  # its close frame, or the connection's end
    # It reconnects with since and gets the rest: no gap, no duplicate.
    back, replay = await connect(api.session, api.base, game_id, since=len(got))
    replayed = [m["seq"] for m in replay if m["type"] == "diff"]
    assert replayed == list(range(len(got) + 1, more.acked + 1))
    assert replay[-1] == {"type": "synced", "seq": more.acked}
    for sock in (back, owner, watcher):
        await sock.ws.close()
    await wait_for(lambda: not ctx.sockets and not subscribed(ctx, game_id),
                   what="every socket gone, and the game's subscription")


@pytest.mark.parametrize("service", [60.0], indirect=True)
async def test_a_slow_client_that_reads_again_gets_its_close_1013(
        service: tuple[Api, Context]) -> None:
    api, ctx = service
    _game_id, owner, watcher, slow, conn = await setup_game(api, ctx)
    seen: list[int] = []
    watching = asyncio.create_task(watch(watcher, seen))
    play = Play(owner)
    try:
        await play_until(play,
                         lambda: ctx.metrics.value("solitaire_websocket_slow_closed_total") >= 1,
                         "the slow client judged too slow")
        messages, code = await slow.until_closed()
        slow.close()
        assert code == Close.TRY_AGAIN_LATER
        got = [m["seq"] for m in messages if m["type"] == "diff"]
        assert got == list(range(1, len(got) + 1))
        await wait_for(lambda: conn.ws not in ctx.sockets, what="the slow client's socket gone")
    finally:
        watching.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watching
        await owner.ws.close()
        await watcher.ws.close()


async def test_a_client_that_sends_pings_and_never_reads_is_closed_and_dropped(
        service: tuple[Api, Context]) -> None:
    # Its own answers fill its outbox as diffs would: it is judged too slow, and, not
    # reading its close frame, dropped after ws_close_timeout_s though it goes on sending.
    api, ctx = service
    _, token = await api.player("owner")
    game_id = (await api.create(token, "gilbert", seed=12, public=True))["game_id"]
    slow = await RawSocket.connect(api.base, f"/v1/games/{game_id}/ws", rcvbuf=2048)
    await slow.send_json({"type": "hello"})
    assert (await slow.recv())["type"] == "snapshot"
    (conn,) = connections(ctx, game_id)
    transport = conn.ws._req.transport
    transport.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)

    async def flood() -> None:
        with contextlib.suppress(OSError):
            while True:
                await slow.send_frame(b'{"type":"ping"}')

    flooding = asyncio.create_task(flood())
    try:
        await wait_for(lambda: ctx.metrics.value("solitaire_websocket_slow_closed_total") >= 1,
                       what="the flooding client judged too slow")
        await wait_for(lambda: conn.ws not in ctx.sockets and transport.is_closing(),
                       timeout=10, what="the flooding client dropped")
        # Dropped, not just closing: a closed transport would still wait for the client
        # to read, and hold the connection; dropped, the client's sends fail.
        await wait_for(flooding.done, what="the flood cut off")
    finally:
        flooding.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await flooding
        slow.close()
    await wait_for(lambda: not ctx.sockets and not subscribed(ctx, game_id),
                   what="every socket gone, and the game's subscription")
