"""A game socket's writer: everything the server sends on one socket, in order.

Once the socket is synced, everything goes through one bounded outbox
(service/socket/outbox.py) drained by one writer task, which keeps diffs in ``seq`` order,
fills any gap from the log, drops anything already sent, tells a rewritten log (a
failover) from a repeat by the events' hashes, resynchronises on a later hello, and
closes a consumer too slow to keep up. Messages ready at once go out in one write
(service/socket/frames.py). A command's own diff and ack, the answer the socket is
waiting for, skip the outbox when the writer is idle: the command's task writes them
itself (:meth:`Writer.answer`), in the same order and the same one write.

A command's own diff comes twice. The socket that sent a command is handed its diff
by the command (the store's reply) and by the game's feed (service/store/fanout.py),
which carries every event of the game, this instance's own too: Redis publishes to
every subscriber, the publisher's instance included. Neither copy can be left out:
the reply and the publication travel on two connections and either may come first,
and the ack must follow its diff at once. Relying on the feed alone would hold the
ack on a subscription that may be reconnecting; relying on the reply alone would still
see the feed's copy arrive after it. So the writer takes both and sends one:
:meth:`Writer.deliver` drops a second copy of the diff it queued last (the outbox's
room is for what the client will get), and the writer drops any other diff the client
has already (the feed repeats some after a reconnection too). While a command runs
the feed's items wait (:meth:`Writer.hold`), so that its copy, which often comes
before the reply, goes out with the ack in one write.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from aiohttp import WSMsgType, web

from service.context import Context
from service.domain.errors import StoreUnavailable
from service.domain.eventhash import hash_in
from service.domain.feed import Published, Resync
from service.domain.games import Loaded
from service.socket.frames import send_text_frames, text_frame, writable
from service.socket.messages import (
    Close,
    error_message,
    since_beyond,
    snapshot_message,
    synced_message,
)
from service.socket.moves import SocketMoves
from service.socket.outbox import Outbox

log = logging.getLogger(__name__)

PAGE = 1000  # events read from the log at a time
HASHES_KEPT = 256  # hashes of the latest events sent, per socket
FRAMES_PER_WRITE = 64  # messages ready at once sent in one write, at most
# The outbox holds (seq, bytes): a diff at its seq (bytes None: the feed may have missed
# some, refill), or one of these markers.
OWN = -1  # a message of its own (ack, error, pong)
RESYNC_REQUEST = -2  # a hello on a live socket (bytes: its since, or b"")


class Writer:
    __slots__ = ("_closer", "_held", "_queued_event", "_queued_seq", "closing", "ctx",
                 "game_id", "hashes", "last_seq", "moves", "outbox", "task", "transport", "ws")

    def __init__(self, ctx: Context, ws: web.WebSocketResponse, game_id: str) -> None:
        self.ctx = ctx
        self.ws = ws
        self.game_id = game_id
        self.transport: asyncio.Transport | None = None  # the connection's, to drop it
        self.closing = False  # the socket is closing: nothing more is queued
        self.last_seq = 0  # the last diff this client has
        self.hashes: dict[int, bytes] = {}  # seq -> hash of the recent events this client has
        self.outbox: Outbox[tuple[int, bytes | None]] = Outbox(ctx.settings.ws_send_queue)
        self.moves = SocketMoves(ctx.games, game_id)
        self.task: asyncio.Task[None] | None = None
        self._closer: asyncio.Task[None] | None = None
        self._queued_seq, self._queued_event = 0, b""  # the diff last handed to the outbox
        self._held: list[Published | Resync] | None = None  # the feed's, during a command

    # --- what the socket's other parts call -------------------------------------------
    def deliver(self, seq: int, event: bytes | None) -> None:
        """A diff for this game (``event`` None: the feed may have missed some; refill).
        A second copy of the diff queued last is dropped (the module's docstring says
        why a command's diff comes twice)."""
        if event is not None:
            if seq == self._queued_seq and event == self._queued_event:
                return
            self._queued_seq, self._queued_event = seq, event
        self._put(seq, event)

    def from_feed(self, item: Published | Resync) -> None:
        """The game's feed (the callback of the hub's listener)."""
        if self._held is not None:  # a command of this socket is running: see hold()
            self._held.append(item)
            return
        if isinstance(item, Published):
            self.deliver(item.seq, item.event)
        else:
            self.deliver(0, None)

    def hold(self) -> None:
        """A command of this socket runs: the feed's items wait until :meth:`release`, to
        go out with the command's own diff and ack, in one write (the feed often brings
        that diff before the store's reply does)."""
        self._held = []

    def release(self) -> None:
        """The command is answered (or failed): queue what the feed brought meanwhile."""
        held, self._held = self._held, None
        if held:
            for item in held:
                self.from_feed(item)

    def answer(self, seq: int, event: bytes, ack: bytes) -> None:
        """A command of this socket was applied: its diff (``event`` at ``seq``), then
        its ``ack``. When the writer is idle (nothing queued, nothing held but the feed's
        copies of this diff or of the last one), the diff is the client's next and the
        socket can be written at once, they are written here and now, in one write, as
        the writer would have written them: no hand-over to its task, which costs a
        wake-up and a loop turn per command. Otherwise they are queued for it as any
        other message."""
        held = self._held
        transport = writable(self.ws, self.transport)
        if (transport is not None and self.outbox.idle and not self.closing
                and seq == self.last_seq + 1 and (not held or self._copies(held, seq, event))):
            self._held = None
            self._queued_seq, self._queued_event = seq, event
            self.last_seq = seq
            self._sent(seq, event)
            moves = self.moves.due(seq)
            frames = (text_frame(event) + text_frame(ack) if moves is None
                      else text_frame(event) + text_frame(moves) + text_frame(ack))
            transport.write(frames)
            return
        self.release()
        self.deliver(seq, event)
        self.send(ack)

    def _copies(self, held: list[Published | Resync], seq: int, event: bytes) -> bool:
        """Whether the feed's ``held`` items are all copies of the diff ``event`` at ``seq``
        or of the diff queued last (:meth:`deliver` would drop them)."""
        last_seq, last_event = self._queued_seq, self._queued_event
        for item in held:
            if type(item) is not Published:
                return False
            if not ((item.seq == seq and item.event == event)
                    or (item.seq == last_seq and item.event == last_event)):
                return False
        return True

    def send(self, message: bytes) -> None:
        self._put(OWN, message)

    def resync(self, since: int | None) -> None:
        """A hello on a live socket: replay from ``since`` (without: a snapshot), in turn."""
        self._put(RESYNC_REQUEST, b"" if since is None else str(since).encode())

    def _put(self, seq: int, item: bytes | None) -> None:
        if self.closing:
            return
        try:
            self.outbox.put_nowait((seq, item))
        except asyncio.QueueFull:
            self.too_slow()

    def too_slow(self) -> None:
        """Close the socket of a client that does not read what it is sent (1013)."""
        if self.closing:
            return
        self.ctx.metrics.ws_closed_slow.inc()
        self.closing = True
        log.info("closing a slow WebSocket on game %s: %d messages queued", self.game_id,
                 self.outbox.qsize())
        self._closer = asyncio.ensure_future(self._close_slow())

    async def _close_slow(self) -> None:
        # The close frame waits behind everything the client has not read: a client that
        # reads nothing would hold this connection (and its outbox) for ever. Give it
        # ws_close_timeout_s to read up to its close frame and answer, then drop it. The
        # drop is due whatever close() does meanwhile: it may return early (the socket is
        # closed under it when its reader stops), leaving a transport that is closing
        # but still waits for the unread bytes to go out, its connection held for ever.
        timeout = self.ctx.settings.ws_close_timeout_s
        if self.transport is not None:
            asyncio.get_running_loop().call_later(timeout, self.transport.abort)
        with contextlib.suppress(Exception):
            async with asyncio.timeout(timeout):
                await self.ws.close(code=Close.TRY_AGAIN_LATER,
                                    message=b"too slow: reconnect with since")

    # --- the first sync, before the writer runs -----------------------------------------
    async def sync(self, since: int | None, loaded: Loaded) -> None:
        """Bring the client from its hello's ``since`` (or from nothing: a snapshot of
        ``loaded``) to the game's seq, then ``synced``. The feed is subscribed already:
        nothing published meanwhile can be missed."""
        if since is not None and loaded.seq - since <= self.ctx.settings.replay_max_diffs:
            self.last_seq = since
            await self._refill()
        else:
            self.last_seq = loaded.seq
            self.hashes[loaded.seq] = loaded.hash.encode()
            await self.ws.send_frame(snapshot_message(self.ctx, loaded), WSMsgType.TEXT)
            # The snapshot was read before the subscription: a command appended in
            # between was not published to us. The writer reads the log after it first.
            self.deliver(0, None)
        await self.ws.send_frame(synced_message(self.last_seq), WSMsgType.TEXT)
        moves = self.moves.due(self.last_seq, after_synced=True)
        if moves is not None:
            await self.ws.send_frame(moves, WSMsgType.TEXT)

    # --- the writer task ------------------------------------------------------------------
    def start(self) -> None:
        self.task = asyncio.create_task(self._write_loop())

    async def stop(self) -> None:
        self.closing = True
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.task

    async def _write_loop(self) -> None:
        try:
            await self._write()
        except (asyncio.CancelledError, ConnectionResetError):
            raise
        except Exception as exc:  # e.g. the store went away during a refill
            # A writer that died would leave a socket that never sends again: close it
            # instead, and the client reconnects with since. A store that is down or
            # refusing (loading, ...) is a fault the service survives: one line, no traceback.
            if isinstance(exc, StoreUnavailable):
                log.info("WebSocket writer on game %s: %s; closing with %d", self.game_id, exc,
                         Close.TRY_AGAIN_LATER)
            else:
                log.info("WebSocket writer on game %s failed; closing with %d", self.game_id,
                         Close.TRY_AGAIN_LATER, exc_info=True)
            self.closing = True
            await self.ws.close(code=Close.TRY_AGAIN_LATER,
                                message=b"store unavailable: reconnect with since")
        finally:
            self.outbox.close()  # a reader waiting for room does not wait for a writer gone

    async def _write(self) -> None:
        # The messages ready at once (a command's diff and its ack, the moves after a
        # diff) go out together, in one write (service/socket/frames.py); anything that reads
        # the store or sends on its own first sends what is ready.
        ready: list[bytes] = []
        outbox = self.outbox
        while True:
            if ready and (outbox.empty() or len(ready) >= FRAMES_PER_WRITE):
                await send_text_frames(self.ws, self.transport, ready)
                ready = []
            seq, item = await outbox.get()
            if seq == RESYNC_REQUEST:
                assert item is not None
                await send_text_frames(self.ws, self.transport, ready)
                ready = []
                await self._resync(int(item) if item else None)
            elif seq < 0:  # a message of its own (ack, error, pong)
                assert item is not None
                ready.append(item)
            elif item is not None and seq == self.last_seq + 1:
                ready.append(item)
                self.last_seq = seq
                self._sent(seq, item)
            elif item is None or seq > self.last_seq + 1:
                await send_text_frames(self.ws, self.transport, ready)
                ready = []
                await self._refill()  # a gap, or the feed may have missed some: the log has them
            elif self._rewritten(seq, item):
                # A different event at a seq this client holds: the log was rolled back and
                # written again (a failover). Its state is not the server's: start it afresh.
                await send_text_frames(self.ws, self.transport, ready)
                ready = []
                await self._snapshot()
            # else seq <= last_seq: this client has it already
            moves = self.moves.due(self.last_seq)
            if moves is not None:
                ready.append(moves)

    def _sent(self, seq: int, event: bytes) -> None:
        """Remember the hash of each recent event sent (to tell a rewritten log)."""
        digest = hash_in(event)
        if digest is not None:
            self.hashes[seq] = digest
            self.hashes.pop(seq - HASHES_KEPT, None)
        self.moves.follow(seq, event)

    def _rewritten(self, seq: int, event: bytes) -> bool:
        held = self.hashes.get(seq)
        return held is not None and hash_in(event) not in (None, held)

    async def _snapshot(self) -> None:
        loaded = await self.ctx.games.load(self.game_id)
        log.warning("game %s: the log was rewritten under a live socket (a failover?); "
                    "sending a fresh snapshot at seq %d", self.game_id, loaded.seq)
        await self._send_snapshot(loaded)

    async def _send_snapshot(self, loaded: Loaded) -> None:
        """Send ``loaded`` as a snapshot: the client starts afresh from its seq."""
        self.hashes.clear()
        self.last_seq = loaded.seq
        self.hashes[loaded.seq] = loaded.hash.encode()
        self.moves.reset(loaded)
        await self.ws.send_frame(snapshot_message(self.ctx, loaded), WSMsgType.TEXT)

    async def _refill(self) -> None:
        """Send every event of the log after ``last_seq``, a page at a time."""
        while True:
            page = await self.ctx.games.events(self.game_id, self.last_seq, PAGE)
            for raw in page:
                await self.ws.send_frame(raw, WSMsgType.TEXT)
                self.last_seq += 1
                self._sent(self.last_seq, raw)
            if len(page) < PAGE:
                return

    async def _resync(self, since: int | None) -> None:
        """A hello on a live socket: replay what followed ``since`` (or send a snapshot
        when that is more than ``replay_max_diffs``, or when there is no ``since``), then
        ``synced``."""
        await self.moves.update()
        if since is not None and since > self.last_seq:
            await self._refill()  # the log may be ahead of what this socket has sent
            if since > self.last_seq:
                await self.ws.send_frame(error_message(since_beyond(since, self.last_seq)),
                                         WSMsgType.TEXT)
                return
        if since is None or self.last_seq - since > self.ctx.settings.replay_max_diffs:
            await self._send_snapshot(await self.ctx.games.load(self.game_id))
        else:
            self.last_seq = since
        await self._refill()
        await self.ws.send_frame(synced_message(self.last_seq), WSMsgType.TEXT)
        moves = self.moves.due(self.last_seq, after_synced=True)
        if moves is not None:
            await self.ws.send_frame(moves, WSMsgType.TEXT)
