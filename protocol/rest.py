"""REST bodies and queries: players, games, commands, legal moves, the log, health.

Request bodies forbid unknown fields (PROTOCOL.md: they are a 400) and omit
their defaults when the Python client encodes them. Query strings are decoded
with :func:`protocol.codec.decode_query`.
"""

from __future__ import annotations

from typing import Annotated, Final, Literal

import msgspec

from .commands import Command
from .diffs import Diff, GameState
from .fields import (
    CommandId,
    Date,
    EventHash,
    Options,
    PlayerName,
    Seed,
    Seq,
    Status,
    Timestamp,
    VariantId,
)


class Request(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    """Base of every REST request body."""


class CreatePlayer(Request):
    """`POST /v1/players`."""

    name: PlayerName


class PlayerCreated(msgspec.Struct):
    """A new player and the bearer token that acts as them."""

    player_id: str
    name: str
    token: str


class UpdatePlayer(Request):
    """`PATCH /v1/players/me`: change the caller's name."""

    name: PlayerName


class Player(msgspec.Struct):
    """A player as others may see them."""

    player_id: str
    name: str


class Me(Player):
    """`GET /v1/players/me`: the player the token acts as. `created_at` is null only for a
    player made before the service kept it."""

    created_at: Timestamp | None


class GameSummary(msgspec.Struct):
    """One of the caller's games, as `GET /v1/players/me/games` lists it: enough to show
    it in a list and to open it (`GET /v1/games/{id}`). `updated_at`: its latest command,
    or its creation before the first; `daily`, only in a daily attempt: the date of its
    challenge."""

    game_id: str
    variant: VariantId
    options: Options
    status: Status
    seq: Seq
    public: bool
    created_at: Timestamp
    updated_at: Timestamp
    daily: Date | msgspec.UnsetType = msgspec.UNSET


class PlayerGames(msgspec.Struct):
    """A page of the caller's games, newest first; `next_cursor` is the `cursor` of the
    next page, null on the last page."""

    games: list[GameSummary]
    next_cursor: str | None


class CreateGame(Request):
    """`POST /v1/games`. Without `seed` the server picks one and keeps it secret
    until the game is over."""

    variant: VariantId
    seed: Seed | None = None
    options: Options | None = None
    public: bool = False


class GameCreated(msgspec.Struct):
    """A new game (also a daily attempt) and its state at seq 0."""

    game_id: str
    state: GameState


class CommandRequest(Request):
    """`POST /v1/games/{id}/commands`. `expected_seq`: refuse with 409 unless the game
    is at this seq. `command_id`: a repeat with the same command returns the first result,
    applies nothing; with another command it is a 409 naming the first."""

    command: Command
    expected_seq: Seq | None = None
    command_id: CommandId | None = None


class CommandResult(msgspec.Struct):
    """The applied command's seq and diff."""

    seq: Seq
    diff: Diff


class LegalMoves(msgspec.Struct):
    """Every legal `move` (with an explicit foundation index) and `draw` at `seq`;
    `can_undo`: an `undo` would be accepted now."""

    seq: Seq
    moves: list[Command]
    can_undo: bool


class Event(msgspec.Struct):
    """One command of the log, in effect or not, and when it was applied."""

    seq: Seq
    command: Command
    at: Timestamp
    hash: EventHash


EVENTS_LIMIT_DEFAULT: Final = 1000
EVENTS_LIMIT_MAX: Final = 1000


class Events(msgspec.Struct):
    """One page of the log after a given seq, in seq order; ``next_after`` is the
    ``after`` of the next page, null on the last page."""

    events: list[Event]
    next_after: Seq | None = None


class Health(msgspec.Struct):
    """`GET /healthz`, `GET /readyz`."""

    status: Literal["ok"]


# Query strings are not JSON bodies: unknown parameters (cache busters) are
# ignored rather than refused.


class EventsQuery(msgspec.Struct):
    """`GET /v1/games/{id}/events?after=N&limit=M`: at most `limit` events with seq > `after`."""

    after: Seq = 0
    limit: Annotated[int, msgspec.Meta(ge=1, le=EVENTS_LIMIT_MAX)] = EVENTS_LIMIT_DEFAULT


PLAYER_GAMES_LIMIT_DEFAULT: Final = 20
PLAYER_GAMES_LIMIT_MAX: Final = 100
# With a status filter a request looks at this many of the player's games at most (newest
# first from the cursor), so that its work is bounded however few of them match.
PLAYER_GAMES_SCAN_MAX: Final = 200


class PlayerGamesQuery(msgspec.Struct):
    """`GET /v1/players/me/games?status=&variant=&limit=&cursor=`: at most `limit` of the
    caller's games, newest first, of that status and variant when given."""

    # UNSET, not None: a lax decode reads the text "null" as None, and `status=null` is a
    # status that does not exist (400), not "any status".
    status: Status | msgspec.UnsetType = msgspec.UNSET
    variant: VariantId | None = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=PLAYER_GAMES_LIMIT_MAX)] = (
        PLAYER_GAMES_LIMIT_DEFAULT)
    cursor: Annotated[str, msgspec.Meta(min_length=1, max_length=256)] | None = None
