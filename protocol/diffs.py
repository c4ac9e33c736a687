"""The game state a client sees, and the diffs that take it from one seq to the next."""

from __future__ import annotations

from typing import Annotated, Literal, TypeAlias

import msgspec
from msgspec import Meta

from .commands import Command
from .fields import Card, Count, EventHash, Options, PileId, Seed, Seq, Status, Timestamp, VariantId

# Structs sent by the server do not forbid unknown fields: a client built
# against this version must keep working when the server adds a field.


class BaseOp(msgspec.Struct, tag_field="op"):
    """Base of the ``Op`` union: one operation on ``piles[pile]``, tagged by ``op``."""

    pile: PileId


class Pop(BaseOp, tag="pop"):
    """Remove the top `n` face-up cards."""

    n: Annotated[int, Meta(ge=1)]


class Push(BaseOp, tag="push"):
    """Append face-up cards, bottom to top."""

    cards: Annotated[list[Card], Meta(min_length=1)]


class Flip(BaseOp, tag="flip"):
    """The top face-down card turns up: `down -= 1`, append `card`."""

    card: Card


class Down(BaseOp, tag="down"):
    """Add (`n` > 0) or remove (`n` < 0) face-down cards: stock deals, waste turned over."""

    n: int


Op: TypeAlias = Pop | Push | Flip | Down


class Pile(msgspec.Struct):
    """A pile as a client sees it: how many cards are face down, and the face-up ones."""

    down: Count
    up: list[Card]


class Stats(msgspec.Struct):
    """A game's counters; `started_at` is null until the first command; `hints`: hints
    taken (`POST /v1/games/{id}/hint`)."""

    moves: Count
    foundation_cards: Count
    started_at: Timestamp | None
    finished_at: Timestamp | None
    duration_ms: Count
    hints: Count = 0


class Diff(msgspec.Struct):
    """What one applied command changed: apply `ops` in order, then take `seq`, `status`
    and `stats` from here. As the server sends it (the stored event), it also carries
    `type` (always `diff`, as on the WebSocket) and `at`, the server time of the command."""

    seq: Seq
    command: Command
    ops: list[Op]
    status: Status
    stats: Stats
    at: Timestamp
    hash: EventHash
    type: Literal["diff"] = "diff"


class GameState(msgspec.Struct):
    """A game as a client sees it (redacted: face-down cards only as counts).

    `seed` is null while it is secret (a server-chosen seed before the game is won
    or resigned); `owner` is the owner's player id."""

    game_id: str
    variant: VariantId
    options: Options
    seq: Seq
    status: Status
    piles: dict[str, Pile]
    stats: Stats
    public: bool
    seed: Seed | None
    owner: str
