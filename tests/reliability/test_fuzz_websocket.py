"""Property-based fuzzing of the WebSocket (PROTOCOL.md "WebSocket"): whatever a client
sends, the server answers in the contract or closes with one of its close codes.

Hypothesis writes the messages: random JSON, the contract's messages with wrong
types, huge numbers and odd strings in their fields, deep nesting, invalid UTF-8,
binary frames, oversized frames, and frames no proper client would send (unmasked,
reserved bits, fragmented control frames). For each one, on a live socket and as
the first message of a new one:

- every message the server sends is a ``ServerMessage`` of the contract, and every
  error has the contract's shape ``{"code", "message", "details"}`` with a known code;
- a socket that is not closed still answers a ping (it did not wedge);
- a closed one is closed with a code of ``service.socket.messages.Close`` (docs/protocol.md "Close
  codes") other than 1011: the WebSocket layer's for a protocol violation (1002, 1007)
  among them;
- the service logs no error and no traceback at any level, and stays healthy.

Bounded and deterministic: a fixed number of examples, derandomized, no database.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol.codec import decode_client_message, decode_server_message
from protocol.errors import ERROR_CODES
from protocol.ws import Ping
from service.context import Context
from service.socket.messages import Close
from tests.live import settings_for_test
from tests.reliability.helpers import WAIT_S, LogWatch, RawClosed, RawSocket
from tests.service.helpers import Api, running_app, ws_url

MAX_MESSAGE = 8 * 1024  # Settings.max_ws_message_bytes
# What a closing server may say: the documented codes (never 1011, "internal error"),
# aiohttp's for a broken frame among them: 1002 protocol error, 1007 a close reason not UTF-8.
CLOSE_CODES = {c.value for c in Close} - {Close.INTERNAL_ERROR}

FUZZ = settings(derandomize=True, database=None, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                       HealthCheck.data_too_large])


def check_server_message(raw: bytes | str) -> dict[str, Any]:
    """One message from the server: in the contract, and an error in the contract's shape."""
    message = decode_server_message(raw)  # raises unless it is a ServerMessage
    data: dict[str, Any] = json.loads(raw)
    if data["type"] == "error":
        err = data["error"]
        assert set(err) == {"code", "message", "details"}, err
        assert err["code"] in ERROR_CODES and err["message"] and isinstance(err["details"], dict), (
            err
        )
        assert err["code"] not in ("unavailable",), f"the store is up: {err}"
    assert message is not None
    return data


class Fuzzer:
    """A live owner's socket on a game, reopened when a message closes it."""

    def __init__(self, api: Api, ctx: Context, token: str, game_id: str) -> None:
        self.api, self.ctx, self.token, self.game_id = api, ctx, token, game_id
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        self.reopened = 0
        self.closes: dict[int | None, int] = {}

    def __repr__(self) -> str:
        return "Fuzzer()"

    async def socket(self) -> aiohttp.ClientWebSocketResponse:
        if self.ws is None or self.ws.closed:
            self.ws = await self.api.session.ws_connect(
                ws_url(self.api.base, self.game_id), max_msg_size=0
            )
            await self.ws.send_str(json.dumps({"type": "hello", "token": self.token}))
            await self.answers()
            self.reopened += 1
        return self.ws

    async def answers(self, until: str = "synced") -> tuple[list[dict[str, Any]], int | None]:
        """Every message up to the first of type ``until``; or up to the close (and its code)."""
        assert self.ws is not None
        out = []
        while True:
            msg = await self.ws.receive(timeout=WAIT_S)
            if msg.type in (
                aiohttp.WSMsgType.CLOSE,
                aiohttp.WSMsgType.CLOSING,
                aiohttp.WSMsgType.CLOSED,
            ):
                code = self.ws.close_code
                self.closes[code] = self.closes.get(code, 0) + 1
                return out, code
            assert msg.type is aiohttp.WSMsgType.TEXT, msg
            out.append(check_server_message(msg.data))
            if out[-1]["type"] == until:
                return out, None


@pytest.fixture
async def fuzzer(redis_url: str, tmp_path: Path) -> AsyncIterator[Fuzzer]:
    async with running_app(settings_for_test(redis_url, tmp_path)) as (base, ctx), \
            aiohttp.ClientSession() as session:
        api = Api(session, base)
        _, token = await api.player("fuzzer")
        game_id = (await api.create(token, "gilbert", seed=4, public=True))["game_id"]
        f = Fuzzer(api, ctx, token, game_id)
        yield f
        if f.ws is not None:
            await f.ws.close()
        # Still healthy, and every socket of the fuzzing is gone.
        assert (await api.request("GET", "/readyz")).status == 200


# --- strategies -------------------------------------------------------------------------------

HUGE = st.one_of(
    st.integers(min_value=-(2**200), max_value=2**200),
    st.sampled_from([2**53, 2**63 - 1, 2**63, 2**64, -(2**63) - 1, 10**400]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([-0.0, 1e308, 5e-324]),
)
STRINGS = st.one_of(
    st.text(max_size=40),
    st.sampled_from(
        [
            "",
            "\x00",
            "\ud7ff\ue000",
            "é" * 300,
            "g_../../etc",
            "tableau/999",
            "foundation/-1",
            "stock\n",
        ]
    ),
)
SCALARS = st.one_of(st.none(), st.booleans(), HUGE, STRINGS)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(STRINGS, inner, max_size=4),
    max_leaves=12,
)
PILES = st.one_of(
    st.sampled_from(
        [
            "stock",
            "waste",
            "foundation",
            "foundation/0",
            "foundation/7",
            "tableau/0",
            "tableau/6",
            "reserve/0",
            "tableau/1000",
            "Tableau/1",
        ]
    ),
    JSON,
)
COMMAND = st.one_of(
    st.fixed_dictionaries(
        {"type": st.sampled_from(["move", "draw", "undo", "resign", "deal", "MOVE"])},
        optional={"from": PILES, "to": PILES, "count": st.one_of(HUGE, JSON)},
    ),
    JSON,
)
MESSAGE = st.one_of(
    st.fixed_dictionaries(
        {"type": st.sampled_from(["hello", "command", "ping", "pong", "ack", "diff", "Hello"])},
        optional={
            "token": st.one_of(STRINGS, JSON),
            "since": st.one_of(HUGE, JSON),
            "command_id": st.one_of(STRINGS, JSON),
            "expected_seq": st.one_of(HUGE, JSON),
            "command": COMMAND,
            "extra": JSON,
        },
    ),
    JSON,
)


def _nested(depth: int, kind: str) -> str:
    if kind == "list":
        return "[" * depth + "]" * depth
    if kind == "object":
        return '{"a":' * depth + "1" + "}" * depth
    return (
        '{"type":"command","command_id":"x","command":'
        + '{"type":' * depth
        + '"draw"'
        + "}" * depth
        + "}"
    )


def encode_text(value: Any) -> str:
    return json.dumps(value, allow_nan=True)  # (no NaN drawn: an overflowed float writes Infinity)


# A frame: (opcode, payload) for the aiohttp client, which frames it properly.
FRAMES = st.one_of(
    MESSAGE.map(lambda m: ("text", encode_text(m).encode())),
    st.binary(max_size=64).map(lambda b: ("text", b)),  # mostly invalid UTF-8 or not JSON
    st.binary(max_size=64).map(lambda b: ("binary", b)),
    MESSAGE.map(lambda m: ("binary", encode_text(m).encode())),
    st.tuples(st.integers(1, 4000), st.sampled_from(["list", "object", "command"])).map(
        lambda t: ("text", _nested(*t).encode())
    ),
    st.integers(MAX_MESSAGE + 1, 4 * MAX_MESSAGE).map(
        lambda n: ("text", b'{"type":"ping","x":"' + b"a" * n + b'"}')
    ),
    st.sampled_from(
        [
            ("text", b"NaN"),
            ("text", b"Infinity"),
            ("text", b'{"type":"ping"}{"type":"ping"}'),
            ("text", b'{"type":"ping",}'),
            ("text", b'{"type":"ping"'),
            ("text", b"\xef\xbb\xbf{}"),
            ("text", b'{"type":"hello","since":1e999}'),
            ("text", b'{"type":"\xc3"}'),
            ("text", b'{"type":"ping","type":"hello"}'),
            ("text", b""),
        ]
    ),
)


async def send(ws: aiohttp.ClientWebSocketResponse, frame: tuple[str, bytes]) -> None:
    kind, payload = frame
    await ws.send_frame(
        payload, aiohttp.WSMsgType.TEXT if kind == "text" else aiohttp.WSMsgType.BINARY
    )


def is_a_ping(frame: tuple[str, bytes]) -> bool:
    """Whether ``frame`` is itself a ping, which the server answers with a pong of its own."""
    kind, payload = frame
    try:
        return kind == "text" and isinstance(decode_client_message(payload), Ping)
    except msgspec.DecodeError:
        return False


# --- on a live socket ---------------------------------------------------------------------------


@settings(FUZZ, max_examples=400)
@given(frame=FRAMES)
async def test_any_message_on_a_live_socket_gets_the_contract_or_a_close_code(
        fuzzer: Fuzzer, service_log: LogWatch, frame: tuple[str, bytes]) -> None:
    ws = await fuzzer.socket()
    await send(ws, frame)
    with contextlib.suppress(aiohttp.ClientConnectionResetError):  # closed already: read why
        await ws.send_str('{"type":"ping"}')
    messages, code = await fuzzer.answers(until="pong")
    if code is None and is_a_ping(frame):
        # The frame was a ping: its pong, then read on to the pong of ours (else the next
        # frame's answers would be read as this one's, and a close after them left unread).
        more, code = await fuzzer.answers(until="pong")
        messages = messages[:-1] + more
    if code is not None:
        assert code in CLOSE_CODES, (code, frame)
        if len(frame[1]) > MAX_MESSAGE:
            assert code == Close.MESSAGE_TOO_BIG
    else:
        assert messages[-1] == {"type": "pong"}
        # Every answer to a message that is not a ping or a command is an error, or what a
        # hello answers (a hello without since: a snapshot).
        for m in messages[:-1]:
            assert m["type"] in ("error", "diff", "ack", "snapshot", "synced"), (m, frame)
    service_log.assert_no_tracebacks()


@settings(FUZZ, max_examples=150)
@given(frame=FRAMES)
async def test_any_first_message_gets_a_snapshot_or_an_error_and_a_close(
        fuzzer: Fuzzer, service_log: LogWatch, frame: tuple[str, bytes]) -> None:
    async with fuzzer.api.session.ws_connect(
        ws_url(fuzzer.api.base, fuzzer.game_id), max_msg_size=0
    ) as ws:
        await send(ws, frame)
        out = []
        while True:
            msg = await ws.receive(timeout=WAIT_S)
            if msg.type is not aiohttp.WSMsgType.TEXT:
                break
            out.append(check_server_message(msg.data))
            if out[-1]["type"] == "error" and set(out[-1]["error"]["details"]) == {"since", "seq"}:
                # PROTOCOL.md: a since beyond the game's seq; the socket stays open for a
                # correct hello.
                out.pop()
                await ws.send_str('{"type":"hello"}')
                continue
            if out[-1]["type"] == "synced":  # a hello was accepted: still live
                await ws.send_str('{"type":"ping"}')
                assert check_server_message((await ws.receive(timeout=WAIT_S)).data) == {
                    "type": "pong"
                }
                break
    if not out or out[-1]["type"] != "synced":
        assert ws.close_code in CLOSE_CODES, (ws.close_code, frame)
        if ws.close_code != Close.MESSAGE_TOO_BIG:
            assert [m["type"] for m in out] == ["error"], out
            assert ws.close_code == Close.POLICY_VIOLATION
    service_log.assert_no_tracebacks()


# --- frames no proper client sends ------------------------------------------------------------

RAW = st.one_of(
    st.tuples(
        st.sampled_from([0x1, 0x2, 0x0, 0x3, 0x7, 0xB, 0xF]),
        st.binary(max_size=200),
        st.booleans(),
        st.booleans(),
        st.integers(0, 7),
    ),
    st.tuples(
        st.sampled_from([0x8, 0x9, 0xA]),
        st.binary(max_size=300),
        st.booleans(),
        st.booleans(),
        st.integers(0, 7),
    ),
)


@settings(FUZZ, max_examples=80)
@given(frame=RAW)
async def test_broken_frames_close_the_socket_cleanly_or_are_answered(
        fuzzer: Fuzzer, service_log: LogWatch, frame: tuple[int, bytes, bool, bool, int]) -> None:
    opcode, payload, fin, masked, rsv = frame
    raw = await RawSocket.connect(fuzzer.api.base, f"/v1/games/{fuzzer.game_id}/ws")
    try:
        await raw.send_json({"type": "hello", "token": fuzzer.token})
        while (await raw.recv())["type"] != "synced":
            pass
        await raw.send_frame(payload, opcode, fin=fin, masked=masked, rsv=rsv)
        await raw.send_json({"type": "ping"})
        messages, code, dropped = await _until_pong_or_close(raw)
        for m in messages:
            check_server_message(json.dumps(m))
        if code is not None:
            assert code in CLOSE_CODES | {1000}, (code, frame)
        elif not dropped:
            assert messages[-1] == {"type": "pong"}
        if _harmless(opcode, payload, fin, masked, rsv):
            assert messages[-1] == {"type": "pong"}, (messages, code, frame)
    finally:
        raw.close()
    await _wait_no_sockets(fuzzer)
    service_log.assert_no_tracebacks()


def _harmless(opcode: int, payload: bytes, fin: bool, masked: bool, rsv: int) -> bool:
    """A frame that leaves the socket open: a complete, masked, plain ping or pong."""
    return opcode in (0x9, 0xA) and fin and masked and rsv == 0 and len(payload) <= 125


async def _until_pong_or_close(raw: RawSocket) -> tuple[list[dict[str, Any]], int | None, bool]:
    """Messages up to the pong, or up to the close frame (its code), or the connection's end."""
    out = []
    while True:
        try:
            m = await raw.recv()
        except RawClosed as closed:
            return out, closed.code, closed.code is None
        except (ConnectionResetError, BrokenPipeError):
            return out, None, True
        out.append(m)
        if m == {"type": "pong"}:
            return out, None, False


async def _wait_no_sockets(fuzzer: Fuzzer) -> None:
    from tests.service.helpers import wait_for

    live = {fuzzer.ws} if fuzzer.ws is not None and not fuzzer.ws.closed else set()
    await wait_for(lambda: len(fuzzer.ctx.sockets) <= len(live), what="the broken sockets gone")


async def test_the_fuzzers_reach_every_kind_of_answer(
    fuzzer: Fuzzer, service_log: LogWatch
) -> None:
    """The strategies are not all refused at the door: each kind of outcome happens."""
    ws = await fuzzer.socket()
    outcomes = set()
    for frame in [
        ("text", b'{"type":"command","command_id":"ok1","command":{"type":"draw"}}'),
        (
            "text",
            (
                b'{"type":"command","command_id":"bad1","command":{"type":"move",'
                b'"from":"waste","to":"foundation","count":18446744073709551616}}'
            ),
        ),
        (
            "text",
            (
                b'{"type":"command","command_id":"bad2","command":{"type":"move",'
                b'"from":"waste","to":"foundation","count":9007199254740993}}'
            ),
        ),
        (
            "text",
            (
                b'{"type":"command","command_id":"s1","expected_seq":18446744073709551615,'
                b'"command":{"type":"draw"}}'
            ),
        ),
        ("text", b'{"type":"hello","since":18446744073709551615}'),
        ("text", b'{"type":"hello","since":0}'),
        ("binary", b"\x00"),
        ("text", b"\xff\xfe"),
    ]:
        await send(ws, frame)
        await ws.send_str('{"type":"ping"}')
        messages, code = await fuzzer.answers(until="pong")
        assert code is None, (frame, code)
        outcomes.update(m["type"] if m["type"] != "error" else m["error"]["code"] for m in messages)
    assert {
        "diff",
        "ack",
        "bad_request",
        "illegal_move",
        "conflict",
        "synced",
        "pong",
    } <= outcomes, outcomes
    await send(ws, ("text", b"[" + b" " * MAX_MESSAGE + b"]"))
    _, code = await fuzzer.answers(until="pong")
    assert code == Close.MESSAGE_TOO_BIG
    service_log.assert_no_tracebacks()
