"""Daily challenges and their leaderboards (UTC dates)."""

from __future__ import annotations

from typing import Annotated, Final

import msgspec
from msgspec import Meta

from .fields import Count, Date, Seed, Status, Timestamp, VariantId

LEADERBOARD_LIMIT_DEFAULT: Final = 20
LEADERBOARD_LIMIT_MAX: Final = 100


class Challenge(msgspec.Struct):
    """One variant's challenge of a day; `seed` is null until the day is over.

    `winnable`: the solver found a winning line from the deal (only such deals are
    published). `par`: the length of the shortest winning line it found, in
    commands; not proved optimal."""

    variant: VariantId
    date: Date
    starts_at: Timestamp
    ends_at: Timestamp
    seed: Seed | None
    winnable: bool
    par: Count


class DailyDay(msgspec.Struct):
    """`GET /v1/daily?date=`: the day's challenge for each variant."""

    date: Date
    challenges: list[Challenge]


class LeaderboardEntry(msgspec.Struct):
    """One ranked attempt. Ranking: won first, then more foundation cards, then
    shorter duration, then fewer moves, then earlier finish; attempts equal in all five
    are ordered by player id, each with a rank of its own."""

    rank: Annotated[int, Meta(ge=1)]
    player_id: str
    name: str
    game_id: str
    status: Status
    won: bool
    foundation_cards: Count
    moves: Count
    duration_ms: Count
    finished_at: Timestamp | None


class MyEntry(LeaderboardEntry):
    """The caller's own entry, with its neighbours in the ranking."""

    around: list[LeaderboardEntry]


class Leaderboard(msgspec.Struct):
    """A page of ranked entries; `next_cursor` is null on the last page, `me` null when
    the caller has no ranked attempt (or sent no token)."""

    entries: list[LeaderboardEntry]
    next_cursor: str | None
    me: MyEntry | None


# Query strings: unknown parameters are ignored, see protocol.rest.


class DailyQuery(msgspec.Struct):
    """`GET /v1/daily?date=`; without `date`, today (UTC)."""

    date: Date | None = None


class LeaderboardQuery(msgspec.Struct):
    """`GET /v1/daily/{date}/{variant}/leaderboard?limit=&cursor=`."""

    limit: Annotated[int, Meta(ge=1, le=LEADERBOARD_LIMIT_MAX)] = LEADERBOARD_LIMIT_DEFAULT
    cursor: Annotated[str, Meta(min_length=1, max_length=256)] | None = None
