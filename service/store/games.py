"""The event log of a game, in Redis.

A game is its metadata (:class:`GameMeta`, a hash), its log of events (a list
of opaque bytes: the event with seq ``n`` is at index ``n - 1``), the
command_ids it has applied (a hash: command_id -> seq) and its latest snapshot
(opaque bytes and the seq they describe). The store knows nothing of the
rules: it checks seq and command_id, nothing else.

Every write is one Lua script, so it is atomic and one round trip. An append
also publishes ``b"<seq> <event>"`` on the game's channel: from inside the
script under ``durability=memory`` (and under ``local`` on a store that fsyncs
before it replies), otherwise once the event is durable
(durability.py), so no listener sees an event that a crash could still take
back. A listener never sees a published event that is not in the log; one that
misses a publish fills the gap from the log at the next event.

Durability: a command is acknowledged when the append script returns and, unless
``settings.durability`` is ``memory``, once the store has fsynced it (``local``) or
also passed it to a replica (``replicated``): see durability.py. With ``memory``,
Redis has it in memory and in its append-only file buffer. Under ``appendfsync
everysec`` (the default) a crash of the machine or its OS may lose up to about
two seconds of acknowledged commands, and so may a killed Redis process when
the disk is slow (Redis postpones the AOF write while an earlier fsync runs,
but still answers); ``appendfsync always`` (an fsync before the reply) closes
that window, at a cost in throughput.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

import msgspec

from service.store import keys
from service.store import meta as mf
from service.store.connection import RedisConn, Script
from service.store.durability import Publish
from service.store.errors import (
    Conflict,
    Duplicate,
    GameExists,
    HintsChanged,
    Inconsistent,
    NotFound,
    StoreError,
    StoreUnavailable,
)

logger = logging.getLogger(__name__)


# Prefix of the command_ids the store makes up for commands sent without one,
# so that redis-py's retry after a broken connection cannot apply a command
# twice (the retry finds its own id and reports the first application).
_AUTO_ID_PREFIX = "~"


@dataclass(frozen=True, slots=True)
class GameMeta:
    """What the store keeps about a game besides its log: each field of the meta
    catalogue (service/store/meta.py) is the attribute of the same name, of its kind's
    type, but for ``create_id`` (the create script's own). None: not in the hash.

    The fields each command changes (``moves`` .. ``finished_at``, ``hash``) and
    ``hints`` are as they were when the meta was read: ``Games.append`` and the
    solver's store change them in the hash, not here.
    """

    variant: str
    seed: int
    owner: str
    rules_version: str
    created_at: datetime
    options: dict[str, Any] = field(default_factory=dict)  # the variant's options
    status: str = "playing"
    public: bool = False
    seq: int = 0
    seed_secret: bool = False
    # a daily attempt's tags
    daily: mf.DailyTag | None = None
    readable_from: datetime | None = None
    seed_from: datetime | None = None
    closes_at: datetime | None = None
    # changed by each command, with its event
    moves: int | None = None
    foundation_cards: int | None = None
    started_at: datetime | None = None
    last_at: datetime | None = None
    finished_at: datetime | None = None
    hash: str | None = None
    # beside the log
    hints: int | None = None

    def to_fields(self) -> dict[str, str]:
        """The hash fields (those not None), every value as text."""
        return mf.to_texts({name: value for name in _ATTRIBUTES
                            if (value := getattr(self, name)) is not None})

    @classmethod
    def from_fields(cls, raw: Mapping[bytes, bytes] | Mapping[str, str]) -> GameMeta:
        """Inverse of :meth:`to_fields` (accepts the bytes a Redis hash returns); fields
        outside the catalogue are left out."""
        f = {(k.decode() if isinstance(k, bytes) else k): v for k, v in raw.items()}
        try:
            return cls(**{name: mf.from_text(name, f[name]) for name in _ATTRIBUTES if name in f})
        except (TypeError, ValueError) as exc:  # a required field missing, a value malformed
            raise StoreError(f"malformed game metadata ({exc!r}): {f!r}") from None

    def replace(self, **changes: object) -> GameMeta:
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]


_ATTRIBUTES = tuple(f.name for f in dataclasses.fields(GameMeta))


class Attempt(NamedTuple):
    """What ranking a daily attempt reads of its game (the meta fields ``mf.ATTEMPT``)."""

    owner: str
    seq: int
    status: str
    moves: int
    foundation_cards: int | None  # None: no command yet
    started_at: datetime | None
    last_at: datetime | None
    finished_at: datetime | None


class LoadedGame(NamedTuple):
    """Everything needed to rebuild a game's state: fold ``events`` (which
    carry seqs ``snapshot_seq + 1`` .. ``meta.seq``) over the snapshot, or over
    the initial deal when ``snapshot`` is None (then ``snapshot_seq`` is 0)."""

    meta: GameMeta
    snapshot: bytes | None
    snapshot_seq: int
    events: list[bytes]


# KEYS: meta.  ARGV: ttl_s, create_id, field, value, ...
# A retry of the same call (redis-py resends a script whose reply was lost) finds
# its own create_id and reports success instead of "exists".
_CREATE = Script(mf.lua("""
if redis.call('EXISTS', KEYS[1]) == 1 then
  if redis.call('HGET', KEYS[1], '$create_id') == ARGV[2] then return 1 end
  return 0
end
redis.call('HSET', KEYS[1], '$create_id', ARGV[2], unpack(ARGV, 3))
local ttl = tonumber(ARGV[1])
if ttl > 0 then redis.call('EXPIRE', KEYS[1], ttl) end
return 1
""", create_id=mf.CREATE_ID))

_LOAD = Script("""
local meta = redis.call('HGETALL', KEYS[1])
if #meta == 0 then return false end
local snap = redis.call('HMGET', KEYS[4], 'seq', 'data')
local from = tonumber(snap[1]) or 0
return {meta, from, snap[2], redis.call('LRANGE', KEYS[2], from, -1)}
""")

# A game's keys get their time to live again only once it has fallen this far below the
# lifetime asked for (or the lifetime changed), and when a command makes a key (the first
# event makes the events and the cmds, a snapshot may make the snap): so a game is kept
# ttl_s (up to this much less) after its last command. Four EXPIREs on every command were
# a third of the store's CPU for the script, and each went to the append-only file.
TTL_SLACK_S = 60

# KEYS: meta, events, cmds, snap, channel
# ARGV: the call (a msgpack list: expected_seq, command_id (never empty), ttl_s (0 = persist),
#       publish ('p': PUBLISH, 's': SPUBLISH, '-': none, the caller publishes once durable),
#       expected_hints (-1 = not checked), the command's fingerprint (kept with its
#       command_id), then the meta updates as field, value, ...), the
#       event, and the snapshot when there is one. The call is one argument rather than one
#       per value: redis-py's cost of a command grows with its arguments, and this is the
#       service's most frequent command.
#       The event and the snapshot stay arguments of their own: the scripts' cmsgpack
#       decodes no msgpack bin, and as plain arguments they reach Lua uncopied.
# Returns {0, new_seq} | {1} not found | {2, "<seq> <fingerprint>"} duplicate | {3, seq} conflict |
#         {4, hints} the hints taken are not expected_hints (the event's stats say how many).
_APPEND = Script(mf.lua("""
local call = cmsgpack.unpack(ARGV[1])
local kept = redis.call('HMGET', KEYS[1], '$seq', '$hints')
local seq = kept[1]
if not seq then return {1} end
local cid = call[2]
local first = redis.call('HGET', KEYS[3], cid)
if first then return {2, first} end
seq = tonumber(seq)
if seq ~= call[1] then return {3, seq} end
if call[5] >= 0 then
  local hints = tonumber(kept[2]) or 0
  if hints ~= call[5] then return {4, hints} end
end
local new = seq + 1
redis.call('RPUSH', KEYS[2], ARGV[2])
if #call > 6 then
  redis.call('HSET', KEYS[1], '$seq', new, unpack(call, 7))
else
  redis.call('HSET', KEYS[1], '$seq', new)
end
redis.call('HSET', KEYS[3], cid, new .. ' ' .. call[6])
if #ARGV > 2 then redis.call('HSET', KEYS[4], 'seq', new, 'data', ARGV[3]) end
local ttl = call[3]
local left = redis.call('TTL', KEYS[1])
if ttl > 0 then
  if left < ttl - $slack or left > ttl or new == 1 or #ARGV > 2 then
    for i = 1, 4 do redis.call('EXPIRE', KEYS[i], ttl) end
  end
elseif left ~= -1 then
  for i = 1, 4 do redis.call('PERSIST', KEYS[i]) end
end
local publish = call[4]
if publish ~= '-' then
  local payload = new .. ' ' .. ARGV[2]
  if publish == 's' then
    redis.call('SPUBLISH', KEYS[5], payload)
  else
    redis.call('PUBLISH', KEYS[5], payload)
  end
end
return {0, new}
""", seq=mf.SEQ, hints=mf.HINTS, slack=TTL_SLACK_S))

_pack = msgspec.msgpack.Encoder().encode


def _first(raw: bytes | str | int) -> tuple[int, str]:
    """The seq and fingerprint of a command_id's value in the cmds hash: ``<seq> <fingerprint>``
    (a bare seq when it was kept before fingerprints were)."""
    text = raw.decode() if isinstance(raw, bytes) else str(raw)
    seq, _, fingerprint = text.partition(" ")
    return int(seq), fingerprint


@functools.lru_cache(maxsize=2048)  # every command of a game makes the same five keys
def _append_keys(game_id: str) -> tuple[str, ...]:
    return (*keys.game_keys(game_id), keys.game_channel(game_id))


class Games:
    """The games' event logs. All methods raise StoreUnavailable when Redis is unreachable."""

    def __init__(self, redis: RedisConn) -> None:
        self.redis = redis

    async def create(self, game_id: str, meta: GameMeta, ttl_s: int | None) -> None:
        """Store a new game at seq 0 (``meta.seq`` is ignored); raise :class:`GameExists`
        if the id is taken. ``ttl_s=None``: kept until deleted."""
        fields = meta.replace(seq=0).to_fields()
        args: list[str] = [str(ttl_s or 0), secrets.token_urlsafe(12)]
        for name, value in fields.items():
            args += (name, value)
        created = await self.redis.run(_CREATE, [keys.game_meta(game_id)], args)
        if not created:
            raise GameExists(game_id)
        await self.redis.durable(keys.game_durable(game_id))

    async def load(self, game_id: str) -> LoadedGame:
        """Meta, latest snapshot and the events after it, in one round trip.

        Raises :class:`NotFound`.
        """
        reply = await self.redis.run(_LOAD, keys.game_keys(game_id), [])
        if reply is None:
            raise NotFound(game_id)
        flat, snapshot_seq, snapshot, events = reply
        meta = GameMeta.from_fields(dict(zip(flat[::2], flat[1::2], strict=True)))
        loaded = LoadedGame(meta, snapshot, int(snapshot_seq), list(events))
        if loaded.snapshot_seq + len(loaded.events) != meta.seq:
            # A log cut or rewritten under the meta (a partial restore, a bug): folding it
            # would serve a state that is not the game's. Refuse it, loudly.
            logger.error("game %s refused: its snapshot is at seq %d and %d events follow, "
                         "but its meta says seq %d", game_id, loaded.snapshot_seq,
                         len(loaded.events), meta.seq)
            raise Inconsistent(game_id, loaded.snapshot_seq, len(loaded.events), meta.seq)
        return loaded

    async def append(
        self,
        game_id: str,
        expected_seq: int,
        command_id: str | None,
        event: bytes,
        meta_updates: Mapping[str, str] | None = None,
        ttl_s: int | None = None,
        snapshot: bytes | None = None,
        expected_hints: int | None = None,
        fingerprint: str = "",
    ) -> int:
        """Append one event at ``expected_seq + 1``, atomically; return the new seq.

        In the same step: set the meta fields ``meta_updates`` (e.g. ``status``),
        remember ``command_id`` (when given), store ``snapshot`` (the state
        *after* this event, at the new seq) when given, set the time to live of
        every key of the game (``ttl_s`` seconds; ``None``: keep the game, as a
        finished one is kept) and publish ``b"<new seq> <event>"`` on the game's
        channel.

        ``fingerprint`` (the command, as the caller writes it: no spaces at its ends) is
        kept with ``command_id``, so that a resend of the id can be told whether it
        carries the same command (:meth:`first_application`).

        Raises :class:`NotFound`; :class:`Duplicate` (with the seq and fingerprint of the
        first application) when ``command_id`` was applied before, whatever
        ``expected_seq`` says; :class:`Conflict` (with the current seq) when the
        game is not at ``expected_seq``; :class:`HintsChanged` (with the count) when
        ``expected_hints`` is given and the game's hints taken differ (the event's stats
        would be stale: a hint taken through another instance); :class:`StoreUnavailable`.
        A command
        that failed with StoreUnavailable may or may not have been applied:
        sending it again with the same ``command_id`` is safe.
        """
        if meta_updates:
            if mf.SEQ in meta_updates:
                raise ValueError("meta_updates may not set seq: append sets it")
            if not mf.NAMES.issuperset(meta_updates):
                unknown = set(meta_updates) - mf.NAMES
                raise ValueError(f"not a meta field of the catalogue (service/store/meta.py): "
                                 f"{sorted(unknown)}")
        own_id = command_id is None
        if command_id is None:
            cid = f"{_AUTO_ID_PREFIX}{secrets.token_urlsafe(9)}"
        elif command_id:
            cid = command_id
        else:
            raise ValueError("command_id may not be empty")
        # Both answered without a coroutine but when the store must be asked (seldom).
        redis = self.redis
        sharded = redis.sharded_pubsub()
        if not isinstance(sharded, bool):
            sharded = await sharded
        durability = redis.durability
        deferred = durability.needs_wait()  # published once durable
        if not isinstance(deferred, bool):
            deferred = await deferred
        asked = durability.generation
        call: list[str | int] = [expected_seq, cid, ttl_s or 0,
                                 "-" if deferred else "s" if sharded else "p",
                                 -1 if expected_hints is None else expected_hints,
                                 fingerprint]
        if meta_updates:
            for item in meta_updates.items():
                call += item
        args = [_pack(call), event] if snapshot is None else [_pack(call), event, snapshot]
        try:
            reply = await self.redis.run(_APPEND, _append_keys(game_id), args)
        except StoreUnavailable as exc:
            exc.sent = True  # the script may have run: the outcome is unknown
            raise
        code = int(reply[0])
        if deferred and code in (0, 2):
            # Acknowledged only once durable; a duplicate too (its first application's
            # wait may have failed, and the client is about to be told it happened).
            publish = None
            if code == 0:
                payload = str(reply[1]).encode() + b" " + event
                publish = Publish(keys.game_channel(game_id), payload, sharded)
            await self.redis.durable(keys.game_durable(game_id), publish)
        elif code in (0, 2) and durability.generation != asked:
            # A connection was made since the store said it fsyncs before it replies: the
            # script may have run on another store process (restarted with other settings).
            # Its diff is out already; its ack waits until that store is asked too.
            await self.redis.durable(keys.game_durable(game_id))
        if code == 0:
            return int(reply[1])
        if code == 1:
            raise NotFound(game_id)
        if code == 2:
            first_seq, first = _first(reply[1])
            if own_id:
                # Our own first attempt was applied before its reply was lost.
                return first_seq
            raise Duplicate(game_id, cid, first_seq, first)
        if code == 4:
            raise HintsChanged(game_id, int(reply[1]))
        raise Conflict(game_id, expected_seq, int(reply[1]))

    async def events(self, game_id: str, after: int = 0, limit: int | None = None) -> list[bytes]:
        """The events with seq ``after + 1``, ``after + 2``, ... (at most ``limit``).

        An unknown game gives ``[]``, as does ``after`` at or past the end.
        """
        if after < 0:
            raise ValueError(f"after={after} must be >= 0")
        stop = -1 if limit is None else after + limit - 1
        if limit is not None and limit <= 0:
            return []
        return list(await self.redis.execute("LRANGE", keys.game_events(game_id), after, stop))

    async def event_at(self, game_id: str, seq: int) -> bytes | None:
        """The event with this seq, or None."""
        if seq < 1:
            return None
        result: bytes | None = await self.redis.execute("LINDEX", keys.game_events(game_id),
                                                        seq - 1)
        return result

    async def first_application(self, game_id: str, command_id: str) -> tuple[int, str] | None:
        """The seq at which ``command_id`` was applied and the fingerprint of its command
        ("" when it was kept without one), or None."""
        raw = await self.redis.execute("HGET", keys.game_commands(game_id), command_id)
        return None if raw is None else _first(raw)

    async def metas(self, game_ids: Sequence[str],
                    names: tuple[str, ...]) -> list[dict[str, Any] | None]:
        """The meta fields ``names`` of each game (name -> value, None where the hash has
        no such field), read in one pipeline; None for a game that is not kept."""
        replies = await self.redis.pipeline([("HMGET", keys.game_meta(gid), *names)
                                             for gid in game_ids])
        return [None if all(raw is None for raw in reply) else
                {name: None if raw is None else mf.from_text(name, raw)
                 for name, raw in zip(names, reply, strict=True)}
                for reply in replies]

    async def attempts(self, game_ids: Sequence[str], keep_s: int,
                       final: Sequence[str]) -> list[Attempt | None]:
        """Each game's :class:`Attempt` (None: no such game), read in one pipeline; a game
        whose status is not one of ``final`` is kept at least ``keep_s`` more, so its log
        stays readable as long as the leaderboard that links to it."""
        calls = [("EVAL", _ATTEMPT.source, 4, *keys.game_keys(gid), keep_s, " ".join(final))
                 for gid in game_ids]
        out: list[Attempt | None] = []
        for reply in await self.redis.pipeline(calls):
            if not reply:
                out.append(None)
                continue
            f = {name: mf.from_text(name, raw) if raw is not None else None
                 for name, raw in zip(mf.ATTEMPT, reply, strict=True)}
            out.append(Attempt(owner=f[mf.OWNER] or "", seq=f[mf.SEQ] or 0,
                               status=f[mf.STATUS] or "", moves=f[mf.MOVES] or 0,
                               foundation_cards=f[mf.FOUNDATION_CARDS],
                               started_at=f[mf.STARTED_AT], last_at=f[mf.LAST_AT],
                               finished_at=f[mf.FINISHED_AT]))
        return out


# One game's slot. KEYS: meta, events, cmds, snap;  ARGV: keep_s, the final statuses (spaced).
_ATTEMPT = Script(mf.lua("""
local f = redis.call('HMGET', KEYS[1], $fields)
if not f[1] then return false end
local keep = tonumber(ARGV[1])
if keep > 0 and not string.find(' ' .. ARGV[2] .. ' ', ' ' .. f[$status] .. ' ', 1, true) then
  for i = 1, 4 do redis.call('EXPIRE', KEYS[i], keep, 'GT') end
end
return f
""", fields=mf.lua_list(mf.ATTEMPT),
                          status=mf.ATTEMPT.index(mf.STATUS) + 1))
