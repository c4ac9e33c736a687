"""An incremental reader of RESP2 replies, for the fan-out's subscriber connections.

A subscriber connection receives one published message per event of every game the
instance follows, its own events included: most of what it reads. redis-py reads
them one reply at a time (a timeout, and a few awaits per line, for each); this
reads whatever the socket has and parses every complete reply in it at once.

Replies are what redis-py's RESP2 parser gives without decoding: bulk strings as
``bytes`` (``None`` for a null), integers as ``int``, simple strings as ``bytes``,
arrays as ``list``, and errors as a :class:`redis.exceptions.ResponseError` value
(returned, not raised: the connection is still good).
"""

from __future__ import annotations

from typing import Any

from redis.exceptions import InvalidResponse, ResponseError

_INCOMPLETE = object()


class ReplyReader:
    """``reader.feed(data)`` -> the replies completed by ``data``, in order."""

    __slots__ = ("_rest",)

    def __init__(self) -> None:
        self._rest = b""

    def feed(self, data: bytes) -> list[Any]:
        buf = self._rest + data if self._rest else data
        replies = []
        pos = 0
        end = len(buf)
        while pos < end:
            parsed = _reply(buf, pos)
            if parsed is _INCOMPLETE:
                break
            reply, pos = parsed
            replies.append(reply)
        self._rest = buf[pos:]
        return replies


def _reply(buf: bytes, pos: int) -> Any:
    """The reply starting at ``pos`` and the position after it, or ``_INCOMPLETE``."""
    try:
        return _parse(buf, pos)
    except ValueError:  # a length or an integer that is not one
        raise InvalidResponse(f"not a RESP2 reply: {buf[pos:pos + 40]!r}") from None


def _parse(buf: bytes, pos: int) -> Any:
    start = pos
    eol = buf.find(b"\r\n", pos)
    if eol < 0:
        return _INCOMPLETE
    kind = buf[pos]
    head = buf[pos + 1:eol]
    pos = eol + 2
    if kind == 36:  # $ bulk string
        size = int(head)
        if size < 0:
            return None, pos
        stop = pos + size
        if len(buf) < stop + 2:
            return _INCOMPLETE
        return buf[pos:stop], stop + 2
    if kind == 42:  # * array
        count = int(head)
        if count < 0:
            return None, pos
        items = []
        for _ in range(count):
            parsed = _parse(buf, pos)
            if parsed is _INCOMPLETE:
                return _INCOMPLETE
            item, pos = parsed
            items.append(item)
        return items, pos
    if kind == 58:  # : integer
        return int(head), pos
    if kind == 43:  # + simple string
        return head, pos
    if kind == 45:  # - error
        return ResponseError(head.decode("utf-8", "replace")), pos
    raise InvalidResponse(f"not a RESP2 reply: {buf[start:eol + 2]!r}")
