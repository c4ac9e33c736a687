"""A service instance killed with SIGKILL in the middle of play (PROTOCOL.md "WebSocket":
reconnect with ``since``; replayed and live diffs form one unbroken run).

Two instances (``python -m service`` child processes) share one store. Players play
their own games over sockets to instance A, each command with an id and an
``expected_seq``, and watchers follow the same games on A; a REST player plays on A
too. A is killed with SIGKILL while commands are in flight. Every client reconnects
to B with the last seq it has and carries on:

- across both instances each socket client saw every diff of its game exactly once,
  in order, and its folded state is the state B returns;
- every acknowledged command is in the log at its seq; the commands in flight when A
  died are each in the log or not (both are counted), never in it twice;
- the logs replay with the engine; B logged no error.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.live import ServiceProcess
from tests.reliability.helpers import assert_clean_process_log, replay_stored
from tests.reliability.players import ANSWER_S, Client
from tests.service.helpers import (
    CONFIGS,
    Api,
    Closed,
    Socket,
    apply,
    game_state,
    same_state,
    wait_for,
)

PLAYERS = 8


@pytest.fixture
def instances(redis_url: str, tmp_path: Path) -> Iterator[tuple[ServiceProcess, ServiceProcess]]:
    a = ServiceProcess(redis_url, tmp_path / "a", SOLITAIRE_INSTANCE_ID="a")
    b = ServiceProcess(redis_url, tmp_path / "b", SOLITAIRE_INSTANCE_ID="b")
    try:
        a.start()
        b.start()
        yield a, b
    finally:
        a.kill()
        b.stop()


class Watcher:
    """Follows a public game without a token; reconnects with since wherever ``base`` points."""

    def __init__(self, session: aiohttp.ClientSession, base: str, game_id: str, start: Any) -> None:
        self.session, self.base, self.game_id = session, base, game_id
        self.seq = 0
        self.seqs: list[int] = []
        self.state = game_state(start)
        self.reconnects = 0
        self.stop = asyncio.Event()

    def on(self, m: dict[str, Any]) -> None:
        if m["type"] == "diff":
            assert m["seq"] == self.seq + 1, (
                f"watcher of {self.game_id}: {m['seq']} after {self.seq}"
            )
            self.seqs.append(m["seq"])
            self.state = apply(self.state, m)
            self.seq += 1

    async def run(self) -> None:
        while not self.stop.is_set():
            sock = None
            try:
                sock = Socket(
                    await self.session.ws_connect(
                        self.base.replace("http://", "ws://") + f"/v1/games/{self.game_id}/ws",
                        max_msg_size=0,
                    )
                )
                for m in await sock.hello(since=self.seq):
                    self.on(m)
                self.reconnects += 1
                while not self.stop.is_set():
                    try:
                        self.on(await sock.recv(0.2))
                    except TimeoutError:
                        continue
            except (TimeoutError, Closed, aiohttp.ClientError, ConnectionResetError):
                await asyncio.sleep(0.05)
            finally:
                if sock is not None:
                    await sock.ws.close()


async def test_an_instance_killed_mid_play_its_clients_go_on_on_another_with_no_gap_and_no_repeat(
        instances: tuple[ServiceProcess, ServiceProcess], redis_url: str) -> None:
    a, b = instances
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=ANSWER_S)) as session:
        api_a, api_b = Api(session, a.url), Api(session, b.url)
        players: list[Client] = []
        watchers: list[Watcher] = []
        for i in range(PLAYERS + 1):
            variant, options = CONFIGS[i % len(CONFIGS)]
            _, token = await api_a.player(f"p{i}")
            created = await api_a.create(
                token, variant, seed=500 + i, options=options or None, public=True
            )
            client = Client(
                f"c{i}",
                Api(session, a.url),
                token,
                created["game_id"],
                variant,
                500 + i,
                created["state"]["options"],
                over_ws=i < PLAYERS,
                rng=random.Random(i),
            )
            client.state = game_state(created["state"])
            players.append(client)
            watchers.append(Watcher(session, a.url, created["game_id"], created["state"]))
        tasks = [asyncio.create_task(c.run()) for c in players] + [
            asyncio.create_task(w.run()) for w in watchers
        ]

        def check_tasks() -> None:
            for t in tasks:
                if t.done() and t.exception() is not None:
                    raise t.exception()  # type: ignore[misc]

        try:
            await wait_for(lambda: check_tasks() or sum(len(c.acked) for c in players) >= 150,
                           what="150 acknowledged commands on A")
            for c in players:  # from now on, every client's next (re)connection goes to B
                c.api = api_b
            for w in watchers:
                w.base = b.url
            a.kill()  # SIGKILL, commands in flight
            base = [len(c.acked) for c in players]
            await wait_for(
                lambda: (
                    check_tasks()
                    or all(
                        len(c.acked) >= base[i] + 5 or c.phase == "over"
                        for i, c in enumerate(players)
                    )
                ),
                what="every player playing on through B",
            )
        finally:
            for c in players:
                c.stop.set()
            results = await asyncio.wait_for(
                asyncio.gather(*tasks[: len(players)], return_exceptions=True), 120
            )
        for r in results:
            if isinstance(r, BaseException):
                raise r

        in_log = not_in_log = 0
        for c, w in zip(players, watchers, strict=True):
            game, stored = replay_stored(redis_url, c.game_id)
            final = await api_b.state(c.game_id)
            assert final["seq"] == stored.seq and final["piles"] == game.public_piles()
            assert not c.unanswered, (c.name, c.unanswered)
            assert set(c.sent) == set(c.acked) | set(c.failed)
            for cid, seq in c.acked.items():
                assert stored.command_ids.get(cid) == seq
            assert set(stored.command_ids) <= set(c.sent)
            assert sorted(stored.command_ids.values()) == list(range(1, stored.seq + 1))
            for cid in c.failed:
                in_log, not_in_log = (in_log + 1, not_in_log) if cid in stored.command_ids \
                    else (in_log, not_in_log + 1)
            if c.over_ws:
                c.stop.clear()
                await c.ws_connect()  # on B: whatever the end of the run left in flight
                await c.close()
                assert c.diff_seqs == list(range(1, stored.seq + 1)), c.name
                assert same_state(c.state, game_state(final)), c.name
            # The watcher, now on B, catches up: every diff once, in order, across both instances.
            await wait_for(
                lambda w=w, n=stored.seq: w.seq >= n, what=f"the watcher of {c.name} caught up"
            )
            assert w.seqs == list(range(1, stored.seq + 1))
            assert same_state(w.state, game_state(final))
        for w in watchers:
            w.stop.set()
        await asyncio.wait_for(asyncio.gather(*tasks[len(players):]), 60)
        socket_players = [c for c in players if c.over_ws]
        assert all(c.api.base == b.url for c in socket_players)
        assert all(w.reconnects >= 2 for w in watchers)  # on A, then on B
        print(f"{sum(len(c.acked) for c in players)} acknowledged; in flight when A died: {in_log} "
              f"in the log, {not_in_log} not")
    assert_clean_process_log(b.log())
