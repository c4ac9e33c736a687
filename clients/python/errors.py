"""What the SDK raises: :class:`ApiError` for every error the service answers with,
:class:`ConnectionLost` when a WebSocket gives up reconnecting or is closed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from protocol.errors import HTTP_STATUS, ErrorBody, ErrorInfo, error_code

_error_body = msgspec.json.Decoder(ErrorBody)

# Codes after which the same request may succeed later: nothing was written.
RETRYABLE: frozenset[str] = frozenset({"rate_limited", "unavailable"})


# The longest wait the client sits out by itself, REST calls and socket commands alike (the
# JavaScript client's too): a refusal asking for longer is raised, ``retry_after_s`` saying it.
WAIT_MAX_S = 60.0


class ApiError(Exception):
    """An error answered by the service, over REST or the WebSocket.

    ``status`` is the HTTP status (for a WebSocket error, the status that goes
    with its code), ``code`` one of the contract's codes (``illegal_move``,
    ``conflict``, ...), ``message`` the reason a person can read, ``details`` the
    machine-readable rest (``{"rule": "build", "seq": 4}``). ``command_id`` is the id
    of the command it answers (the SDK's own when the caller gave none): after a 503
    whose outcome is unknown, send the command again with it.
    """

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        details: Mapping[str, Any] | None = None,
        command_id: str | None = None,
    ) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.details: dict[str, Any] = dict(details or {})
        self.command_id = command_id

    def __repr__(self) -> str:
        return (
            f"ApiError(status={self.status}, code={self.code!r}, message={self.message!r}, "
            f"details={self.details!r})"
        )

    @property
    def retryable(self) -> bool:
        """True when the same request may be sent again later: nothing was done, or
        (``details.outcome`` ``"unknown"``: it may have been done) it is a command,
        whose ``command_id`` makes the service apply it at most once. A write without
        one (a new player or game, a daily attempt, a hint) whose outcome is unknown is
        not: sent again, it may be done twice."""
        if self.code not in RETRYABLE:
            return False
        return self.details.get("outcome") != "unknown" or self.command_id is not None

    @property
    def unknown_outcome(self) -> bool:
        """True for a 503 after the write reached the store: it may have been applied."""
        return self.details.get("outcome") == "unknown"

    @property
    def retry_after_s(self) -> float | None:
        """How long the service asked to wait (429 and 503), if it said."""
        value = self.details.get("retry_after_s")
        return float(value) if isinstance(value, (int, float)) else None

    @classmethod
    def from_info(
        cls, info: ErrorInfo, status: int | None = None, command_id: str | None = None
    ) -> ApiError:
        """The error of an ``{"error": {...}}`` object (a WebSocket ``error`` message)."""
        status = status or HTTP_STATUS.get(info.code, 400)
        return cls(status, info.code, info.message, info.details, command_id)

    @classmethod
    def from_response(cls, status: int, body: bytes) -> ApiError:
        """The error of an HTTP response; a body that is not the contract's error body
        (a proxy's page, say) still gives a code from the status."""
        try:
            return cls.from_info(_error_body.decode(body).error, status)
        except msgspec.DecodeError:
            code = error_code(status)
            text = body.decode("utf-8", "replace").strip()[:200] or f"HTTP {status}"
            return cls(status, code, text)


class ConnectionLost(ConnectionError):
    """A :class:`~clients.python.gamesocket.GameSocket` was closed, or gave up
    reconnecting; commands still waiting for their ack fail with it."""
