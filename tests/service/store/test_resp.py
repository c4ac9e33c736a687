"""The fan-out's reader of RESP2 replies (service/store/resp.py): every reply a subscriber
connection gets, whole, in order, however the socket cuts the bytes."""

from __future__ import annotations

import itertools

import pytest
from redis.exceptions import InvalidResponse, ResponseError

from service.store.resp import ReplyReader

# What a subscriber connection receives: confirmations, messages (one with an empty
# payload, one with CRLF inside), a PING's answer, an error, nulls.
PIECES = [
    b"*3\r\n$10\r\nssubscribe\r\n$6\r\ngame:1\r\n:1\r\n",
    b"*3\r\n$8\r\nsmessage\r\n$6\r\ngame:1\r\n$13\r\n7 {\"seq\":7}\r\n\r\n",
    b"*3\r\n$7\r\nmessage\r\n$6\r\ngame:2\r\n$0\r\n\r\n",
    b"*2\r\n$4\r\npong\r\n$0\r\n\r\n",
    b"+PONG\r\n",
    b"-MOVED 3999 127.0.0.1:6381\r\n",
    b"$-1\r\n",
    b"*-1\r\n",
    b"*2\r\n*1\r\n:5\r\n$1\r\nx\r\n",
]
STREAM = b"".join(PIECES)
ENDS = list(itertools.accumulate(len(piece) for piece in PIECES))  # where each reply ends
REPLIES = [
    [b"ssubscribe", b"game:1", 1],
    [b"smessage", b"game:1", b'7 {"seq":7}\r\n'],
    [b"message", b"game:2", b""],
    [b"pong", b""],
    b"PONG",
    "error",
    None,
    None,
    [[5], b"x"],
]


def _plain(replies: list[object]) -> list[object]:
    return ["error" if isinstance(r, ResponseError) else r for r in replies]


# hiredis's reader (when installed) and the Python one: the same replies.
@pytest.fixture(params=[True, False], ids=["hiredis", "python"])
def accelerated(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


def test_a_stream_read_at_once_gives_every_reply_in_order(accelerated: bool) -> None:
    replies = ReplyReader(accelerated).feed(STREAM)
    assert _plain(replies) == REPLIES
    error = replies[5]
    assert isinstance(error, ResponseError) and str(error) == "MOVED 3999 127.0.0.1:6381"


def test_a_reply_cut_anywhere_is_given_once_it_is_complete(accelerated: bool) -> None:
    for cut in range(1, len(STREAM)):
        reader = ReplyReader(accelerated)
        first = reader.feed(STREAM[:cut])
        # The replies wholly before the cut; the one it splits waits for the rest of it.
        assert _plain(first) == REPLIES[:sum(end <= cut for end in ENDS)], cut
        second = reader.feed(STREAM[cut:])
        assert _plain(first + second) == REPLIES, cut
        # Nothing of the stream is kept: the next reply is read on its own.
        assert reader.feed(b"+OK\r\n") == [b"OK"], cut


def test_bytes_one_at_a_time_give_the_same_replies(accelerated: bool) -> None:
    reader = ReplyReader(accelerated)
    replies = []
    for i in range(len(STREAM)):
        replies += reader.feed(STREAM[i:i + 1])
    assert _plain(replies) == REPLIES


@pytest.mark.parametrize("garbage", [b"?what\r\n", b"$x1\r\n", b"*2\r\n:one\r\n"])
def test_bytes_that_are_not_resp2_are_refused(garbage: bytes, accelerated: bool) -> None:
    with pytest.raises(InvalidResponse, match="not a RESP2 reply"):
        ReplyReader(accelerated).feed(garbage)
