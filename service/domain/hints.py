"""Hints: one suggested command from what the player sees, the face-down cards unknown.

The solver (in the pool) samples completions of the face-down cards from the
cards not visible and suggests the command that wins the most samples. Its
sampling seed is a digest of the visible view (variant, options, public piles)
only, so two games that look the same (and have shown the same views before: the hint
does not lead back to one) get the same hint wherever their face-down cards really
are; and the hidden cards never go into the search: one job in the pool
(service/domain/hint_job.py) rebuilds the views the game has shown from its snapshot,
then searches from the public view and those views' keys (face-down counts and face-up
cards) alone.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import msgspec

from service.domain.hint_job import hint_in_game
from service.domain.searches import Searches
from service.domain.solving import SolverPool, request_wait_s
from service.engine import Game
from service.settings import Settings
from service.solver import Budget, HintResult, seen_stock


def view_seed(variant: str, options: Mapping[str, Any], piles: Mapping[str, Any],
              known: Mapping[str, Any] | None = None) -> int:
    """The sampling seed of a visible position: a digest of exactly what the player sees
    (and, with ``known``, the face-down cards the player has seen: Gilbert's stock)."""
    shown: dict[str, Any] = {"variant": variant, "options": dict(options), "piles": dict(piles)}
    if known:
        shown["known"] = {k: list(v) for k, v in known.items()}
    view = msgspec.json.encode(shown, order="sorted")
    return int.from_bytes(hashlib.sha256(b"solitaire/hint/v1\0" + view).digest()[:8], "big")


class Hints:
    def __init__(self, pool: SolverPool, searches: Searches, settings: Settings) -> None:
        self.pool = pool
        self.searches = searches
        self.settings = settings

    def budget(self) -> Budget:
        return Budget(max_nodes=self.settings.hint_sample_nodes,
                      max_seconds=self.settings.hint_sample_s)

    async def suggest(self, game: Game, no_moves: bool = False, address: str | None = None,
                      player: str | None = None) -> HintResult:
        """The hint for ``game``'s public view (503 when the pool is busy; 429 when
        ``address`` or ``player`` has its most searches); none when no move or draw is
        legal, or the game takes none (``no_moves``: at the most commands a game may have).
        The view alone cannot say so: a lost Gilbert game still shows a stock to turn
        over, but accepts only undo and resign, which are never suggested."""
        if no_moves or not game.legal_moves():
            return HintResult(None, 0, 0)
        variant, options = game.variant.id, dict(game.variant.options)
        piles = game.public_piles()
        # Gilbert's stock once a pass has shown it: the player knows it, so the samples do.
        stock = seen_stock(game)
        known = {"stock": list(stock)} if stock is not None else None
        s = self.settings
        wait_s = request_wait_s(s.hint_samples * s.hint_sample_s, s.request_deadline_s)
        taken = await self.searches.take("a hint", address, player, wait_s)
        try:
            # The snapshot goes to the pool only to rebuild the views the game has shown
            # (a hint does not lead back to them); the search gets the public view.
            job = self.pool.submit(
                hint_in_game, game.snapshot(), variant, options, piles,
                samples=s.hint_samples, budget_per_sample=self.budget(), known=known,
                rng_seed=view_seed(variant, options, piles, known),
                what="a hint", retry_s=wait_s)
        except BaseException:
            await self.searches.give_back(taken)
            raise
        self.searches.until_done(taken, job)
        return await self.pool.wait(job, "a hint", wait_s)
