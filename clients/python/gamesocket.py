"""The WebSocket half of the SDK: :class:`GameSocket`, a live, self-healing view of one game.

A socket keeps a local :class:`~protocol.diffs.GameState` up to date by applying
the server's ``snapshot`` and ``diff`` messages with :func:`protocol.apply.apply_diff`.
When the connection drops, or a diff does not follow the local ``seq``, it
reconnects (exponential backoff with jitter) and resumes with ``hello`` and
``since``: the service replays what was missed, so the state never skips or
repeats a diff. Commands still waiting for their ack are sent again on the new
connection with the same ``command_id``, which the service answers with the
first result instead of applying them twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Final, Self

import aiohttp
import msgspec
from aiohttp import WSMsgType

from protocol.apply import DiffError, apply_diff
from protocol.codec import decode_server_message, encode
from protocol.diffs import GameState
from protocol.rest import LegalMoves
from protocol.ws import (
    Ack,
    CommandMessage,
    DiffMessage,
    ErrorMessage,
    Hello,
    MovesMessage,
    Ping,
    Pong,
    ServerMessage,
    Snapshot,
    Synced,
)

from .commands import CommandLike, as_command, new_command_id
from .errors import WAIT_MAX_S, ApiError, ConnectionLost

log = logging.getLogger("clients.python.gamesocket")

_PING: Final = encode(Ping()).decode()
_HASHES_KEPT: Final = 256  # hashes of the latest diffs kept, to tell a rewritten log
_CLOSING_TYPES: Final = (WSMsgType.CLOSE, WSMsgType.CLOSING, WSMsgType.CLOSED, WSMsgType.ERROR)
_NETWORK_ERRORS: Final = (aiohttp.ClientError, OSError, asyncio.TimeoutError, ConnectionLost)


class _Latest:
    def __repr__(self) -> str:
        return "LATEST"


LATEST: Final = _Latest()
"""``expected_seq`` default of :meth:`GameSocket.send`: the seq of the local state when
the command is sent (the command is refused with 409 if the game moved on meanwhile)."""


@dataclass(frozen=True, slots=True)
class StateChange:
    """The local state changed: ``diff`` was applied, or (``diff`` None) a snapshot
    replaced the state (the first sync, or a resync after the state went astray)."""

    state: GameState
    diff: DiffMessage | None


ChangeCallback = Callable[[StateChange], Awaitable[None] | None]


@dataclass(eq=False)
class _Pending:
    message: CommandMessage
    future: asyncio.Future[int]
    generation: int = -1  # the connection it was last sent on
    retries: int = 0


class _Resync(Exception):
    """The local state cannot follow the server's messages: reconnect with ``since``
    (``snapshot`` False: a gap) or for a snapshot (``snapshot`` True: a diff that does
    not apply)."""

    def __init__(self, reason: str, snapshot: bool) -> None:
        super().__init__(reason)
        self.snapshot = snapshot


@dataclass
class SocketStats:
    """Counters of one socket, for bots and benchmarks."""

    connects: int = 0
    reconnects: int = 0
    resyncs: int = 0
    commands_sent: int = 0  # transmissions, retries and resends included
    acks: int = 0
    diffs: int = 0
    last_error: ApiError | None = field(default=None, repr=False)


class GameSocket:
    """A WebSocket on ``/v1/games/{game_id}/ws`` that keeps :attr:`state` current.

    ::

        async with GameSocket(url, game_id, token) as sock:
            changes = sock.changes()           # every change from now on, in seq order
            seq = await sock.send(Move(from_="tableau/3", to="foundation"))
            async for change in changes:       # its diff first, then anyone's
                print(change.state.seq, change.diff)

    ``token`` may be None to watch a public game (commands then fail with 401).
    ``state``: a state the caller already has (say from ``create_game``): the first
    ``hello`` then asks only for what followed it (``since``). ``moves``: the
    ``hello`` asks for the server's ``moves`` messages, so :meth:`legal_moves` answers
    what ``GET /v1/games/{id}/moves`` would, without a request after every diff.

    Keep-alive: a ``ping`` every ``ping_interval_s`` (when nothing else was heard);
    a connection silent for ``ping_interval_s + pong_timeout_s`` is dropped and
    replaced. Reconnects back off from ``backoff_initial_s`` to ``backoff_max_s``;
    after ``max_reconnect_attempts`` failures in a row (None: never) the socket gives
    up: waiting commands and iterators fail with :class:`ConnectionLost`. A refused
    ``hello`` (unknown or private game, bad token) is an :class:`ApiError` and is
    not retried. A command refused as ``rate_limited`` or ``unavailable`` is sent
    again (same ``command_id``) up to ``command_retries`` times.
    """

    def __init__(
        self,
        base_url: str,
        game_id: str,
        token: str | None = None,
        *,
        session: aiohttp.ClientSession | None = None,
        state: GameState | None = None,
        ping_interval_s: float = 15.0,
        pong_timeout_s: float = 10.0,
        hello_timeout_s: float = 10.0,
        backoff_initial_s: float = 0.05,
        backoff_max_s: float = 5.0,
        max_reconnect_attempts: int | None = 20,
        command_retries: int = 5,
        moves: bool = False,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.game_id = game_id
        self.token = token
        self.url = f"{self.base_url}/v1/games/{game_id}/ws"
        self.ping_interval_s = ping_interval_s
        self.pong_timeout_s = pong_timeout_s
        self.hello_timeout_s = hello_timeout_s
        self.backoff_initial_s = backoff_initial_s
        self.backoff_max_s = backoff_max_s
        self.max_reconnect_attempts = max_reconnect_attempts
        self.command_retries = command_retries
        self.want_moves = moves
        self.stats = SocketStats()

        self._session = session
        self._owns_session = session is None
        self._state = state
        self._need_snapshot = state is None
        self._hashes: dict[int, str] = {}  # seq -> hash of the latest diffs applied
        self._ws: aiohttp.ClientWebSocketResponse | None = None
        self._generation = 0
        self._pending: dict[str, _Pending] = {}
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._subscribers: set[asyncio.Queue[StateChange | None]] = set()
        self._callbacks: list[ChangeCallback] = []
        self._supervisor: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._last_rx = 0.0
        self._closing = False
        self._finished = False
        self._failure: BaseException | None = None
        self._moves: MovesMessage | None = None
        self._moves_waiters: list[asyncio.Future[None]] = []

    # --- what the caller reads --------------------------------------------------------
    @property
    def state(self) -> GameState:
        """The local state, current as of the last message applied."""
        if self._state is None:
            raise RuntimeError("the socket has no state yet: await connect() first")
        return self._state

    @property
    def seq(self) -> int:
        """The seq of :attr:`state`."""
        return self.state.seq

    @property
    def connected(self) -> bool:
        """True while a connection is synced and live (False while reconnecting)."""
        return self._ws is not None and not self._ws.closed

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called or the socket gave up."""
        return self._finished

    # --- lifecycle --------------------------------------------------------------------
    async def connect(self) -> GameState:
        """Connect, say ``hello`` and wait until synced; the state then. The first
        connection is not retried: its failure is raised (``ApiError`` for a refused
        hello, an aiohttp or OS error for the network)."""
        if self._supervisor is not None or self._finished:
            raise RuntimeError("connect() may be called once")
        if self._session is None:
            self._session = aiohttp.ClientSession()
        try:
            ws = await self._first_open()
        except BaseException:
            if self._owns_session:  # no close() follows a failed ``async with``
                await self._session.close()
                self._session = None
            raise
        self.stats.connects += 1
        self._live(ws)
        self._supervisor = asyncio.create_task(self._supervise(), name=f"GameSocket {self.game_id}")
        return self.state

    async def _first_open(self) -> aiohttp.ClientWebSocketResponse:
        for _ in range(3):
            try:
                return await self._open()
            except _Resync:
                self._need_snapshot = True
        raise ConnectionLost(f"game {self.game_id}: could not sync")  # pragma: no cover

    async def close(self) -> None:
        """Close the connection (code 1000) and stop: waiting commands fail with
        :class:`ConnectionLost`, iterators end."""
        self._closing = True
        if self._supervisor is not None:
            self._supervisor.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._supervisor
        for task in list(self._tasks):
            task.cancel()
        ws, self._ws = self._ws, None
        if ws is not None and not ws.closed:
            with contextlib.suppress(*_NETWORK_ERRORS):
                await ws.close()
        self._finish(ConnectionLost(f"game {self.game_id}: the socket was closed"), failure=False)
        if self._owns_session and self._session is not None:
            await self._session.close()
            self._session = None

    async def reconnect(self) -> None:
        """Drop the current connection now (say the network changed); the socket
        reconnects and resumes with ``since`` as after any drop."""
        ws = self._ws
        if ws is not None and not ws.closed:
            with contextlib.suppress(*_NETWORK_ERRORS):
                await ws.close(code=1000, message=b"client reconnecting")

    async def __aenter__(self) -> Self:
        await self.connect()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    # --- commands ---------------------------------------------------------------------
    async def send(
        self,
        command: CommandLike,
        *,
        expected_seq: int | None | _Latest = LATEST,
        command_id: str | None = None,
    ) -> int:
        """Send a command; its seq once acknowledged (durably in the game's log), by
        which time :attr:`state` includes its diff.

        ``expected_seq``: by default the local state's seq (409 ``conflict`` if the
        game moved on meanwhile); ``None`` sends no check. ``command_id``: a fresh one
        by default; the same id is reused for every retransmission. Raises
        :class:`ApiError` on an ``error`` answer for this command (``illegal_move``
        422 with its reason, ``conflict`` 409, ...), :class:`ConnectionLost` if the
        socket closes or gives up first.
        """
        self._check_usable()
        cmd = as_command(command)
        if isinstance(expected_seq, _Latest):
            expected_seq = self.state.seq
        cid = command_id or new_command_id()
        pending = self._pending.get(cid)
        if pending is None:
            message = CommandMessage(command_id=cid, expected_seq=expected_seq, command=cmd)
            pending = _Pending(message, asyncio.get_running_loop().create_future())
            self._pending[cid] = pending
            await self._transmit(pending)
        try:
            seq = await pending.future
        except asyncio.CancelledError:
            # The caller gave up: never resend it behind their back.
            if self._pending.get(cid) is pending:
                del self._pending[cid]
            raise
        with contextlib.suppress(ConnectionLost):  # acknowledged is applied, closed or not
            await self.wait_for_seq(seq)
        return seq

    async def ping(self) -> None:
        """Send a ``ping`` now (the socket also pings on its own when idle)."""
        ws = self._ws
        if ws is not None and not ws.closed:
            with contextlib.suppress(*_NETWORK_ERRORS):
                await ws.send_str(_PING)

    # --- following the state ---------------------------------------------------------
    async def wait_for_seq(self, seq: int) -> GameState:
        """The state once the local state has reached ``seq``."""
        if self._state is not None and self._state.seq >= seq:
            return self._state
        self._check_usable()
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append((seq, future))
        await future
        return self.state

    @property
    def legal(self) -> LegalMoves | None:
        """With ``moves=True``: the legal moves at the local seq, if the server has
        sent them yet (None before, and always without ``moves``)."""
        m = self._moves
        if m is None or self._state is None or m.seq != self._state.seq:
            return None
        return LegalMoves(seq=m.seq, moves=m.moves, can_undo=m.can_undo)

    async def legal_moves(self) -> LegalMoves:
        """With ``moves=True``: the legal moves at the local seq (every legal ``move``
        and ``draw``, and ``can_undo``), waiting for the server's ``moves`` message of
        that seq if it has not come yet. The server sends it after each diff, before
        the ``ack``: after ``send()`` returns, it is usually here already."""
        if not self.want_moves:
            raise RuntimeError("legal_moves() needs GameSocket(..., moves=True)")
        while True:
            current = self.legal
            if current is not None:
                return current
            self._check_usable()
            future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._moves_waiters.append(future)
            await future

    def changes(self) -> AsyncIterator[StateChange]:
        """Every change of the local state from now on (from this call, not from the
        first ``anext``; never an earlier one), in order, until the socket closes (then
        the iteration ends, or raises why the socket gave up). ``async for change in
        sock`` calls it when the loop starts: a diff applied before, say that of a
        ``send`` already awaited, is in :attr:`state` but not in the loop."""
        queue: asyncio.Queue[StateChange | None] = asyncio.Queue()
        if self._finished:
            queue.put_nowait(None)
        else:
            self._subscribers.add(queue)
        return self._iterate(queue)

    def __aiter__(self) -> AsyncIterator[StateChange]:
        return self.changes()

    def on_change(self, callback: ChangeCallback) -> Callable[[], None]:
        """Call ``callback(change)`` on every change (awaited if it returns an awaitable;
        keep it quick: messages wait for it). Returns a function that unsubscribes."""
        self._callbacks.append(callback)

        def unsubscribe() -> None:
            with contextlib.suppress(ValueError):
                self._callbacks.remove(callback)

        return unsubscribe

    async def _iterate(
        self, queue: asyncio.Queue[StateChange | None]
    ) -> AsyncIterator[StateChange]:
        try:
            while True:
                item = await queue.get()
                if item is None:
                    if self._failure is not None:
                        raise self._failure
                    return
                yield item
        finally:
            self._subscribers.discard(queue)

    # --- connecting -------------------------------------------------------------------
    async def _open(self) -> aiohttp.ClientWebSocketResponse:
        """A new connection, synced: hello, then snapshot or missed diffs, then synced."""
        assert self._session is not None
        since = None if self._need_snapshot or self._state is None else self._state.seq
        ws = await self._session.ws_connect(
            self.url,
            autoping=True,
            heartbeat=None,
            timeout=aiohttp.ClientWSTimeout(ws_receive=None, ws_close=2.0),
        )
        try:
            hello = Hello(token=self.token, since=since, moves=self.want_moves)
            await ws.send_str(encode(hello).decode())
            while True:
                msg = await ws.receive(timeout=self.hello_timeout_s)
                if msg.type in _CLOSING_TYPES:
                    raise ConnectionLost(
                        f"game {self.game_id}: closed during the hello (code {ws.close_code})"
                    )
                if msg.type not in (WSMsgType.TEXT, WSMsgType.BINARY):
                    continue
                message = decode_server_message(msg.data)
                if isinstance(message, ErrorMessage):
                    error = message.error
                    if error.code == "bad_request" and "since" in error.details:
                        # The local state is ahead of the game's log (the log lost its
                        # end: a failover): only a snapshot can bring it back in line.
                        raise _Resync(f"since {since} is beyond the game: {error.message}", True)
                    raise ApiError.from_info(error)
                if isinstance(message, Synced):
                    if self._state is None or self._state.seq != message.seq:
                        raise _Resync(
                            f"synced at {message.seq} but the local state is at "
                            f"{None if self._state is None else self._state.seq}",
                            True,
                        )
                    return ws
                await self._on_message(message)
        except BaseException:
            with contextlib.suppress(*_NETWORK_ERRORS):
                await ws.close()
            raise

    def _live(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self._ws = ws
        self._generation += 1
        self._last_rx = time.monotonic()

    async def _supervise(self) -> None:
        try:
            while True:
                ws = self._ws
                assert ws is not None
                await self._flush_pending()
                pinger = asyncio.create_task(self._ping_loop(ws))
                try:
                    snapshot = await self._read_live(ws)
                finally:
                    pinger.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await pinger
                self._ws = None
                if not ws.closed:
                    with contextlib.suppress(*_NETWORK_ERRORS):
                        await ws.close()
                if snapshot:
                    self._need_snapshot = True
                self._live(await self._reconnect())
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - gave up: everyone waiting learns why
            log.warning("game %s: the socket gives up: %s", self.game_id, exc)
            self._ws = None
            self._finish(exc, failure=True)

    async def _reconnect(self) -> aiohttp.ClientWebSocketResponse:
        delay = self.backoff_initial_s
        failures = 0
        last: BaseException | None = None
        while True:
            try:
                ws = await self._open()
            except _Resync as exc:
                log.info("game %s: resync: %s", self.game_id, exc)
                self.stats.resyncs += 1
                self._need_snapshot = True
                last = exc
            except ApiError as err:
                if not err.retryable:
                    raise
                last = err
            except (*_NETWORK_ERRORS, msgspec.DecodeError) as exc:
                last = exc
            else:
                self.stats.reconnects += 1
                log.info("game %s: reconnected at seq %d", self.game_id, self.state.seq)
                return ws
            failures += 1
            if self.max_reconnect_attempts is not None and failures >= self.max_reconnect_attempts:
                raise ConnectionLost(
                    f"game {self.game_id}: gave up after {failures} failed "
                    f"reconnects; last: {last!r}"
                ) from last
            await asyncio.sleep(random.uniform(delay / 2, delay))
            delay = min(delay * 2, self.backoff_max_s)

    async def _read_live(self, ws: aiohttp.ClientWebSocketResponse) -> bool:
        """Handle messages until the connection ends (False) or the local state needs
        a resync (True: it needs a snapshot; False: ``since`` will do)."""
        while True:
            msg = await ws.receive()
            if msg.type in _CLOSING_TYPES:
                log.info("game %s: connection closed (code %s)", self.game_id, ws.close_code)
                return False
            if msg.type not in (WSMsgType.TEXT, WSMsgType.BINARY):
                continue
            self._last_rx = time.monotonic()
            try:
                message = decode_server_message(msg.data)
            except msgspec.DecodeError as exc:
                log.warning("game %s: ignoring an undecodable message: %s", self.game_id, exc)
                continue
            try:
                await self._on_message(message)
            except _Resync as exc:
                log.info("game %s: resync: %s", self.game_id, exc)
                self.stats.resyncs += 1
                return exc.snapshot

    async def _ping_loop(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        while not ws.closed:
            await asyncio.sleep(self.ping_interval_s)
            silent_s = time.monotonic() - self._last_rx
            if silent_s > self.ping_interval_s + self.pong_timeout_s:
                log.info("game %s: nothing heard for %.1f s: reconnecting", self.game_id, silent_s)
                with contextlib.suppress(*_NETWORK_ERRORS):
                    await ws.close(code=1001, message=b"no pong")
                return
            if silent_s >= self.ping_interval_s:
                with contextlib.suppress(*_NETWORK_ERRORS):
                    await ws.send_str(_PING)

    # --- messages ---------------------------------------------------------------------
    async def _on_message(self, message: ServerMessage) -> None:
        if isinstance(message, DiffMessage):
            await self._on_diff(message)
        elif isinstance(message, Snapshot):
            self._hashes.clear()
            self._moves = None  # of a history the snapshot may have replaced
            await self._set_state(message.state, None)
        elif isinstance(message, Ack):
            self.stats.acks += 1
            pending = self._pending.pop(message.command_id, None)
            if pending is not None and not pending.future.done():
                pending.future.set_result(message.seq)
            if self._state is not None and message.seq > self._state.seq:
                # The server sends a command's diff before its ack: this one was lost.
                raise _Resync(f"ack of seq {message.seq} at seq {self._state.seq}", False)
        elif isinstance(message, ErrorMessage):
            self._on_error(message)
        elif isinstance(message, MovesMessage):
            self._moves = message
            waiters, self._moves_waiters = self._moves_waiters, []
            for future in waiters:
                if not future.done():
                    future.set_result(None)
        elif isinstance(message, (Synced, Pong)):
            pass

    async def _on_diff(self, diff: DiffMessage) -> None:
        state = self._state
        if state is None:
            raise _Resync(f"diff {diff.seq} before any state", True)
        if diff.seq <= state.seq:
            held = self._hashes.get(diff.seq)
            if held is not None and held != diff.hash:
                # A different event at a seq we hold: the log was rolled back and written
                # again (a failover). Our state is not the server's: start from a snapshot.
                raise _Resync(
                    f"the event at seq {diff.seq} changed (hash {held} -> {diff.hash})", True)
            return  # already applied (a replay overlapping the live feed)
        if diff.seq != state.seq + 1:
            raise _Resync(f"gap: diff {diff.seq} after seq {state.seq}", False)
        try:
            new = apply_diff(state, diff)
        except DiffError as exc:
            raise _Resync(str(exc), True) from exc
        self.stats.diffs += 1
        self._hashes[diff.seq] = diff.hash
        self._hashes.pop(diff.seq - _HASHES_KEPT, None)
        await self._set_state(new, diff)

    def _on_error(self, message: ErrorMessage) -> None:
        command_id = message.command_id if isinstance(message.command_id, str) else None
        err = ApiError.from_info(message.error, command_id=command_id)
        self.stats.last_error = err
        pending = self._pending.get(command_id) if command_id else None
        if pending is None:
            log.warning("game %s: error from the server: %s", self.game_id, err)
            return
        wait_s = err.retry_after_s or min(self.backoff_max_s, 0.1 * 2**(pending.retries + 1))
        if err.retryable and pending.retries < self.command_retries and wait_s <= WAIT_MAX_S:
            pending.retries += 1
            pending.generation = -1
            self._spawn(self._transmit_later(pending, wait_s))
            return
        del self._pending[pending.message.command_id]
        if not pending.future.done():
            pending.future.set_exception(err)

    async def _set_state(self, state: GameState, diff: DiffMessage | None) -> None:
        self._state = state
        if diff is None:
            self._need_snapshot = False
        change = StateChange(state, diff)
        for queue in self._subscribers:
            queue.put_nowait(change)
        for callback in list(self._callbacks):
            try:
                result = callback(change)
                if inspect.isawaitable(result):
                    await result
            except Exception:  # a caller's bug must not kill the socket
                log.exception("game %s: a change callback failed", self.game_id)
        if self._waiters:
            still = []
            for seq, future in self._waiters:
                if seq <= state.seq:
                    if not future.done():
                        future.set_result(None)
                else:
                    still.append((seq, future))
            self._waiters = still

    # --- sending ----------------------------------------------------------------------
    async def _transmit(self, pending: _Pending) -> None:
        ws = self._ws
        if ws is None or ws.closed or pending.future.done():
            return  # sent when the connection is back
        pending.generation = self._generation
        self.stats.commands_sent += 1
        try:
            await ws.send_str(encode(pending.message).decode())
        except _NETWORK_ERRORS:
            pending.generation = -1  # the read loop sees the drop; resent after it

    async def _transmit_later(self, pending: _Pending, wait_s: float) -> None:
        await asyncio.sleep(wait_s)
        if self._pending.get(pending.message.command_id) is pending:
            await self._transmit(pending)

    async def _flush_pending(self) -> None:
        """Send again, on a new connection, every command still waiting for its answer."""
        for pending in list(self._pending.values()):
            if pending.generation != self._generation and not pending.future.done():
                await self._transmit(pending)

    def _spawn(self, coro: Awaitable[None]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # --- ending -----------------------------------------------------------------------
    def _check_usable(self) -> None:
        if self._failure is not None:
            raise self._failure
        if self._finished or self._closing:
            raise ConnectionLost(f"game {self.game_id}: the socket is closed")
        if self._state is None:
            raise RuntimeError("the socket is not connected: await connect() first")

    def _finish(self, exc: BaseException, failure: bool) -> None:
        if self._finished:
            return
        self._finished = True
        if failure:
            self._failure = exc
        pending, self._pending = self._pending, {}
        for p in pending.values():
            if not p.future.done():
                p.future.set_exception(exc)
        waiters, self._waiters = self._waiters, []
        for _, future in waiters:
            if not future.done():
                future.set_exception(exc)
        moves_waiters, self._moves_waiters = self._moves_waiters, []
        for future in moves_waiters:
            if not future.done():
                future.set_exception(exc)
        for queue in self._subscribers:
            queue.put_nowait(None)
        for task in list(self._tasks):
            task.cancel()
