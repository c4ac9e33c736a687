"""Daily-challenge leaderboards under load, and the cost of ranking a day's end.

Two measurements (see benchmarks/README.md, "Daily challenges", for the figures):

- ``reads``: one board of ``--entries`` entries (100,000) with player names;
  one service process (``python -m service``) over HTTP; ``--readers``
  concurrent keep-alive connections (50), each sending its next request as
  soon as the previous reply is in (closed loop). Three loads, one after the
  other: ``page`` (no token; the top page half the time, else a page at a
  random depth through a cursor), ``me`` (a random player's token: the top
  page plus their entry and neighbours), ``mixed`` (half and half). Prints
  reads/s and p50/p99 latency for each.
- ``ranking``: ``--attempts`` (10,000) attempts of one challenge still open
  when their day ends, ranked by ``DailyService.ensure_ranked`` (what the
  first read after the day does): their games' stats read in pipelines, the
  entries written in batches. Also the same number of attempts becoming final
  at once (one entry write each, as the final-command hook does).

The load generator speaks HTTP/1.1 on raw asyncio streams (uvloop when
installed) so that it takes as little of the shared CPU as it can.

    python benchmarks/daily.py --runs 3
    python benchmarks/daily.py --entries 100000 --readers 50 --duration 10 --attempts 10000 --runs 3
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlsplit

from _harness import ROOT, median, percentile, wait_ready

from protocol.fields import rfc3339
from service.domain.auth import Tokens
from service.domain.cursors import encode_cursor
from service.domain.daily.challenge import Day, Seeds, epoch_ms
from service.domain.daily.deals import DailyDeals
from service.domain.daily.ranking import Standing
from service.domain.daily.service import DailyService
from service.domain.games import DailyTags, GameService
from service.domain.solutions import Solutions
from service.domain.solving import SolverPool
from service.engine import VARIANTS
from service.runtime.clock import Clock
from service.runtime.metrics import Metrics
from service.settings import Settings
from service.store import keys
from service.store import meta as fields
from service.store.connection import RedisConn
from service.store.daily import DailyStore, Record
from service.store.embedded import ServerProcess
from service.store.fanout import Hub
from service.store.games import Games
from service.store.meta import DailyTag
from service.store.solver import ChosenDeal, SolverStore
from tests.live import free_port

SECRET = "bench-secret-0123456789abcdef"  # what benchmarks/_harness.py gives the service
VARIANT = "gate"


# --- the board ---------------------------------------------------------------------------------


@dataclass
class Board:
    date: str
    members: list[bytes]  # in ranking order
    players: list[str]
    tokens: dict[str, str] = field(
        default_factory=dict
    )  # made once per player, as a client keeps its own


async def build_board(conn: RedisConn, date: str, n: int) -> Board:
    """``n`` entries on one board, every player with a name."""
    store = DailyStore(conn)
    rng = random.Random(1)
    day_end = epoch_ms(Day(datetime.fromisoformat(date).date()).ends_at)
    standings = []
    for i in range(n):
        won = rng.random() < 0.25
        standings.append(
            Standing(
                player_id=f"p_bench{i:07d}",
                game_id=f"g_bench{i:07d}",
                seq=rng.randrange(1, 400),
                status="won" if won else "resigned",
                foundation_cards=52 if won else rng.randrange(53),
                moves=rng.randrange(50, 400),
                duration_ms=rng.randrange(60_000, 3_600_000),
                finished_at=rfc3339(datetime.now(UTC)),
                finish_ms=day_end - rng.randrange(86_400_000),
            )
        )

    def name(s: Standing) -> str:
        return f"Player {s.player_id[7:]}"

    records = [
        Record(s.player_id, s.game_id, s.seq, s.sort_key(), s.entry_json())
        for s in standings
    ]
    await store.record(date, VARIANT, records, 3 * 86400, batch=1000)
    for i in range(0, n, 2000):
        await store.redis.pipeline(
            [("HSET", keys.player(s.player_id), fields.PLAYER_NAME, name(s))
             for s in standings[i : i + 2000]]
        )
    assert await store.size(date, VARIANT) == n
    ordered = sorted(standings, key=lambda s: s.member())
    return Board(date, [s.member().encode() for s in ordered], [s.player_id for s in standings])


# --- the load ------------------------------------------------------------------------


@dataclass
class Load:
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    done: int = 0


async def _reader(
    host: str, port: int, requests: Any, until: float, record_from: float, load: Load
) -> None:
    reader, writer = await asyncio.open_connection(host, port)
    try:
        while True:
            now = time.perf_counter()
            if now >= until:
                return
            writer.write(next(requests))
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            await reader.readexactly(length)
            end = time.perf_counter()
            if now >= record_from:
                load.done += 1
                load.latencies.append(end - now)
                if not head.startswith(b"HTTP/1.1 200"):
                    load.errors += 1
    finally:
        writer.close()


def _requests(kind: str, board: Board, tokens: Tokens, rng: random.Random) -> Any:
    base = f"/v1/daily/{board.date}/{VARIANT}/leaderboard"

    def page() -> bytes:
        if rng.random() < 0.5:
            path = f"{base}?limit=20"
        else:
            cursor = encode_cursor(board.members[rng.randrange(len(board.members) - 20)])
            path = f"{base}?limit=20&cursor={cursor}"
        return f"GET {path} HTTP/1.1\r\nHost: bench\r\n\r\n".encode()

    def me() -> bytes:
        player = rng.choice(board.players)
        token = board.tokens.get(player)
        if token is None:
            token = board.tokens[player] = tokens.issue(player)
        return (f"GET {base}?limit=20 HTTP/1.1\r\nHost: bench\r\n"
                f"Authorization: Bearer {token}\r\n\r\n").encode()

    while True:
        if kind == "page" or (kind == "mixed" and rng.random() < 0.5):
            yield page()
        else:
            yield me()


def cpu_s(pid: int) -> float:
    """CPU seconds (user + system) a process has used so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def run_load(
    url: str,
    kind: str,
    board: Board,
    readers: int,
    duration_s: float,
    service_pid: int,
    store_pid: int | None,
    warmup_s: float = 2.0,
) -> dict[str, float]:
    split = urlsplit(url)
    tokens = Tokens(SECRET.encode(), 3600, Clock())
    load = Load()
    start = time.perf_counter()
    record_from, until = start + warmup_s, start + warmup_s + duration_s

    async def measure_cpu() -> tuple[float, float, float]:
        await asyncio.sleep(record_from - time.perf_counter())
        svc, store, me = (
            cpu_s(service_pid),
            cpu_s(store_pid) if store_pid else 0.0,
            cpu_s(os.getpid()),
        )
        await asyncio.sleep(until - time.perf_counter())
        return (
            cpu_s(service_pid) - svc,
            (cpu_s(store_pid) - store) if store_pid else float("nan"),
            cpu_s(os.getpid()) - me,
        )

    reading = asyncio.gather(
        *(
            _reader(
                split.hostname or "127.0.0.1",
                split.port or 80,
                _requests(kind, board, tokens, random.Random(i)),
                until,
                record_from,
                load,
            )
            for i in range(readers)
        )
    )
    cpu, _ = await asyncio.gather(measure_cpu(), reading)
    lat = load.latencies
    return {
        "reads_per_s": load.done / duration_s,
        "p50_ms": percentile(lat, 50) * 1000,
        "p99_ms": percentile(lat, 99) * 1000,
        "errors": load.errors,
        "service_cpu_us": cpu[0] / max(1, load.done) * 1e6,
        "service_cpu_pct": cpu[0] / duration_s * 100,
        "store_cpu_us": cpu[1] / max(1, load.done) * 1e6,
        "client_cpu_us": cpu[2] / max(1, load.done) * 1e6,
        "loadavg": os.getloadavg()[0],
    }


# --- the day's end --------------------------------------------------------------------------------


async def rank_day_end(
    conn: RedisConn, settings: Settings, date: str, attempts: int
) -> dict[str, float]:
    """``attempts`` open attempts of one challenge, ranked when their day is over."""
    clock = Clock()
    metrics = Metrics()
    games = GameService(Games(conn), SolverStore(conn), settings, clock, metrics, Hub(conn),
                        cache_size=0)
    store = DailyStore(conn)
    seeds = Seeds(SECRET.encode())
    day = Day(datetime.fromisoformat(date).date())
    await choose_deals(conn, date)
    seed = seeds.seed(day.date, VARIANT)
    rng = random.Random(2)
    limit = asyncio.Semaphore(200)
    started = day.starts_at + timedelta(hours=3)
    ends = day.ends_at

    async def one(i: int) -> None:
        async with limit:
            player, gid = f"p_rank{i:06d}", f"g_rank{date}_{i:06d}"
            await store.reserve(date, VARIANT, player, gid, 1, 86400)
            await games.create(
                player,
                VARIANT,
                seed,
                None,
                False,
                game_id=gid,
                seed_secret=True,
                daily=DailyTags(DailyTag(day.date, VARIANT), readable_from=ends, seed_from=ends,
                                closes_at=ends),
            )
            # What the service writes with a command: the game's stats, beside its event.
            moves = rng.randrange(1, 300)
            await games.store.append(
                gid,
                0,
                None,
                b'{"type":"diff"}',
                fields.to_texts({
                    fields.STATUS: rng.choice(["playing", "playing", "lost"]),
                    fields.MOVES: moves,
                    fields.FOUNDATION_CARDS: rng.randrange(40),
                    fields.STARTED_AT: started,
                    fields.LAST_AT: started + timedelta(seconds=moves * 3),
                }),
                settings.game_ttl_s,
            )

    t0 = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(attempts)))
    setup_s = time.perf_counter() - t0

    # Ranking reads only the chosen deal: no solver pool and no solutions are needed.
    deals = DailyDeals(settings, clock, SolverStore(conn), seeds,
                       cast(SolverPool, None), cast(Solutions, None))
    service = DailyService(settings, clock, games, store, deals)
    t0 = time.perf_counter()
    await service.ensure_ranked(day, VARIANT)
    rank_s = time.perf_counter() - t0
    assert await store.size(date, VARIANT) == attempts, "not every attempt was ranked"

    # The same number of attempts becoming final at once: one entry write each.
    final_date = (day.date - timedelta(days=30)).isoformat()
    end_ms = epoch_ms(day.ends_at)

    async def final(i: int) -> None:
        s = Standing(
            player_id=f"p_fin{i:06d}",
            game_id=f"g_fin{i:06d}",
            seq=100,
            status="resigned",
            foundation_cards=rng.randrange(52),
            moves=100,
            duration_ms=rng.randrange(10**6),
            finished_at=None,
            finish_ms=end_ms,
        )
        async with limit:
            await store.record(
                final_date,
                VARIANT,
                [Record(s.player_id, s.game_id, s.seq, s.sort_key(), s.entry_json())],
                86400,
            )

    t0 = time.perf_counter()
    await asyncio.gather(*(final(i) for i in range(attempts)))
    final_s = time.perf_counter() - t0
    return {"setup_s": setup_s, "rank_s": rank_s, "final_s": final_s}


# --- main ----------------------------------------------------------------------------


@contextlib.contextmanager
def store_server(url: str | None) -> Iterator[tuple[str, int | None]]:
    """``url`` if given, else a fresh valkey-server on a loopback port (AOF everysec);
    and its pid."""
    if url:
        yield url, None
        return
    with tempfile.TemporaryDirectory(prefix="bench-redis-") as tmp:
        server = ServerProcess(
            Path(tmp), port=0, config={"appendonly": "yes", "appendfsync": "everysec", "save": ""}
        )
        server.start()
        try:
            yield server.url, server.pid
        finally:
            server.stop()


@contextlib.contextmanager
def service_process(redis_url: str) -> Iterator[tuple[str, int]]:
    """One ``python -m service`` on the store; its base URL and pid."""
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="bench-svc-") as tmp:
        env = {
            **os.environ,
            "REDIS_URL": redis_url,
            "SOLITAIRE_PORT": str(port),
            "SOLITAIRE_DATA_DIR": tmp,
            "SOLITAIRE_TOKEN_SECRET": SECRET,
            "SOLITAIRE_DAILY_SECRET": SECRET,
            "SOLITAIRE_LOG_LEVEL": "WARNING",
            "SOLITAIRE_INSTANCE_ID": "bench-daily",
            "SOLITAIRE_WORKERS": "1",
            "PYTHONPATH": str(ROOT),
        }
        proc = subprocess.Popen([sys.executable, "-m", "service"], cwd=ROOT, env=env)
        try:
            url = f"http://127.0.0.1:{port}"
            wait_ready(url)
            yield url, proc.pid
        finally:
            proc.terminate()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()


async def choose_deals(conn: RedisConn, date: str) -> None:
    """A date's deals as chosen (candidate 0, par 1) without the solver: a leaderboard
    answers only for a day with a chosen deal, and the service would otherwise spend the
    benchmark's CPU choosing them."""
    for variant in VARIANTS:
        await SolverStore(conn).keep_chosen(date, variant, ChosenDeal(k=0, par=1), 3 * 86400)


async def main_async(args: argparse.Namespace) -> None:
    today = datetime.now(UTC).date()
    with store_server(args.redis_url) as (redis_url, store_pid):
        settings = Settings(
            redis_url=redis_url, data_dir=Path("/tmp"), instance_id="bench", redis_pool_size=256
        )
        conn = RedisConn(settings, redis_url)
        try:
            t0 = time.perf_counter()
            for day in (today, today + timedelta(days=1)):
                await choose_deals(conn, day.isoformat())
            board = await build_board(conn, today.isoformat(), args.entries)
            print(
                f"board: {args.entries:,} entries written in {time.perf_counter() - t0:.1f} s",
                flush=True,
            )
            results: dict[str, list[dict[str, float]]] = {k: [] for k in args.loads.split(",")}
            ranks: list[dict[str, float]] = []
            with service_process(redis_url) as (url, service_pid):
                for run in range(args.runs):
                    for kind, runs in results.items():
                        r = await run_load(
                            url, kind, board, args.readers, args.duration, service_pid, store_pid
                        )
                        runs.append(r)
                        print(
                            f"run {run + 1} {kind:5s}: {r['reads_per_s']:6.0f} reads/s  "
                            f"p50 {r['p50_ms']:5.1f} ms  p99 {r['p99_ms']:5.1f} ms  "
                            f"errors {r['errors']:.0f}  service {r['service_cpu_pct']:3.0f}% CPU, "
                            f"{r['service_cpu_us']:3.0f} µs/read; store {r['store_cpu_us']:3.0f}, "
                            f"load generator {r['client_cpu_us']:3.0f} µs/read; "
                            f"load avg {r['loadavg']:.1f}",
                            flush=True,
                        )
            for run in range(args.runs if args.attempts else 0):
                date = (
                    today - timedelta(days=3 + run)
                ).isoformat()  # not yesterday: no background task
                r = await rank_day_end(conn, settings, date, args.attempts)
                ranks.append(r)
                print(
                    f"run {run + 1} ranking: {args.attempts:,} open attempts ranked in "
                    f"{r['rank_s']:.2f} s "
                    f"(set up in {r['setup_s']:.1f} s); {args.attempts:,} final at once: "
                    f"{r['final_s']:.2f} s",
                    flush=True,
                )
        finally:
            await conn.aclose()
    print(
        f"\nmedians of {args.runs} runs, {args.entries:,} entries, {args.readers} readers, "
        f"{args.duration:g} s each:"
    )
    for kind, rs in results.items():
        print(
            f"  {kind:5s}: {median([r['reads_per_s'] for r in rs]):6.0f} reads/s  "
            f"p50 {median([r['p50_ms'] for r in rs]):5.1f} ms  "
            f"p99 {median([r['p99_ms'] for r in rs]):5.1f} ms  "
            f"service {median([r['service_cpu_us'] for r in rs]):3.0f} µs/read"
        )
    if ranks:
        print(
            f"  ranking {args.attempts:,} open attempts at the day's end: "
            f"{median([r['rank_s'] for r in ranks]):.2f} s"
        )
        print(
            f"  {args.attempts:,} attempts final at once (one entry write each): "
            f"{median([r['final_s'] for r in ranks]):.2f} s"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--readers", type=int, default=50)
    parser.add_argument(
        "--duration", type=float, default=10.0, help="seconds of each measured load"
    )
    parser.add_argument("--attempts", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--loads", default="page,me,mixed", help="which read loads, comma-separated"
    )
    parser.add_argument(
        "--redis-url", default=None, help="default: a fresh valkey-server for the run"
    )
    args = parser.parse_args()
    try:
        import uvloop
    except ImportError:
        asyncio.run(main_async(args))
    else:
        uvloop.run(main_async(args))


if __name__ == "__main__":
    main()
