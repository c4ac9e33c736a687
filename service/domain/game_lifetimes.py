"""How long the store keeps a game, and the times it records: a game with no command for
``game_ttl_s`` expires; a won or resigned one is kept ``finished_game_ttl_days``, and a
daily attempt as long as its day's leaderboard (``daily_keep_days`` after the day)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from service.runtime.clock import Clock
from service.settings import Settings
from service.store.games import GameMeta

# The microseconds past a whole millisecond, as timedeltas.
_SUB_MS = tuple(timedelta(microseconds=us) for us in range(1000))


@dataclass(frozen=True, slots=True)
class GameLifetimes:
    settings: Settings
    clock: Clock

    def now(self) -> datetime:
        """The clock's time as the store keeps times: in whole milliseconds."""
        when = self.clock.now()
        # A subtraction, not replace(microsecond=...): a third of its cost, every command.
        return when - _SUB_MS[when.microsecond % 1000]

    def ttl_s(self, meta: GameMeta, final: bool) -> int:
        """How long a game is kept after a command: :meth:`final_ttl_s` once ``final``."""
        return self.final_ttl_s(meta) if final else self.settings.game_ttl_s

    def final_ttl_s(self, meta: GameMeta) -> int:
        """How long a won or resigned game is kept: ``finished_game_ttl_days``; a daily
        attempt as long as its day's leaderboard (``daily_keep_days`` after the day)."""
        closes_at = meta.closes_at
        if closes_at:
            until = closes_at + timedelta(days=self.settings.daily_keep_days)
            return max(1, int((until - self.clock.now()).total_seconds()))
        return max(1, self.settings.finished_game_ttl_s)
