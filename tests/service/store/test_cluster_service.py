"""Two service instances on a three-master Redis Cluster.

- A comma-separated REDIS_URL makes the service use redis-py's cluster client;
  every key of a game carries its ``{game_id}`` hash tag, so a game lives on the
  one node that owns its slot, and its diffs are published there with SPUBLISH
  and heard by the other instance through SSUBSCRIBE on that node.
- Games of every variant, played through both instances (REST and WebSocket),
  reach every socket on both instances in seq order, exactly as the log has them.
- A master killed (SIGKILL) or stopped politely (SIGTERM) and started again on
  the same port and directory (AOF on) loses no acknowledged command, and the
  service recovers by itself: commands work again through both instances and
  sockets that reconnect with ``since`` get every diff they missed.

The test cluster has no replicas, so there is no failover to test: a failed
master's slots (and, once the others declare it failed, the whole cluster,
``cluster-require-full-coverage``) are unavailable until it is back.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from redis.asyncio.cluster import RedisCluster

from service.app import Context
from service.store import keys
from tests.live import settings_for_test
from tests.redis_servers import LocalCluster, sync_client
from tests.service.helpers import (
    CONFIGS,
    Api,
    apply,
    game_state,
    new_command_id,
    running_app,
    same_state,
    wait_for,
    ws_url,
)

WAIT_S = 60.0


# --- a socket that follows a game and reconnects with since -----------------------------


class SocketClosed(Exception):
    pass


@dataclass(eq=False)
class Follower:
    """One WebSocket on a game through one instance. It checks that diffs come in
    seq order with no gap and no duplicate, reconnects with ``since`` whenever the
    server closes it, and can send commands (answered by ack or error)."""

    session: aiohttp.ClientSession
    base: str
    game_id: str
    token: str | None = None
    name: str = ""
    last: int = -1  # the last seq this client has (-1: nothing yet)
    start_seq: int = 0
    start_state: dict[str, Any] | None = None
    diffs: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    reconnects: int = 0
    close_codes: list[int | None] = field(default_factory=list)
    synced: asyncio.Event = field(default_factory=asyncio.Event)
    _ws: aiohttp.ClientWebSocketResponse | None = None
    _pending: dict[str, asyncio.Future[dict[str, Any]]] = field(default_factory=dict)
    _task: asyncio.Task[None] | None = None
    _stopping: bool = False
    phase: str = "new"  # where the follower is: what a failure report shows

    async def start(self) -> None:
        self._stopping = False
        self._task = asyncio.create_task(self._run(), name=f"follower-{self.name}")
        try:
            async with asyncio.timeout(WAIT_S):
                await self.synced.wait()
        except TimeoutError:
            raise AssertionError(f"{self.name} not synced within {WAIT_S:g} s: {self}") from None

    def __str__(self) -> str:
        return (f"{self.name}: {self.phase}, last seq {self.last}, {self.reconnects} reconnects, "
                f"close codes {self.close_codes[-10:]}, problems {self.problems[:5]}")

    async def stop(self) -> None:
        """Close the socket and stop following (``start`` again resumes with since)."""
        self._stopping = True
        if self._ws is not None:
            await self._ws.close()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._ws = None
        self.synced.clear()

    async def _run(self) -> None:
        delay = 0.05
        while not self._stopping:
            self.phase = "connecting"
            try:
                ws = await self.session.ws_connect(ws_url(self.base, self.game_id), max_msg_size=0,
                                                   autoping=True)
            except aiohttp.ClientError as exc:
                self.phase = f"connect failed: {exc!r}"
                await asyncio.sleep(delay)
                continue
            self._ws = ws
            hello: dict[str, Any] = {"type": "hello"}
            if self.token:
                hello["token"] = self.token
            if self.last >= 0:
                hello["since"] = self.last
            await ws.send_str(json.dumps(hello))
            self.phase = f"hello sent ({hello.get('since')=})"
            async for msg in ws:
                if msg.type is not aiohttp.WSMsgType.TEXT:
                    self.phase = f"got {msg.type!r}"
                    break
                message = json.loads(msg.data)
                self.phase = f"last message {message['type']}"
                self._on_message(message)
                delay = 0.05
            self.close_codes.append(ws.close_code)
            self._ws = None
            self.synced.clear()
            for fut in self._pending.values():
                if not fut.done():
                    fut.set_exception(SocketClosed(f"closed with {ws.close_code}"))
            self._pending.clear()
            if self._stopping:
                return
            self.reconnects += 1
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.5)

    def _on_message(self, m: dict[str, Any]) -> None:
        kind = m["type"]
        if kind == "snapshot":
            if self.last >= 0:
                self.problems.append(f"{self.name}: a snapshot at {m['seq']} after seq {self.last}")
            else:
                self.start_seq, self.start_state, self.last = m["seq"], m["state"], m["seq"]
        elif kind == "diff":
            if m["seq"] != self.last + 1:
                self.problems.append(f"{self.name}: diff {m['seq']} after {self.last}")
            if m["seq"] > self.last:
                self.diffs.append(m)
                self.last = m["seq"]
        elif kind == "synced":
            if m["seq"] != self.last:
                self.problems.append(f"{self.name}: synced at {m['seq']}, have {self.last}")
            self.synced.set()
        elif kind in ("ack", "error"):
            fut = self._pending.pop(m.get("command_id") or "", None)
            if fut is not None and not fut.done():
                fut.set_result(m)

    async def command(
        self, command: dict[str, Any], expected_seq: int, command_id: str
    ) -> dict[str, Any]:
        """Send a command on this socket; its ack or error message."""
        ws = self._ws
        if ws is None or not self.synced.is_set():
            raise SocketClosed("not connected")
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[command_id] = fut
        await ws.send_str(json.dumps({"type": "command", "command_id": command_id,
                                      "expected_seq": expected_seq, "command": command}))
        async with asyncio.timeout(10):
            return await fut


# --- a game played through both instances ------------------------------------------------


@dataclass(eq=False)
class Acked:
    seq: int
    command_id: str
    command: dict[str, Any]
    at: float  # time.monotonic() of the ack


@dataclass(eq=False)
class Played:
    """A game, its owner's token, the sockets following it and every acknowledged command."""

    variant: str
    options: dict[str, Any]
    game_id: str
    token: str
    node: int  # the cluster node that owns the game's slot
    owner_sockets: list[Follower] = field(default_factory=list)  # one per instance, with the token
    followers: list[Follower] = field(default_factory=list)  # every socket, owners' included
    late: Follower | None = None  # a socket away during an outage, back with since
    acked: dict[int, Acked] = field(default_factory=dict)
    failures: dict[str, int] = field(default_factory=dict)
    steps: int = 0

    def failed(self, what: str) -> None:
        self.failures[what] = self.failures.get(what, 0) + 1


async def send_until_answered(
    game: Played,
    apis: list[Api],
    command: dict[str, Any],
    expected_seq: int,
    path: int,
    deadline: float,
) -> dict[str, Any] | None:
    """Send one command through path ``path`` (REST on an instance, or an owner socket),
    again with the same command_id after any failure that may or may not have applied it;
    record the ack. Returns the refusal (409/422 error) or None once acknowledged."""
    command_id = new_command_id()
    while True:
        if time.monotonic() > deadline:
            raise AssertionError(f"game {game.game_id}: no answer to {command} by the deadline "
                                 f"(failures so far: {game.failures})")
        kind = path % (len(apis) + len(game.owner_sockets))
        try:
            if kind < len(apis):
                reply = await apis[kind].command(
                    game.token,
                    game.game_id,
                    command,
                    expected_seq=expected_seq,
                    command_id=command_id,
                    expect=None,
                )
                if reply.status == 200:
                    seq = reply.body["seq"]
                    break
                err = reply.error
                if reply.status == 503:
                    assert err["code"] == "unavailable", err
                    game.failed("rest 503")
                else:
                    return err
            else:
                message = await game.owner_sockets[kind - len(apis)].command(
                    command, expected_seq, command_id
                )
                if message["type"] == "ack":
                    assert message["command_id"] == command_id
                    seq = message["seq"]
                    break
                err = message["error"]
                if err["code"] != "unavailable":
                    return err  # type: ignore[no-any-return]
                game.failed("ws unavailable")
        except (SocketClosed, TimeoutError, aiohttp.ClientError) as exc:
            game.failed(type(exc).__name__)
        path += 1  # try the next way in
        await asyncio.sleep(0.05)
    assert seq == expected_seq + 1, (game.game_id, seq, expected_seq)
    previous = game.acked.get(seq)
    assert previous is None or previous.command_id == command_id, (
        "two commands acked at one seq",
        seq,
    )
    game.acked[seq] = Acked(seq, command_id, command, time.monotonic())
    return None


async def play(game: Played, apis: list[Api], rng: random.Random, stop: asyncio.Event,
               max_steps: int, pause_s: float = 0.0) -> None:
    """Legal commands (some undos) through REST on either instance and the owner's
    socket on either instance, in turn, until ``stop`` is set or ``max_steps``.

    A lost game is undone and played on (RULES.md: a lost game accepts undo), as a
    person would: the master-restart test needs every game to keep moving until
    ``stop``. Only a won or resigned game ends its player."""
    deadline = time.monotonic() + 240
    while not stop.is_set() and game.steps < max_steps:
        api = apis[game.steps % len(apis)]
        reply = await api.request("GET", f"/v1/games/{game.game_id}/moves", game.token)
        if reply.status == 503:
            game.failed("moves 503")
            await asyncio.sleep(0.05)
            continue
        assert reply.status == 200, (reply.status, reply.raw)
        moves = reply.body
        options = list(moves["moves"])
        if moves["can_undo"] and (rng.random() < 0.15 or not options):
            options = [{"type": "undo"}]
        if not options:
            options = [{"type": "resign"}]
        command = rng.choice(options)
        refused = await send_until_answered(game, apis, command, moves["seq"], game.steps, deadline)
        assert refused is None, (game.game_id, command, refused)
        game.steps += 1
        if command["type"] == "resign":
            return
        state = await api.request("GET", f"/v1/games/{game.game_id}", game.token)
        if state.status == 200 and state.body["status"] in ("won", "resigned"):
            return
        if pause_s:
            await asyncio.sleep(pause_s)


async def check_against_the_log(game: Played, apis: list[Api]) -> None:
    """Every acknowledged command is in the log at its seq; every socket got every
    diff in order (possibly across reconnects), and folding them gives the state."""
    final = await apis[0].state(game.game_id, game.token)
    events = await apis[1].events(game.game_id, game.token)
    n = final["seq"]
    assert [e["seq"] for e in events] == list(range(1, n + 1))
    for seq, ack in sorted(game.acked.items()):
        assert seq <= n, (
            f"game {game.game_id}: acknowledged seq {seq} is not in the log (ends at {n})"
        )
        assert events[seq - 1]["command"] == ack.command, (
            game.game_id,
            seq,
            events[seq - 1],
            ack.command,
        )
    for sock in game.followers:
        await wait_for(lambda sock=sock: sock.last == n, what=f"{sock} to reach seq {n}")
        assert sock.problems == [], sock.problems
        got = [(d["seq"], d["command"]) for d in sock.diffs]
        assert got == [(e["seq"], e["command"]) for e in events[sock.start_seq:]], sock.name
        assert sock.start_state is not None
        state = game_state(sock.start_state)
        for diff in sock.diffs:
            state = apply(state, diff)
        assert same_state(state, game_state(final)), sock.name


# --- fixtures ----------------------------------------------------------------------------


@pytest.fixture
def aof_cluster(tmp_path: Path) -> Any:
    """A cluster of the test's own (it is killed and restarted): AOF on, a short node timeout."""
    cluster = LocalCluster(tmp_path / "cluster", appendonly=True, node_timeout_ms=2000)
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()


@contextlib.asynccontextmanager
async def two_instances(url: str, tmp_path: Path) -> AsyncIterator[tuple[list[Api], list[Context]]]:
    """Instances ``a`` and ``b`` on ``url``, a client of each, and their Contexts."""
    async with contextlib.AsyncExitStack() as stack:
        apps = [await stack.enter_async_context(running_app(settings_for_test(
            url, tmp_path / name, instance_id=name, redis_pool_size=64))) for name in ("a", "b")]
        # No cap on connections: aiohttp's default of 100 per session counts open
        # WebSockets too, and with 20 games (it takes that many, now and then, before
        # every node owns one) the followers' 100 sockets left every REST request
        # waiting for a free connection forever.
        session = await stack.enter_async_context(
            aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)))
        yield [Api(session, base) for base, _ in apps], [ctx for _, ctx in apps]


def describe(contexts: list[Context], games: list[Played]) -> str:
    """What the instances' fan-out and the games' sockets look like (printed when a test fails)."""
    lines = []
    for ctx in contexts:
        hub = ctx.games.feed
        channels = {
            name.decode(): (c.live.is_set(), c.link.key if c.link else None, len(c.listeners))
            for name, c in hub._channels.items()
        }
        links = {key: link.connected for key, link in hub._links.items()}
        lines.append(f"instance {ctx.settings.instance_id}: links {links}; "
                     f"channels (live, link, listeners) {channels}")
    for g in games:
        lines.append(
            f"game {g.game_id} on node {g.node}: {len(g.acked)} acked, failures {g.failures}"
        )
        lines += [f"  {sock}" for sock in [*g.followers, *([g.late] if g.late else [])]]
    return "\n".join(lines)


async def games_on_every_node(
    apis: list[Api], cluster: LocalCluster, at_least: int
) -> list[Played]:
    """At least ``at_least`` public games, one of each variant configuration first, then
    more until every node owns one; created through either instance in turn."""
    games: list[Played] = []
    i = 0
    while (
        len(games) < max(at_least, len(CONFIGS)) or len({g.node for g in games}) < cluster.masters
    ):
        assert i < 60, "could not place a game on every node"
        variant, options = CONFIGS[i % len(CONFIGS)]
        api = apis[i % len(apis)]
        _, token = await api.player(f"p{i}")
        created = await api.create(token, variant, seed=1000 + i, options=options, public=True)
        game_id = created["game_id"]
        node = cluster.nodes.index(cluster.node_for_key(keys.game_meta(game_id)))
        games.append(Played(variant, options, game_id, token, node))
        i += 1
    return games


async def follow(game: Played, apis: list[Api]) -> None:
    """The owner's socket on each instance, and a watcher (no token) on each."""
    for i, api in enumerate(apis):
        owner = Follower(
            api.session, api.base, game.game_id, game.token, f"{game.game_id}/owner@{i}"
        )
        watcher = Follower(api.session, api.base, game.game_id, None, f"{game.game_id}/watcher@{i}")
        game.owner_sockets.append(owner)
        game.followers += [owner, watcher]
    await asyncio.gather(*(s.start() for s in game.followers))


# --- the tests ---------------------------------------------------------------------------


async def test_every_variant_plays_through_both_instances_and_every_socket_gets_every_diff_in_order(
        cluster_url: str, redis_cluster: LocalCluster, tmp_path: Path) -> None:
    async with two_instances(cluster_url, tmp_path) as (apis, contexts):
        for ctx in contexts:  # a comma-separated REDIS_URL: redis-py's cluster client
            assert ctx.redis.is_cluster and isinstance(ctx.redis.client, RedisCluster)
        games = await games_on_every_node(apis, redis_cluster, len(CONFIGS))
        await asyncio.gather(*(follow(g, apis) for g in games))
        try:
            # Both instances subscribed each game with SSUBSCRIBE, on the node owning its slot only.
            for game in games:
                channel = keys.game_channel(game.game_id)
                for i, node in enumerate(redis_cluster.nodes[: redis_cluster.masters]):
                    with sync_client(node.url) as client:
                        sharded = int(client.execute_command("PUBSUB", "SHARDNUMSUB", channel)[1])
                        plain = int(client.execute_command("PUBSUB", "NUMSUB", channel)[1])
                    assert (sharded, plain) == ((2, 0) if i == game.node else (0, 0)), (
                        game.game_id,
                        i,
                    )
            stop = asyncio.Event()
            await asyncio.gather(*(play(g, apis, random.Random(g.game_id), stop, max_steps=24)
                                   for g in games))
            for game in games:
                assert game.failures == {}, game.failures
                assert len(game.acked) == game.steps > 0
                await check_against_the_log(game, apis)
                # Every key of the game is on the node owning its slot, in that one slot.
                names: set[bytes] = set()
                for i, node in enumerate(redis_cluster.nodes[: redis_cluster.masters]):
                    with sync_client(node.url) as client:
                        found = set(client.scan_iter(match=f"*{{{game.game_id}}}*"))
                        slots = {
                            int(client.execute_command("CLUSTER", "KEYSLOT", k)) for k in found
                        }
                    assert not found if i != game.node else len(slots) == 1, (
                        game.game_id,
                        i,
                        found,
                    )
                    names |= found
                expected = {
                    k.encode()
                    for k in (*keys.game_keys(game.game_id), keys.game_durable(game.game_id))
                }
                assert names <= expected and keys.game_meta(game.game_id).encode() in names
                assert keys.game_events(game.game_id).encode() in names
        finally:
            for game in games:
                for sock in game.followers:
                    await sock.stop()


@pytest.mark.parametrize("how", ["kill", "stop"])
async def test_a_master_killed_or_stopped_and_restarted_loses_no_acknowledged_command(
        how: str, aof_cluster: LocalCluster, tmp_path: Path) -> None:
    cluster = aof_cluster
    async with two_instances(cluster.url, tmp_path) as (apis, contexts):
        games = await games_on_every_node(apis, cluster, len(cluster.nodes))
        try:
            await _kill_or_stop_and_restart(how, cluster, apis, games)
        except BaseException:
            print(describe(contexts, games))
            raise
        finally:
            for g in games:
                for sock in [*g.followers, *([g.late] if g.late else [])]:
                    await sock.stop()


async def _kill_or_stop_and_restart(how: str, cluster: LocalCluster, apis: list[Api],
                                    games: list[Played]) -> None:
    await asyncio.gather(*(follow(g, apis) for g in games))
    victim_i = games[0].node
    victim = cluster.nodes[victim_i]
    others = [n for n in cluster.nodes if n is not victim]
    on_victim = [g for g in games if g.node == victim_i]
    # A socket per game that is away during the outage: it comes back with since.
    late = {g.game_id: Follower(apis[1].session, apis[1].base, g.game_id, None, f"{g.game_id}/late")
            for g in games}
    for g in games:
        g.late = late[g.game_id]
    await asyncio.gather(*(s.start() for s in late.values()))
    stop = asyncio.Event()
    players = {
        g: asyncio.create_task(
            play(g, apis, random.Random(g.game_id), stop, max_steps=10_000, pause_s=0.01)
        )
        for g in games
    }
    try:
        await wait_for(lambda: all(len(g.acked) >= 5 or players[g].done() for g in games),
                       what="5 acks on every game")
        for sock in late.values():
            await sock.stop()
        late_from = {game_id: sock.last for game_id, sock in late.items()}

        # -- the master goes away: its games answer 503, nothing is acknowledged
        if how == "kill":
            victim.kill()
        else:
            await victim.astop()
        down_at = time.monotonic()
        game = on_victim[0]
        reply = await apis[1].command(game.token, game.game_id, {"type": "resign"}, expect=503)
        assert reply.error["code"] == "unavailable"
        # With no replica to promote, the others declare it failed and stop serving.
        await asyncio.to_thread(cluster.wait_state, "fail", others, 30.0)
        for api in apis:
            await api.request("GET", "/readyz", expect=503)
        acked_while_down = [a for g in games for a in g.acked.values()
                            if a.at > down_at + 2.0 and g.node == victim_i]
        assert acked_while_down == []

        # -- the same node comes back (same port and directory: the AOF reloads the data)
        await victim.astart()
        back_at = time.monotonic()
        await asyncio.to_thread(cluster.wait_state, "ok", None, 60.0)
        ok_at = time.monotonic()
        # The service recovers by itself: every game (through both instances) moves again.
        steps_then = {g.game_id: g.steps for g in games}
        await wait_for(lambda: all(g.steps >= steps_then[g.game_id] + 6 or players[g].done()
                                   for g in games),
                       timeout=WAIT_S, what="every game to take commands again")
        recovered_at = time.monotonic()
        for api in apis:
            await api.request("GET", "/readyz", expect=200)
        await asyncio.gather(*(s.start() for s in late.values()))  # hello with since
        for g in games:
            g.followers.append(late[g.game_id])
            g.late = None
    finally:
        stop.set()
        await asyncio.gather(*players.values(), return_exceptions=True)
    for task in players.values():
        task.result()  # a player's assertion fails the test
    for g in games:
        await check_against_the_log(g, apis)
        # An acknowledged command_id sent again is recognised, the last ones before
        # the outage included: the log kept them, and their ids.
        acks = sorted(g.acked.values(), key=lambda a: a.seq)
        for ack in [a for a in acks if a.at <= down_at][-3:] + acks[-3:]:
            reply = await apis[ack.seq % 2].command(g.token, g.game_id, ack.command,
                                                    expected_seq=ack.seq - 1,
                                                    command_id=ack.command_id)
            assert reply.body["seq"] == ack.seq
    assert all(g.failures for g in on_victim), "the outage went unnoticed"
    for game_id, sock in late.items():  # away during the outage, back with since: all diffs
        assert sock.last > late_from[game_id] and sock.start_seq == 0
    print(f"\n{how}: cluster fail declared, restart at +{back_at - down_at:.1f} s, cluster ok "
          f"+{ok_at - back_at:.1f} s later, every game moving again +{recovered_at - ok_at:.1f} s "
          f"after that; acked {sum(len(g.acked) for g in games)} commands; failures "
          f"{[g.failures for g in games]}; socket reconnects "
          f"{sum(s.reconnects for g in games for s in g.followers)}")
