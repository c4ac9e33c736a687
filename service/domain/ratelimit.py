"""Rate limits that hold across instances, at a fraction of a round trip each.

Each :class:`Limiter` counts one kind of request (commands, reads, new games,
sign-ups, renames) per subject: a player, or a client address. Its bucket lives
in Redis (:mod:`service.store.ratelimit`), under the key its ``key`` function
makes of the subject (every limit's key is in :mod:`service.store.keys`). A
worker takes a small lease of requests from it at once and spends it locally
for at most a second (:data:`LEASE_S`), so a busy subject costs one Redis call per
few requests; across all workers a subject never gets more than the bucket allows.
A lease never holds more requests than the bucket refills in that second, so one
that runs out unspent costs a subject no more than it gets back meanwhile; a limit
slower than 2 a second leases nothing (with the default settings: sign-ups, new games
by a player, renames), so every one of its requests is counted in the store, whichever
worker it reaches, and a refusal means the bucket itself is empty.

A limit on reads (``reads=True``) lets a read through uncounted while the store
refuses writes (out of memory, a read-only replica: it still serves reads), rather
than refuse the read for a write it does not need; it says so in the log once, and
again once the store takes its writes back. Every other limit refuses (503).

:class:`Bucket` is a limit held in one process alone (a socket's hellos).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from service.domain.errors import ApiError, retry_seconds
from service.store.errors import StoreUnavailable
from service.store.ratelimit import RateDecision, RateLimiter

log = logging.getLogger(__name__)

LEASE_S = 1.0


@dataclass
class _Lease:
    tokens: int
    expires: float


@dataclass
class Limiter:
    store: RateLimiter
    key: Callable[[str], str]  # the subject's bucket: a function of service.store.keys
    rate_per_s: float
    burst: int
    lease_size: int = 8
    what: str = "requests"  # named in the refusal: "too many <what>"
    setting: str = "rate_limit_per_s"  # details.limit: the name of the limit's setting
    reads: bool = False  # counts reads: let them through while the store refuses writes
    shown_rate: str | None = None  # the rate as the refusal says it ("10 a day"; else "<n>/s")
    _leases: dict[str, _Lease] = field(default_factory=dict)
    _refused: str | None = None  # why the store refuses this limit's writes, while it does

    async def check(self, who: str) -> None:
        """Count one request by ``who`` (the limit's subject: a player id, or a client
        address); 429 when over the limit."""
        if self._spend(who):
            return
        key = self.key(who)
        size = max(1, min(self.lease_size, self.burst // 4, int(self.rate_per_s * LEASE_S)))
        decision = await self._allow(key, size)
        # Concurrent requests of one player each ask the store for a lease; one refused
        # may find the lease another one got meanwhile, which is as good as its own.
        if decision is not None and not decision.allowed and size > 1:
            if self._spend(who):
                return
            size = 1
            decision = await self._allow(key, 1)
        if decision is None:  # a read while the store refuses writes: let through, uncounted
            return
        if not decision.allowed:
            if self._spend(who):
                return
            raise rate_limited(self.what, self.rate_per_s, self.burst, decision.retry_after_s,
                               self.setting, self.shown_rate)
        self._keep(who, size - 1)

    async def _allow(self, key: str, cost: int) -> RateDecision | None:
        """The store's decision; None for a read while the store refuses writes."""
        try:
            decision = await self.store.allow(key, self.rate_per_s, self.burst, cost=cost)
        except StoreUnavailable as exc:
            if not self.reads or exc.reason is None:  # unreachable: the read would fail too
                raise
            if self._refused is None:
                log.warning("the store refuses the rate limit's writes (%s): %s go through "
                            "uncounted until it takes them again", exc.reason, self.what)
            self._refused = exc.reason
            return None
        if self._refused is not None:
            self._refused = None
            log.info("the store takes the rate limit's writes again: %s are counted again",
                     self.what)
        return decision

    def _spend(self, who: str) -> bool:
        lease = self._leases.get(who)
        if lease is not None and lease.tokens > 0 and lease.expires > time.monotonic():
            lease.tokens -= 1
            return True
        return False

    def _keep(self, who: str, tokens: int) -> None:
        now = time.monotonic()
        if len(self._leases) > 100_000:
            self._leases = {k: v for k, v in self._leases.items() if v.expires > now}
        lease = self._leases.get(who)
        if lease is not None and lease.expires > now:
            # Add to it: replacing it would throw away tokens the bucket has already
            # counted, refusing the player requests it allows.
            lease.tokens += tokens
        else:
            self._leases[who] = _Lease(tokens, now + LEASE_S)


def rate_limited(what: str, rate_per_s: float, burst: int, retry_after_s: float,
                 setting: str | None = None, shown_rate: str | None = None) -> ApiError:
    """The refusal of a rate limit: which limit (``details.limit``, its setting's name, as
    docs/protocol.md says), and when to retry (whole seconds, at least 1)."""
    retry = retry_seconds(retry_after_s)
    rate = shown_rate or f"{rate_per_s:g}/s"
    return ApiError("rate_limited", f"too many {what}: at most {rate} "
                    f"(bursts of {burst}); retry in {retry} s", {"limit": setting or what},
                    retry_after_s=retry)


@dataclass
class Bucket:
    """A token bucket held in this process alone (one socket's hellos): ``burst`` at
    once, then one every ``1 / rate_per_s`` seconds."""

    rate_per_s: float
    burst: int
    what: str = "requests"
    setting: str | None = None  # details.limit: the name of the limit's setting
    clock: Callable[[], float] = time.monotonic
    _tat: float = 0.0  # the theoretical arrival time, as in GCRA

    def take(self) -> None:
        """Count one; raise 429 ``rate_limited`` (with the wait) when over the limit."""
        now = self.clock()
        interval = 1.0 / self.rate_per_s
        tat = max(self._tat, now) + interval
        over = tat - now - self.burst * interval
        if over > 0:
            raise rate_limited(self.what, self.rate_per_s, self.burst, over, self.setting)
        self._tat = tat
