"""The store's exceptions: what the HTTP layer maps to status codes.

``StoreUnavailable`` -> 503, ``NotFound`` -> 404, ``Conflict`` -> 409;
``Duplicate`` is not a failure: it carries the seq of the command's first
application, so the caller answers with that first result.
"""

from __future__ import annotations


class StoreError(Exception):
    """Anything that went wrong in the store."""


class StoreUnavailable(StoreError):
    """Redis cannot be reached (down, restarting, loading, out of connections, read-only).

    For a write, the outcome is unknown only if the connection broke after the
    command was sent; :meth:`~service.store.games.Games.append` is idempotent
    under the same ``command_id``, so the client may simply send it again.
    ``sent`` is True when the failure came after a write was sent (the append
    sets it): the 503 then says the outcome is unknown.
    """

    sent: bool = False
    # Why a store that answers refuses (connection.REFUSALS: "it is a read-only replica");
    # None when it did not answer.
    reason: str | None = None


class NotFound(StoreError):
    """The game does not exist (never created, or expired)."""

    def __init__(self, game_id: str) -> None:
        super().__init__(f"game {game_id!r} not found")
        self.game_id = game_id


class Inconsistent(StoreError):
    """The game's stored log does not add up (snapshot seq + events != meta seq):
    it is refused rather than served in a wrong state."""

    def __init__(self, game_id: str, snapshot_seq: int, events: int, seq: int) -> None:
        super().__init__(f"game {game_id!r} is inconsistent in the store: its snapshot is at seq "
                         f"{snapshot_seq} and {events} events follow, but it is at seq {seq}")
        self.game_id = game_id


class GameExists(StoreError):
    """:meth:`~service.store.games.Games.create` found the game already there."""

    def __init__(self, game_id: str) -> None:
        super().__init__(f"game {game_id!r} already exists")
        self.game_id = game_id


class Conflict(StoreError):
    """The command was written against a stale seq; nothing was written."""

    def __init__(self, game_id: str, expected_seq: int, current_seq: int) -> None:
        super().__init__(
            f"game {game_id!r} is at seq {current_seq}, not at the expected seq {expected_seq}"
        )
        self.game_id = game_id
        self.expected_seq = expected_seq
        self.current_seq = current_seq


class HintsChanged(StoreError):
    """The command's event counted another number of hints than the game has taken (one
    was taken through another instance); nothing was written."""

    def __init__(self, game_id: str, hints: int) -> None:
        super().__init__(f"game {game_id!r} has had {hints} hints: the event said otherwise")
        self.game_id = game_id
        self.hints = hints


class Duplicate(StoreError):
    """The command_id was applied before, at ``seq``, to the command whose fingerprint is
    ``fingerprint`` ("": kept without one); nothing was written now."""

    def __init__(self, game_id: str, command_id: str, seq: int, fingerprint: str = "") -> None:
        super().__init__(f"command {command_id!r} of game {game_id!r} was applied at seq {seq}")
        self.game_id = game_id
        self.command_id = command_id
        self.seq = seq
        self.fingerprint = fingerprint
