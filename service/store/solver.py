"""What the solver's work leaves in Redis: deals' solutions and each day's chosen deals.

Opaque data, like the rest of the store: a solution is the service's JSON
bytes; a chosen daily deal is two integers, ``k`` (which candidate of the
day's secret sequence won: the seed is derived again from it, never stored)
and ``par``. Choosing is guarded by a lock with an expiry per (date, variant),
so one instance at a time searches, and a dead one's lock runs out.
"""

from __future__ import annotations

from typing import NamedTuple

from service.store import keys, meta
from service.store.connection import RedisConn, Script


class ChosenDeal(NamedTuple):
    k: int
    par: int


# KEYS: deal; ARGV: k, par, ttl_s. The first choice stays (two choosers agree anyway).
_KEEP_DEAL = Script(f"""
if redis.call('HSETNX', KEYS[1], '{keys.DAILY_DEAL_K}', ARGV[1]) == 1 then
  redis.call('HSET', KEYS[1], '{keys.DAILY_DEAL_PAR}', ARGV[2])
end
if tonumber(ARGV[3]) > 0 then redis.call('EXPIRE', KEYS[1], ARGV[3]) end
return redis.call('HMGET', KEYS[1], '{keys.DAILY_DEAL_K}', '{keys.DAILY_DEAL_PAR}')
""")

# KEYS: lock; ARGV: token, ms. Extend the lock if it is still ours.
_EXTEND = Script("""
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
""")

# KEYS: lock; ARGV: token. Release the lock if it is still ours.
_RELEASE = Script("""
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
""")


class SolverStore:
    def __init__(self, redis: RedisConn) -> None:
        self.redis = redis

    # --- solutions ------------------------------------------------------------------
    async def solution(self, key: str) -> bytes | None:
        data: bytes | None = await self.redis.execute("GET", key)
        return data

    async def keep_solution(self, key: str, data: bytes, ttl_s: int) -> None:
        await self.redis.execute("SET", key, data, "EX", max(1, ttl_s))

    async def claim_search(self, key: str, ms: int) -> bool:
        """Whether this worker may search the solution ``key`` (no one else is, for ``ms``)."""
        return bool(await self.redis.execute("SET", keys.solution_searching(key), "1",
                                             "NX", "PX", ms))

    async def searched(self, key: str) -> None:
        """The search of ``key`` is over (its answer kept, or it failed)."""
        await self.redis.execute("DEL", keys.solution_searching(key))

    # --- daily deals ----------------------------------------------------------------
    async def chosen(self, date: str, variant: str) -> ChosenDeal | None:
        k, par = await self.redis.execute("HMGET", keys.daily_deal(date, variant),
                                          keys.DAILY_DEAL_K, keys.DAILY_DEAL_PAR)
        if k is None or par is None:
            return None
        return ChosenDeal(int(k), int(par))

    async def keep_chosen(self, date: str, variant: str, deal: ChosenDeal,
                          ttl_s: int) -> ChosenDeal:
        """Store the day's deal unless one is stored already; the one that stays."""
        k, par = await self.redis.run(_KEEP_DEAL, [keys.daily_deal(date, variant)],
                                      [deal.k, deal.par, ttl_s])
        return ChosenDeal(int(k), int(par))

    async def lock(self, date: str, variant: str, token: str, ms: int) -> bool:
        return bool(await self.redis.execute("SET", keys.daily_choosing(date, variant), token,
                                             "NX", "PX", ms))

    async def extend(self, date: str, variant: str, token: str, ms: int) -> bool:
        return bool(await self.redis.run(_EXTEND, [keys.daily_choosing(date, variant)],
                                         [token, ms]))

    async def release(self, date: str, variant: str, token: str) -> None:
        await self.redis.run(_RELEASE, [keys.daily_choosing(date, variant)], [token])

    # --- hints ----------------------------------------------------------------------
    async def count_hint(self, game_id: str) -> int | None:
        """Add one to the game's ``hints`` meta field; the new count (None: no such game)."""
        count = await self.redis.run(_COUNT_HINT, [keys.game_meta(game_id)], [meta.HINTS])
        return None if count is None else int(count)


# KEYS: meta; ARGV: field. Never creates a meta hash for a game that is gone.
_COUNT_HINT = Script("""
if redis.call('EXISTS', KEYS[1]) == 0 then return nil end
return redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
""")
