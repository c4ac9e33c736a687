"""Counts held across an instance's worker processes: the limits documented "per instance".

Each worker process of an instance has a random token and a lease in the instance's
``workers`` sorted set (renewed every few seconds, ended on a clean stop). A count
(``ws:<address>``, ``watch:<game>``...) is a hash of worker token -> how many that
worker holds, written as an absolute number (a retried write lands once). Taking one
sums the live workers' fields and drops the fields of workers whose lease ran out, so
a killed worker's sockets and searches stop counting a lease after it died.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from service.store import keys
from service.store.connection import RedisConn, Script

_NOW_MS = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
"""

# KEYS: workers, then the counts. ARGV: token, lease_ms, keep_s, then per count: the
# most the instance may hold, and this worker's count with the new one. All or none.
_TAKE = Script(_NOW_MS + """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
for i = 2, #KEYS do
  local held = redis.call('HGETALL', KEYS[i])
  local others = 0
  for j = 1, #held, 2 do
    if held[j] ~= ARGV[1] then
      if redis.call('ZSCORE', KEYS[1], held[j]) then
        others = others + tonumber(held[j + 1])
      else
        redis.call('HDEL', KEYS[i], held[j])
      end
    end
  end
  if others + tonumber(ARGV[2 * i + 1]) > tonumber(ARGV[2 * i]) then
    return {0, i - 1, others}
  end
end
for i = 2, #KEYS do
  redis.call('HSET', KEYS[i], ARGV[1], ARGV[2 * i + 1])
  redis.call('EXPIRE', KEYS[i], ARGV[3])
end
return {1, 0, 0}
""")

# KEYS: counts. ARGV: token, keep_s, then this worker's count of each (0: none).
_SET = Script("""
for i = 1, #KEYS do
  if tonumber(ARGV[2 + i]) > 0 then
    redis.call('HSET', KEYS[i], ARGV[1], ARGV[2 + i])
    redis.call('EXPIRE', KEYS[i], ARGV[2])
  else
    redis.call('HDEL', KEYS[i], ARGV[1])
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

    def key(self, what: str) -> str:
        return keys.instance_count(self.instance, what)

    async def take(self, counts: Sequence[tuple[str, int, int]], lease_ms: int,
                   keep_s: int) -> Taken:
        """Count one more of each ``(what, most, mine)`` (``mine``: this worker's count with
        the new one) unless the instance would then hold more than ``most`` of any."""
        args: list[object] = [self.token, lease_ms, keep_s]
        for _, most, mine in counts:
            args += [most, mine]
        taken, which, others = await self.redis.run(
            _TAKE, [keys.instance_workers(self.instance), *(self.key(w) for w, _, _ in counts)],
            args)
        return Taken(bool(taken), int(which) - 1 if not taken else -1, int(others))

    async def set(self, counts: Sequence[tuple[str, int]], keep_s: int) -> None:
        """Write this worker's count of each ``(what, mine)``."""
        await self.redis.run(_SET, [self.key(w) for w, _ in counts],
                             [self.token, keep_s, *(mine for _, mine in counts)])

    async def renew(self, lease_ms: int) -> None:
        await self.redis.run(_RENEW, [keys.instance_workers(self.instance)],
                             [self.token, lease_ms])

    async def leave(self) -> None:
        """This worker's counts stop counting at once (a clean stop)."""
        await self.redis.execute("ZREM", keys.instance_workers(self.instance), self.token)
