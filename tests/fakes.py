"""The fakes the tests may use (the house allows them for the clock only): each implements
an interface the service defines, so that the package holds nothing only tests use."""

from __future__ import annotations

from datetime import datetime, timedelta

from service.runtime.clock import Clock


class FakeClock(Clock):
    """A clock that stands still until a test moves it."""

    def __init__(self, start: datetime) -> None:
        self._now = start

    def now(self) -> datetime:
        return self._now

    def time(self) -> float:
        return self._now.timestamp()

    def advance(self, seconds: float) -> None:
        self._now += timedelta(seconds=seconds)

    def set(self, when: datetime) -> None:
        self._now = when
