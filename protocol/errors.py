"""Error codes, their HTTP statuses, and the error body sent on every endpoint and socket."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final, Literal, TypeAlias, get_args

import msgspec

ErrorCode: TypeAlias = Literal[
    "bad_request",
    "unauthorized",
    "forbidden",
    "not_found",
    "conflict",
    "illegal_move",
    "rate_limited",
    "unavailable",
]

ERROR_CODES: Final[tuple[ErrorCode, ...]] = get_args(ErrorCode)

HTTP_STATUS: Final[Mapping[ErrorCode, int]] = MappingProxyType(
    {
        "bad_request": 400,
        "unauthorized": 401,
        "forbidden": 403,
        "not_found": 404,
        "conflict": 409,  # a stale expected_seq, a second ranked daily attempt
        "illegal_move": 422,
        "rate_limited": 429,
        "unavailable": 503,  # the store is unreachable: nothing was written
    }
)

# A body over the size limit: the status says "too large", the code stays
# bad_request so that clients switch on a closed set of codes.
PAYLOAD_TOO_LARGE: Final = 413


class ErrorInfo(msgspec.Struct):
    """What went wrong: a stable `code`, a `message` a person can read, and `details`."""

    code: ErrorCode
    message: str
    details: dict[str, Any]


class ErrorBody(msgspec.Struct):
    """The body of every error response."""

    error: ErrorInfo


def http_status(code: ErrorCode) -> int:
    """The HTTP status that goes with an error ``code``."""
    return HTTP_STATUS[code]


def error_info(
    code: ErrorCode, message: str, details: Mapping[str, Any] | None = None
) -> ErrorInfo:
    """Build the ``error`` object; ``details`` defaults to ``{}``."""
    if code not in HTTP_STATUS:
        raise ValueError(f"unknown error code {code!r}; known: {', '.join(ERROR_CODES)}")
    return ErrorInfo(code=code, message=message, details=dict(details or {}))


def error_body(
    code: ErrorCode, message: str, details: Mapping[str, Any] | None = None
) -> ErrorBody:
    """Build a whole error body: ``{"error": {"code", "message", "details"}}``."""
    return ErrorBody(error=error_info(code, message, details))


def bad_request_from(exc: msgspec.DecodeError) -> ErrorBody:
    """A ``bad_request`` body for input msgspec refused (malformed JSON, unknown field,
    wrong type); msgspec's own message names the field and its path."""
    return error_body("bad_request", f"invalid request: {exc}")
