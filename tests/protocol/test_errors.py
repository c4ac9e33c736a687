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
