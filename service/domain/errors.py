"""Errors as the contract shapes them: ``{"error": {"code", "message", "details"}}``.

The vocabulary every layer speaks: the domain raises :class:`ApiError`, and
:func:`to_api_error` names the contract's error for what the engine, the codecs or the
store raised. Nothing here knows HTTP's machinery (no aiohttp): the web turns an error
into a response (service/web/error_middleware.py), the socket into an ``error`` message.
Bad input is never a 500; a failure nobody foresaw is :func:`internal_error`.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from typing import Any

import msgspec

from protocol.errors import ErrorBody, ErrorCode, bad_request_from, http_status
from service.engine import BadCommand, BadOptions, IllegalCommand, UnknownVariant
from service.store.errors import Inconsistent

# Re-exported: web/ and socket/ name the store's failures from here, as they reach the store
# only through the domain (tests/test_imports.py); to_api_error() says what each means.
from service.store.errors import StoreError as StoreError
from service.store.errors import StoreUnavailable as StoreUnavailable

log = logging.getLogger("service.domain.errors")

# What a 503 says when the store failed after a write was sent: it may have been applied.
UNKNOWN_OUTCOME = ("unknown outcome: it may or may not have been applied; resend it with the same "
                   "command_id (a command is applied at most once per command_id)")
# ... after any other write (a new player, game or daily attempt, a rename, a hint), which has
# no command_id: sent again, it is done again.
UNKNOWN_OUTCOME_OF_A_REQUEST = (
    "unknown outcome: it may or may not have been done; sent again, it is done again "
    "(a second player or game; a second daily attempt gets 409 conflict naming the first)")


def unknown_outcome(command: bool) -> str:
    """What a 503 after a sent write tells the client to do: a command (REST or socket) is
    resent with its command_id; any other request has none."""
    return UNKNOWN_OUTCOME if command else UNKNOWN_OUTCOME_OF_A_REQUEST


class ApiError(Exception):
    """An error the client should see, with the contract's ``code``."""

    def __init__(self, code: ErrorCode, message: str, details: Mapping[str, Any] | None = None,
                 status: int | None = None, headers: Mapping[str, str] | None = None,
                 retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.code: ErrorCode = code
        self.message = message
        self.details = dict(details or {})
        self.status = status or http_status(code)
        self.headers = dict(headers or {})
        if retry_after_s is not None:
            # When to try again: whole seconds, at least 1, in the body and the header alike.
            retry = retry_seconds(retry_after_s)
            self.details["retry_after_s"] = retry
            self.headers["Retry-After"] = str(retry)

    @classmethod
    def of(cls, body: ErrorBody) -> ApiError:
        """The error whose body is ``body``."""
        return cls(body.error.code, body.error.message, body.error.details)

    @property
    def retry_after_s(self) -> int | None:
        value = self.details.get("retry_after_s")
        return value if isinstance(value, int) else None


def internal_error(incident: str | None = None) -> ApiError:
    """The 500 for a failure nobody foresaw (a bug, never bad input): the client may try
    again; ``incident`` names the log line that tells an operator what happened."""
    what = "internal error" if incident is None else f"internal error (incident {incident})"
    return ApiError("unavailable", f"{what}; try again", status=500)


def retry_seconds(seconds: float) -> int:
    """A wait as a client is told it: whole seconds, rounded up, at least 1."""
    return max(1, math.ceil(seconds))


def to_api_error(exc: BaseException, command: bool = True) -> ApiError | None:
    """The contract's error for an exception raised by the engine, the codecs or the store;
    ``command``: raised by a command (else by another request: see :func:`unknown_outcome`)."""
    if isinstance(exc, ApiError):
        return exc
    if isinstance(exc, IllegalCommand):
        return ApiError("illegal_move", exc.message, {"rule": exc.rule})
    if isinstance(exc, UnknownVariant):
        return ApiError("bad_request", str(exc), {"field": "variant"})
    if isinstance(exc, BadOptions):
        return ApiError("bad_request", str(exc), {"field": f"options.{exc.option}"})
    if isinstance(exc, BadCommand):
        return ApiError("bad_request", str(exc))
    if isinstance(exc, msgspec.DecodeError):
        return ApiError.of(bad_request_from(exc))
    if isinstance(exc, Inconsistent):
        log.error("%s", exc)
        return ApiError("unavailable", f"{exc}: the game is refused rather than served in a wrong "
                        "state; an operator must repair it", status=500)
    if isinstance(exc, StoreUnavailable):
        # A store that answers but refuses (out of memory, a read-only replica) says why.
        why = f" ({exc.reason})" if exc.reason else ""
        if exc.sent:
            what = "command" if command else "request"
            return ApiError("unavailable", f"the game store failed during the {what}{why}: "
                            f"{unknown_outcome(command)}", {"outcome": "unknown"}, retry_after_s=1)
        state = f"refuses to serve this now{why}" if exc.reason else "is unreachable"
        return ApiError("unavailable", f"the game store {state}; nothing was written, try again",
                        retry_after_s=1)
    return None
