"""A deal's solution: the solver's line from seq 0, computed once and kept in Redis.

Kept by (rules version, variant, options, seed), so every game of one deal
shares it, and the daily chooser's winning line serves the day's attempts.
A request waits at most the solving budget (plus a margin); past that it gets
503 with ``Retry-After`` while the search finishes and stores its answer for
the retry. Concurrent requests for one deal share one search: on one worker its
future, across workers and instances a claim in the store (the others get 503 with
``Retry-After`` until its answer is kept).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from collections.abc import Mapping
from concurrent.futures.process import BrokenProcessPool
from typing import Any, cast

import msgspec

from protocol.codec import encode
from protocol.solver import Solution, SolveResultName
from service.domain import wire
from service.domain.errors import ApiError, retry_seconds
from service.domain.searches import Searches
from service.domain.solving import WAIT_MARGIN_S, SolverPool, request_wait_s
from service.engine import RULES_VERSION, get_variant
from service.settings import Settings
from service.solver import Budget, SolveResult, solve_deal
from service.store import keys
from service.store.errors import StoreError
from service.store.solver import SolverStore

log = logging.getLogger("service.domain.solutions")

# Proved answers are kept long (a search can take seconds); an "unknown" only briefly,
# since a later search on a quieter machine may finish.
KEEP_PROVED_S = 90 * 24 * 3600
KEEP_UNKNOWN_S = 3600


def options_digest(options: Mapping[str, Any]) -> str:
    """A short digest of a variant's options, for keys."""
    return hashlib.sha256(msgspec.json.encode(dict(options), order="sorted")).hexdigest()[:16]


def solution_body(result: SolveResult) -> bytes:
    """The ``Solution`` body of PROTOCOL.md: the line only when won."""
    won = result.result == "won"
    return encode(Solution(result=cast(SolveResultName, result.result),
                           commands=[wire.command_of(c) for c in result.commands] if won else [],
                           nodes=result.nodes, elapsed_ms=result.elapsed_ms))


class Solutions:
    def __init__(self, pool: SolverPool, store: SolverStore, searches: Searches,
                 settings: Settings) -> None:
        self.pool = pool
        self.store = store
        self.searches = searches
        self.settings = settings
        self._running: dict[str, asyncio.Future[bytes]] = {}

    def budget(self) -> Budget:
        return Budget(max_nodes=self.settings.solution_solve_nodes,
                      max_seconds=self.settings.solution_solve_s)

    @staticmethod
    def key(variant: str, options: Mapping[str, Any], seed: int) -> str:
        """The deal's key; options as the variant completes them (defaults filled in), so
        ``{}`` and ``{"single_card_moves": false}`` are one deal."""
        full = get_variant(variant)(dict(options)).options
        return keys.solution(str(RULES_VERSION), variant, options_digest(full), seed)

    async def body(self, variant: str, options: Mapping[str, Any], seed: int,
                   address: str | None = None, player: str | None = None) -> bytes:
        """The deal's ``Solution`` body: from Redis, or searched now (503 when the pool is busy;
        429 when ``address`` or ``player`` has its most searches running or waiting)."""
        key = self.key(variant, options, seed)
        kept = await self.store.solution(key)
        if kept is not None:
            return kept
        running = self._running.get(key)
        if running is None:
            running = await self._start(key, variant, options, seed, address, player)
        # Within the request's deadline: past it the search goes on (and is kept), and the
        # client is told to come back for it.
        wait_s = request_wait_s(self.settings.solution_solve_s, self.settings.request_deadline_s)
        try:
            return await asyncio.wait_for(asyncio.shield(running), wait_s)
        except TimeoutError:
            raise self.still_searched(wait_s) from None
        except BrokenProcessPool:
            raise self.pool.busy_error("the solution", 1) from None

    def still_searched(self, waited_s: float = 0.0) -> ApiError:
        retry = retry_seconds(self.settings.solution_solve_s + WAIT_MARGIN_S - waited_s)
        return ApiError("unavailable", "the solution of this deal is still being searched "
                        f"(up to {self.settings.solution_solve_s:g} s); retry in {retry} s",
                        retry_after_s=retry)

    async def _start(self, key: str, variant: str, options: Mapping[str, Any], seed: int,
                     address: str | None, player: str | None) -> asyncio.Future[bytes]:
        """The search of ``key``, started now unless a request started it meanwhile."""
        what, budget_s = "the solution", self.settings.solution_solve_s
        taken = await self.searches.take(what, address, player, budget_s)
        running = self._running.get(key)  # started while this request was counted?
        if running is not None:
            await self.searches.give_back(taken)
            return running
        try:
            # One search of a deal at a time in the whole service: another worker's (or
            # instance's) is not started again here.
            # The claim lasts as long as the search may wait for its turn and run.
            claim_ms = int((budget_s * (1 + self.pool.queue) + WAIT_MARGIN_S) * 1000)
            if not await self.store.claim_search(key, claim_ms):
                kept = await self.store.solution(key)  # finished meanwhile?
                if kept is None:
                    raise self.still_searched()
                done: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
                done.set_result(kept)
                await self.searches.give_back(taken)
                return done
            try:
                search = self.pool.submit(solve_deal, variant, dict(options), seed,
                                          self.budget(), what=what, retry_s=budget_s,
                                          search=True)
            except BaseException:
                await self.store.searched(key)
                raise
        except BaseException:
            await self.searches.give_back(taken)
            raise
        self.searches.until_done(taken, search)
        running = asyncio.ensure_future(self._keep_when_done(key, search))
        self._running[key] = running
        running.add_done_callback(lambda done: self._finished(key, done))
        return running

    def _finished(self, key: str, done: asyncio.Future[bytes]) -> None:
        self._running.pop(key, None)
        if not done.cancelled() and done.exception() is not None:  # retrieved: a waiter may be gone
            log.warning("the solution search %s failed: %r", key, done.exception())

    async def _keep_when_done(self, key: str, search: asyncio.Future[SolveResult]) -> bytes:
        try:
            result = await search
            body = solution_body(result)
            await self.store.keep_solution(
                key, body, KEEP_PROVED_S if result.result != "unknown" else KEEP_UNKNOWN_S)
            return body
        finally:
            with contextlib.suppress(StoreError):
                await self.store.searched(key)

    async def keep(self, variant: str, options: Mapping[str, Any], seed: int,
                   result: SolveResult) -> None:
        """Keep a result found elsewhere (the daily chooser's winning line)."""
        ttl = KEEP_PROVED_S if result.result != "unknown" else KEEP_UNKNOWN_S
        await self.store.keep_solution(self.key(variant, options, seed), solution_body(result), ttl)
