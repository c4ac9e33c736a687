"""A page's cursor: the last member read of a sorted set (base64url, no padding), so that the
next page starts just after it, wherever members were added meanwhile. Used by the
leaderboards and by a player's list of games; each says what a member looks like."""

from __future__ import annotations

import base64
import re

from service.domain.errors import ApiError


def encode_cursor(member: bytes) -> str:
    """The cursor after the member ``member``."""
    return base64.urlsafe_b64encode(member).rstrip(b"=").decode()


def decode_cursor(cursor: str, member: re.Pattern[bytes], how: str) -> bytes:
    """The member a cursor names, or 400 (``how``: where a good cursor comes from)."""
    try:
        found = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
    except (ValueError, TypeError):
        found = b""
    if not member.match(found):
        raise ApiError("bad_request", f"invalid cursor: pass the next_cursor of {how}",
                       {"field": "cursor"})
    return found
