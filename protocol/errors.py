"""Error codes, their HTTP statuses, and the error body sent on every endpoint and socket."""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Annotated, Any, Final, Literal, TypeAlias, TypedDict, get_args

import msgspec
from msgspec import Meta

from service.engine.refusals import Rule

from .fields import PATTERN_WORDS, Date, Seq, Status, Timestamp

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

_CODE_OF_STATUS: Final[Mapping[int, ErrorCode]] = MappingProxyType(
    {status: code for code, status in HTTP_STATUS.items()})


def error_code(status: int) -> ErrorCode:
    """The code of an error answered with HTTP ``status`` (an error status, 400 and up): the
    one :data:`HTTP_STATUS` gives it; any other 4xx (405, :data:`PAYLOAD_TOO_LARGE`, 415...)
    is ``bad_request`` and any other 5xx ``unavailable``, so the set of codes stays closed."""
    return _CODE_OF_STATUS.get(status) or ("unavailable" if status >= 500 else "bad_request")


class ErrorDetails(TypedDict, total=False):
    """The members ``details`` may hold, each only where it applies. A server may add
    others: clients read the ones they know and ignore the rest."""

    seq: Annotated[
        Seq,
        Meta(description="409 and 422 on a command: the game's seq when it was refused; "
             "409 on a `command_id` used before for another command: the seq of that one."),
    ]
    command_id: Annotated[
        str,
        Meta(description="409: a `command_id` used before for another command (in `command`)."),
    ]
    command: Annotated[
        dict[str, Any],
        Meta(description="409 on a `command_id` used before for another command: that command, "
             "as it was sent (with its `count`)."),
    ]
    expected_seq: Annotated[Seq, Meta(description="409: the `expected_seq` that was sent.")]
    since: Annotated[
        Seq, Meta(description="400 on a `hello`: the `since` beyond the game's seq.")
    ]
    rule: Annotated[
        str,
        Meta(
            description="422: a short stable name of the rule that refuses the command, one "
            "of: " + ", ".join(f"`{rule}`" for rule in Rule) + ". A client treats a name it "
            "does not know like any other refusal (docs/protocol.md says when each applies).",
            examples=["empty_tableau", "foundation_order", "game_over"],
        ),
    ]
    retry_after_s: Annotated[
        int,
        Meta(ge=1, description="429 and 503: seconds to wait, as in the Retry-After header."),
    ]
    limit: Annotated[
        str,
        Meta(description="429, 413, and the socket's error before a 1009 close: the name of "
             "the limit that was hit (its setting's name)."),
    ]
    max_bytes: Annotated[
        int,
        Meta(ge=1, description="413, and the socket's error before a 1009 close: the most "
             "bytes a request body or a socket message may have (exactly that many are "
             "accepted)."),
    ]
    outcome: Annotated[
        Literal["unknown"],
        Meta(
            description="503 after a write reached the store: it may or may not have "
            "been applied. A command is safe to send again with the same `command_id`; "
            "any other write (a new player or game, a rename, a hint) sent again is done "
            "again (a second daily attempt gets 409 naming the first)."
        ),
    ]
    deadline_s: Annotated[
        float, Meta(gt=0, description="503: the request deadline that passed, in seconds.")
    ]
    open_games: Annotated[
        int, Meta(ge=0, description="429 on a new game: the player's open games, the limit.")
    ]
    status: Annotated[
        Status,
        Meta(description="409 on a solution or a hint: the game's status that refuses it."),
    ]
    available_at: Annotated[
        Timestamp,
        Meta(description="403 on a daily attempt's solution: when it will be shown."),
    ]
    daily: Annotated[
        str,
        Meta(description="403 on a hint in a daily attempt: its challenge, `date/variant`."),
    ]
    field: Annotated[
        str,
        Meta(
            description="400: the input that is wrong, where one field is to blame: a body's "
            "or a socket message's field as a dotted path, or a query parameter.",
            examples=["seed", "command.to", "limit"],
        ),
    ]
    closes_at: Annotated[Timestamp, Meta(description="403: when the daily attempt closed.")]
    date: Annotated[
        Date, Meta(description="403, 404, 409 and 503 on a daily challenge: its date.")
    ]
    today: Annotated[Date, Meta(description="403: today's date (UTC).")]
    variant: Annotated[
        str,
        Meta(description="404, 409, and 503 on a leaderboard being ranked: the variant named."),
    ]
    game_ids: Annotated[
        list[str], Meta(description="409: the caller's attempts at this daily challenge.")
    ]


def _details_schema() -> dict[str, Any]:
    # A TypedDict would drop the members it does not know when decoding: the field
    # stays a plain dict, and its schema declares the known members from ErrorDetails.
    (_,), defs = msgspec.json.schema_components([ErrorDetails])
    return {"properties": defs["ErrorDetails"]["properties"], "additionalProperties": True}


class ErrorInfo(msgspec.Struct):
    """What went wrong: a stable `code`, a `message` a person can read, and `details`
    (its members below: `seq` on 409, `rule` on 422, `retry_after_s` on 429...)."""

    code: ErrorCode
    message: str
    details: Annotated[
        dict[str, Any],
        Meta(
            description="What a program needs to react; the members that apply to this error.",
            extra_json_schema=_details_schema(),
        ),
    ]


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


class QueryError(msgspec.ValidationError):
    """A query parameter refused, in the words a path parameter gets
    (``'yesterday' is not a UTC calendar date (YYYY-MM-DD)``); ``field`` names it."""

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


def bad_request_from(exc: msgspec.DecodeError, what: str = "request") -> ErrorBody:
    """A ``bad_request`` body for input msgspec refused (malformed JSON, unknown field,
    wrong type): "invalid <what>: " and msgspec's own message, which names the field and
    its path (a pattern said in words); ``details.field`` names it too, where one field is
    to blame. ``what`` is a REST request, or a socket's ``hello`` or message. A query
    parameter's :class:`QueryError` is its own message."""
    if isinstance(exc, QueryError):
        return error_body("bad_request", exc.message, {"field": exc.field})
    field = field_of(exc)
    return error_body("bad_request", f"invalid {what}: {in_words(str(exc))}",
                      {"field": field} if field is not None else None)


# msgspec names a pattern a string did not match by its repr: `str` matching regex '^...$'.
_MATCHING = re.compile(
    r"`str` matching regex (?P<pattern>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")")


def in_words(text: str) -> str:
    """msgspec's message ``text`` with each regex it names said in words (PATTERN_WORDS):
    "Expected a UTC calendar date (YYYY-MM-DD)", never the pattern itself."""
    return _MATCHING.sub(lambda m: _words(m["pattern"]), text)


def _words(quoted: str) -> str:
    try:
        pattern = ast.literal_eval(quoted)
    except (ValueError, SyntaxError):
        pattern = None
    if isinstance(pattern, str) and pattern in PATTERN_WORDS:
        return PATTERN_WORDS[pattern]
    return "a string of the form openapi.yaml gives"


# msgspec says where the input is wrong: "... - at `$.command.to`"; and names the field
# itself when it is unknown or missing: "Object missing required field `to`" (and
# protocol.duplicates in its words when it is given twice).
_AT = re.compile(r" - at `\$(?P<path>[^`]*)`$")
_NAMED = re.compile(
    r"^Object (?:contains (?:unknown|duplicate)|missing required) field `(?P<name>[^`]*)`")


def field_of(exc: msgspec.DecodeError) -> str | None:
    """The input msgspec refused, as ``details.field`` names it (``seed``, ``command.to``,
    ``options``), or None when no one field is to blame (malformed JSON, a wrong top-level
    type)."""
    text = str(exc)
    at = _AT.search(text)
    path = at["path"] if at else ""
    named = _NAMED.match(text)
    if named:
        path += "." + named["name"]
    path = path.replace("[...]", "").lstrip(".")  # a value inside a map: the map is named
    return path or None
