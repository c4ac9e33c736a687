"""Counts held across an instance's worker processes: the limits documented "per instance".

Each worker process of an instance has a random token and a lease in the instance's
``workers`` sorted set (renewed every few seconds, ended on a clean stop). A count
(``ws:<address>``, ``watch:<game>``...) is a hash of worker token -> how many that
worker holds, written as an absolute number (a retried write lands once) with the number
of the worker's write that made it: ``"<count> <write>"``. A worker's writes can reach the
store out of their order (the store's batches in flight travel on several connections), and
one that arrives after a later one of the same worker changes nothing: the later one's
count already holds it (a count of 0 stays as ``"0 <write>"`` a while, for its number).
Taking one sums the live workers' fields and drops the fields of
workers whose lease ran out, so a killed worker's sockets and searches stop counting a
lease after it died.
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Sequence
from typing import NamedTuple

from service.store import keys
from service.store.connection import RedisConn, Script

_NOW_MS = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
"""

# A field's count and write number ("<count> <write>"; a bare count is write 0).
_FIELD = """
local function field(value)
  local count, write = string.match(value, '^(%d+) ?(%d*)$')
  return tonumber(count) or 0, tonumber(write) or 0
end
"""

# KEYS: workers, then the counts. ARGV: token, lease_ms, keep_s, this write's number, then
# per count: the most the instance may hold, and this worker's count with the new one. All
# or none. This very write found (a batch sent again after a lost reply): taken, as it was.
# A count this worker has written since (a later write arrived first) holds the new one
# already: it is judged by that count, and not written.
_TAKE = Script(_NOW_MS + _FIELD + """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
local write = tonumber(ARGV[4])
local stale = {}
for i = 2, #KEYS do
  local held = redis.call('HGETALL', KEYS[i])
  local others = 0
  local mine = tonumber(ARGV[2 * i + 2])
  for j = 1, #held, 2 do
    local count, written = field(held[j + 1])
    if held[j] == ARGV[1] then
      if written == write then return {1, 0, 0} end
      if written > write then
        mine = count
        stale[i] = true
      end
    elseif redis.call('ZSCORE', KEYS[1], held[j]) then
      others = others + count
    else
      redis.call('HDEL', KEYS[i], held[j])
    end
  end
  if others + mine > tonumber(ARGV[2 * i + 1]) then
    return {0, i - 1, others}
  end
end
for i = 2, #KEYS do
  if not stale[i] then redis.call('HSET', KEYS[i], ARGV[1], ARGV[2 * i + 2] .. ' ' .. write) end
  redis.call('EXPIRE', KEYS[i], ARGV[3])
end
return {1, 0, 0}
""")

# KEYS: counts. ARGV: token, keep_s, this write's number, then this worker's count of each.
# A count this worker has written since is left as it is. A count of 0 is kept as "0
# <write>", so that an earlier write arriving later still finds the number; a count whose
# fields are all 0 is kept only TOMBSTONE_S (longer than a batch is ever sent again).
_SET = Script(_FIELD + """
local write = tonumber(ARGV[3])
for i = 1, #KEYS do
  local now = redis.call('HGET', KEYS[i], ARGV[1])
  local _, written = field(now or '0')
  if written < write then
    redis.call('HSET', KEYS[i], ARGV[1], ARGV[3 + i] .. ' ' .. write)
    local held = redis.call('HVALS', KEYS[i])
    local total = 0
    for j = 1, #held do total = total + field(held[j]) end
    redis.call('EXPIRE', KEYS[i], total > 0 and ARGV[2] or ARGV[4 + #KEYS])
  end
end
return 1
""")

# KEYS: workers. ARGV: token, lease_ms.
_RENEW = Script(_NOW_MS + """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])  -- an instance gone for good leaves nothing
return 1
""")


TOMBSTONE_S = 300  # a count all of whose workers hold none is kept this long


class Taken(NamedTuple):
    taken: bool
    refused: int = -1  # which count was full (an index of the ones asked for)
    others: int = 0  # what the instance's other workers hold of it


class CountsStore:
    """One worker's access to its instance's counts."""

    def __init__(self, redis: RedisConn, instance: str, token: str) -> None:
        self.redis = redis
        self.instance = instance
        self.token = token
        self._writes = itertools.count(1)  # the number of each write, in the order of the calls

    def key(self, what: str) -> str:
        return keys.instance_count(self.instance, what)

    def take(self, counts: Sequence[tuple[str, int, int]], lease_ms: int,
             keep_s: int) -> Awaitable[Taken]:
        """Count one more of each ``(what, most, mine)`` (``mine``: this worker's count with
        the new one) unless the instance would then hold more than ``most`` of any. The
        write is numbered when called, so the order of the calls is the order of the writes."""
        args: list[object] = [self.token, lease_ms, keep_s, next(self._writes)]
        for _, most, mine in counts:
            args += [most, mine]
        return self._take([keys.instance_workers(self.instance),
                           *(self.key(w) for w, _, _ in counts)], args)

    async def _take(self, keys_: list[str], args: list[object]) -> Taken:
        taken, which, others = await self.redis.run(_TAKE, keys_, args)
        return Taken(bool(taken), int(which) - 1 if not taken else -1, int(others))

    def set(self, counts: Sequence[tuple[str, int]], keep_s: int) -> Awaitable[None]:
        """Write this worker's count of each ``(what, mine)`` (numbered when called)."""
        return self.redis.run(_SET, [self.key(w) for w, _ in counts],
                              [self.token, keep_s, next(self._writes),
                               *(mine for _, mine in counts), TOMBSTONE_S])

    async def renew(self, lease_ms: int) -> None:
        await self.redis.run(_RENEW, [keys.instance_workers(self.instance)],
                             [self.token, lease_ms])

    async def leave(self) -> None:
        """This worker's counts stop counting at once (a clean stop)."""
        await self.redis.execute("ZREM", keys.instance_workers(self.instance), self.token)
