"""Solver searches per client address and per player, counted across the instance.

A hint or a solution not found before is a search in the solver's pool. One client
address may have ``solver_searches_per_address`` of them running or waiting at once on
an instance, and one player ``solver_searches_per_player`` (counted in the store across
the instance's worker processes, :mod:`service.domain.counts`); beyond that 429
``rate_limited`` with ``Retry-After``. A search is counted until it ends, not until its
request stops waiting for it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from service.domain.counts import InstanceCounts
from service.domain.errors import ApiError, retry_seconds
from service.settings import Settings


class Searches:
    def __init__(self, counts: InstanceCounts, settings: Settings) -> None:
        self.counts = counts
        self.settings = settings
        self._giving_back: set[asyncio.Task[None]] = set()

    async def take(self, what: str, address: str | None, player: str | None,
                   retry_s: float) -> list[str]:
        """Count one search by ``address`` and ``player`` (either may be None); 429 when
        either has its most. The counts taken, for :meth:`until_done`."""
        s = self.settings
        limits = []
        if address is not None:
            limits.append(("search:a:" + address, s.solver_searches_per_address))
        if player is not None:
            limits.append(("search:p:" + player, s.solver_searches_per_player))
        full = await self.counts.take(limits)
        if full is None:
            return [name for name, _ in limits]
        by_address = full.what.startswith("search:a:")
        who, setting = (("this address", "solver_searches_per_address") if by_address
                        else ("this player", "solver_searches_per_player"))
        most = s.solver_searches_per_address if by_address else s.solver_searches_per_player
        retry = retry_seconds(retry_s)
        raise ApiError("rate_limited",
                       f"{full.held} searches by {who} are running or waiting on this instance, "
                       f"at most {most} at once ({setting}): {what} could not be started; "
                       f"retry in {retry} s", {"limit": setting}, retry_after_s=retry)

    def until_done(self, taken: Sequence[str], search: asyncio.Future[Any]) -> None:
        """Give the counts back when ``search`` ends (done, failed or cancelled)."""
        search.add_done_callback(lambda _: self._give_back(taken))

    def _give_back(self, taken: Sequence[str]) -> None:
        task = asyncio.ensure_future(self.counts.give_back(taken))
        self._giving_back.add(task)
        task.add_done_callback(self._giving_back.discard)

    async def give_back(self, taken: Sequence[str]) -> None:
        await self.counts.give_back(taken)
