"""The identity of an event beyond its seq: a hash chained over the whole log.

``hash(n) = sha256(hash(n-1) | n | command JSON | at)[:16 hex]``, with
:data:`START` as the hash "of seq 0" (the deal). Two logs that agree on an
event's seq and hash agree on every event up to it. A failover can roll a log
back and store a different event at a seq clients already hold; the hash tells
them (and the socket writer) apart, so they resynchronise instead of keeping a
state the server no longer has.
"""

from __future__ import annotations

import hashlib

START = "0" * 16
HASH_FIELD = b'"hash":"'


def event_hash(previous: str, seq: int, command_json: bytes, at: str) -> str:
    """The hash of event ``seq`` (``command_json``: the command as stored, ``at`` its time)."""
    data = b"%s|%d|%s|%s" % (previous.encode(), seq, command_json, at.encode())
    return hashlib.sha256(data).hexdigest()[:16]


def hash_in(event: bytes) -> bytes | None:
    """The ``hash`` of a stored event (or diff message) without decoding it; None if it has none."""
    i = event.find(HASH_FIELD)
    if i < 0:
        return None
    start = i + len(HASH_FIELD)
    return event[start:start + 16]
