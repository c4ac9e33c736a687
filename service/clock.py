"""The service's clock, injectable so tests can move time (day rollover, expiry)."""

from __future__ import annotations

import time
from datetime import UTC, datetime


class Clock:
    """Wall-clock time in UTC."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def time(self) -> float:
        """Seconds since the epoch."""
        return time.time()


class FakeClock(Clock):
    """A clock that stands still until a test moves it."""

    def __init__(self, start: datetime) -> None:
        self._now = start

    def now(self) -> datetime:
        return self._now

    def time(self) -> float:
        return self._now.timestamp()

    def advance(self, seconds: float) -> None:
        from datetime import timedelta

        self._now += timedelta(seconds=seconds)

    def set(self, when: datetime) -> None:
        self._now = when
