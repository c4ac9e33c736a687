"""The daily challenges in Redis: attempts, leaderboards, and ranking a day's end.

Everything of one challenge (date, variant) lives in one Cluster slot (see
``keys.daily_keys``) and every write is one Lua script over that slot only.

The leaderboard is a sorted set whose members all have score 0 and read
``<sort key><player_id>|<entry JSON>``: Redis orders equal scores
by bytes, so the fixed-width sort key orders the board exactly as the ranking
(no float precision to lose; the player id breaks full ties), and a page is a
single ``ZRANGE ... BYLEX`` whose members are the entries themselves (split into
:class:`Row` here; the service makes each the protocol's entry). A cursor is
the ``<sort key><player_id>`` of the last entry read: the next page starts just
after it, so entries added meanwhile shift nothing, none is skipped, none
repeated. The board keeps player ids, not names: a rename writes the player's
own hash and nothing here, and a page's names are read when it is shown
(:meth:`DailyStore.names`, one round trip for the page). Members written before
(``...|<entry JSON>|<name JSON>``) are read the same way, their name ignored.

Each attempt's standing is kept as ``<seq>|<sort key>|<entry JSON>`` per game:
a later write of the same game wins only with a higher seq, so writing an
entry is idempotent and the order of two writers (the game's final command,
the day's end) does not matter. A player's entry on the board is their best
attempt.

Like the rest of the store, this knows no rules: sort keys and entries are
computed by the service (:mod:`service.domain.daily.ranking`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import msgspec

from service.store import keys
from service.store import meta as mf
from service.store.connection import RedisConn, Script

# A board member begins with its sort key: fixed-width digits, filled by
# service.domain.daily.ranking (won, foundation cards short of all, duration, moves, finish).
WON_DIGITS, CARDS_DIGITS = 1, 3
DURATION_DIGITS = 11  # ms: three years
MOVES_DIGITS = 9
FINISH_DIGITS = 13  # ms since the epoch: up to the year 2286
KEY_LEN = WON_DIGITS + CARDS_DIGITS + DURATION_DIGITS + MOVES_DIGITS + FINISH_DIGITS
# Player ids go into members and rendered JSON as they are (the service makes them so);
# an entry's JSON holds no "|" (ids, statuses, numbers, times).
PLAYER_ID_PATTERN = r"[A-Za-z0-9_\-]{1,100}"
_PLAYER_ID = re.compile(f"^{PLAYER_ID_PATTERN}$")


_COMMON = f"""
local KEYLEN = {KEY_LEN}
local function key_of(v)  -- v = '<seq>|<sort key>|<json>'
  local bar = string.find(v, '|', 1, true)
  return string.sub(v, bar + 1, bar + KEYLEN), bar
end
local function seq_of(v)
  return tonumber(string.sub(v, 1, string.find(v, '|', 1, true) - 1))
end
local function json_of(v)
  local _, bar = key_of(v)
  return string.sub(v, bar + KEYLEN + 2)
end
-- a board member: '<sort key><player id>|<entry JSON>' (a member written before names
-- were read at display time has '|<name JSON>' after it)
local function split(m)
  local a = string.find(m, '|', KEYLEN + 1, true)
  local b = string.find(m, '|', a + 1, true)
  return string.sub(m, KEYLEN + 1, a - 1), string.sub(m, a + 1, (b or 0) - 1)
end
"""

# KEYS: board, entries, ranked, attempts, open
# ARGV: ttl_s, then per entry: player_id, game_id, seq, sort key, entry JSON
# ``ranked``: player -> their board member. Returns how many entries were written (the
# others were stale).
_RECORD = Script(_COMMON + """
local ttl = tonumber(ARGV[1])
local written = 0
for i = 2, #ARGV, 5 do
  local player, gid, seq, key, json =
    ARGV[i], ARGV[i+1], tonumber(ARGV[i+2]), ARGV[i+3], ARGV[i+4]
  local prev = redis.call('HGET', KEYS[2], gid)
  if not prev or seq_of(prev) < seq then
    written = written + 1
    redis.call('HSET', KEYS[2], gid, seq .. '|' .. key .. '|' .. json)
    redis.call('HDEL', KEYS[5], gid)
    local cur = redis.call('HGET', KEYS[3], player)
    local curkey, curgid = nil, nil
    if cur then
      local _, curjson = split(cur)
      curkey, curgid = string.sub(cur, 1, KEYLEN), string.match(curjson, '"game_id":"([^"]*)"')
    end
    local bkey, bjson = nil, nil
    if not cur or key < curkey then
      bkey, bjson = key, json
    elseif curgid == gid then
      -- the ranked attempt changed: the best of the player's attempts may be another one now
      bkey, bjson = key, json
      local list = redis.call('HGET', KEYS[4], player)
      if list then
        for other in string.gmatch(list, '%S+') do
          if other ~= gid then
            local v = redis.call('HGET', KEYS[2], other)
            if v and key_of(v) < bkey then bkey, bjson = key_of(v), json_of(v) end
          end
        end
      end
    end
    if bkey then
      local member = bkey .. player .. '|' .. bjson
      if cur ~= member then
        if cur then redis.call('ZREM', KEYS[1], cur) end
        redis.call('ZADD', KEYS[1], 0, member)
        redis.call('HSET', KEYS[3], player, member)
      end
    end
  end
end
if ttl > 0 then
  for i = 1, 5 do redis.call('EXPIRE', KEYS[i], ttl) end
end
return written
""")

# KEYS: board, ranked, closed
# ARGV: require_closed ('0'/'1'), start ('-' or '(<bound>'), limit, me (player id or ''), around
# Returns {-1} when the day must be ranked first, else {0, rank - 1 of the first member,
# more (0/1), members, my rank - 1 or -1, rank - 1 of the first near member, near members}.
# The members are split by the caller (Python is quicker at it than Redis's Lua, and
# Redis is the shared one).
_PAGE = Script("""
if ARGV[1] == '1' and redis.call('EXISTS', KEYS[3]) == 0 then return {-1} end
local limit = tonumber(ARGV[3])
local members = redis.call('ZRANGE', KEYS[1], ARGV[2], '+', 'BYLEX', 'LIMIT', 0, limit + 1)
local more = 0
if #members > limit then
  more = 1
  members[#members] = nil
end
local first = 0
if #members > 0 then first = redis.call('ZRANK', KEYS[1], members[1]) end
local rank, lo, near = -1, 0, {}
if ARGV[4] ~= '' then
  local m = redis.call('HGET', KEYS[2], ARGV[4])
  local r = m and redis.call('ZRANK', KEYS[1], m)
  if r then
    local around = tonumber(ARGV[5])
    rank, lo = r, math.max(0, r - around)
    near = redis.call('ZRANGE', KEYS[1], lo, r + around)
  end
end
return {0, first, more, members, rank, lo, near}
""")

# KEYS: attempts, open, over
# ARGV: player_id, game_id, limit, ttl_s
# Returns {0} reserved, {1, game ids} no attempt left, {2} the day is over.
# A retry of the same reservation (same game_id) finds it made and says so: it
# must not use up a second attempt for a game that is created once.
_RESERVE = Script("""
if redis.call('HGET', KEYS[2], ARGV[2]) == ARGV[1] then return {0} end
if redis.call('EXISTS', KEYS[3]) == 1 then return {2} end
local list = redis.call('HGET', KEYS[1], ARGV[1]) or ''
local n = 0
for _ in string.gmatch(list, '%S+') do n = n + 1 end
if n >= tonumber(ARGV[3]) then return {1, list} end
if list == '' then list = ARGV[2] else list = list .. ' ' .. ARGV[2] end
redis.call('HSET', KEYS[1], ARGV[1], list)
redis.call('HSET', KEYS[2], ARGV[2], ARGV[1])
local ttl = tonumber(ARGV[4])
if ttl > 0 then
  redis.call('EXPIRE', KEYS[1], ttl)
  redis.call('EXPIRE', KEYS[2], ttl)
end
return {0}
""")

# KEYS: attempts, open;  ARGV: player_id, game_id.  Undo a reservation whose game was not made.
_UNRESERVE = Script("""
local list = redis.call('HGET', KEYS[1], ARGV[1])
if list then
  local kept = {}
  for g in string.gmatch(list, '%S+') do if g ~= ARGV[2] then kept[#kept + 1] = g end end
  if #kept == 0 then redis.call('HDEL', KEYS[1], ARGV[1])
  else redis.call('HSET', KEYS[1], ARGV[1], table.concat(kept, ' ')) end
end
redis.call('HDEL', KEYS[2], ARGV[2])
return 1
""")

# KEYS: lock, over, closed, open;  ARGV: token, lock_ms, ttl_s
# Returns {2} ranked already, {1} another instance is ranking, {0, open attempts (flat hash)}.
# A retry by the lock's holder (same token) gets the lock it already took.
_BEGIN_CLOSE = Script("""
if redis.call('EXISTS', KEYS[3]) == 1 then return {2} end
if redis.call('GET', KEYS[1]) ~= ARGV[1]
   and not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return {1} end
redis.call('SET', KEYS[2], '1', 'EX', ARGV[3])
return {0, redis.call('HGETALL', KEYS[4])}
""")

# KEYS: lock, closed;  ARGV: token, ttl_s
_FINISH_CLOSE = Script("""
redis.call('SET', KEYS[2], '1', 'EX', ARGV[2])
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
""")

# KEYS: player hashes (single server only: they span slots).  Returns each one's name and
# when it joined, '' for either it has not.
_PROFILES = Script(mf.lua("""
local out = {}
for i, key in ipairs(KEYS) do
  local v = redis.call('HMGET', key, '$name', '$joined')
  out[2 * i - 1], out[2 * i] = v[1] or '', v[2] or ''
end
return out
""", name=mf.PLAYER_NAME, joined=mf.PLAYER_JOINED))


class Profile(NamedTuple):
    """What a board needs of a player: the ``name`` to show (None: the player's record is
    gone) and when it ``joined`` (seconds since the epoch; None: before that was kept)."""

    name: str | None
    joined_s: int | None


@dataclass(frozen=True, slots=True)
class Record:
    """One entry to write: ``member`` order is ``sort_key`` then ``player_id``."""

    player_id: str
    game_id: str
    seq: int
    sort_key: str
    entry: bytes


class Row(msgspec.Struct, frozen=True, gc=False):
    """One entry of a page as the board keeps it: its ``rank`` (from 1), the
    ``player_id`` and ``entry``, the entry's stored JSON (``Record.entry``). A Struct:
    a page makes many, and a Struct is made in a fifth of a NamedTuple's time."""

    rank: int
    player_id: str
    entry: bytes


@dataclass(frozen=True, slots=True)
class Page:
    """A page from the cursor on: ``entries`` in rank order, ``last`` the cursor
    (``<sort key><player id>``) of the last one, ``more`` whether entries follow.
    ``me``: the caller's entry (or None) and ``around`` its neighbours, ``around``
    entries either side."""

    entries: list[Row]
    last: bytes | None
    more: bool
    me: Row | None
    around: list[Row]

    def player_ids(self) -> list[str]:
        """Every player the page shows, once each (whose names it needs)."""
        rows = [*self.entries, *self.around] + ([self.me] if self.me is not None else [])
        return list(dict.fromkeys(row.player_id for row in rows))


@dataclass(frozen=True, slots=True)
class CloseStart:
    """``state``: "closed" (ranked already), "busy" (another instance ranks it) or "mine"
    (this caller holds the lock and must rank ``open_attempts``: game_id -> player_id)."""

    state: str
    open_attempts: dict[str, str]


def _row(member: bytes, rank: int) -> Row:
    """The entry of the board member ``<sort key><player id>|<entry>`` (a name kept
    after it by an older version is left out: names are read when shown)."""
    head, _, rest = member.partition(b"|")
    entry = rest.partition(b"|")[0]
    return Row(rank, head[KEY_LEN:].decode(), entry)


class DailyStore:
    """The daily challenges' data. All methods raise StoreUnavailable when Redis is unreachable."""

    def __init__(self, redis: RedisConn) -> None:
        self.redis = redis

    # --- attempts ------------------------------------------------------------------
    async def reserve(self, date: str, variant: str, player_id: str, game_id: str, limit: int,
                      ttl_s: int) -> tuple[str, list[str]]:
        """Count an attempt of ``player_id`` as ``game_id``: ("ok", []), ("used", their
        attempts' game ids) when ``limit`` are used, ("over", []) when the day is being ranked."""
        k = keys.daily_keys(date, variant)
        reply = await self.redis.run(_RESERVE, [k.attempts, k.open, k.over],
                                     [player_id, game_id, limit, ttl_s])
        code = int(reply[0])
        if code == 0:
            return "ok", []
        if code == 1:
            return "used", reply[1].decode().split()
        return "over", []

    async def unreserve(self, date: str, variant: str, player_id: str, game_id: str) -> None:
        k = keys.daily_keys(date, variant)
        await self.redis.run(_UNRESERVE, [k.attempts, k.open], [player_id, game_id])

    async def attempts(self, date: str, variant: str, player_id: str) -> list[str]:
        """The game ids of the player's attempts, oldest first."""
        raw = await self.redis.execute("HGET", keys.daily_keys(date, variant).attempts, player_id)
        return raw.decode().split() if raw else []

    # --- entries -------------------------------------------------------------------
    async def record(self, date: str, variant: str, records: Sequence[Record], ttl_s: int,
                     batch: int = 500) -> int:
        """Write entries (each kept only if its seq is newer than the stored one's) and
        rank each player by their best attempt; returns how many were written."""
        k = keys.daily_keys(date, variant)
        written = 0
        for start in range(0, len(records), batch):
            args: list[Any] = [ttl_s]
            for r in records[start:start + batch]:
                if len(r.sort_key) != KEY_LEN:
                    raise ValueError(f"a sort key has {KEY_LEN} characters, got {r.sort_key!r}")
                if not _PLAYER_ID.match(r.player_id):
                    raise ValueError(
                        f"a player id holds letters, digits, _ and -: got {r.player_id!r}")
                args += (r.player_id, r.game_id, r.seq, r.sort_key, r.entry)
            written += int(await self.redis.run(
                _RECORD, [k.board, k.entries, k.ranked, k.attempts, k.open], args))
        return written

    async def page(self, date: str, variant: str, after: bytes | None, limit: int, me: str | None,
                   around: int, require_closed: bool) -> Page | None:
        """A page of up to ``limit`` entries after the entry ``after`` (``<sort key><player
        id>``; None: from the top), and the caller's entry with ``around`` entries either
        side, in one script. None when ``require_closed`` and the day has not been ranked
        yet."""
        k = keys.daily_keys(date, variant)
        # Just after every member of that entry: '<sort key><player id>|...' < '...|\xff'.
        start = b"-" if after is None else b"(" + after + b"|\xff"
        reply = await self.redis.run(
            _PAGE, [k.board, k.ranked, k.closed],
            ["1" if require_closed else "0", start, limit, me or "", around])
        if int(reply[0]) < 0:
            return None
        _, first, more, members, rank, lo, near = reply
        entries = [_row(m, int(first) + 1 + i) for i, m in enumerate(members)]
        last = members[-1][:members[-1].index(b"|", KEY_LEN)] if members else None
        mine, neighbours = None, []
        if int(rank) >= 0:
            rank, lo = int(rank), int(lo)
            at = rank - lo
            mine = _row(near[at], rank + 1)
            neighbours = [_row(m, lo + 1 + i) for i, m in enumerate(near) if i != at]
        return Page(entries, last, bool(more), mine, neighbours)

    async def size(self, date: str, variant: str) -> int:
        return int(await self.redis.execute("ZCARD", keys.daily_keys(date, variant).board))

    # --- the day's end -------------------------------------------------------------
    async def begin_close(self, date: str, variant: str, token: str, lock_ms: int,
                          ttl_s: int) -> CloseStart:
        """Take the lock to rank the day's open attempts (and refuse new attempts from now)."""
        k = keys.daily_keys(date, variant)
        reply = await self.redis.run(_BEGIN_CLOSE, [k.lock, k.over, k.closed, k.open],
                                     [token, lock_ms, max(1, ttl_s)])
        code = int(reply[0])
        if code == 2:
            return CloseStart("closed", {})
        if code == 1:
            return CloseStart("busy", {})
        flat = reply[1]
        return CloseStart("mine", {flat[i].decode(): flat[i + 1].decode()
                                   for i in range(0, len(flat), 2)})

    async def finish_close(self, date: str, variant: str, token: str, ttl_s: int) -> None:
        k = keys.daily_keys(date, variant)
        await self.redis.run(_FINISH_CLOSE, [k.lock, k.closed], [token, max(1, ttl_s)])

    async def is_closed(self, date: str, variant: str) -> bool:
        return bool(await self.redis.execute("EXISTS", keys.daily_keys(date, variant).closed))

    # --- players -------------------------------------------------------------------
    async def profiles(self, player_ids: Sequence[str]) -> dict[str, Profile]:
        """Each player's name and when it joined, in one round trip, however many.

        A single server reads them all in one script that declares every key it
        reads (as MGET would); a Cluster, where each player is a slot of their
        own, gets one pipeline of HMGETs split by node.
        """
        if not player_ids:
            return {}
        fields = (mf.PLAYER_NAME, mf.PLAYER_JOINED)
        if self.redis.is_cluster:
            replies = await self.redis.pipeline(
                [("HMGET", keys.player(pid), *fields) for pid in player_ids])
            flat = [value for reply in replies for value in reply]
        else:
            flat = await self.redis.run(_PROFILES, [keys.player(pid) for pid in player_ids], [])
        return {pid: Profile(name.decode() if name else None, int(joined) if joined else None)
                for pid, name, joined in zip(player_ids, flat[::2], flat[1::2], strict=True)}
