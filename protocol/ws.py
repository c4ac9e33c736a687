"""WebSocket messages of ``GET /v1/games/{id}/ws``: one tagged union per direction."""

from __future__ import annotations

import enum
from typing import Final, TypeAlias

import msgspec

from .commands import Command
from .diffs import Diff, GameState, Op, Stats
from .errors import ErrorInfo
from .fields import CommandId, EventHash, Seq, Status, Timestamp

# The first client message must arrive within this time (PROTOCOL.md); the service's
# hello_timeout_s setting defaults to it.
HELLO_TIMEOUT_S: Final = 5.0


class CloseCode(enum.IntEnum):
    """The close codes the server uses on a game's socket (docs/protocol.md "Close codes")."""

    NORMAL = 1000
    GOING_AWAY = 1001  # the server is shutting down: reconnect (to another instance)
    # A frame that breaks RFC 6455 (reserved bits, an unknown opcode, a fragmented control
    # frame, an invalid close code); a close reason that is not UTF-8. The WebSocket layer
    # (aiohttp) closes with these; the service never chooses them.
    PROTOCOL_ERROR = 1002
    INVALID_PAYLOAD = 1007
    POLICY_VIOLATION = 1008  # a refused hello: unknown or private game, bad token, no hello
    MESSAGE_TOO_BIG = 1009
    INTERNAL_ERROR = 1011
    TRY_AGAIN_LATER = 1013  # too slow, the store is unreachable, or a limit: reconnect (with since)


# --- client -> server ---------------------------------------------------------


class BaseClientMessage(
    msgspec.Struct, tag_field="type", forbid_unknown_fields=True, omit_defaults=True
):
    """Base of the ``ClientMessage`` union, tagged by ``type``."""


class Hello(BaseClientMessage, tag="hello"):
    """The first message. No `token`: watch a public game. With `since`: replay the
    diffs after that seq instead of sending a snapshot, when the log still has them.
    With `moves`: the server sends `moves` after `synced` and after each diff."""

    token: str | None = None
    since: Seq | None = None
    moves: bool = False


class CommandMessage(BaseClientMessage, tag="command", kw_only=True):
    """Apply a command; answered by `ack` (once durably logged) or `error`."""

    # kw_only: fields in PROTOCOL.md's order although a defaulted one comes first.
    command_id: CommandId
    expected_seq: Seq | None = None
    command: Command


class Ping(BaseClientMessage, tag="ping"):
    """Keep-alive; answered by `pong`."""


ClientMessage: TypeAlias = Hello | CommandMessage | Ping


# --- server -> client ---------------------------------------------------------
# Unknown fields are allowed here so that old clients survive new server fields.


class BaseServerMessage(msgspec.Struct, tag_field="type"):
    """Base of the ``ServerMessage`` union, tagged by ``type``."""


class Snapshot(BaseServerMessage, tag="snapshot"):
    """The whole state, in answer to a `hello` that cannot be answered with diffs."""

    seq: Seq
    state: GameState


class Synced(BaseServerMessage, tag="synced"):
    """The client is up to date at `seq`; live diffs follow."""

    seq: Seq


class DiffMessage(BaseServerMessage, tag="diff"):
    """One applied command, sent to every connected client of the game in seq order;
    `at` is the server time of the command, `hash` the event's identity, as the log has it."""

    seq: Seq
    command: Command
    ops: list[Op]
    status: Status
    stats: Stats
    at: Timestamp
    hash: EventHash


class Ack(BaseServerMessage, tag="ack"):
    """The sender's command `command_id` is durably in the log at `seq`."""

    command_id: CommandId
    seq: Seq


class ErrorMessage(BaseServerMessage, tag="error", omit_defaults=True, kw_only=True):
    """An error; `command_id` is there when the error answers a command (never null: left
    out otherwise)."""

    command_id: CommandId | msgspec.UnsetType = msgspec.UNSET
    error: ErrorInfo


class Pong(BaseServerMessage, tag="pong"):
    """The answer to `ping`."""


class MovesMessage(BaseServerMessage, tag="moves"):
    """The legal moves at `seq`, as `GET /v1/games/{id}/moves` answers them, to a socket
    whose `hello` asked for them: after `synced`, and after the diff of each later seq."""

    seq: Seq
    moves: list[Command]
    can_undo: bool


ServerMessage: TypeAlias = (
    Snapshot | Synced | DiffMessage | Ack | ErrorMessage | Pong | MovesMessage
)


def diff_message(diff: Diff) -> DiffMessage:
    """The WebSocket form of a diff (the same fields, plus ``"type": "diff"``)."""
    return DiffMessage(
        seq=diff.seq,
        command=diff.command,
        ops=diff.ops,
        status=diff.status,
        stats=diff.stats,
        at=diff.at,
        hash=diff.hash,
    )


def diff_of(message: DiffMessage) -> Diff:
    """The REST form of a WebSocket ``diff`` message."""
    return Diff(
        seq=message.seq,
        command=message.command,
        ops=message.ops,
        status=message.status,
        stats=message.stats,
        at=message.at,
        hash=message.hash,
    )
