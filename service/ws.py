"""The WebSocket of a game: ``GET /v1/games/{id}/ws`` (PROTOCOL.md).

A connection goes through explicit states: ``hello`` (waiting for the first
message, 5 s at most), ``syncing`` (snapshot or missed diffs), ``live``.
Everything the server sends goes through one bounded outbox drained by one
writer task, which keeps diffs in ``seq`` order, fills any gap from the log,
drops anything already sent, and closes a consumer too slow to keep up.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
from time import perf_counter

import msgspec
from aiohttp import WSMsgType, web

from protocol.codec import command_id_in, decode_client_message, encode
from protocol.errors import bad_request_from, error_info
from protocol.ws import (
    Ack,
    CloseCode,
    CommandMessage,
    ErrorMessage,
    Hello,
    Ping,
    Pong,
    Snapshot,
    Synced,
)
from service.addresses import client_address
from service.context import Context, context
from service.deadline import deadline
from service.errors import ApiError, to_api_error
from service.eventhash import hash_in
from service.frames import send_text_frames
from service.games import Loaded
from service.moves import MovesFeed
from service.outbox import Outbox
from service.ratelimit import Bucket
from service.store.errors import StoreError, StoreUnavailable
from service.store.fanout import Published, Resync
from service.wire import engine_command

log = logging.getLogger("service.ws")

Close = CloseCode  # the contract's close codes, by the name the service and its tests use


REASON_MAX_BYTES = 123  # a close frame's reason (RFC 6455: 125 bytes of payload, 2 for the code)


def close_reason(text: str) -> bytes:
    """``text`` as a close reason: at most 123 bytes, cut between characters (a reason
    cut inside a UTF-8 sequence is invalid, and the client sees an error, not the code)."""
    return text.encode()[:REASON_MAX_BYTES].decode("utf-8", "ignore").encode()


class State(enum.Enum):
    HELLO = "hello"
    SYNCING = "syncing"
    LIVE = "live"
    CLOSING = "closing"


_PONG = encode(Pong())
_PAGE = 1000  # events read from the log at a time
_HASHES_KEPT = 256  # hashes of the latest events sent, per socket
_FRAMES_PER_WRITE = 64  # messages ready at once sent in one write, at most
_RESYNC_REQUEST = -2  # outbox marker: a hello on a live socket


def too_big(max_bytes: int) -> ApiError:
    """What a client is told of a message over the size limit, before the 1009 close."""
    return ApiError("bad_request", f"the message is larger than {max_bytes} bytes, the most "
                    "a message may be (the max_ws_message_bytes setting): the socket closes "
                    "with 1009; reconnect, with since, and send smaller messages",
                    {"limit": "max_ws_message_bytes", "max_bytes": max_bytes})


class GameSocket(web.WebSocketResponse):
    """aiohttp's server socket, which says why before it closes with 1009. aiohttp closes
    it itself on reading a message over ``max_msg_size`` (and only then hands the service
    the error): the ``error`` message goes out first, from :meth:`close`."""

    def __init__(self, *, max_msg_size: int, heartbeat: float) -> None:
        super().__init__(compress=False, max_msg_size=max_msg_size, heartbeat=heartbeat,
                         decode_text=False)
        self.max_msg_size = max_msg_size

    async def close(self, *, code: int = Close.NORMAL, message: bytes = b"",
                    drain: bool = True) -> bool:
        if code == Close.MESSAGE_TOO_BIG and not self.closed:
            err = too_big(self.max_msg_size)
            with contextlib.suppress(Exception):  # the client may be gone already
                await self.send_frame(error_message(err), WSMsgType.TEXT)
            message = message or close_reason(err.message)
        return await super().close(code=code, message=message, drain=drain)


def error_message(err: ApiError, command_id: str | None = None) -> bytes:
    """The ``error`` message of ``err``; ``command_id`` when it answers a command."""
    return encode(ErrorMessage(command_id=msgspec.UNSET if command_id is None else command_id,
                               error=error_info(err.code, err.message, err.details)))


def snapshot_message(ctx: Context, loaded: Loaded) -> bytes:
    return encode(Snapshot(seq=loaded.seq, state=ctx.games.state(loaded)))


def synced_message(seq: int) -> bytes:
    return encode(Synced(seq=seq))


class Connection:
    """One client socket on one game."""

    def __init__(self, ctx: Context, ws: web.WebSocketResponse, game_id: str,
                 address: str = "") -> None:
        self.ctx = ctx
        self.ws = ws
        self.game_id = game_id
        self.address = address  # the client's, for the per-address limits
        self.state = State.HELLO
        self.player: str | None = None
        self.token_expires: int | None = None  # the socket's token stops commanding then
        self.watching = False  # counted among the game's watchers (ctx.counts)
        settings = ctx.settings
        self.hellos = Bucket(settings.hello_rate_per_s, settings.hello_burst,
                             "hellos on this socket", setting="hello_rate_per_s")
        self.last_seq = 0  # the last diff this client has
        self.hashes: dict[int, bytes] = {}  # seq -> hash of the recent events this client has
        self.outbox: Outbox[tuple[int, bytes | None]] = Outbox(ctx.settings.ws_send_queue)
        self.writer: asyncio.Task[None] | None = None
        self.transport: asyncio.Transport | None = None  # the connection's, to drop it
        self._closer: asyncio.Task[None] | None = None
        self.wants_moves = False  # the latest hello said "moves": true
        self.moves: MovesFeed | None = None  # the game at last_seq, while moves are wanted
        self.moves_sent = -1  # the seq of the latest moves message sent
        self._queued_seq, self._queued_event = 0, b""  # the diff last handed to the outbox
        self._held: list[Published | Resync] | None = None  # the feed's, during a command

    # --- what others call --------------------------------------------------------
    def deliver(self, seq: int, event: bytes | None) -> None:
        """A diff for this game (``event`` None: the feed may have missed some; refill).

        A command's own socket is handed its diff twice, by the command and by the feed
        (which carries every event of the game, this instance's too): the second copy of
        the diff just queued is dropped here. Any other repeat goes to the writer, which
        tells a diff the client has from a rewritten one."""
        if event is not None:
            if seq == self._queued_seq and event == self._queued_event:
                return
            self._queued_seq, self._queued_event = seq, event
        self._put(seq, event)

    def _from_hub(self, item: Published | Resync) -> None:
        if self._held is not None:  # a command of this socket is running: see _on_command
            self._held.append(item)
            return
        if isinstance(item, Published):
            self.deliver(item.seq, item.event)
        else:
            self.deliver(0, None)

    def send(self, message: bytes) -> None:
        self._put(-1, message)

    def _put(self, seq: int, item: bytes | None) -> None:
        if self.state is State.CLOSING:
            return
        try:
            self.outbox.put_nowait((seq, item))
        except asyncio.QueueFull:
            self.ctx.metrics.ws_closed_slow.inc()
            self.state = State.CLOSING
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

    # --- the writer ----------------------------------------------------------------
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
            self.state = State.CLOSING
            await self.ws.close(code=Close.TRY_AGAIN_LATER,
                                message=b"store unavailable: reconnect with since")

    async def _write(self) -> None:
        # The messages ready at once (a command's diff and its ack, the moves after a
        # diff) go out together, in one write (service/frames.py); anything that reads
        # the store or sends on its own first sends what is ready.
        ready: list[bytes] = []
        outbox = self.outbox
        while True:
            if ready and (outbox.empty() or len(ready) >= _FRAMES_PER_WRITE):
                await send_text_frames(self.ws, self.transport, ready)
                ready = []
            seq, item = await outbox.get()
            if seq == _RESYNC_REQUEST:
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
            moves = self._moves_due()
            if moves is not None:
                ready.append(moves)

    def _sent(self, seq: int, event: bytes) -> None:
        """Remember the hash of each recent event sent (to tell a rewritten log)."""
        digest = hash_in(event)
        if digest is not None:
            self.hashes[seq] = digest
            self.hashes.pop(seq - _HASHES_KEPT, None)
        if self.moves is not None:
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
        self._moves_from(loaded)
        await self.ws.send_frame(snapshot_message(self.ctx, loaded), WSMsgType.TEXT)

    async def _refill(self) -> None:
        """Send every event of the log after ``last_seq``, a page at a time."""
        while True:
            page = await self.ctx.games.events(self.game_id, self.last_seq, _PAGE)
            for raw in page:
                await self.ws.send_frame(raw, WSMsgType.TEXT)
                self.last_seq += 1
                self._sent(self.last_seq, raw)
            if len(page) < _PAGE:
                return

    async def _resync(self, since: int | None) -> None:
        """A hello on a live socket: replay what followed ``since`` (or send a snapshot
        when that is more than ``replay_max_diffs``, or when there is no ``since``), then
        ``synced``."""
        await self._moves_wanted()
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
        moves = self._moves_due(after_synced=True)
        if moves is not None:
            await self.ws.send_frame(moves, WSMsgType.TEXT)

    # --- moves: a hello with "moves": true (service/moves.py) -------------------------
    # Anyone who may hold the socket may ask: the readers GET /moves answers too.
    async def _moves_wanted(self) -> None:
        """A later hello turned moves on (then read the game: the resync that follows
        brings it to the socket's seq) or off."""
        if self.wants_moves and self.moves is None:
            self.moves = MovesFeed(self.ctx.games, await self.ctx.games.load(self.game_id))
        elif not self.wants_moves:
            self.moves = None

    def _moves_from(self, loaded: Loaded) -> None:
        """A snapshot was sent: the moves follow from its state."""
        if self.moves is not None:
            self.moves.reset(loaded)
            self.moves_sent = -1  # even at the same seq: the state may differ (a failover)

    def _moves_due(self, after_synced: bool = False) -> bytes | None:
        """The ``moves`` message at the socket's seq, when one is due: after ``synced``,
        and once after the diff of each later seq (none when no diff was sent since the
        last one). The caller sends it."""
        feed = self.moves
        if feed is None or (self.moves_sent == self.last_seq and not after_synced):
            return None
        if feed.seq != self.last_seq:  # every diff sent goes through _sent: cannot happen
            log.warning("game %s: moves at seq %d, the socket at %d; not sent", self.game_id,
                        feed.seq, self.last_seq)
            return None
        self.moves_sent = feed.seq
        return feed.message()

    # --- the session -----------------------------------------------------------------
    async def run(self) -> None:
        ctx = self.ctx
        while True:
            hello = await self._receive_hello()
            if hello is None:
                return
            try:
                self.hellos.take()
                assert ctx.read_limiter is not None
                async with deadline(ctx.settings.request_deadline_s):
                    await ctx.read_limiter.check("read:" + self.address)
                    # An empty token is a bad token (401), not a watcher's missing one.
                    self.player, self.token_expires = (ctx.tokens.verify_until(hello.token)
                                                       if hello.token is not None else (None, None))
                    loaded = await ctx.games.load(self.game_id)
                ctx.games.check_read(loaded, self.player)
                if hello.since is not None and hello.since > loaded.seq:
                    # Not a refusal: the socket stays open for a correct hello.
                    await self.ws.send_frame(error_message(since_beyond(hello.since, loaded.seq)),
                                             WSMsgType.TEXT)
                    continue
                await self._watch(loaded)
                if hello.moves:
                    self.wants_moves, self.moves = True, MovesFeed(ctx.games, loaded)
            except Exception as exc:  # noqa: BLE001
                await self._refuse(exc)
                return
            break
        self.state = State.SYNCING
        try:
            # The feed goes straight into this connection's outbox, from the moment
            # the subscription exists.
            async with ctx.hub.listen(self.game_id, callback=self._from_hub):
                await self._live(hello, loaded)
        except StoreError as exc:  # the store went away before the socket was live
            if self.state is State.SYNCING:
                await self._refuse(exc)
            else:
                raise

    async def _watch(self, loaded: Loaded) -> None:
        """Count this socket among the game's watchers (anyone but the owner) on this
        instance, or 429."""
        if self.watching or (self.player is not None and self.player == loaded.owner):
            return
        cap = self.ctx.settings.watchers_per_game
        async with deadline(self.ctx.settings.request_deadline_s):
            full = await self.ctx.counts.take([(watching(self.game_id), cap)])
        if full is not None:
            raise ApiError("rate_limited", f"this game has {full.held} watchers on this "
                           f"instance, at most {cap} (watchers_per_game); retry in 30 s",
                           {"limit": "watchers_per_game"}, retry_after_s=30)
        self.watching = True

    async def unwatch(self) -> None:
        if self.watching:
            self.watching = False
            await self.ctx.counts.give_back([watching(self.game_id)])

    async def _live(self, hello: Hello, loaded: Loaded) -> None:
        ctx = self.ctx
        # Subscribed first, then read: nothing published meanwhile can be missed.
        since = hello.since
        if since is not None and loaded.seq - since <= ctx.settings.replay_max_diffs:
            self.last_seq = since
            await self._refill()
        else:
            self.last_seq = loaded.seq
            self.hashes[loaded.seq] = loaded.hash.encode()
            await self.ws.send_frame(snapshot_message(ctx, loaded), WSMsgType.TEXT)
            # The snapshot was read before the subscription: a command appended in
            # between was not published to us. The writer reads the log after it first.
            self.deliver(0, None)
        await self.ws.send_frame(synced_message(self.last_seq), WSMsgType.TEXT)
        moves = self._moves_due(after_synced=True)
        if moves is not None:
            await self.ws.send_frame(moves, WSMsgType.TEXT)
        self.state = State.LIVE
        self.writer = asyncio.create_task(self._write_loop())
        try:
            await self._read_loop()
        finally:
            self.state = State.CLOSING
            self.writer.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.writer

    async def _receive_hello(self) -> Hello | None:
        try:
            # One deadline for the message: aiohttp's own receive timeout restarts at each
            # frame, and a client sending WebSocket pings would wait for ever, hello-less.
            async with asyncio.timeout(self.ctx.settings.hello_timeout_s):
                msg = await self.ws.receive()
        except TimeoutError:
            await self._refuse(ApiError("bad_request", "expected a hello message within "
                                        f"{self.ctx.settings.hello_timeout_s:g} s"))
            return None
        if msg.type in (WSMsgType.CLOSE, WSMsgType.CLOSING, WSMsgType.CLOSED):
            return None
        if msg.type is WSMsgType.ERROR:
            too_big = "size" in str(msg.data)
            await self._refuse(ApiError("bad_request", f"bad frame: {msg.data}"),
                               Close.MESSAGE_TOO_BIG if too_big else Close.POLICY_VIOLATION)
            return None
        if msg.type is not WSMsgType.TEXT:
            await self._refuse(ApiError("bad_request", "messages are JSON text frames"))
            return None
        try:
            first = decode_client_message(msg.data)
        except msgspec.DecodeError as exc:
            await self._refuse(ApiError.of(bad_request_from(exc, "hello")))
            return None
        if not isinstance(first, Hello):
            await self._refuse(ApiError("bad_request", "the first message must be a hello",
                                        {"field": "type"}))
            return None
        return first

    async def _refuse(self, exc: BaseException, code: Close = Close.POLICY_VIOLATION) -> None:
        err = to_api_error(exc)
        if err is None:
            log.exception("unexpected error in a WebSocket hello on game %s", self.game_id,
                          exc_info=exc)
            err = ApiError("unavailable", "internal error; try again", status=500)
        # Retrying later will work (POLICY_VIOLATION says it won't).
        if err.code in ("unavailable", "rate_limited"):
            code = Close.TRY_AGAIN_LATER
        self.state = State.CLOSING
        with contextlib.suppress(Exception):
            await self.ws.send_frame(error_message(err), WSMsgType.TEXT)
            await self.ws.close(code=code, message=close_reason(err.message))

    async def _read_loop(self) -> None:
        ws = self.ws
        async for msg in ws:
            if msg.type is WSMsgType.TEXT:
                await self._on_message(msg.data)
            elif msg.type is WSMsgType.BINARY:
                self.send(error_message(ApiError("bad_request", "messages are JSON text frames")))
            elif msg.type is WSMsgType.ERROR:
                break
            if not self.outbox.empty():
                # Messages that arrived together are read without a pause: let the writer
                # send the answers queued so far, or a burst of pings from a client that
                # reads them would fill the outbox and be closed as too slow. A client
                # that does not read still fills it (the writer waits on the transport).
                await asyncio.sleep(0)

    async def _on_message(self, data: bytes | str) -> None:
        try:
            message = decode_client_message(data)
        except msgspec.DecodeError as exc:
            # A command the client can still tell by its id is answered by that id.
            self.send(error_message(ApiError.of(bad_request_from(exc, "message")),
                                    command_id_in(data)))
            return
        if isinstance(message, Ping):
            self.send(_PONG)
        elif isinstance(message, CommandMessage):
            await self._on_command(message)
        else:  # hello again on a live socket: resynchronise (from `since`, if given)
            await self._on_hello_again(message)

    async def _on_hello_again(self, hello: Hello) -> None:
        try:
            self.hellos.take()
            assert self.ctx.read_limiter is not None
            await self.ctx.read_limiter.check("read:" + self.address)
        except Exception as exc:  # noqa: BLE001
            err = (to_api_error(exc)
                   or ApiError("unavailable", "internal error; try again", status=500))
            self.send(error_message(err))
            return
        if hello.token is not None:
            try:
                player, expires = self.ctx.tokens.verify_until(hello.token)
            except ApiError as err:
                self.send(error_message(err))
                return
            if player != self.player:
                self.send(error_message(ApiError("bad_request", "a socket keeps the token of its "
                                                 "first hello: reconnect to change it")))
                return
            # A fresher token of the same player renews the socket.
            if self.token_expires is not None:
                self.token_expires = max(self.token_expires, expires)
        self.wants_moves = hello.moves  # each hello says whether it wants moves
        # Without since, a snapshot (a client that threw its state away, e.g. on a hash
        # that is not the server's), as for a first hello.
        self._put(_RESYNC_REQUEST, b"" if hello.since is None else str(hello.since).encode())

    async def _on_command(self, message: CommandMessage) -> None:
        started = perf_counter()
        ctx = self.ctx
        # While the command runs, the feed's events for this socket wait, to go out with
        # the command's own diff and ack, in one write (the feed often brings that diff
        # before the store's reply does).
        self._held = []
        try:
            try:
                if self.player is None:
                    raise ApiError("unauthorized",
                                   "this socket has no token: send hello with the owner's token")
                if self.token_expires is not None and self.token_expires <= ctx.clock.time():
                    await self._token_expired(message.command_id)
                    return
                async with deadline(ctx.settings.request_deadline_s, write=True):
                    await ctx.limiter.check(self.player)
                    seq, event = await ctx.games.command(self.game_id, self.player,
                                                         engine_command(message.command),
                                                         message.expected_seq, message.command_id)
            except Exception as exc:  # noqa: BLE001 - every failure goes back as an error
                err = to_api_error(exc)
                if err is None:
                    log.exception("command failed on game %s", self.game_id)
                    err = ApiError("unavailable", "internal error; try again", status=500)
                self._release_held()
                self.send(error_message(err, message.command_id))
                return
            # The diff first (unless the feed delivered it already), then the ack.
            self._release_held()
            self.deliver(seq, event)
            self.send(encode(Ack(command_id=message.command_id, seq=seq)))
            ctx.metrics.websocket_ack.observe(perf_counter() - started)
        finally:
            self._release_held()

    def _release_held(self) -> None:
        held, self._held = self._held, None
        if held:
            for item in held:
                self._from_hub(item)

    async def _token_expired(self, command_id: str) -> None:
        """The token expired while the socket was open: it commands nothing more (1008)."""
        err = ApiError("unauthorized",
                       "the token has expired: create a player again, then reconnect")
        self.state = State.CLOSING
        with contextlib.suppress(Exception):
            await self.ws.send_frame(error_message(err, command_id), WSMsgType.TEXT)
            await self.ws.close(code=Close.POLICY_VIOLATION, message=close_reason(err.message))


def sockets_from(address: str) -> str:
    """The per-instance count of a client address's open sockets (service/counts.py)."""
    return "ws:" + address


def watching(game_id: str) -> str:
    """The per-instance count of a game's watchers."""
    return "watch:" + game_id


def since_beyond(since: int, seq: int) -> ApiError:
    return ApiError("bad_request", f"since {since} is beyond the game's seq {seq}: send hello with "
                    "the seq of the last diff you have, or without since for a snapshot",
                    {"since": since, "seq": seq})


async def websocket_handler(request: web.Request) -> web.StreamResponse:
    ctx: Context = context(request.app)
    address = client_address(request.remote, request.headers.get("X-Forwarded-For", ""),
                             ctx.settings.trusted_proxies)
    cap = ctx.settings.ws_per_address
    # Counted before the upgrade, so concurrent upgrades cannot overshoot.
    full = await ctx.counts.take([(sockets_from(address), cap)])
    if full is not None:
        # Before the upgrade: a plain 429 (the error middleware shapes it).
        raise ApiError("rate_limited", f"too many open sockets from this address: {full.held} "
                       f"on this instance, at most {cap} (ws_per_address); close one, or retry "
                       "in 5 s", {"limit": "ws_per_address"}, retry_after_s=5)
    try:
        ws = GameSocket(max_msg_size=ctx.settings.max_ws_message_bytes, heartbeat=30.0)
        if not ws.can_prepare(request).ok:
            raise ApiError("bad_request", "this is a game's WebSocket: open it with a WebSocket "
                           "client (a GET with Upgrade: websocket), then send a hello")
        await ws.prepare(request)
        conn = Connection(ctx, ws, request.match_info["game_id"], address)
        conn.transport = request.transport
        ctx.sockets.add(ws)
        ctx.metrics.ws_connections.inc()
        try:
            await conn.run()
        finally:
            ctx.sockets.discard(ws)
            ctx.metrics.ws_connections.dec()
            try:
                await conn.unwatch()
            finally:
                if not ws.closed:
                    await ws.close()
    finally:
        await ctx.counts.give_back([sockets_from(address)])
    return ws
