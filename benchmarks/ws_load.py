"""WebSocket load against the service, and against the transport's limit.

Two loads (see benchmarks/README.md for the figures):

- ``saturation``: N clients, each playing real games with legal moves, each
  sending its next command as soon as the previous one is acknowledged
  (closed loop). Prints commands/s and p50/p99 command-to-ack latency. With
  ``--target both`` the same clients also drive ``benchmarks/bare_server.py``,
  the minimal durable path (aiohttp WebSocket, msgspec decode, one ``EVALSHA``
  through redis-py's default pool: check and bump the seq, RPUSH, PUBLISH;
  the ack), in each run, on the same store: the ratio is what counts. The servers take
  turns, every other run the other way round (``--order``); the summary gives the ratio
  of the rates and that of the CPU per command.
  ``--undos 0.5`` (the default): half the commands are undos.
  ``--accel off`` runs both servers without uvloop and hiredis.
- ``players``: N clients each making about one move per second (open loop,
  jittered), each game watched by a second socket (``saturation --watch``
  adds one there too): p50/p99 command-to-ack,
  and the fan-out latency: p50/p99 from sending a command to its diff arriving
  on the other socket, and from its ack arriving to that diff arriving (negative
  when the diff beat the ack).

Scale-out: ``--instances N`` starts N service processes on the store and
spreads the clients over them round-robin; with N > 1 each game's watcher
socket is on a different instance than its player, so every diff it gets came
through Redis pub/sub. ``--cluster`` starts a three-master Redis Cluster for
the run (``tests.redis_servers.LocalCluster``, as in the tests, AOF on) instead
of one server. Each run also prints the CPU the service processes, the store
and the load generator used during the measured window, in cores.

The clients know the rules only to pick legal moves quickly (they replay
their own game with the engine instead of asking GET /moves, which would add
load the benchmark does not mean to measure).

    python benchmarks/ws_load.py saturation --clients 100 --duration 20 --target both
    python benchmarks/ws_load.py players --clients 1000 --duration 30
    python benchmarks/ws_load.py saturation --clients 200 --instances 2 --cluster
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import os
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import msgspec
import redis
from _harness import (
    bare_server,
    load_average,
    median,
    percentile,
    process_cpu_s,
    service_processes,
    store,
    tree_cpu_s,
)
from prometheus_client.parser import text_string_to_metric_families

from service.domain import wire
from service.engine import DRAW, MAX_SEED, RESIGN, UNDO, Game, Move, Status
from service.settings import DURABILITY_LEVELS
from service.store.embedded import appendfsync_for

VARIANTS = ("gilbert", "shamrocks", "gate", "caprice")
MAX_COMMANDS_PER_GAME = 150
_decode = msgspec.json.Decoder(dict[str, Any]).decode
_encode = msgspec.json.Encoder().encode


@dataclass
class Stats:
    acks: list[float] = field(default_factory=list)  # seconds, command sent -> ack
    fanout: list[float] = field(
        default_factory=list
    )  # seconds, command sent -> diff on the watcher
    fanout_after_ack: list[float] = field(
        default_factory=list
    )  # seconds, ack -> diff on the watcher
    errors: dict[str, int] = field(default_factory=dict)
    commands: int = 0
    recording: bool = False
    elapsed: float = 0.0
    cores: dict[str, float] = field(default_factory=dict)  # CPU used in the window, in cores
    # seconds late: how much later than asked the load generator's own loop woke a probe
    # (LAG_PROBE_S apart); what it adds to every latency above, as the service does not
    lag: list[float] = field(default_factory=list)
    # the service's own loop-lag probes in the window, and how many were over SLOW_ACK_S late
    service_lag: tuple[float, float] | None = None
    ack_sent: list[float] = field(default_factory=list)  # when each of ``acks`` was sent
    store_latency: str = ""  # the store's own latency events in the window (LATENCY LATEST)

    def error(self, code: str) -> None:
        self.errors[code] = self.errors.get(code, 0) + 1


def choose(game: Game, rnd: random.Random) -> Any:
    """A legal command: mostly moves (foundation first), else draw; resign at the cap or
    when stuck."""
    if game.status is not Status.PLAYING or game.moves >= MAX_COMMANDS_PER_GAME:
        return RESIGN
    moves = game.legal_moves()
    if not moves:
        return RESIGN
    to_foundation = [
        m
        for m in moves
        if isinstance(m, Move)
        and m.to.startswith("foundation")
        and not m.from_.startswith("foundation")
    ]
    if to_foundation and rnd.random() < 0.8:
        return rnd.choice(to_foundation)
    return rnd.choice(moves) if rnd.random() < 0.9 or DRAW not in moves else DRAW


Plan = tuple[str, int, list[bytes]]  # variant, seed, each command's JSON in order


def make_plans(count: int, seed: int, undos: float = 0.0) -> list[Plan]:
    """``count`` real games played to their end with :func:`choose`, before the clock starts,
    so that the clients spend no time on rules while they are measured. With ``undos``,
    that share of the commands (when there is a move to undo) is an ``undo``."""
    rnd = random.Random(seed)
    plans = []
    for _ in range(count):
        variant = rnd.choice(VARIANTS)
        game_seed = rnd.randrange(MAX_SEED)
        game = Game.deal(variant, game_seed)
        commands = []
        while not game.status.is_final:
            if game.can_undo and game.moves < MAX_COMMANDS_PER_GAME and rnd.random() < undos:
                command = UNDO
            else:
                command = choose(game, rnd)
            commands.append(_encode(wire.command(command)))
            game = game.apply(command)[0]
        plans.append((variant, game_seed, commands))
    return plans


class Player:
    """One client: a player with a game and a socket (and, for ``players``, a watcher socket)."""

    ids = itertools.count()

    def __init__(
        self,
        session: aiohttp.ClientSession,
        base: str,
        stats: Stats,
        rnd: random.Random,
        watch: bool,
        watch_base: str | None = None,
        plans: list[Plan] | None = None,
    ) -> None:
        self.plans = plans or PLANS
        self.plan: list[bytes] = []
        self.session = session
        self.base = base
        self.watch_base = watch_base or base  # the watcher's instance
        self.stats = stats
        self.rnd = rnd
        self.watch = watch
        self.token = ""
        self.game_id = ""
        self.seq = 0
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        self.watcher: aiohttp.ClientWebSocketResponse | None = None
        self.watch_task: asyncio.Task[None] | None = None
        self.sent_at: dict[int, float] = {}  # seq -> when its command was sent
        self.acked_at: dict[int, float] = {}  # seq -> when its ack came, until the diff comes
        self.diff_at: dict[int, float] = {}  # seq -> when the watcher got it, until the ack comes

    async def setup(self) -> None:
        async with self.session.post(
            self.base + "/v1/players", json={"name": f"bench{next(self.ids)}"}
        ) as r:
            self.token = (await r.json())["token"]
        await self.new_game()

    async def new_game(self) -> None:
        await self.close_sockets()
        variant, seed, self.plan = self.rnd.choice(self.plans)
        async with self.session.post(
            self.base + "/v1/games",
            json={"variant": variant, "seed": seed, "public": self.watch},
            headers={"Authorization": f"Bearer {self.token}"},
        ) as r:
            body = await r.json()
        self.game_id = body["game_id"]
        self.seq = 0
        self.ws = await self.connect(self.token, self.base)
        if self.watch:
            self.watcher = await self.connect(None, self.watch_base)
            self.watch_task = asyncio.create_task(self.watch_loop(self.watcher))

    async def connect(self, token: str | None, base: str) -> aiohttp.ClientWebSocketResponse:
        ws = await self.session.ws_connect(
            f"{base}/v1/games/{self.game_id}/ws", compress=0, autoping=True, max_msg_size=0
        )
        hello: dict[str, Any] = {"type": "hello"}
        if token:
            hello["token"] = token
        await ws.send_str(_encode(hello).decode())
        while True:
            msg = _decode((await ws.receive()).data)
            if msg["type"] == "synced":
                return ws

    async def watch_loop(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        async for raw in ws:
            if raw.type is not aiohttp.WSMsgType.TEXT:
                break
            msg = _decode(raw.data)
            if msg["type"] == "diff":
                now = time.perf_counter()
                seq = msg["seq"]
                sent = self.sent_at.pop(seq, None)
                if sent is None:
                    continue
                acked = self.acked_at.pop(seq, None)
                if acked is None:
                    self.diff_at[seq] = now
                if self.stats.recording:
                    self.stats.fanout.append(now - sent)
                    if acked is not None:
                        self.stats.fanout_after_ack.append(now - acked)

    async def step(self) -> None:
        """Send one command and wait for its ack."""
        assert self.ws is not None
        message = b'{"type":"command","command_id":"c%d","expected_seq":%d,"command":%s}' % (
            self.seq,
            self.seq,
            self.plan[self.seq],
        )
        started = time.perf_counter()
        self.sent_at[self.seq + 1] = started
        await self.ws.send_str(message.decode())
        while True:
            raw = await self.ws.receive()
            if raw.type is not aiohttp.WSMsgType.TEXT:
                raise RuntimeError(f"socket closed: {raw.type} {raw.data} {raw.extra}")
            msg = _decode(raw.data)
            kind = msg["type"]
            if kind == "ack":
                break
            if kind == "error":
                self.stats.error(msg["error"]["code"])
                await self.new_game()
                return
        now = time.perf_counter()
        if self.watch:
            diff_at = self.diff_at.pop(self.seq + 1, None)
            if diff_at is None:
                self.acked_at[self.seq + 1] = now
            elif self.stats.recording:
                self.stats.fanout_after_ack.append(diff_at - now)
        if self.stats.recording:
            self.stats.acks.append(now - started)
            self.stats.ack_sent.append(started)
            self.stats.commands += 1
        self.seq += 1
        if self.seq == len(self.plan):  # the game is over (won or resigned)
            await self.new_game()

    async def close_sockets(self) -> None:
        for ws in (self.ws, self.watcher):
            if ws is not None:
                await ws.close()
        if self.watch_task is not None:
            self.watch_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.watch_task
        self.ws = self.watcher = None
        self.watch_task = None
        self.sent_at.clear()
        self.acked_at.clear()
        self.diff_at.clear()


LAG_PROBE_S = 0.01
# the service's metric (service/runtime/looplag.py)
SERVICE_LAG = "solitaire_event_loop_lag_seconds"
Sampler = Callable[[], dict[str, float]]  # CPU seconds used so far, per group of processes


def _no_sampler() -> dict[str, float]:
    return {}


def spread(bases: list[str], i: int) -> tuple[str, str]:
    """Client ``i``'s instance, and its watcher's: the next instance round-robin."""
    return bases[i % len(bases)], bases[(i + 1) % len(bases)]


class Window:
    """The measured window: records, and the CPU each group of processes used in it."""

    def __init__(self, stats: Stats, sample: Sampler, session: aiohttp.ClientSession,
                 base: str) -> None:
        self.stats, self.sample = stats, sample
        self.session, self.base = session, base

    async def measure(self, warmup: float, duration: float) -> None:
        await asyncio.sleep(warmup)
        lag_before = await self._service_lag()
        before = self.sample()
        self.stats.recording = True
        started = time.perf_counter()
        probe = asyncio.create_task(self._probe_lag())
        await asyncio.sleep(duration)
        probe.cancel()
        self.stats.recording = False
        self.stats.elapsed = time.perf_counter() - started
        after = self.sample()
        self.stats.cores = {k: (after[k] - before[k]) / self.stats.elapsed for k in after}
        lag_after = await self._service_lag()
        if lag_before is not None and lag_after is not None:
            self.stats.service_lag = (lag_after[0] - lag_before[0], lag_after[1] - lag_before[1])

    async def _service_lag(self) -> tuple[float, float] | None:
        """The service's loop-lag probes so far (from ``base``'s /metrics: with several
        workers, one worker's), and how many of them woke over SLOW_ACK_S late; None
        for a server without them (the bare one)."""
        async with self.session.get(self.base + "/metrics") as reply:
            if reply.status != 200:
                return None
            text = await reply.text()
        count = within = None
        for family in text_string_to_metric_families(text):
            if family.name != SERVICE_LAG:
                continue
            for sample in family.samples:
                if sample.name == SERVICE_LAG + "_count":
                    count = sample.value
                elif sample.labels.get("le") == repr(SLOW_ACK_S):
                    within = sample.value
        if count is None or within is None:
            return None
        return count, count - within

    async def _probe_lag(self) -> None:
        """Sleep LAG_PROBE_S at a time and record how late each wake-up came: when the
        generator's loop is late, every latency it measures is late by as much."""
        while True:
            asked = time.perf_counter() + LAG_PROBE_S
            await asyncio.sleep(LAG_PROBE_S)
            self.stats.lag.append(max(0.0, time.perf_counter() - asked))


async def set_up_players(session: aiohttp.ClientSession, bases: list[str], clients: int,
                         seed: int, stats: Stats, watch: bool) -> list[Player]:
    """``clients`` players spread over ``bases``, each with its own seeded randomness,
    set up (player, game, socket) before the clock starts."""
    players = [
        Player(
            session,
            spread(bases, i)[0],
            stats,
            random.Random(seed * 100_003 + i),
            watch=watch,
            watch_base=spread(bases, i)[1],
        )
        for i in range(clients)
    ]
    await gather_in_batches([p.setup() for p in players])
    return players


async def run_saturation(
    bases: list[str],
    clients: int,
    duration: float,
    warmup: float,
    seed: int,
    sample: Sampler = _no_sampler,
    watch: bool = False,
) -> Stats:
    stats = Stats()
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:
        players = await set_up_players(session, bases, clients, seed, stats, watch=watch)
        stop = asyncio.Event()

        async def loop(p: Player) -> None:
            while not stop.is_set():
                await p.step()

        tasks = [asyncio.create_task(loop(p)) for p in players]
        await Window(stats, sample, session, bases[0]).measure(warmup, duration)
        stop.set()
        await asyncio.gather(*tasks, return_exceptions=True)
        for p in players:
            await p.close_sockets()
    return stats


@dataclass
class HintStats:
    latencies_ms: list[float] = field(default_factory=list)  # answered hints (200)
    statuses: dict[int, int] = field(default_factory=dict)


async def hint_stream(
    session: aiohttp.ClientSession,
    base: str,
    rate_per_s: float,
    stop: asyncio.Event,
    measuring: asyncio.Event,
    stats: HintStats,
    games: int = 40,
) -> None:
    """About ``rate_per_s`` hints a second (open loop) over ``games`` fresh games of one player:
    each hint is a real search (a game's view differs from every other's)."""
    async with session.post(base + "/v1/players", json={"name": "hinter"}) as r:
        token = (await r.json())["token"]
    headers = {"Authorization": f"Bearer {token}"}
    ids = []
    for i in range(games):
        variant = ("gilbert", "shamrocks", "gate", "caprice")[i % 4]
        async with session.post(
            base + "/v1/games", json={"variant": variant, "seed": 10_000 + i}, headers=headers
        ) as r:
            ids.append((await r.json())["game_id"])
    rnd = random.Random(7)
    pending: set[asyncio.Task[None]] = set()

    async def one(game_id: str) -> None:
        started = time.perf_counter()
        async with session.post(f"{base}/v1/games/{game_id}/hint", headers=headers) as r:
            await r.read()
            if measuring.is_set():
                stats.statuses[r.status] = stats.statuses.get(r.status, 0) + 1
                if r.status == 200:
                    stats.latencies_ms.append((time.perf_counter() - started) * 1000)

    for n in itertools.count():
        if stop.is_set():
            break
        task = asyncio.create_task(one(ids[n % len(ids)]))
        pending.add(task)
        task.add_done_callback(pending.discard)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), rnd.expovariate(rate_per_s))
    await asyncio.gather(*pending, return_exceptions=True)


async def wait_daily(base: str, timeout_s: float = 1800.0) -> float:
    """Seconds until the service has chosen today's and tomorrow's daily deals (so its
    chooser is idle while measuring)."""
    import datetime as dt

    started = time.perf_counter()
    today = dt.datetime.now(dt.UTC).date()
    async with aiohttp.ClientSession() as session:
        for day in (today, today + dt.timedelta(days=1)):
            while True:
                async with session.get(base + "/v1/daily", params={"date": day.isoformat()}) as r:
                    if r.status == 404:  # the bare server: no daily deals, nothing to wait for
                        return 0.0
                    if r.status == 200:
                        break
                if time.perf_counter() - started > timeout_s:
                    raise RuntimeError("the daily deals were not chosen in time")
                await asyncio.sleep(0.2)
            if day == today:
                print(
                    f"today's four daily deals chosen {time.perf_counter() - started:.1f} s after "
                    f"start-up (load average {load_average()})",
                    flush=True,
                )
    return time.perf_counter() - started


async def run_players(
    bases: list[str],
    clients: int,
    duration: float,
    warmup: float,
    seed: int,
    rate_per_s: float,
    sample: Sampler = _no_sampler,
    hints_per_s: float = 0.0,
) -> Stats:
    stats = Stats()
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:
        players = await set_up_players(session, bases, clients, seed, stats, watch=True)
        stop = asyncio.Event()

        async def loop(p: Player) -> None:
            await asyncio.sleep(p.rnd.uniform(0, 1 / rate_per_s))
            while not stop.is_set():
                due = time.perf_counter() + p.rnd.uniform(0.5, 1.5) / rate_per_s
                await p.step()
                await asyncio.sleep(max(0.0, due - time.perf_counter()))

        tasks = [asyncio.create_task(loop(p)) for p in players]
        hints = HintStats()
        measuring = asyncio.Event()
        if hints_per_s > 0:
            tasks.append(
                asyncio.create_task(
                    hint_stream(session, bases[0], hints_per_s, stop, measuring, hints)
                )
            )
        asyncio.get_running_loop().call_later(warmup, measuring.set)
        await Window(stats, sample, session, bases[0]).measure(warmup, duration)
        stop.set()
        await asyncio.gather(*tasks, return_exceptions=True)
        for p in players:
            await p.close_sockets()
        if hints_per_s > 0:
            lat = sorted(hints.latencies_ms)
            answered = (
                f"p50 {percentile(lat, 50):.0f} ms, p99 {percentile(lat, 99):.0f} ms"
                if lat
                else "none answered"
            )
            print(
                f"  hints at {hints_per_s:g}/s: {len(lat)} answered, {answered}; "
                f"statuses {hints.statuses}",
                flush=True,
            )
    return stats


async def gather_in_batches(coros: list[Any], batch: int = 50) -> None:
    for i in range(0, len(coros), batch):
        await asyncio.gather(*coros[i : i + batch])


# --- reporting ----------------------------------------------------------------------------


def report(label: str, stats: Stats) -> dict[str, float]:
    elapsed = stats.elapsed
    rate = stats.commands / elapsed
    row = {
        "commands_per_s": rate,
        "ack_p50_ms": percentile(stats.acks, 50) * 1000,
        "ack_p99_ms": percentile(stats.acks, 99) * 1000,
    }
    line = (
        f"{label}: {stats.commands} commands in {elapsed:.1f} s = {rate:,.0f}/s; "
        f"ack p50 {row['ack_p50_ms']:.1f} ms, p99 {row['ack_p99_ms']:.1f} ms"
    )
    def quantiles(name: str, values: list[float]) -> str:
        """Put ``name``'s p50 and p99 (ms) in the row; their text for the line."""
        row[f"{name}_p50_ms"] = percentile(values, 50) * 1000
        row[f"{name}_p99_ms"] = percentile(values, 99) * 1000
        return f"p50 {row[f'{name}_p50_ms']:.1f} ms, p99 {row[f'{name}_p99_ms']:.1f} ms"

    if stats.fanout:
        line += f"; diff on the second socket {quantiles('fanout', stats.fanout)} after the send"
    if stats.fanout_after_ack:
        line += f", {quantiles('after_ack', stats.fanout_after_ack)} after the ack"
    if stats.lag:
        line += f"; the load generator's own loop late by {quantiles('loadgen_lag', stats.lag)}"
    if stats.cores:
        for name, cores in stats.cores.items():
            row[f"cores_{name}"] = cores
        line += "; cores used: " + ", ".join(f"{k} {v:.2f}" for k, v in stats.cores.items())
        if rate:  # CPU per command: what carries over to a machine with more cores
            for name in ("service", "redis"):
                row[f"{name}_us_per_command"] = stats.cores.get(name, 0.0) / rate * 1e6
            line += (
                f" (CPU per command: service {row['service_us_per_command']:.0f} µs, "
                f"redis {row['redis_us_per_command']:.0f} µs)"
            )
    if stats.errors:
        line += f"; errors {stats.errors}"
    line += "; " + slow_acks(stats)
    if stats.service_lag is not None:
        probes, late = stats.service_lag
        line += (f"; the service's own loop late by over {SLOW_ACK_S * 1000:.0f} ms in "
                 f"{late:.0f} of {probes:.0f} probes")
    if stats.store_latency:
        line += f"; store latency events: {stats.store_latency}"
    print(line, flush=True)
    return row


STORE_LATENCY_THRESHOLD_MS = 10


def watch_store_latency(url: str, cluster: bool) -> None:
    """Have a single store record its own events over STORE_LATENCY_THRESHOLD_MS (an fsync,
    a slow command) from now on (Redis's latency monitor)."""
    if cluster:
        return
    with redis.Redis.from_url(url) as r:
        r.config_set("latency-monitor-threshold", STORE_LATENCY_THRESHOLD_MS)
        r.execute_command("LATENCY", "RESET")


def store_latency(url: str, cluster: bool) -> str:
    """The store's latency events since :func:`watch_store_latency` (the warm-up
    included): each event's name, worst ms and how many times it was recorded."""
    if cluster:
        return ""
    with redis.Redis.from_url(url) as r:
        latest = r.execute_command("LATENCY", "LATEST")
        out = []
        for entry in latest:
            name = entry[0].decode() if isinstance(entry[0], bytes) else str(entry[0])
            history = r.execute_command("LATENCY", "HISTORY", name)
            out.append(f"{name} worst {entry[3]} ms, {len(history)} times")
    return ", ".join(out) if out else f"none over {STORE_LATENCY_THRESHOLD_MS} ms"


SLOW_ACK_S = 0.05  # the p99 goal
STALL_WINDOW_S = 0.1


def slow_acks(stats: Stats) -> str:
    """How many acks took longer than SLOW_ACK_S, and whether they were sent in a few short
    windows (one stall of the service, the store or the machine) or spread out (a queue)."""
    slow = [t for t, a in zip(stats.ack_sent, stats.acks, strict=True) if a > SLOW_ACK_S]
    if not slow:
        return f"no ack over {SLOW_ACK_S * 1000:.0f} ms"
    windows: dict[int, int] = {}
    for t in slow:
        windows[int(t / STALL_WINDOW_S)] = windows.get(int(t / STALL_WINDOW_S), 0) + 1
    worst = max(stats.acks) * 1000
    return (f"{len(slow)} acks over {SLOW_ACK_S * 1000:.0f} ms (worst {worst:.0f} ms), sent in "
            f"{len(windows)} windows of {STALL_WINDOW_S * 1000:.0f} ms "
            f"(the fullest held {max(windows.values())})")


def run_loop(coro: Any) -> Any:
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coro)
    return uvloop.run(coro)


PLANS: list[Plan] = []


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("load", choices=("saturation", "players"))
    parser.add_argument("--clients", type=int, nargs="+", default=[100])
    parser.add_argument("--duration", type=float, default=20.0, help="seconds measured per run")
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--runs", type=int, default=3, help="runs per size; medians are reported")
    parser.add_argument("--target", choices=("service", "bare", "both"), default="service")
    parser.add_argument(
        "--instances",
        type=int,
        default=1,
        help="service processes on the store; clients spread over them round-robin",
    )
    parser.add_argument(
        "--cluster",
        action="store_true",
        help="start a three-master Redis Cluster for the run instead of one server",
    )
    parser.add_argument("--redis-url", default=None, help="use this store instead of starting one")
    parser.add_argument(
        "--rate", type=float, default=1.0, help="players: moves per second per client"
    )
    parser.add_argument(
        "--watch",
        action="store_true",
        help="saturation: each game also watched by a second socket (players always are)",
    )
    parser.add_argument(
        "--durability",
        choices=DURABILITY_LEVELS,
        default="local",
        help="the service's --durability; local and replicated run the store with "
        "appendfsync always (as the embedded store does), replicated needs --cluster",
    )
    parser.add_argument(
        "--hints",
        type=float,
        default=0.0,
        help="players: also this many hint requests a second (POST /hint), open loop",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--plans",
        type=int,
        default=300,
        help="distinct games the clients play (planned before measuring)",
    )
    parser.add_argument(
        "--undos",
        type=float,
        default=0.5,
        help="share of the planned commands that are undos (of the move before)",
    )
    parser.add_argument(
        "--accel",
        choices=("on", "off"),
        default="on",
        help="off: the servers (service and bare) run without uvloop and hiredis",
    )
    parser.add_argument(
        "--workers",
        type=int,
        nargs="+",
        default=[1],
        help="worker processes per service instance (--workers 1 2: both, in each run)",
    )
    parser.add_argument(
        "--profile",
        type=Path,
        default=None,
        help="run the service (one instance, one worker) under cProfile and print its "
        "top functions by self time; the statistics are kept in this file",
    )
    parser.add_argument(
        "--compare-root",
        type=Path,
        default=None,
        help="also run the service of this checkout (e.g. a git worktree of an older "
        "commit) in each run, for before/after figures taken side by side",
    )
    parser.add_argument(
        "--compare-env",
        nargs="+",
        default=None,
        metavar="NAME=VALUE",
        help="also run this checkout's service with these environment variables (e.g. "
        "PYTHONMALLOC=pymalloc) in each run, beside it as it is by default (with the first "
        "of --workers)",
    )
    parser.add_argument(
        "--order",
        choices=("alternate", "fixed"),
        default="alternate",
        help="the servers' turns in each run: alternate (every other run the other way "
        "round) or fixed (the order of the targets in every run, as before 2026-12-06 21:00)",
    )
    args = parser.parse_args(argv)
    started = time.perf_counter()
    PLANS[:] = make_plans(args.plans, args.seed, args.undos)
    commands = [c for p in PLANS for c in p[2]]
    undos = sum(1 for c in commands if c == b'{"type":"undo"}')
    print(
        f"{len(PLANS)} games planned in {time.perf_counter() - started:.1f} s "
        f"({len(commands)} commands, {undos / len(commands):.0%} undos)",
        flush=True,
    )
    # Every service of the run: the rate limits (not what is measured) high enough never to
    # refuse, and the durability asked for.
    service_env = {"SOLITAIRE_RATE_LIMIT_PER_S": "100000",
                   "SOLITAIRE_RATE_LIMIT_BURST": "1000000",
                   "SOLITAIRE_DURABILITY": args.durability}
    if args.compare_env is not None:
        if not all(item.partition("=")[0] and "=" in item for item in args.compare_env):
            parser.error("--compare-env takes NAME=VALUE items")
        clash = service_env.keys() & {item.partition("=")[0] for item in args.compare_env}
        if clash:
            parser.error(f"--compare-env cannot set {', '.join(sorted(clash))}: the run sets it")
    if args.cluster and args.target != "service":
        parser.error("--cluster measures the service only (the bare baseline talks to one server)")
    if args.target != "service" and args.load != "saturation":
        parser.error("the bare server takes the saturation load only (it has no watchers)")

    if args.durability == "replicated" and not (args.cluster or args.redis_url):
        parser.error("--durability replicated needs replicas: add --cluster")
    fsync = appendfsync_for(args.durability, "everysec")
    replicas = 1 if args.durability == "replicated" else 0
    accel = args.accel == "on"
    store_kind = (
        f"3-master cluster{' + 3 replicas' if replicas else ''}" if args.cluster else "one Redis"
    ) + f", appendfsync {fsync}, durability {args.durability}"
    print(
        f"load average before: {load_average()} ({os.cpu_count()} cores); "
        f"servers with uvloop and hiredis "
        f"{args.accel}",
        flush=True,
    )
    summary: list[str] = []
    with store(args.redis_url, args.cluster, appendfsync=fsync, replicas=replicas) as redis_url:
        targets: list[tuple[str, Callable[[], Any]]] = []
        if args.target in ("service", "both"):
            for workers in args.workers:

                def start(workers: int = workers) -> Any:
                    return service_processes(
                        redis_url,
                        args.instances,
                        accel=accel,
                        workers=workers,
                        profile=args.profile,
                        **service_env,
                    )

                label = f"service x{args.instances}" + (
                    f" ({workers} workers)" if workers != 1 else ""
                )
                targets.append((label, start))
        if args.compare_root is not None:

            def start_other() -> Any:
                return service_processes(
                    redis_url,
                    args.instances,
                    accel=accel,
                    root=args.compare_root.resolve(),
                    **service_env,
                )

            targets.append((f"service x{args.instances} of {args.compare_root}", start_other))
        if args.compare_env is not None:
            extra = dict(item.split("=", 1) for item in args.compare_env)

            def start_with_env() -> Any:
                return service_processes(
                    redis_url,
                    args.instances,
                    accel=accel,
                    workers=args.workers[0],
                    **service_env,
                    **extra,
                )

            targets.append((f"service x{args.instances} with {' '.join(args.compare_env)}",
                            start_with_env))
        if args.target in ("bare", "both"):
            targets.append(("bare", lambda: bare_server(redis_url, accel=accel)))
        for clients in args.clients:
            rows: dict[str, list[dict[str, float]]] = {label: [] for label, _ in targets}
            for run in range(args.runs):
                # Each run starts each server in turn; with ``--order alternate`` every
                # other run takes them the other way round (service, bare; bare, service;
                # ...), so that a machine that grows busier or quieter during a run does
                # not favour whichever always goes first.
                turn = targets if args.order == "fixed" or run % 2 == 0 else targets[::-1]
                for label, start in turn:
                    with start() as urls:

                        def sample(pids: list[int] = urls.pids) -> dict[str, float]:
                            return {
                                "service": sum(tree_cpu_s(pid) for pid in pids),
                                "redis": sum(process_cpu_s(pid) for pid in redis_url.pids),
                                "loadgen": process_cpu_s(os.getpid()),
                            }

                        run_loop(wait_daily(urls[0]))  # the daily chooser idle before measuring
                        watch_store_latency(redis_url, args.cluster)
                        if args.load == "saturation":
                            stats = run_loop(
                                run_saturation(
                                    list(urls),
                                    clients,
                                    args.duration,
                                    args.warmup,
                                    args.seed + run,
                                    sample,
                                    args.watch,
                                )
                            )
                        else:
                            stats = run_loop(
                                run_players(
                                    list(urls),
                                    clients,
                                    args.duration,
                                    args.warmup,
                                    args.seed + run,
                                    args.rate,
                                    sample,
                                    args.hints,
                                )
                            )
                        stats.store_latency = store_latency(redis_url, args.cluster)
                        rows[label].append(
                            report(
                                f"{label} on {store_kind}, {clients} clients, run {run + 1} "
                                f"(load average {load_average()})",
                                stats,
                            )
                        )
            for label, runs in rows.items():
                if runs:
                    keys = runs[0].keys()
                    med = {k: median([r.get(k, float("nan")) for r in runs]) for k in keys}
                    summary.append(
                        f"{args.load} {label} on {store_kind} {clients} clients "
                        f"(median of {len(runs)}): "
                        + ", ".join(f"{k} {v:,.2f}" for k, v in med.items())
                    )
            if "bare" in rows and rows["bare"]:
                bare = median([r["commands_per_s"] for r in rows["bare"]])
                for label, runs in rows.items():
                    if label != "bare" and runs:
                        ratio = median([r["commands_per_s"] for r in runs]) / bare
                        per_run = ", ".join(
                            f"{s['commands_per_s'] / b['commands_per_s']:.2f}"
                            for s, b in zip(runs, rows["bare"], strict=False)
                        )
                        summary.append(
                            f"  {label} / bare at {clients} clients, accel {args.accel}: "
                            f"{ratio:.2f} (per run: {per_run})"
                        )
                        # What the ratio would be if each had the same share of the cores:
                        # the bare server's CPU per command over the service's, each run's
                        # own (a busy machine gives the two different shares of its cores).
                        key = "service_us_per_command"
                        if all(key in r for r in runs + rows["bare"]):
                            by_cpu = median([r[key] for r in rows["bare"]]) / median(
                                [r[key] for r in runs])
                            cpu_runs = ", ".join(
                                f"{b[key] / s[key]:.2f}"
                                for s, b in zip(runs, rows["bare"], strict=False)
                            )
                            summary.append(
                                f"  {label} / bare by CPU per command at {clients} clients: "
                                f"{by_cpu:.2f} (per run: {cpu_runs})"
                            )
            one = rows.get(f"service x{args.instances}")
            for label, runs in rows.items():
                if one and "workers)" in label and runs:
                    ratio = median([r["commands_per_s"] for r in runs]) / median(
                        [r["commands_per_s"] for r in one]
                    )
                    summary.append(f"  {label} / 1 worker at {clients} clients: {ratio:.2f}")
    print(f"load average after: {load_average()}")
    print("\n".join(["", "== summary =="] + summary))
    if args.profile is not None:
        import pstats

        print(f"\n== service profile ({args.profile}), top 25 by self time ==")
        pstats.Stats(str(args.profile)).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    sys.exit(main())
