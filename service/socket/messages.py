"""What the server says on a game's socket, made once: its messages (error, snapshot,
synced, pong), its close codes and close reasons, and the errors only a socket has."""

from __future__ import annotations

import msgspec

from protocol.codec import encode
from protocol.errors import error_info
from protocol.ws import CloseCode, ErrorMessage, Pong, Snapshot, Synced
from service.context import Context
from service.domain.errors import ApiError
from service.domain.games import Loaded

Close = CloseCode  # the contract's close codes, by the name the service and its tests use

REASON_MAX_BYTES = 123  # a close frame's reason (RFC 6455: 125 bytes of payload, 2 for the code)

PONG = encode(Pong())


def close_reason(text: str) -> bytes:
    """``text`` as a close reason: at most 123 bytes, cut between characters (a reason
    cut inside a UTF-8 sequence is invalid, and the client sees an error, not the code)."""
    return text.encode()[:REASON_MAX_BYTES].decode("utf-8", "ignore").encode()


def error_message(err: ApiError, command_id: str | None = None) -> bytes:
    """The ``error`` message of ``err``; ``command_id`` when it answers a command."""
    return encode(ErrorMessage(command_id=msgspec.UNSET if command_id is None else command_id,
                               error=error_info(err.code, err.message, err.details)))


def snapshot_message(ctx: Context, loaded: Loaded) -> bytes:
    return encode(Snapshot(seq=loaded.seq, state=ctx.games.state(loaded)))


def synced_message(seq: int) -> bytes:
    return encode(Synced(seq=seq))


def too_big(max_bytes: int) -> ApiError:
    """What a client is told of a message over the size limit, before the 1009 close."""
    return ApiError("bad_request", f"the message is larger than {max_bytes} bytes, the most "
                    "a message may be (the max_ws_message_bytes setting): the socket closes "
                    "with 1009; reconnect, with since, and send smaller messages",
                    {"limit": "max_ws_message_bytes", "max_bytes": max_bytes})


def since_beyond(since: int, seq: int) -> ApiError:
    return ApiError("bad_request", f"since {since} is beyond the game's seq {seq}: send hello with "
                    "the seq of the last diff you have, or without since for a snapshot",
                    {"since": since, "seq": seq})
