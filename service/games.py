"""Games over the event log: create, load, command, read — the service's domain layer.

The log in Redis is the truth; a game's state is a fold of its events over the
deal (from the latest snapshot on). An in-process cache keeps recent games, but
a command is written only if the log is still at the cached ``seq`` (the append
script checks it), so a stale cache costs a retry, never a wrong write.
"""

from __future__ import annotations

import asyncio
import logging
import random
import secrets
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import msgspec

from protocol.codec import encode
from protocol.commands import Command as WireCommand
from protocol.diffs import GameState, Stats
from protocol.fields import rfc3339
from protocol.ws import DiffMessage
from service import wire
from service.clock import Clock
from service.engine import (
    MAX_SEED,
    RULES_VERSION,
    Command,
    Draw,
    Game,
    IllegalCommand,
    Move,
    Resign,
    Rule,
    Status,
    Undo,
)
from service.errors import ApiError, to_api_error
from service.eventhash import START, event_hash
from service.metrics import Metrics
from service.settings import Settings
from service.store import meta as fields
from service.store.errors import Conflict, Duplicate, HintsChanged, NotFound
from service.store.games import GameMeta, Games
from service.store.meta import DailyTag

log = logging.getLogger("service.games")

# Rounds a command without expected_seq may lose to concurrent writers before 503.
_MAX_RACES = 64


class _Replayed(msgspec.Struct):
    """The one field of a stored event (a DiffMessage) that replaying it needs: the other
    fields are skipped unread."""

    command: WireCommand


_replayed = msgspec.json.Decoder(_Replayed)
_MS = timedelta(milliseconds=1)


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


def fingerprint(command: Command) -> str:
    """The command as the store keeps it with its command_id: a resend of the id is the
    same command when its fingerprint is the same (``move waste foundation 1``, ``draw``)."""
    if type(command) is Move:
        return f"move {command.from_} {command.to} {command.count}"
    return _WORD[type(command)]


_WORD: dict[type, str] = {Draw: "draw", Undo: "undo", Resign: "resign"}


def _command_of(fingerprint_: str) -> dict[str, Any]:
    """The JSON form of the command a fingerprint names."""
    kind, *move = fingerprint_.split(" ")
    if kind == "move" and len(move) == 3:
        return {"type": "move", "from": move[0], "to": move[1], "count": int(move[2])}
    return {"type": kind}


def decode_event(data: bytes) -> Command:
    """The engine's command of a stored event, to replay it."""
    return wire.engine_command(_replayed.decode(data).command)


@dataclass(slots=True)
class Loaded:
    """One game as of ``seq``: its metadata and the engine's game."""

    game_id: str
    meta: GameMeta  # as created; what changes with play is kept below
    game: Game
    seq: int
    started_at: datetime | None = None  # the first command
    finished_at: datetime | None = None  # the command that made it won or resigned
    last_at: datetime | None = None  # the latest command
    hash: str = START  # the hash of the event at seq (START at seq 0): see eventhash.py
    hints: int = 0  # hints taken (counted in the meta, beside the log)

    @property
    def owner(self) -> str:
        return self.meta.owner


def _same(a: Loaded, b: Loaded) -> bool:
    """Whether two reads of a game found it as it was (the hash chains every event)."""
    return (a.seq == b.seq and a.hash == b.hash and a.hints == b.hints and a.meta == b.meta
            and a.last_at == b.last_at)


FinalHook = Callable[[Loaded], Awaitable[None]]
# Called as a game is made, before it is stored: (owner, game_id, variant, created_at).
CreateHook = Callable[[str, str, str, datetime], Awaitable[None]]


@dataclass
class GameService:
    store: Games
    settings: Settings
    clock: Clock
    metrics: Metrics
    on_final: list[FinalHook] = field(default_factory=list)
    on_create: list[CreateHook] = field(default_factory=list)
    cache_size: int = 10_000
    _cache: OrderedDict[str, Loaded] = field(default_factory=OrderedDict)

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
            owner=owner, rules_version=str(RULES_VERSION), created_at=self._now(),
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
        self._remember(loaded)
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
        cached = self._cache.get(game_id)
        if cached is not None and _same(cached, loaded):
            # The cache has it already: keep that one. Each hello reads its game, and a
            # burst of hellos made as many copies, the last of each kept for good: the
            # long-lived copies, scattered among the sockets' memory, kept most of it
            # from being given back once the sockets closed (benchmarks/README.md, "Memory").
            loaded = cached
        self._remember(loaded)
        return loaded

    def _remember(self, loaded: Loaded) -> None:
        cache = self._cache
        cache[loaded.game_id] = loaded
        cache.move_to_end(loaded.game_id)
        while len(cache) > self.cache_size:
            cache.popitem(last=False)

    # --- access ----------------------------------------------------------------------
    def can_read(self, loaded: Loaded, player: str | None) -> bool:
        if player is not None and player == loaded.owner:
            return True
        readable_from = loaded.meta.readable_from
        if readable_from:  # a daily attempt: nobody else may look until its day is over
            return self.clock.now() >= readable_from
        return loaded.meta.public

    def check_read(self, loaded: Loaded, player: str | None) -> None:
        if not self.can_read(loaded, player):
            raise ApiError("not_found", f"no game {loaded.game_id!r}")  # private: 404, not 403

    def check_command(self, loaded: Loaded, player: str | None) -> None:
        if player is None:
            if not self.can_read(loaded, None):
                raise ApiError("not_found", f"no game {loaded.game_id!r}")
            raise ApiError("unauthorized",
                           "a command needs the owner's token (Authorization: Bearer)")
        if player != loaded.owner:
            self.check_read(loaded, player)
            raise ApiError("forbidden", "only the game's owner may send commands to it")
        closes_at = loaded.meta.closes_at
        if closes_at is not None and self.day_is_over(loaded.meta):
            raise ApiError("forbidden", "the challenge is over", {"closes_at": rfc3339(closes_at)})

    def takes_no_moves(self, meta: GameMeta, seq: int) -> bool:
        """Whether the game at ``seq`` refuses every command but resign (and so lists no
        legal move): a daily attempt whose day is over, or a game that has had the most
        commands a game may have (``settings.max_commands_per_game``)."""
        return seq >= self.settings.max_commands_per_game or self.day_is_over(meta)

    def day_is_over(self, meta: GameMeta) -> bool:
        """The game is a daily attempt whose day is over: fixed, it takes no more commands
        (403 "the challenge is over") and so has no legal moves. False for any other game."""
        closes_at = meta.closes_at
        return closes_at is not None and self.clock.now() >= closes_at

    # --- reading ---------------------------------------------------------------------
    def seed_visible(self, loaded: Loaded) -> bool:
        meta = loaded.meta
        if meta.seed_from:  # a daily challenge's seed: hidden until its day is over
            return self.clock.now() >= meta.seed_from
        if meta.seed_secret:
            return loaded.game.status.is_final
        return True

    def stats(self, loaded: Loaded) -> Stats:
        started, finished = loaded.started_at, loaded.finished_at
        end = finished or loaded.last_at
        duration = max(0, (end - started) // _MS) if started and end else 0
        return Stats(moves=loaded.game.moves, foundation_cards=loaded.game.foundation_cards,
                     started_at=rfc3339(started) if started else None,
                     finished_at=rfc3339(finished) if finished else None, duration_ms=duration,
                     hints=loaded.hints)

    def state(self, loaded: Loaded) -> GameState:
        """The redacted state of PROTOCOL.md."""
        game = loaded.game
        return GameState(
            game_id=loaded.game_id, variant=game.variant.id, options=game.variant.options,
            seq=loaded.seq, status=wire.status(game.status), piles=wire.piles(game.public_piles()),
            stats=self.stats(loaded), public=loaded.meta.public,
            seed=game.seed if self.seed_visible(loaded) else None, owner=loaded.owner,
        )

    def hint_taken(self, loaded: Loaded, count: int) -> None:
        """Remember the game's new hint count (kept in the meta by the caller)."""
        cached = self._cache.get(loaded.game_id)
        for one in (loaded, cached):
            if one is not None:
                one.hints = max(one.hints, count)

    # --- commanding -------------------------------------------------------------------
    async def command(self, game_id: str, player: str | None, command: Command,
                      expected_seq: int | None, command_id: str | None) -> tuple[int, bytes]:
        """Apply one command; the new seq and the stored event (the diff message).

        Raises ApiError: 401/403/404 (access), 409 (stale ``expected_seq``, or a
        ``command_id`` used before for another command), 422 (illegal). A repeated
        ``command_id`` with the same command returns the first result and applies nothing.
        """
        command_key = fingerprint(command)
        cached = self._cache.get(game_id)
        loaded = cached or await self.load(game_id)
        fresh = cached is None  # just read from the log, not from our cache
        attempt = 0
        while True:
            attempt += 1
            try:
                self.check_command(loaded, player)
            except ApiError as err:
                # An idempotent resend after the game closed (a daily attempt's day ended)
                # still gets its first result: only the owner, who sent it, may see it.
                if err.code == "forbidden" and command_id is not None and player == loaded.owner:
                    first = await self.store.first_application(game_id, command_id)
                    if first is not None:
                        self._same_command(game_id, command_id, *first, command_key)
                        return first[0], await self._event(game_id, first[0])
                raise
            if expected_seq is not None and expected_seq != loaded.seq and attempt == 1:
                loaded, fresh = await self.load(game_id), True  # our cache may be behind the log
                continue
            try:
                if expected_seq is not None and expected_seq != loaded.seq:
                    raise Conflict(game_id, expected_seq, loaded.seq)
                return await self._append(loaded, command, command_id, command_key)
            except Duplicate as dup:
                self._same_command(game_id, dup.command_id, dup.seq, dup.fingerprint, command_key)
                return dup.seq, await self._duplicate(game_id, dup.seq)
            except Conflict as exc:
                if command_id is not None:
                    first = await self.store.first_application(game_id, command_id)
                    if first is not None:
                        self._same_command(game_id, command_id, *first, command_key)
                        return first[0], await self._duplicate(game_id, first[0])
                if expected_seq is not None:
                    self.metrics.commands_refused.inc("conflict")
                    raise ApiError("conflict", f"the game is at seq {exc.current_seq}, "
                                   f"not at the expected seq {expected_seq}",
                                   {"seq": exc.current_seq, "expected_seq": expected_seq}) from None
                # No expected_seq: the client asked for "whatever the state is now", so
                # another writer going first is not its conflict (409 is kept for a stale
                # expected_seq). Retry, with a jittered pause that grows, until the
                # request deadline ends it (503) or _MAX_RACES rounds are lost.
                if attempt >= _MAX_RACES:
                    raise ApiError("unavailable", f"the game kept changing under this command "
                                   f"({attempt} concurrent commands went first); send it again",
                                   {"seq": exc.current_seq}, retry_after_s=1) from None
                await asyncio.sleep(random.uniform(0, min(0.05, 0.002 * attempt)))
                loaded, fresh = await self.load(game_id), True
            except ApiError as err:
                if err.code == "illegal_move" and not fresh:
                    # Refused by our cache, which may be behind the log (another instance, or a
                    # slower load that remembered an older seq): only the log may refuse.
                    loaded, fresh = await self.load(game_id), True
                    continue
                if err.code == "illegal_move" and command_id is not None:
                    first = await self.store.first_application(game_id, command_id)
                    if first is not None:
                        self._same_command(game_id, command_id, *first, command_key)
                        return first[0], await self._duplicate(game_id, first[0])
                self.metrics.commands_refused.inc(err.code)
                raise

    def _same_command(self, game_id: str, command_id: str, seq: int, first: str,
                      sent: str) -> None:
        """Refuse (409) a command_id sent again with another command than its first: a
        client's bug that a first result would pass off as success (an id kept without a
        fingerprint, before they were kept, passes)."""
        if first and first != sent:
            self.metrics.commands_refused.inc("conflict")
            raise ApiError("conflict", f"command_id {command_id!r} was used for another command "
                           f"(at seq {seq} of game {game_id!r}: {first}); a new command needs "
                           f"a new command_id",
                           {"command_id": command_id, "command": _command_of(first), "seq": seq})

    async def _duplicate(self, game_id: str, seq: int) -> bytes:
        """The first result of a resent command; and what the first attempt may not have
        finished (its instance died, or its reply was lost before the hooks ran): the
        cache learns the game, and the final-state hooks run (they are idempotent)."""
        event = await self._event(game_id, seq)
        loaded = await self.load(game_id)
        if loaded.game.status.is_final or loaded.game.status is Status.LOST:
            await self._run_final_hooks(loaded)
        return event

    async def _run_final_hooks(self, loaded: Loaded) -> None:
        for hook in self.on_final:
            try:
                await hook(loaded)
            except Exception:  # noqa: BLE001 - a hook must not undo an acknowledged command
                log.exception("final-state hook failed for game %s", loaded.game_id)

    async def _event(self, game_id: str, seq: int) -> bytes:
        data = await self.store.event_at(game_id, seq)
        if data is None:  # pragma: no cover - the log never loses an event it acknowledged
            raise ApiError("not_found", f"no event {seq} in game {game_id!r}")
        return data

    async def _append(self, loaded: Loaded, command: Command, command_id: str | None,
                      command_key: str) -> tuple[int, bytes]:
        limit = self.settings.max_commands_per_game
        if loaded.seq >= limit and not isinstance(command, Resign):
            raise ApiError("illegal_move",
                           f"this game has had {limit} commands, the most one game may have "
                           f"(SOLITAIRE_MAX_COMMANDS_PER_GAME): only resign is accepted now",
                           {"rule": Rule.COMMAND_LIMIT, "limit": "max_commands_per_game",
                            "seq": loaded.seq})
        try:
            game, diff = loaded.game.apply(command)
        except IllegalCommand as exc:
            err = to_api_error(exc)
            assert err is not None
            err.details.update({"seq": loaded.seq})
            raise err from None
        when = self._now()
        now = rfc3339(when)
        seq = loaded.seq + 1
        updates: dict[str, object] = {fields.STATUS: game.status.value, fields.MOVES: game.moves,
                                      fields.FOUNDATION_CARDS: game.foundation_cards,
                                      fields.LAST_AT: when}
        started = loaded.started_at
        if started is None:
            started = when
            updates[fields.STARTED_AT] = when
        final = game.status.is_final
        if final:
            updates[fields.FINISHED_AT] = when
        sent = wire.command(diff.command)
        digest = event_hash(loaded.hash, seq, encode(sent), now)
        updates[fields.HASH] = digest
        nxt = Loaded(loaded.game_id, loaded.meta, game, seq, started, when if final else None,
                     when, digest, loaded.hints)
        # The stored event is the WebSocket diff message itself, sent as is to every socket
        # (and, as a Diff, the REST command result's diff).
        event = encode(DiffMessage(seq=seq, command=sent, ops=wire.ops(diff.ops),
                                   status=wire.status(diff.status), stats=self.stats(nxt), at=now,
                                   hash=digest))
        snapshot = None
        every = self.settings.snapshot_every
        if every and seq % every == 0:
            snapshot = encode(wire.snapshot(game))
        ttl_s = self.final_ttl_s(loaded) if final else self.settings.game_ttl_s
        try:
            await self.store.append(loaded.game_id, loaded.seq, command_id, event,
                                    fields.to_texts(updates), ttl_s, snapshot, loaded.hints,
                                    command_key)
        except HintsChanged as changed:
            # A hint was taken through another instance since this one read the game: the
            # event's stats, kept in the log for good, must count it. Nothing was written.
            loaded.hints = changed.hints
            cached = self._cache.get(loaded.game_id)
            if cached is not None:
                cached.hints = changed.hints
            return await self._append(loaded, command, command_id, command_key)
        self.metrics.commands.inc(game.variant.id, type(command).__name__.lower())
        self._remember(nxt)
        if final or game.status is Status.LOST:
            await self._run_final_hooks(nxt)
        return seq, event

    def _now(self) -> datetime:
        """The clock's time as the store keeps times: in whole milliseconds."""
        when = self.clock.now()
        return when.replace(microsecond=when.microsecond // 1000 * 1000)

    def final_ttl_s(self, loaded: Loaded) -> int:
        """How long a won or resigned game is kept: ``finished_game_ttl_days``; a daily
        attempt as long as its day's leaderboard (``daily_keep_days`` after the day)."""
        closes_at = loaded.meta.closes_at
        if closes_at:
            until = closes_at + timedelta(days=self.settings.daily_keep_days)
            return max(1, int((until - self.clock.now()).total_seconds()))
        return max(1, self.settings.finished_game_ttl_days * 86_400)

    async def events(self, game_id: str, after: int, limit: int | None = None) -> list[bytes]:
        """The stored events after seq ``after`` (all of them unless ``limit``)."""
        return await self.store.events(game_id, after, limit)
