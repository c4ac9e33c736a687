"""RESP by hand where redis-py's general machinery costs most of a command: an
incremental reader of RESP2 replies, for the fan-out's subscriber connections, and the
packing of the commands a batch sends (:func:`pack_commands`); both in hiredis's C when
it is installed, as redis-py's own are.

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

from redis.exceptions import DataError, InvalidResponse, ResponseError

try:
    import hiredis
except ImportError:  # optional, as for redis-py (benchmarks/noaccel)
    hiredis = None  # type: ignore[assignment]
_pack_command = hiredis.pack_command if hiredis is not None else None

_INCOMPLETE = object()


def pack_commands(commands: list[tuple[Any, ...]]) -> bytes:
    """``commands`` as the bytes that send them (RESP arrays of bulk strings), in order.

    The arguments redis-py takes, encoded as its encoder does (UTF-8 text, ``repr`` of
    numbers), and refused as it refuses them (:class:`redis.exceptions.DataError`: a bool,
    None, anything else). redis-py's own packing costs several calls per argument; an
    append has a handful of arguments, a batch up to hundreds of appends. hiredis, when
    installed, packs a command in C (the same bytes: str, bytes, int and float; about
    half the time of the Python below); what it does not take (a bytearray, or what
    redis-py refuses) is packed, or refused, by the Python."""
    if _pack_command is not None:
        try:
            return b"".join([_pack_command(args) for args in commands])
        except TypeError:
            pass
    return _pack_commands(commands)


def _pack_commands(commands: list[tuple[Any, ...]]) -> bytes:
    out: list[bytes] = []
    for args in commands:
        out.append(b"*%d\r\n" % len(args))
        for arg in args:
            if isinstance(arg, bytes):
                data = arg
            elif isinstance(arg, str):
                data = arg.encode()
            elif isinstance(arg, int) and not isinstance(arg, bool):
                data = b"%d" % arg
            elif isinstance(arg, float):
                data = repr(arg).encode()
            elif isinstance(arg, (bytearray, memoryview)):
                data = bytes(arg)
            else:
                raise DataError(f"Invalid input of type: '{type(arg).__name__}'. "
                                "Convert to a bytes, string, int or float first.")
            out.append(b"$%d\r\n" % len(data))
            out.append(data)
            out.append(b"\r\n")
    return b"".join(out)


class ReplyReader:
    """``reader.feed(data)`` -> the replies completed by ``data``, in order.

    hiredis's reader, when it is installed, parses them in C (a quarter of the time of
    the Python below, which a subscriber connection pays for every event of every game
    the instance follows, its own included); the Python otherwise."""

    __slots__ = ("_hiredis", "_rest")

    def __init__(self, accelerated: bool = True) -> None:
        self._rest = b""
        self._hiredis = (hiredis.Reader(replyError=ResponseError, notEnoughData=_INCOMPLETE)
                         if accelerated and hiredis is not None else None)

    def feed(self, data: bytes) -> list[Any]:
        reader = self._hiredis
        if reader is None:
            return self._feed(data)
        reader.feed(data)
        replies = []
        try:
            while (reply := reader.gets()) is not _INCOMPLETE:
                replies.append(reply)
        except hiredis.ProtocolError as exc:
            raise InvalidResponse(f"not a RESP2 reply: {exc}") from None
        return replies

    def _feed(self, data: bytes) -> list[Any]:
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
