"""A player of the fault tests: one game, played over REST or a WebSocket with legal
commands chosen from its own copy of the engine, recording both sides of every command
(sent, acknowledged, reported failed) and every diff its sockets received.

On any failure it recovers as a real client would: a REST client reads the log again,
a socket client reconnects with ``since`` (to ``api.base``, which a test may point at
another instance). ``stop`` ends its loops.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from service.engine import RESIGN, Game
from tests.commands import from_json, legal_commands, replay, to_json
from tests.service.helpers import Api, Closed, Socket, apply, new_command_id

ANSWER_S = 30.0  # a command unanswered this long counts as never answered (a failure of the test)


@dataclass
class Client:
    """One player with one game, over REST or over a WebSocket."""

    name: str
    api: Api
    token: str
    game_id: str
    variant: str
    seed: int
    options: dict[str, Any]
    over_ws: bool
    rng: random.Random
    game: Game = field(init=False)
    seq: int = 0
    sent: dict[str, dict[str, Any]] = field(default_factory=dict)  # command_id -> command
    acked: dict[str, int] = field(default_factory=dict)  # command_id -> seq
    failed: dict[str, str] = field(default_factory=dict)  # command_id -> how it was reported
    unanswered: list[str] = field(default_factory=list)
    diff_seqs: list[int] = field(default_factory=list)  # every diff the client's sockets got
    state: Any = None  # the contract's GameState, folded from the diffs (WebSocket clients)
    sock: Socket | None = None
    reconnects: int = 0
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    phase: str = "new"
    last_error: str = ""

    def __post_init__(self) -> None:
        self.game = Game.deal(self.variant, self.seed, self.options)

    def next_command(self) -> dict[str, Any] | None:
        options = [c for c in legal_commands(self.game) if c is not RESIGN]
        return to_json(self.rng.choice(options)) if options else None

    # --- REST ---------------------------------------------------------------------------
    async def rest_step(self, command: dict[str, Any], cid: str) -> None:
        try:
            reply = await self.api.command(self.token, self.game_id, command, expected_seq=self.seq,
                                           command_id=cid, expect=None)
        except (TimeoutError, aiohttp.ClientError) as exc:
            self.failed[cid] = f"exception {type(exc).__name__}"
            await self.rest_resync()
            return
        if reply.status == 200:
            assert reply.body["seq"] == self.seq + 1, (self.name, reply.body["seq"], self.seq)
            self.acked[cid] = reply.body["seq"]
            self.game = self.game.apply(from_json(reply.body["diff"]["command"]))[0]
            self.seq += 1
            return
        code = reply.error["code"]  # the contract's shape, checked
        assert (reply.status, code) in ((503, "unavailable"), (409, "conflict")), (
            reply.status,
            reply.raw,
        )
        self.failed[cid] = f"{reply.status} {code}"
        await self.rest_resync()

    async def rest_resync(self) -> None:
        """Read the log until the store answers, and play on from what it says."""
        self.phase = "resync"
        while not self.stop.is_set():
            await asyncio.sleep(0.05)
            with contextlib.suppress(aiohttp.ClientError, asyncio.TimeoutError):
                reply = await self.api.request(
                    "GET", f"/v1/games/{self.game_id}/events", self.token
                )
                if reply.status == 200:
                    commands = [from_json(e["command"]) for e in reply.body["events"]]
                    self.game = replay(self.variant, self.seed, self.options, commands)
                    self.seq = len(commands)
                    return
                assert reply.status == 503, reply.raw

    # --- WebSocket ----------------------------------------------------------------------
    def on_diff(self, m: dict[str, Any]) -> None:
        assert m["seq"] == self.seq + 1, (
            f"{self.name}: diff {m['seq']} after {self.seq}: a gap or a repeat"
        )
        self.diff_seqs.append(m["seq"])
        self.game = self.game.apply(from_json(m["command"]))[0]
        self.state = apply(self.state, m)
        self.seq += 1

    async def ws_connect(self) -> None:
        """Connect (again) with since: every diff after the last one this client has."""
        self.phase = "connect"
        while not self.stop.is_set():
            sock = None
            try:
                sock = Socket(
                    await self.api.session.ws_connect(
                        self.api.base.replace("http://", "ws://") + f"/v1/games/{self.game_id}/ws",
                        max_msg_size=0,
                    )
                )
                messages = await sock.hello(self.token, since=self.seq)
                for m in messages[:-1]:
                    assert m["type"] == "diff", m
                    self.on_diff(m)
                assert messages[-1] == {"type": "synced", "seq": self.seq}, messages[-1]
                self.sock = sock
                self.reconnects += 1
                return
            except (TimeoutError, Closed, aiohttp.ClientError, ConnectionResetError) as exc:
                self.last_error = (
                    repr(exc)[:200] + " " + repr(sock.received[-1:] if sock else None)[:300]
                )
                if sock is not None:
                    await sock.ws.close()
                await asyncio.sleep(0.05)

    async def ws_step(self, command: dict[str, Any], cid: str) -> None:
        if self.sock is None:
            await self.ws_connect()
        assert self.sock is not None
        try:
            await self.sock.command(command, expected_seq=self.seq, command_id=cid)
            while True:
                m = await self.sock.recv(ANSWER_S)
                if m["type"] == "diff":
                    self.on_diff(m)
                elif m.get("command_id") == cid:
                    break
                else:
                    raise AssertionError(f"{self.name}: unexpected {m}")
        except TimeoutError:
            self.unanswered.append(cid)
            m = None
        except (Closed, aiohttp.ClientError, ConnectionResetError) as exc:
            self.failed[cid] = f"socket closed ({exc})"
            m = None
        if m is not None and m["type"] == "ack":
            assert m["seq"] == self.seq, (self.name, m, self.seq)  # its diff came first
            self.acked[cid] = m["seq"]
            return
        if m is not None:
            assert m["type"] == "error" and m["error"]["code"] in ("unavailable", "conflict"), m
            self.failed[cid] = f"error {m['error']['code']}"
        # Whatever happened, start again from the log: reconnect with since.
        await self.sock.ws.close()
        self.sock = None
        await asyncio.sleep(0.05)
        await self.ws_connect()

    # --- the loop -------------------------------------------------------------------------
    async def run(self) -> None:
        if self.over_ws:
            await self.ws_connect()
        while not self.stop.is_set():
            command = self.next_command()
            if command is None:  # won: nothing more to play
                self.phase = "over"
                return
            self.phase = "command"
            cid = f"{self.name}-{new_command_id()}"
            self.sent[cid] = command
            if self.over_ws:
                await self.ws_step(command, cid)
            else:
                await self.rest_step(command, cid)

    async def close(self) -> None:
        if self.sock is not None:
            await self.sock.ws.close()
