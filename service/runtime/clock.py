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

