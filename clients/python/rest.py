"""The REST half of the SDK: :class:`Client`, one method per endpoint of API v1.

Every method takes and returns the msgspec Structs of :mod:`protocol`; every
error the service answers with is raised as :class:`~clients.python.errors.ApiError`.
Network failures are aiohttp's own (``aiohttp.ClientError``, ``asyncio.TimeoutError``).
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import AsyncIterator, Mapping
from types import TracebackType
from typing import Any, Self, TypeVar

import aiohttp
import msgspec

from protocol.codec import decode, encode
from protocol.daily import DailyDay, Leaderboard
from protocol.diffs import GameState
from protocol.fields import OptionValue, Status
from protocol.rest import (
    CommandRequest,
    CommandResult,
    CreateGame,
    CreatePlayer,
    Event,
    Events,
    GameCreated,
    GameSummary,
    LegalMoves,
    Me,
    Player,
    PlayerCreated,
    PlayerGames,
    UpdatePlayer,
)
from protocol.solver import Hint, Solution
from protocol.variants import VariantInfo, Variants

from .commands import CommandLike, as_command, new_command_id
from .errors import WAIT_MAX_S, ApiError
from .gamesocket import GameSocket

T = TypeVar("T")

# The most events the service sends in one answer of GET /v1/games/{id}/events.
EVENTS_PAGE = 1000

DateLike = str | dt.date


def _date(value: DateLike) -> str:
    return value.isoformat() if isinstance(value, dt.date) else value


class Client:
    """An async client of the service's REST API.

    ``base_url`` is the service's root (``http://127.0.0.1:8080``); ``token`` the
    bearer token of a player (``create_player`` replaces it with the new player's).
    Use it as an async context manager, or call :meth:`close`. A ``session`` passed
    in is used and left open; otherwise the client owns one.

    Answers ``rate_limited`` and ``unavailable`` are retried up to ``retries`` times,
    after the wait the service asks for (else 0.2 s; a wait of more than
    :data:`WAIT_MAX_S` is not waited: the error is raised at once, its
    ``retry_after_s`` saying when), but for an ``unavailable`` whose
    outcome is unknown (the write may have been done) to a write that has no
    ``command_id``: a new player or game, a daily attempt, a hint (see
    :attr:`ApiError.retryable`).
    """

    def __init__(
        self,
        base_url: str,
        token: str | None = None,
        *,
        session: aiohttp.ClientSession | None = None,
        timeout_s: float = 30.0,
        retries: int = 3,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.retries = retries
        self._timeout = aiohttp.ClientTimeout(total=timeout_s)
        self._session = session
        self._owns_session = session is None

    # --- lifecycle -------------------------------------------------------------------
    @property
    def session(self) -> aiohttp.ClientSession:
        """The aiohttp session (created on first use when none was given)."""
        if self._session is None:
            # No cap on connections: the sockets of :meth:`socket` share this session, and
            # aiohttp's default cap (100, open WebSockets included) would leave the next
            # socket and every REST call waiting once a bot follows 100 games.
            self._session = aiohttp.ClientSession(
                timeout=self._timeout, connector=aiohttp.TCPConnector(limit=0))
        return self._session

    async def close(self) -> None:
        """Close the session if the client made it."""
        if self._owns_session and self._session is not None:
            await self._session.close()
        self._session = None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    # --- players ---------------------------------------------------------------------
    async def create_player(self, name: str) -> PlayerCreated:
        """``POST /v1/players``: a new player; the client acts as it from then on.

        No token is sent: the service checks any token it is sent (an expired one
        gets 401 even here), and a new player needs none. The client's previous
        token, if any, is replaced by the new player's."""
        player = await self._call(
            "POST", "/v1/players", PlayerCreated, CreatePlayer(name=name), authorize=False
        )
        self.token = player.token
        return player

    async def rename(self, name: str) -> Player:
        """``PATCH /v1/players/me``: change the caller's name."""
        return await self._call("PATCH", "/v1/players/me", Player, UpdatePlayer(name=name))

    async def me(self) -> Me:
        """``GET /v1/players/me``: the player the client's token acts as."""
        return await self._call("GET", "/v1/players/me", Me)

    async def my_games(
        self,
        status: Status | None = None,
        variant: str | None = None,
        limit: int = 20,
        cursor: str | None = None,
    ) -> PlayerGames:
        """``GET /v1/players/me/games``: one page of the caller's games, newest first, of
        ``status`` and ``variant`` when given; ``next_cursor`` (None on the last page) is
        the ``cursor`` of the next. With ``status`` a page may hold fewer than ``limit``
        games, even none, while ``next_cursor`` says more follow."""
        params = {"limit": str(limit)}
        for name, value in (("status", status), ("variant", variant), ("cursor", cursor)):
            if value is not None:
                params[name] = value
        return await self._call("GET", "/v1/players/me/games", PlayerGames, params=params)

    async def all_my_games(
        self, status: Status | None = None, variant: str | None = None
    ) -> AsyncIterator[GameSummary]:
        """Every game :meth:`my_games` lists, newest first, page after page."""
        cursor: str | None = None
        while True:
            page = await self.my_games(status, variant, limit=100, cursor=cursor)
            for game in page.games:
                yield game
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    # --- variants and games ------------------------------------------------------------
    async def variants(self) -> list[VariantInfo]:
        """``GET /v1/variants``: every variant, with its pile layout and options."""
        return (await self._call("GET", "/v1/variants", Variants)).variants

    async def create_game(
        self,
        variant: str,
        seed: int | None = None,
        options: Mapping[str, OptionValue] | None = None,
        public: bool = False,
    ) -> GameCreated:
        """``POST /v1/games``: deal a game (``seed`` a deal number; without it the
        server picks one and keeps it secret until the game is over)."""
        body = CreateGame(
            variant=variant,
            seed=seed,
            options=dict(options) if options is not None else None,
            public=public,
        )
        return await self._call("POST", "/v1/games", GameCreated, body)

    async def game(self, game_id: str) -> GameState:
        """``GET /v1/games/{id}``: the state, redacted."""
        return await self._call("GET", f"/v1/games/{game_id}", GameState)

    async def command(
        self,
        game_id: str,
        command: CommandLike,
        expected_seq: int | None = None,
        command_id: str | None = None,
    ) -> CommandResult:
        """``POST /v1/games/{id}/commands``. ``expected_seq``: refused with 409
        ``conflict`` unless the game is at that seq. ``command_id``: sending the same
        id again with the same command returns the first result and applies nothing
        (with another command: 409 ``conflict`` naming the first); without one the client
        makes a fresh one, so that its own retries never apply the command twice. An
        :class:`ApiError` carries the id in ``command_id``: after a 503 whose outcome
        is unknown (``unknown_outcome``), send the command again with it."""
        cid = command_id or new_command_id()
        body = CommandRequest(
            command=as_command(command), expected_seq=expected_seq, command_id=cid
        )
        return await self._call(
            "POST", f"/v1/games/{game_id}/commands", CommandResult, body, command_id=cid
        )

    async def moves(self, game_id: str) -> LegalMoves:
        """``GET /v1/games/{id}/moves``: every legal move and draw now, and ``can_undo``."""
        return await self._call("GET", f"/v1/games/{game_id}/moves", LegalMoves)

    async def events(self, game_id: str, after: int = 0) -> list[Event]:
        """``GET /v1/games/{id}/events?after=N``: the log after seq ``after``, all of it.

        The service answers a page at a time (at most ``EVENTS_PAGE`` events), with
        the next page's ``after`` in ``next_after`` (null on the last page)."""
        events: list[Event] = []
        while True:
            page = await self._call(
                "GET", f"/v1/games/{game_id}/events", Events,
                params={"after": str(after), "limit": str(EVENTS_PAGE)},
            )
            events += page.events
            if page.next_after is None:
                return events
            after = page.next_after

    # --- the solver ------------------------------------------------------------------
    async def hint(self, game_id: str) -> Hint:
        """``POST /v1/games/{id}/hint``: one suggested command from what the owner sees
        (``command`` None when none is legal), won in ``wins`` of ``samples`` sampled
        completions of the face-down cards. Counted in the game's ``stats.hints``."""
        return await self._call("POST", f"/v1/games/{game_id}/hint", Hint)

    async def solution(self, game_id: str) -> Solution:
        """``GET /v1/games/{id}/solution``: once the game is won or resigned, the
        solver's line from the deal (``result == "won"``: send ``commands`` in order to
        a new game with the same seed and it is won)."""
        return await self._call("GET", f"/v1/games/{game_id}/solution", Solution)

    # --- daily challenges ------------------------------------------------------------
    async def daily(self, date: DateLike | None = None) -> DailyDay:
        """``GET /v1/daily?date=``: the day's challenge for each variant (today, UTC,
        without ``date``)."""
        params = {"date": _date(date)} if date is not None else None
        return await self._call("GET", "/v1/daily", DailyDay, params=params)

    async def daily_attempt(self, date: DateLike, variant: str) -> GameCreated:
        """``POST /v1/daily/{date}/{variant}/attempts``: start the caller's attempt."""
        return await self._call("POST", f"/v1/daily/{_date(date)}/{variant}/attempts", GameCreated)

    async def leaderboard(
        self, date: DateLike, variant: str, limit: int = 20, cursor: str | None = None
    ) -> Leaderboard:
        """``GET /v1/daily/{date}/{variant}/leaderboard``: one page of ranked entries,
        ``next_cursor`` (None on the last page) and the caller's own entry."""
        params = {"limit": str(limit)}
        if cursor is not None:
            params["cursor"] = cursor
        return await self._call(
            "GET", f"/v1/daily/{_date(date)}/{variant}/leaderboard", Leaderboard, params=params
        )

    # --- WebSocket -------------------------------------------------------------------
    def socket(self, game_id: str, **kwargs: Any) -> GameSocket:
        """A :class:`GameSocket` on ``game_id`` sharing this client's session and token
        (not yet connected: ``async with client.socket(id) as sock`` or
        ``await sock.connect()``)."""
        kwargs.setdefault("token", self.token)
        return GameSocket(self.base_url, game_id, session=self.session, **kwargs)

    # --- plumbing --------------------------------------------------------------------
    async def _call(
        self,
        method: str,
        path: str,
        type_: type[T],
        body: msgspec.Struct | None = None,
        params: Mapping[str, str] | None = None,
        authorize: bool = True,
        command_id: str | None = None,
    ) -> T:
        data = encode(body) if body is not None else None
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        if authorize and self.token is not None:
            headers["Authorization"] = f"Bearer {self.token}"
        attempt = 0
        while True:
            async with self.session.request(
                method, self.base_url + path, data=data, headers=headers, params=params
            ) as response:
                raw = await response.read()
                if response.status < 400:
                    return decode(raw, type_)
                error = ApiError.from_response(response.status, raw)
                error.command_id = command_id
                retry_after = response.headers.get("Retry-After")
            if not error.retryable or attempt >= self.retries:
                raise error
            attempt += 1
            wait = _wait_s(error, retry_after, attempt)
            if wait > WAIT_MAX_S:  # a day's renames used up, say: the caller's to decide
                raise error
            await asyncio.sleep(wait)


def _wait_s(error: ApiError, retry_after: str | None, attempt: int) -> float:
    if error.retry_after_s is not None:
        return error.retry_after_s
    if retry_after is not None:
        try:
            return max(0.0, float(retry_after))
        except ValueError:
            pass
    return 0.2 * attempt
