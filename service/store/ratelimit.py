"""A rate limit per key, held in Redis so that it holds across service instances.

The algorithm is GCRA (the generic cell rate algorithm: a token bucket kept as
one number, the "theoretical arrival time"): ``burst`` requests may come at
once, then one every ``1 / rate_per_s`` seconds. One Lua script decides and
records atomically, so concurrent requests from several instances are counted
exactly once each.

The clock is the Redis server's (``TIME`` inside the script), so instances with
skewed clocks agree; a limiter given a :class:`~service.runtime.clock.Clock` counts by it instead.
"""

from __future__ import annotations

import secrets
from typing import NamedTuple

from service.runtime.clock import Clock
from service.store.connection import RedisConn, Script


class RateDecision(NamedTuple):
    allowed: bool
    # When refused: seconds until one more request would be allowed; else 0.
    retry_after_s: float


# KEYS: the limit's key. ARGV: interval_us (1 / rate), burst, now_us (-1: server
# TIME), cost (requests counted at once), request id.
# The key holds "<theoretical arrival time (TAT) in µs> <id of the request that
# set it>" and expires when the TAT is in the past (the bucket is full again),
# so idle keys cost nothing. A retry of a request whose reply was lost finds its
# own id and is allowed without being charged again.
_GCRA = Script("""
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
if now < 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local held = redis.call('GET', KEYS[1])
local tat = nil
if held then
  local sp = string.find(held, ' ', 1, true)
  if sp then
    if string.sub(held, sp + 1) == ARGV[5] then return {1, 0} end
    tat = tonumber(string.sub(held, 1, sp - 1))
  else
    tat = tonumber(held)
  end
end
tat = tat or now
if tat < now then tat = now end
local new_tat = tat + interval * tonumber(ARGV[4])
local limit = burst * interval
if new_tat - now > limit then
  return {0, new_tat - now - limit}
end
redis.call('SET', KEYS[1], string.format('%.0f', new_tat) .. ' ' .. ARGV[5], 'PX',
           math.ceil((new_tat - now) / 1000))
return {1, 0}
""")


class RateLimiter:
    """``await limiter.allow(keys.command_limit(player_id), rate_per_s, burst)``; ``clock``:
    the time it counts by (its ``time()``) in place of the store's (see the module)."""

    def __init__(self, redis: RedisConn, clock: Clock | None = None) -> None:
        self.redis = redis
        self.clock = clock

    async def allow(self, key: str, rate_per_s: float, burst: int, *,
                    cost: int = 1) -> RateDecision:
        """Count ``cost`` requests against ``key`` at once; say whether they may go ahead.

        All or none: a refused call counts nothing, and ``retry_after_s`` says
        when ``cost`` requests would be allowed (``cost`` > 1 is for callers
        that lease several requests at once). Raises StoreUnavailable when Redis
        is unreachable: the caller decides whether to fail open.
        """
        if rate_per_s <= 0 or burst < 1:
            raise ValueError(f"rate_per_s={rate_per_s} must be > 0 and burst={burst} >= 1")
        if not 1 <= cost <= burst:
            raise ValueError(f"cost={cost} must be between 1 and burst={burst}")
        interval_us = max(1, round(1_000_000 / rate_per_s))
        now_us = -1 if self.clock is None else round(self.clock.time() * 1_000_000)
        request_id = secrets.token_urlsafe(9)
        allowed, wait_us = await self.redis.run(
            _GCRA, [key], [interval_us, burst, now_us, cost, request_id])
        return RateDecision(bool(allowed), int(wait_us) / 1_000_000)
