"""Games over the event log: create, load, command, read — the service's domain layer.

The log in Redis is the truth; a game's state is a fold of its events over the
deal (from the latest snapshot on). :class:`GameService` puts together the jobs
that make a game, each in a module of its own: who may read or command it
(game_access.py), the games kept in memory (game_cache.py), what a client is shown
(game_views.py), applying a command and retrying what a race lost
(game_commands.py), and how long the store keeps a game (game_lifetimes.py).
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import msgspec

from protocol.commands import Command as WireCommand
from protocol.diffs import GameState, Stats
from protocol.rest import PlayerGames, PlayerGamesQuery
from service.domain import game_views, wire
from service.domain.errors import ApiError
from service.domain.eventhash import START
from service.domain.game_access import GameAccess
from service.domain.game_cache import GameCache
from service.domain.game_commands import FinalHook, GameCommands
from service.domain.game_lifetimes import GameLifetimes
from service.domain.loaded import Loaded as Loaded  # the handlers know it as games.Loaded
from service.domain.player_games import list_games
from service.domain.players import Players
from service.engine import (
    MAX_SEED,
    RULES_VERSION,
    Command,
    Game,
)
from service.runtime.clock import Clock
from service.runtime.metrics import Metrics
from service.settings import Settings
from service.store.errors import NotFound
from service.store.fanout import Callback, Hub, Listener
from service.store.games import GameMeta, Games
from service.store.meta import DailyTag
from service.store.solver import SolverStore


class _Replayed(msgspec.Struct):
    """The one field of a stored event (a DiffMessage) that replaying it needs: the other
    fields are skipped unread."""

    command: WireCommand


_replayed = msgspec.json.Decoder(_Replayed)


@dataclass(frozen=True, slots=True)
class DailyTags:
    """What makes a game a daily attempt: its meta's daily tags (service/store/meta.py)."""

    challenge: DailyTag
    readable_from: datetime  # others may read it from then on
    seed_from: datetime  # its seed is shown from then on
    closes_at: datetime  # commands are refused from then on


def new_game_id() -> str:
    """A fresh game id: ``g_`` and 96 random bits (players' games and daily attempts alike)."""
    return "g_" + secrets.token_urlsafe(12)


def decode_event(data: bytes) -> Command:
    """The engine's command of a stored event, to replay it."""
    return wire.engine_command(_replayed.decode(data).command)


# Called as a game is made, before it is stored: (owner, game_id, variant, created_at).
CreateHook = Callable[[str, str, str, datetime], Awaitable[None]]


@dataclass
class GameService:
    store: Games
    solver_store: SolverStore  # a game's hint count
    settings: Settings
    clock: Clock
    metrics: Metrics
    feed: Hub  # every game's feed: its appended events, through whichever instance
    on_final: list[FinalHook] = field(default_factory=list)
    on_create: list[CreateHook] = field(default_factory=list)
    cache_size: int = 10_000

    def __post_init__(self) -> None:
        self.cache = GameCache(self.cache_size)
        self.access = GameAccess(self.settings, self.clock)
        self.lifetimes = GameLifetimes(self.settings, self.clock)
        # on_final is the same list: a hook added to it later runs too.
        self.commands = GameCommands(self.store, self.settings, self.metrics, self.access,
                                     self.lifetimes, self.cache, self.load, self.on_final)
        # Apply one command (GameCommands.command): its method itself, not a coroutine
        # around it, on every command's way.
        self.command = self.commands.command
        # The access policy, as the handlers ask it.
        self.can_read = self.access.can_read
        self.check_read = self.access.check_read
        self.check_command = self.access.check_command
        self.takes_no_moves = self.access.takes_no_moves
        self.day_is_over = self.access.day_is_over
        self.seed_visible = self.access.seed_visible

    # --- creating ------------------------------------------------------------------
    async def create(self, owner: str, variant: str, seed: int | None,
                     options: dict[str, Any] | None, public: bool,
                     daily: DailyTags | None = None, seed_secret: bool | None = None,
                     game_id: str | None = None) -> Loaded:
        """Deal and store a new game (``daily``: as an attempt of a daily challenge). A
        server-chosen seed stays secret until the game is over."""
        chosen = seed is None
        if seed is None:
            seed = secrets.randbelow(MAX_SEED)
        game = Game.deal(variant, seed, options)  # validates variant, options and seed
        game_id = game_id or new_game_id()
        secret = chosen if seed_secret is None else seed_secret
        meta = GameMeta(
            variant=game.variant.id, options=dict(game.variant.options), seed=seed,
            owner=owner, rules_version=str(RULES_VERSION), created_at=self.lifetimes.now(),
            status=game.status.value, public=public, seq=0, seed_secret=secret,
        )
        if daily is not None:
            meta = meta.replace(daily=daily.challenge, readable_from=daily.readable_from,
                                seed_from=daily.seed_from, closes_at=daily.closes_at)
        for hook in self.on_create:  # before: a hook's entry for a game never made is harmless
            await hook(owner, game_id, meta.variant, meta.created_at)
        await self.store.create(game_id, meta, self.settings.game_ttl_s)
        self.metrics.games_created.inc(game.variant.id)
        loaded = Loaded(game_id, meta, game, 0)
        self.cache.remember(loaded)
        return loaded

    # --- loading -------------------------------------------------------------------
    async def load(self, game_id: str) -> Loaded:
        """The game as the log has it now (404 when there is no such game)."""
        try:
            result = await self.store.load(game_id)
        except NotFound:
            raise ApiError("not_found", f"no game {game_id!r}") from None
        meta = result.meta
        if result.snapshot is not None:
            game = wire.restore(result.snapshot)
        else:
            game = Game.deal(meta.variant, meta.seed, meta.options)
        for raw in result.events:
            game = game.apply(decode_event(raw))[0]
        loaded = Loaded(game_id, meta, game, meta.seq, meta.started_at, meta.finished_at,
                        meta.last_at, meta.hash or START, meta.hints or 0)
        return self.cache.read(loaded)

    # --- reading ---------------------------------------------------------------------
    def stats(self, loaded: Loaded) -> Stats:
        return game_views.stats(loaded)

    def state(self, loaded: Loaded) -> GameState:
        """The redacted state of PROTOCOL.md."""
        return game_views.state(loaded, self.access.seed_visible(loaded))

    async def hint_taken(self, loaded: Loaded) -> int:
        """Count one more hint taken in the game's meta (beside the log, so that its next
        event's stats say it), and remember it; the new count."""
        count = await self.solver_store.count_hint(loaded.game_id)
        if count is None:
            raise ApiError("not_found", f"no game {loaded.game_id!r}")
        self.cache.hints(loaded, count)
        return count

    async def player_games(self, players: Players, player: str,
                           query: PlayerGamesQuery) -> PlayerGames:
        """``GET /v1/players/me/games``: a page of ``player``'s games, newest first
        (service/domain/player_games.py)."""
        return await list_games(players, self.store, player, query,
                                int(self.clock.time() * 1000))

    def subscribe(self, game_id: str,
                  callback: Callback) -> AbstractAsyncContextManager[Listener]:
        """The game's feed given to ``callback`` (each appended event, and RESYNC when some
        may have been missed) from the moment the context is entered, so that reading the
        log after that misses nothing (service/store/fanout.py)."""
        return self.feed.listen(game_id, callback)

    async def events(self, game_id: str, after: int, limit: int | None = None) -> list[bytes]:
        """The stored events after seq ``after`` (all of them unless ``limit``)."""
        return await self.store.events(game_id, after, limit)

    # --- commanding -------------------------------------------------------------------
    def final_ttl_s(self, loaded: Loaded) -> int:
        """How long a won or resigned game is kept (see :meth:`GameLifetimes.final_ttl_s`)."""
        return self.lifetimes.final_ttl_s(loaded.meta)
