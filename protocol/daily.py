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
    are ordered by player id, each with a rank of its own. Marked entries come after the
    unmarked ones, in groups ordered the same way within: `new_player` alone, then
    `machine_paced` alone, then both; so no machine-paced entry ranks above a
    human-paced one.

    `new_player`: the player signed up after the challenge's day began (UTC), so a
    player made on the day cannot rank above those of its kind (human-paced, or
    machine-paced) who were there before it.
    `machine_paced`: faster than a person can play (less than the server's
    `machine_pace_ms_per_move`, 100 ms by default, per move on average, over 10 moves
    or more)."""

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
    new_player: bool = False
    machine_paced: bool = False


class MyEntry(LeaderboardEntry, kw_only=True):
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
