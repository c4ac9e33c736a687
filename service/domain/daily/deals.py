"""Choosing each day's deals: the first candidate of the day's sequence the solver wins.

For a date and a variant, candidates ``k = 0, 1, …`` are the deals
:meth:`Seeds.seed` derives; the day's challenge is the first one the solver
proves winnable within ``daily_solve_s``. The choice is made ahead of time by a
background task (today's at start-up if missing, tomorrow's as soon as today's
is done, so long before midnight), never on a request's path; by one instance
at a time (a Redis lock with an expiry, renewed between candidates); and kept
in Redis as ``k`` and ``par``, so a restart finds it. Until a day's four deals
are chosen, whatever needs them answers 503 with ``Retry-After``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from dataclasses import dataclass
from datetime import timedelta

from service.domain.daily.challenge import Day, Seeds, today
from service.domain.daily.periodic import Periodic
from service.domain.errors import ApiError
from service.domain.solutions import Solutions
from service.domain.solving import SolverPool
from service.engine import VARIANTS
from service.runtime.clock import Clock
from service.settings import Settings
from service.solver import Budget, SolveResult, solve_deal
from service.store.errors import StoreError
from service.store.solver import ChosenDeal, SolverStore

log = logging.getLogger("service.domain.daily.deals")

MAX_CANDIDATES = 1000  # no day needs this many; a bound on a broken solver
RETRY_AFTER_S = 5


@dataclass
class DailyDeals:
    settings: Settings
    clock: Clock
    store: SolverStore
    seeds: Seeds
    pool: SolverPool
    solutions: Solutions
    poll_s: float = 5.0

    def __post_init__(self) -> None:
        self._chosen: dict[tuple[str, str], ChosenDeal] = {}
        self.ready = False  # today's and tomorrow's deals all chosen, when last looked at
        self._job = Periodic("daily-deals", "choosing the daily deals", self.choose_ahead,
                             self.poll_s, log)
        # A held lock outlives one candidate's search with room to spare; it is renewed after each.
        self.lock_ms = int((self.settings.daily_solve_s * 2 + 30) * 1000)

    # --- reading ---------------------------------------------------------------------
    async def chosen(self, day: Day, variant: str) -> ChosenDeal | None:
        key = (day.iso, variant)
        deal = self._chosen.get(key)
        if deal is None:
            deal = await self.store.chosen(day.iso, variant)
            if deal is not None:
                if len(self._chosen) > 256:
                    self._chosen.clear()
                self._chosen[key] = deal
        return deal

    async def require(self, day: Day, variant: str) -> tuple[int, ChosenDeal]:
        """The day's seed and chosen deal; 503 while it is being chosen, 404 when never."""
        deal = await self.chosen(day, variant)
        if deal is None:
            raise self.not_chosen(day)
        return self.seeds.seed(day.date, variant, deal.k), deal

    def not_chosen(self, day: Day) -> ApiError:
        current = today(self.clock.now())
        if current <= day.date <= current + timedelta(days=1):
            return ApiError("unavailable", f"the challenges of {day.iso} are still being chosen "
                            f"(the solver proves each deal winnable first); "
                            f"retry in {RETRY_AFTER_S} s",
                            {"date": day.iso}, retry_after_s=RETRY_AFTER_S)
        if day.date > current:
            return ApiError("not_found", f"the challenges of {day.iso} are not chosen yet: a day's "
                            f"challenges are published from the day before "
                            f"(today is {current.isoformat()})",
                            {"date": day.iso})
        keep_days = self.settings.daily_keep_days
        if day.date >= current - timedelta(days=keep_days):
            # Within the days kept: a challenge chosen for it would be here.
            return ApiError("not_found", f"no challenge was chosen for {day.iso}",
                            {"date": day.iso})
        return ApiError("not_found", f"no challenge of {day.iso} is kept (challenges are kept "
                        f"{keep_days} days after their day)", {"date": day.iso})

    # --- choosing --------------------------------------------------------------------
    def budget(self) -> Budget:
        return Budget(max_nodes=self.settings.daily_solve_nodes,
                      max_seconds=self.settings.daily_solve_s)

    def keep_s(self, day: Day) -> int:
        return day.keep_s(self.clock.now(), self.settings.daily_keep_days) + 24 * 3600

    async def choose(self, day: Day, variant: str) -> ChosenDeal | None:
        """Choose the deal of ``day`` and ``variant`` unless it is chosen, or another
        instance is choosing it (then None: look again later)."""
        deal = await self.chosen(day, variant)
        if deal is not None:
            return deal
        token = secrets.token_hex(8)
        try:
            locked = await self.store.lock(day.iso, variant, token, self.lock_ms)
        except BaseException:
            # Stopped (or cut off) while asking: the store may have granted the lock
            # anyway, and it would block every chooser for lock_ms. Give it back.
            with contextlib.suppress(Exception):
                await asyncio.shield(self.store.release(day.iso, variant, token))
            raise
        if not locked:
            return None
        try:
            deal = await self.store.chosen(day.iso, variant)  # chosen while we took the lock?
            if deal is None:
                deal = await self._search(day, variant, token)
            self._chosen[(day.iso, variant)] = deal
            return deal
        finally:
            with contextlib.suppress(StoreError):
                await self.store.release(day.iso, variant, token)

    async def _search(self, day: Day, variant: str, token: str) -> ChosenDeal:
        started = time.perf_counter()
        for k in range(MAX_CANDIDATES):
            seed = self.seeds.seed(day.date, variant, k)
            result = await self._solve(variant, seed)
            if not await self.store.extend(day.iso, variant, token, self.lock_ms):
                log.warning("lost the lock choosing the %s deal of %s; the other chooser agrees",
                            variant, day.iso)
            if result.result == "won":
                await self.solutions.keep(variant, {}, seed, result)
                deal = await self.store.keep_chosen(
                    day.iso, variant, ChosenDeal(k, len(result.commands)), self.keep_s(day))
                log.info("chose the %s deal of %s: candidate %d, par %d "
                         "(%d nodes, %d ms; %.1f s in all)",
                         variant, day.iso, deal.k, deal.par, result.nodes, result.elapsed_ms,
                         time.perf_counter() - started)
                return deal
            log.info("the %s candidate %d of %s is %s after %d nodes, %d ms: trying the next",
                     variant, k, day.iso, result.result, result.nodes, result.elapsed_ms)
        raise RuntimeError(
            f"no winnable {variant} deal among {MAX_CANDIDATES} candidates of {day.iso}")

    async def _solve(self, variant: str, seed: int) -> SolveResult:
        return await self.pool.background(solve_deal, variant, {}, seed, self.budget(),
                                          what="a daily deal")

    async def choose_ahead(self) -> bool:
        """Today's deals, then tomorrow's; True when all are chosen."""
        current = today(self.clock.now())
        done = True
        for day in (Day(current), Day(current + timedelta(days=1))):
            # The variants asked at once; the pool's background process searches them in turn.
            chosen = await asyncio.gather(*(self.choose(day, variant) for variant in VARIANTS))
            done = done and all(deal is not None for deal in chosen)
        self.ready = done
        return done

    def start(self) -> None:
        self._job.start()

    async def stop(self) -> None:
        await self._job.stop()
