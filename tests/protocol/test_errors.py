"""Error codes, their HTTP statuses, and the error body."""

from __future__ import annotations

import msgspec
import pytest

import protocol as p


def test_each_code_has_the_protocol_status() -> None:
    assert dict(p.HTTP_STATUS) == {
        "bad_request": 400,
        "unauthorized": 401,
        "forbidden": 403,
        "not_found": 404,
        "conflict": 409,
        "illegal_move": 422,
        "rate_limited": 429,
        "unavailable": 503,
    }
    assert set(p.ERROR_CODES) == set(p.HTTP_STATUS)
    assert p.http_status("illegal_move") == 422
    assert p.PAYLOAD_TOO_LARGE == 413


def test_each_error_status_has_one_code_read_back_from_the_same_map() -> None:
    assert all(p.error_code(status) == code for code, status in p.HTTP_STATUS.items())
    # Any other status keeps to the closed set of codes.
    assert [p.error_code(s) for s in (405, p.PAYLOAD_TOO_LARGE, 415, 418)] == ["bad_request"] * 4
    assert [p.error_code(s) for s in (500, 502, 504)] == ["unavailable"] * 3


def test_an_error_body_always_has_details() -> None:
    body = p.error_body("illegal_move", "the game is over")
    assert msgspec.json.decode(p.encode(body)) == {
        "error": {"code": "illegal_move", "message": "the game is over", "details": {}}
    }
    body = p.error_body("conflict", "stale", {"seq": 4})
    assert body.error.details == {"seq": 4}


def test_an_unknown_code_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="teapot"):
        p.error_body("teapot", "no")  # type: ignore[arg-type]


def test_a_decode_error_becomes_a_bad_request_naming_the_field() -> None:
    with pytest.raises(msgspec.ValidationError) as caught:
        p.decode_command_request(b'{"command": {"type": "draw"}, "sneaky": 1}')
    body = p.bad_request_from(caught.value)
    assert body.error.code == "bad_request"
    assert "sneaky" in body.error.message


def test_clients_decode_every_code() -> None:
    for code in p.ERROR_CODES:
        wire = p.encode(p.error_body(code, "m"))
        assert p.decode(wire, p.ErrorBody).error.code == code


# Each patterned field, and a body that breaks its pattern.
BROKEN_PATTERNS = [
    (p.CreateGame, b'{"variant": "Gilbert"}'),
    (p.CreatePlayer, b'{"name": "a\\u0007b"}'),
    (p.CommandRequest, b'{"command": {"type": "move", "from": "pile/1", "to": "tableau/1"}}'),
    (p.CommandRequest, b'{"command": {"type": "move", "from": "waste", "to": "here"}}'),
    (p.Diff, b'{"seq": 1, "command": {"type": "draw"}, "ops": [{"op": "flip", "pile": "waste",'
             b' "card": "1X"}], "status": "playing", "stats": {}, "at": "x", "hash": "y"}'),
    (p.Event, b'{"seq": 1, "command": {"type": "draw"}, "at": "noon", "hash": "0123456789abcdef"}'),
    (p.Event, b'{"seq": 1, "command": {"type": "draw"}, "at": "2026-03-01T12:00:00Z", '
              b'"hash": "XYZ"}'),
    (p.DailyDay, b'{"date": "2026-3-1", "challenges": []}'),
]


@pytest.mark.parametrize(("type_", "body"), BROKEN_PATTERNS)
def test_no_message_shows_a_pattern(type_: type, body: bytes) -> None:
    with pytest.raises(msgspec.ValidationError) as refused:
        p.decode(body, type_)
    message = p.bad_request_from(refused.value).error.message
    assert "regex" not in message and "^" not in message and "$" not in message.split("`$")[0]
    assert "Expected a" in message or "Expected an" in message, message


def test_every_pattern_has_its_words() -> None:
    from protocol.fields import PATTERN_WORDS

    assert len(PATTERN_WORDS) == 8 and all(PATTERN_WORDS.values())


def test_a_long_query_parameter_is_quoted_only_in_part() -> None:
    with pytest.raises(msgspec.ValidationError) as refused:
        p.decode_query({"cursor": "x" * 5000}, p.LeaderboardQuery)
    message = p.bad_request_from(refused.value).error.message
    assert message.startswith("'" + "x" * 40 + "'...") and len(message) < 120, message


@pytest.mark.parametrize(("query", "type_", "message", "field"), [
    ({"date": "yesterday"}, p.DailyQuery,
     "'yesterday' is not a UTC calendar date (YYYY-MM-DD)", "date"),
    ({"limit": "500"}, p.LeaderboardQuery, "'500' is not a valid limit: expected `int` <= 100",
     "limit"),
    ({"variant": "Gate"}, p.PlayerGamesQuery, "'Gate' is not a variant id (a lowercase letter, "
     "then up to 31 lowercase letters, digits or _)", "variant"),
])
def test_a_query_parameter_is_refused_in_the_words_of_a_path_parameter(
        query: dict[str, str], type_: type, message: str, field: str) -> None:
    with pytest.raises(msgspec.ValidationError) as refused:
        p.decode_query(query, type_)
    assert p.bad_request_from(refused.value).error == p.error_info(
        "bad_request", message, {"field": field})
