"""Applying a command to a game: check it, apply it with the engine, append its event to
the log, and retry what a race lost.

A command is written only if the log is still at the ``seq`` it was applied to (the
append script checks it): a stale cached game, or another writer going first, costs a
reload and another round, never a wrong write. A ``command_id`` makes a resend safe: the
same command sent again gets its first result and applies nothing; another command
under the same id is refused (409).
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from protocol.codec import encode
from protocol.fields import rfc3339
from protocol.ws import DiffMessage
from service.domain import game_views, wire
from service.domain.errors import ApiError, to_api_error
from service.domain.eventhash import event_hash
from service.domain.fingerprints import command_of, fingerprint
from service.domain.game_access import GameAccess
from service.domain.game_cache import GameCache
from service.domain.game_lifetimes import GameLifetimes
from service.domain.loaded import Loaded
from service.engine import Command, IllegalCommand, Status
from service.runtime.metrics import Metrics
from service.settings import Settings
from service.store import meta as fields
from service.store.errors import Conflict, Duplicate, HintsChanged
from service.store.games import Games

log = logging.getLogger("service.domain.games")

# Rounds a command without expected_seq may lose to concurrent writers before 503.
_MAX_RACES = 64

FinalHook = Callable[[Loaded], Awaitable[None]]


@dataclass
class GameCommands:
    store: Games
    settings: Settings
    metrics: Metrics
    access: GameAccess
    lifetimes: GameLifetimes
    cache: GameCache
    load: Callable[[str], Awaitable[Loaded]]  # the game as the log has it now
    on_final: list[FinalHook] = field(default_factory=list)

    async def command(self, game_id: str, player: str | None, command: Command,
                      expected_seq: int | None, command_id: str | None) -> tuple[int, bytes]:
        """Apply one command; the new seq and the stored event (the diff message).

        Raises ApiError: 401/403/404 (access), 409 (stale ``expected_seq``, or a
        ``command_id`` used before for another command), 422 (illegal). A repeated
        ``command_id`` with the same command returns the first result and applies nothing.
        """
        command_key = fingerprint(command)
        cached = self.cache.get(game_id)
        loaded = cached or await self.load(game_id)
        fresh = cached is None  # just read from the log, not from our cache
        attempt = 0
        while True:
            attempt += 1
            try:
                self.access.check_command(loaded, player)
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
                           {"command_id": command_id,
                            "command": wire.command_json(command_of(first)), "seq": seq})

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
        self.access.check_command_limit(loaded, command)
        try:
            game, diff = loaded.game.apply(command)
        except IllegalCommand as exc:
            err = to_api_error(exc)
            assert err is not None
            err.details.update({"seq": loaded.seq})
            raise err from None
        when = self.lifetimes.now()
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
                                   status=wire.status(diff.status), stats=game_views.stats(nxt),
                                   at=now, hash=digest))
        snapshot = None
        every = self.settings.snapshot_every
        if every and seq % every == 0:
            snapshot = encode(wire.snapshot(game))
        ttl_s = self.lifetimes.ttl_s(loaded.meta, final)
        try:
            await self.store.append(loaded.game_id, loaded.seq, command_id, event,
                                    fields.to_texts(updates), ttl_s, snapshot, loaded.hints,
                                    command_key)
        except HintsChanged as changed:
            # A hint was taken through another instance since this one read the game: the
            # event's stats, kept in the log for good, must count it. Nothing was written.
            loaded.hints = changed.hints
            cached = self.cache.get(loaded.game_id)
            if cached is not None:
                cached.hints = changed.hints
            return await self._append(loaded, command, command_id, command_key)
        self.metrics.commands.inc(game.variant.id, type(command).__name__.lower())
        self.cache.remember(nxt)
        if final or game.status is Status.LOST:
            await self._run_final_hooks(nxt)
        return seq, event
