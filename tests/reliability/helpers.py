"""Helpers of the reliability tests: the log watch, a raw WebSocket client, and the
store read directly (to judge the log itself, not what the service says about it).

Everything waits for conditions with generous timeouts (``WAIT_S``); nothing
asserts on how long something took.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
import os
import socket
import struct
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self
from urllib.parse import urlsplit

from protocol.codec import encode
from service.domain import wire
from service.engine import Game
from service.store import keys
from tests.commands import from_json, replay, to_json
from tests.redis_servers import sync_client

WAIT_S = 30.0

# --- the service's log ------------------------------------------------------------------


class LogWatch(logging.Handler):
    """Every log record of this process while entered (the service's own loggers from INFO)."""

    LOUD = ("service",)  # loggers whose INFO records (with their tracebacks) are kept too

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []
        self._levels: dict[str, int] = {}

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def __enter__(self) -> Self:
        logging.getLogger().addHandler(self)
        for name in self.LOUD:
            logger = logging.getLogger(name)
            self._levels[name] = logger.level
            if logger.getEffectiveLevel() > logging.INFO:
                logger.setLevel(logging.INFO)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        logging.getLogger().removeHandler(self)
        for name, level in self._levels.items():
            logging.getLogger(name).setLevel(level)

    @staticmethod
    def _show(records: list[logging.LogRecord]) -> str:
        formatter = logging.Formatter("%(levelname)s %(name)s: %(message)s")
        return "\n".join(formatter.format(r) for r in records[:5])

    def errors(self) -> list[logging.LogRecord]:
        return [r for r in self.records if r.levelno >= logging.ERROR]

    def tracebacks(self) -> list[logging.LogRecord]:
        return [r for r in self.records if r.exc_info or r.exc_text or r.stack_info]

    def assert_no_errors(self) -> None:
        errors = self.errors()
        assert not errors, f"{len(errors)} log records at ERROR or above:\n{self._show(errors)}"

    def assert_no_tracebacks(self) -> None:
        self.assert_no_errors()
        tracebacks = self.tracebacks()
        assert not tracebacks, (
            f"{len(tracebacks)} log records with a traceback:\n{self._show(tracebacks)}"
        )

    def count(self, text: str) -> int:
        return sum(text in r.getMessage() for r in self.records)


def raw_request(port: int, data: bytes) -> bytes:
    """Send ``data`` as it is on a new loopback connection; everything the service answers
    until it closes the connection."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(data)
        out = b""
        while chunk := s.recv(65536):
            out += chunk
    return out


def assert_clean_process_log(text: str) -> None:
    """The log of a ``python -m service`` child: no ERROR record, no traceback."""
    bad = [line for line in text.splitlines()
           if " ERROR " in line or " CRITICAL " in line or line.startswith("Traceback")]
    assert not bad, "the service logged:\n" + "\n".join(bad[:10])


# --- a raw WebSocket client ----------------------------------------------------------------


class RawClosed(Exception):
    def __init__(self, code: int | None, reason: str = "") -> None:
        super().__init__(f"closed: {code} {reason}")
        self.code = code


class RawSocket:
    """A WebSocket client written by hand over a non-blocking socket.

    It reads only when asked to (no transport reads ahead into a buffer), so a
    test can stop reading and let TCP back up, and it can send what no proper
    client would: invalid UTF-8 in a text frame, oversized or unmasked frames.
    ``rcvbuf`` shrinks the kernel's receive buffer before connecting.
    """

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = b""
        self.received = 0  # payload bytes read so far

    @classmethod
    async def connect(cls, base: str, path: str, rcvbuf: int | None = None) -> RawSocket:
        split = urlsplit(base)
        host, port = split.hostname or "127.0.0.1", split.port or 80
        loop = asyncio.get_running_loop()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        sock.setblocking(False)
        await loop.sock_connect(sock, (host, port))
        raw = cls(sock)
        key = base64.b64encode(os.urandom(16)).decode()
        request = (
            f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        await loop.sock_sendall(sock, request.encode())
        head = await raw._read_until(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 101"), head
        return raw

    async def _fill(self, timeout: float) -> None:
        loop = asyncio.get_running_loop()
        chunk = await asyncio.wait_for(loop.sock_recv(self.sock, 65536), timeout)
        if not chunk:
            raise RawClosed(None, "connection closed without a close frame")
        self.buffer += chunk

    async def _read_until(self, marker: bytes, timeout: float = WAIT_S) -> bytes:
        while marker not in self.buffer:
            await self._fill(timeout)
        head, _, self.buffer = self.buffer.partition(marker)
        return head

    async def _read_exactly(self, n: int, timeout: float) -> bytes:
        while len(self.buffer) < n:
            await self._fill(timeout)
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        return out

    async def send_frame(
        self,
        payload: bytes,
        opcode: int = 0x1,
        *,
        fin: bool = True,
        masked: bool = True,
        rsv: int = 0,
    ) -> None:
        first = (0x80 if fin else 0) | (rsv << 4) | opcode
        n = len(payload)
        mask_bit = 0x80 if masked else 0
        if n < 126:
            header = struct.pack("!BB", first, mask_bit | n)
        elif n < 1 << 16:
            header = struct.pack("!BBH", first, mask_bit | 126, n)
        else:
            header = struct.pack("!BBQ", first, mask_bit | 127, n)
        if masked:
            mask = os.urandom(4)
            body = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            header += mask
        else:
            body = payload
        await asyncio.get_running_loop().sock_sendall(self.sock, header + body)

    async def send_json(self, message: Any) -> None:
        await self.send_frame(json.dumps(message).encode())

    async def recv_frame(self, timeout: float = WAIT_S) -> tuple[int, bytes]:
        first, second = await self._read_exactly(2, timeout)
        n = second & 0x7F
        if n == 126:
            (n,) = struct.unpack("!H", await self._read_exactly(2, timeout))
        elif n == 127:
            (n,) = struct.unpack("!Q", await self._read_exactly(8, timeout))
        payload = await self._read_exactly(n, timeout)
        self.received += n
        return first & 0x0F, payload

    async def recv(self, timeout: float = WAIT_S) -> dict[str, Any]:
        """The next text message; pings are answered, a close frame raises RawClosed."""
        while True:
            opcode, payload = await self.recv_frame(timeout)
            if opcode == 0x1:
                return json.loads(payload)  # type: ignore[no-any-return]
            if opcode == 0x8:
                code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None
                raise RawClosed(code, payload[2:].decode(errors="replace"))
            if opcode == 0x9:
                await self.send_frame(payload, 0xA)

    async def until_closed(
        self, timeout: float = WAIT_S
    ) -> tuple[list[dict[str, Any]], int | None]:
        """Every message until the close frame (its code), or until the connection drops (None)."""
        out = []
        while True:
            try:
                out.append(await self.recv(timeout))
            except RawClosed as closed:
                return out, closed.code
            except (ConnectionResetError, BrokenPipeError):
                return out, None

    def abort(self) -> None:
        """Drop the connection with a TCP reset, as a crashed client or a cut cable would."""
        with contextlib.suppress(OSError):
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.sock.close()

    def close(self) -> None:
        self.sock.close()


# --- the store, read directly ------------------------------------------------------------


@dataclass
class StoredGame:
    game_id: str
    meta: dict[str, str]
    events: list[dict[str, Any]]
    command_ids: dict[str, int]
    snapshot: dict[str, str] | None

    @property
    def seq(self) -> int:
        return int(self.meta["seq"])

    def commands(self) -> list[dict[str, Any]]:
        return [e["command"] for e in self.events]


def _text(raw: dict[bytes, bytes]) -> dict[str, str]:
    return {k.decode(): v.decode() for k, v in raw.items()}


def stored_game(url: str, game_id: str) -> StoredGame:
    """Meta, log, command ids and snapshot of a game, as the store holds them."""
    with sync_client(url) as r:
        meta = _text(r.hgetall(keys.game_meta(game_id)))
        events = [json.loads(e) for e in r.lrange(keys.game_events(game_id), 0, -1)]
        # command_id -> "<seq> <command>": the seq of its first use
        ids = {k: int(v.split(" ")[0])
               for k, v in _text(r.hgetall(keys.game_commands(game_id))).items()}
        snapshot = _text(r.hgetall(keys.game_snapshot(game_id))) or None
    return StoredGame(game_id, meta, events, ids, snapshot)


def replay_stored(url: str, game_id: str) -> tuple[Game, StoredGame]:
    """Replay a game's log with the engine from its stored meta, checking every event.

    The log is whole: seqs 1..n with no hole, as many as the meta's seq; each
    stored diff is exactly the engine's diff of that command (ops, status, moves,
    foundation cards); every command id names a seq of the log, no two the same;
    the meta's status is the replayed game's. Returns the replayed game.
    """
    stored = stored_game(url, game_id)
    meta = stored.meta
    assert meta, f"no game {game_id} in the store"
    n = stored.seq
    assert [e["seq"] for e in stored.events] == list(range(1, n + 1)), (
        game_id,
        n,
        len(stored.events),
    )
    game = Game.deal(meta["variant"], int(meta["seed"]), json.loads(meta["options"]))
    for event in stored.events:
        game, diff = game.apply(from_json(event["command"]))
        assert to_json(diff.command) == event["command"], (game_id, event["seq"])
        assert json.loads(encode(diff.ops)) == event["ops"], (game_id, event["seq"], "ops differ")
        assert event["status"] == diff.status.value, (game_id, event["seq"])
        assert event["stats"]["moves"] == diff.moves
        assert event["stats"]["foundation_cards"] == diff.foundation_cards
    whole = replay(
        meta["variant"], int(meta["seed"]), json.loads(meta["options"]),
        [from_json(c) for c in stored.commands()]
    )
    assert whole.public_piles() == game.public_piles()
    assert meta["status"] == game.status.value, (game_id, meta["status"], game.status)
    seqs = list(stored.command_ids.values())
    assert len(set(seqs)) == len(seqs), f"two command ids at one seq in {game_id}"
    assert all(1 <= s <= n for s in seqs), (game_id, sorted(seqs), n)
    if stored.snapshot is not None:
        snap_seq = int(stored.snapshot["seq"])
        assert 1 <= snap_seq <= n
        assert wire.restore(stored.snapshot["data"]).public_piles() == \
            replay(meta["variant"], int(meta["seed"]), json.loads(meta["options"]),
                        [from_json(c) for c in stored.commands()[:snap_seq]]).public_piles()
    return game, stored
