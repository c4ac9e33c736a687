"""Constrained value types shared by the messages: cards, pile ids, seq, times.

The constraints live in the types (``msgspec.Meta``) so that decoding a
request rejects bad input with a 400 before any rule runs, and so that the
JSON Schema in ``openapi.yaml`` states them to clients.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Final, Literal, TypeAlias, get_args

from msgspec import Meta

from service.engine.game import MAX_SEED, SEED_BITS

Card: TypeAlias = Annotated[
    str,
    Meta(
        pattern=r"^[A2-9TJQK][CDHS]$",
        description="A card: rank A 2-9 T J Q K, then suit C D H S (`TD` is the ten of diamonds).",
        examples=["7H", "TD"],
    ),
]

# Up to three digits: no layout has 1,000 piles, and it bounds the input size.
_INDEX = r"(0|[1-9][0-9]{0,2})"

PileId: TypeAlias = Annotated[
    str,
    Meta(
        pattern=rf"^(stock|waste|(foundation|tableau|reserve)/{_INDEX})$",
        description="A pile id: `stock`, `waste`, `foundation/N`, `tableau/N` or `reserve/N`.",
        examples=["tableau/3"],
    ),
]

# A move's destination may also be the bare word "foundation": any foundation
# that accepts the card, the server picks the lowest index.
PileTarget: TypeAlias = Annotated[
    str,
    Meta(
        pattern=rf"^(stock|waste|foundation|(foundation|tableau|reserve)/{_INDEX})$",
        description=(
            "A pile id, or `foundation`: the lowest-index foundation that accepts the card."
        ),
        examples=["foundation/1", "foundation"],
    ),
]

Seq: TypeAlias = Annotated[
    int, Meta(ge=0, description="How many commands the game has applied: its version.")
]
Count: TypeAlias = Annotated[int, Meta(ge=0)]

Status: TypeAlias = Literal["playing", "won", "lost", "resigned"]

# The limit is the engine's (a deal is defined for these seeds); JavaScript clients
# read numbers as doubles, which keeps every such seed exact.
Seed: TypeAlias = Annotated[
    int,
    Meta(ge=0, lt=MAX_SEED, description=f"A deal number, 0 <= seed < 2^{SEED_BITS}."),
]

Timestamp: TypeAlias = Annotated[
    str,
    Meta(
        pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$",
        description="An RFC 3339 UTC time.",
        examples=["2026-03-01T12:00:00.000Z"],
        extra_json_schema={"format": "date-time"},
    ),
]

# YYYY-MM-DD; the service also parses query strings and paths with it (parse_date).
DATE_PATTERN = r"^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$"
Date: TypeAlias = Annotated[
    str,
    Meta(
        pattern=DATE_PATTERN,
        description="A UTC calendar date, YYYY-MM-DD.",
        examples=["2026-03-01"],
        extra_json_schema={"format": "date"},
    ),
]

VariantId: TypeAlias = Annotated[
    str,
    Meta(pattern=r"^[a-z][a-z0-9_]{0,31}$", description="A variant id.", examples=["gilbert"]),
]

# Names are shown to other players on leaderboards: no control characters. The rest of
# the rules (NFKC, visible characters only, the length after NFKC) are service/domain/players.py's.
PLAYER_NAME_MAX = 32
PlayerName: TypeAlias = Annotated[
    str, Meta(min_length=1, max_length=PLAYER_NAME_MAX, pattern=r"^[^\x00-\x1f\x7f]+$")
]

EventHash: TypeAlias = Annotated[
    str,
    Meta(
        pattern=r"^[0-9a-f]{16}$",
        description=(
            "The event's identity beyond its seq: the first 16 hex digits of SHA-256 over the "
            "previous event's hash, the seq, the command's JSON and `at`, so it names the whole "
            "log up to this event. A client holding a different hash at this seq holds a log "
            "the store no longer has (a failover rewrote it): it must resynchronise (reconnect "
            "without `since`)."
        ),
    ),
]

def _pattern(type_: Any) -> str:
    pattern: str = get_args(type_)[1].pattern
    return pattern


# Each pattern above in words: what an error message says instead of the pattern.
PATTERN_WORDS: Final[dict[str, str]] = {
    _pattern(Card): "a card (a rank A 2-9 T J Q K, then a suit C D H S, as in `TD`)",
    _pattern(PileId): "a pile id (`stock`, `waste`, `foundation/N`, `tableau/N` or `reserve/N`)",
    _pattern(PileTarget): "a pile id (`stock`, `waste`, `foundation/N`, `tableau/N`, "
                          "`reserve/N`) or `foundation`",
    _pattern(Timestamp): "an RFC 3339 UTC time (as in 2026-03-01T12:00:00.000Z)",
    DATE_PATTERN: "a UTC calendar date (YYYY-MM-DD)",
    _pattern(VariantId): "a variant id (a lowercase letter, then up to 31 lowercase letters, "
                         "digits or _)",
    _pattern(PlayerName): "a name without control characters",
    _pattern(EventHash): "an event hash (16 hex digits)",
}

CommandId: TypeAlias = Annotated[
    str,
    Meta(
        min_length=1,
        max_length=64,
        description="A client-chosen id that makes a command idempotent.",
    ),
]

OptionValue: TypeAlias = bool | int | str
Options: TypeAlias = dict[str, OptionValue]


def rfc3339(moment: datetime) -> str:
    """An aware ``datetime`` as a ``Timestamp``: RFC 3339, UTC, in milliseconds (the one
    formatter of the wire's and the store's times).

    >>> rfc3339(datetime(2026, 3, 1, 12, tzinfo=UTC))
    '2026-03-01T12:00:00.000Z'
    """
    text = _FORMATTED.get(moment)
    if text is not None:
        return text
    if moment.tzinfo is not UTC:
        if moment.tzinfo is None:
            raise ValueError(f"a naive datetime has no time zone: {moment!r}")
        moment = moment.astimezone(UTC)
    # The text up to the second is that of the last moment formatted in the same second,
    # mostly (commands come many a second): only the milliseconds are new.
    second = (moment - _EPOCH) // _SECOND  # exact (a float timestamp rounds far from 1970)
    head = _SECONDS.get(second)
    if head is None:
        if len(_SECONDS) >= _FORMATTED_KEPT:
            _SECONDS.clear()
        head = _SECONDS[second] = moment.replace(tzinfo=None, microsecond=0).isoformat()
    text = f"{head}.{moment.microsecond // 1000:03d}Z"
    if len(_FORMATTED) >= _FORMATTED_KEPT:
        _FORMATTED.clear()
    _FORMATTED[moment] = text
    return text


# The times formatted lately: a command writes its time two or three times (the event's
# ``at``, the game's last move, its stats), and a game's start with every command.
_FORMATTED: dict[datetime, str] = {}
_FORMATTED_KEPT = 4096
_SECONDS: dict[int, str] = {}  # whole seconds since the epoch -> 'YYYY-MM-DDTHH:MM:SS'
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_SECOND = timedelta(seconds=1)


def parse_rfc3339(text: str) -> datetime:
    """The aware ``datetime`` of a ``Timestamp`` (what :func:`rfc3339` wrote)."""
    return datetime.fromisoformat(text)
