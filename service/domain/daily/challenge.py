"""A daily challenge: one deal per variant per UTC date, the same for every player.

Pure functions of the date, the variant and the daily secret: candidate ``k``
of a day is an HMAC of ``(date, variant, k)`` under a key derived from the
daily secret (its own setting, not the token secret's), so it cannot be
predicted before the day and every instance derives the same one. Which ``k``
is the day's deal is the solver's finding, kept in Redis
(:mod:`service.domain.daily.deals`).
"""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from protocol.daily import Challenge
from protocol.fields import DATE_PATTERN, rfc3339
from service.domain.errors import ApiError
from service.engine import SEED_BITS

_DATE = re.compile(DATE_PATTERN)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ONE_MS = timedelta(milliseconds=1)


FIRST_DATE, LAST_DATE = date(1970, 1, 1), date(9998, 12, 31)  # a day and its end stay representable


def parse_date(text: str) -> date:
    """A ``YYYY-MM-DD`` calendar date, or 400 saying what is wrong."""
    if _DATE.match(text):
        try:
            day = date.fromisoformat(text)
        except ValueError:
            pass
        else:
            if FIRST_DATE <= day <= LAST_DATE:
                return day
            raise ApiError("bad_request", f"{text!r} is out of range: dates run from "
                           f"{FIRST_DATE} to {LAST_DATE}", {"field": "date"})
    raise ApiError("bad_request", f"{text!r} is not a UTC calendar date (YYYY-MM-DD)",
                   {"field": "date"})


def today(now: datetime) -> date:
    return now.astimezone(UTC).date()


def epoch_ms(when: datetime) -> int:
    """Milliseconds since the epoch, exactly (no float rounding)."""
    return (when - _EPOCH) // _ONE_MS


@dataclass(frozen=True, slots=True)
class Day:
    """A UTC date's challenge window: [starts_at, ends_at); ends_at is the next day's starts_at."""

    date: date

    @property
    def starts_at(self) -> datetime:
        return datetime.combine(self.date, time(0), tzinfo=UTC)

    @property
    def ends_at(self) -> datetime:
        return self.starts_at + timedelta(days=1)

    @property
    def iso(self) -> str:
        return self.date.isoformat()

    def is_over(self, now: datetime) -> bool:
        return now >= self.ends_at

    def has_begun(self, now: datetime) -> bool:
        return now >= self.starts_at

    def keep_s(self, now: datetime, keep_days: int) -> int:
        """Seconds from ``now`` until the day's data may go: ``keep_days`` after its end (>= 0)."""
        until = self.ends_at + timedelta(days=keep_days)
        return max(0, int((until - now).total_seconds()))


class Seeds:
    """The challenge seeds, from a key derived from the server secret."""

    def __init__(self, secret: bytes) -> None:
        # A key of its own, so a seed says nothing about the token signatures.
        self._key = hmac.new(secret, b"solitaire/daily-seed/v1", hashlib.sha256).digest()

    def seed(self, day: date, variant: str, k: int = 0) -> int:
        """The ``k``-th candidate deal of the day's secret sequence,
        ``HMAC(secret, date, variant, k)``.

        The day's challenge is the first candidate the solver proves winnable
        (:mod:`service.domain.daily.deals` finds it and keeps its ``k``)."""
        label = f"{day.isoformat()}/{variant}" + (f"/{k}" if k else "")
        digest = hmac.new(self._key, label.encode(), hashlib.sha256).digest()
        return int.from_bytes(digest[:8], "big") >> (64 - SEED_BITS)


def challenge_body(day: Day, variant: str, seed: int, par: int, now: datetime) -> Challenge:
    """One ``Challenge`` of PROTOCOL.md; the seed is null until the day is over.

    Only deals the solver proved winnable are published, so ``winnable`` is true;
    ``par`` is the length of the winning line it found (not proved the shortest)."""
    return Challenge(variant=variant, date=day.iso, starts_at=rfc3339(day.starts_at),
                     ends_at=rfc3339(day.ends_at), seed=seed if day.is_over(now) else None,
                     winnable=True, par=par)
