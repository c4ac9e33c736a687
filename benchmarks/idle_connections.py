"""Idle WebSocket connections: the memory one costs, and one instance holding 10,000.

One service process on one Redis (or ``--cluster``: a three-master cluster).
The script creates ``--games`` public games, measures the service's RSS, opens
``--sockets`` WebSockets spread evenly over the games, each saying ``hello``
and waiting for ``synced``, and measures the RSS again: the difference divided
by the number of sockets is the memory per idle connection (it includes the
fan-out's share: one subscription per game, a listener per socket). Then,
with every socket open, it checks that the instance still answers ``/healthz``
(and how fast), sends one command to each of a sample of games and waits for
its diff on every socket of those games, holds the sockets for ``--hold``
seconds (past the server's 30 s WebSocket heartbeat) and checks that none was
closed, and that a second command's diff still reaches the sample.

The open-file limit is raised inside the script (``resource.setrlimit``), for
itself and for the service process it starts. The sockets come from one
uvloop process (``--procs`` spreads them over more).

    python benchmarks/idle_connections.py --sockets 10000 --games 1000
    python benchmarks/idle_connections.py --sockets 2000 --games 2000 --runs 3
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import os
import random
import resource
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import aiohttp
from _harness import (
    ROOT,
    load_average,
    median,
    percentile,
    process_cpu_s,
    process_rss_kib,
    service_processes,
    store,
)

NOFILE = 65536


def raise_nofile() -> int:
    """Raise this process's open-file limit (children inherit it); the limit now."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    for want in (max(NOFILE, hard), hard):
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, want))
            break
        except (ValueError, OSError):
            continue
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def get_json(url: str, timeout: float = 10.0) -> tuple[int, float]:
    started = time.perf_counter()
    with urllib.request.urlopen(url, timeout=timeout) as r:
        r.read()
        return r.status, time.perf_counter() - started


async def make_games(base: str, count: int) -> list[tuple[str, str]]:
    """``count`` public games (one owner per 50 games): (game_id, owner token)."""
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=100)) as session:
        tokens = []
        for i in range((count + 49) // 50):
            async with session.post(f"{base}/v1/players", json={"name": f"idle{i}"}) as r:
                tokens.append((await r.json())["token"])

        async def one(i: int) -> tuple[str, str]:
            token = tokens[i // 50]
            async with session.post(
                f"{base}/v1/games",
                headers={"Authorization": f"Bearer {token}"},
                json={
                    "variant": ("gilbert", "shamrocks", "gate", "caprice")[i % 4],
                    "seed": i,
                    "public": True,
                },
            ) as r:
                assert r.status == 201, await r.text()
                return (await r.json())["game_id"], token

        out: list[tuple[str, str]] = []
        for start in range(0, count, 200):
            out += await asyncio.gather(*(one(i) for i in range(start, min(count, start + 200))))
        return out


# --- the client processes: each holds its share of the sockets ----------------------------


async def hold(base: str, game_ids: list[str], conn: Any) -> None:
    """Open one socket per entry of ``game_ids`` (hello, wait for synced), then obey
    commands from the parent over ``conn``: "diffs <seq>" (wait until every socket of
    the games in the sample got the diff with that seq), "count" (open sockets), "close"."""
    raise_nofile()
    ws_base = base.replace("http://", "ws://", 1)
    session = aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=0, force_close=False),
        timeout=aiohttp.ClientTimeout(total=None),
    )
    sockets: list[aiohttp.ClientWebSocketResponse] = []
    last_seq: list[int] = []
    closed: list[Any] = []
    synced_in: list[float] = []
    changed = asyncio.Event()
    hello = json.dumps({"type": "hello"})

    async def open_one(i: int, game_id: str) -> None:
        started = time.perf_counter()
        ws = await session.ws_connect(
            f"{ws_base}/v1/games/{game_id}/ws", autoping=True, max_msg_size=0, heartbeat=None
        )
        await ws.send_str(hello)
        while True:
            msg = await ws.receive()
            if msg.type is not aiohttp.WSMsgType.TEXT:
                raise RuntimeError(
                    f"socket {i} closed before synced: {msg.type} {msg.data} {msg.extra}"
                )
            m = json.loads(msg.data)
            if m["type"] == "synced":
                last_seq[i] = m["seq"]
                break
        synced_in.append(time.perf_counter() - started)
        sockets[i] = ws
        # Read from now on, as a real client does: the server's heartbeat pings must be
        # answered within 15 s, and opening all the sockets can take longer than that.
        readers.append(asyncio.create_task(read(i)))

    async def read(i: int) -> None:
        ws = sockets[i]
        async for msg in ws:
            if msg.type is aiohttp.WSMsgType.TEXT:
                m = json.loads(msg.data)
                if m["type"] == "diff":
                    last_seq[i] = m["seq"]
                    changed.set()
        closed.append((i, ws.close_code))
        changed.set()

    sockets = [None] * len(game_ids)  # type: ignore[list-item]
    last_seq = [-1] * len(game_ids)
    readers: list[asyncio.Task[None]] = []
    started = time.perf_counter()
    for start in range(0, len(game_ids), 250):
        await asyncio.gather(
            *(open_one(i, game_ids[i]) for i in range(start, min(len(game_ids), start + 250)))
        )
    opened_s = time.perf_counter() - started
    conn.send(("synced", len(sockets), opened_s, median(synced_in), percentile(synced_in, 99)))
    loop = asyncio.get_running_loop()
    while True:
        request = await loop.run_in_executor(None, conn.recv)
        if request[0] == "diffs":
            wanted: dict[str, int] = request[1]
            sample = [i for i, g in enumerate(game_ids) if g in wanted]
            t0 = time.perf_counter()
            deadline = t0 + 30
            while (
                any(last_seq[i] < wanted[game_ids[i]] for i in sample)
                and time.perf_counter() < deadline
            ):
                changed.clear()
                try:
                    await asyncio.wait_for(changed.wait(), 1.0)
                except TimeoutError:
                    pass
            missing = sum(1 for i in sample if last_seq[i] < wanted[game_ids[i]])
            conn.send(("diffs", len(sample), missing, time.perf_counter() - t0))
        elif request[0] == "count":
            conn.send(("count", len(sockets) - len(closed), closed[:5]))
        else:
            break
    for ws in sockets:
        await ws.close()
    for task in readers:
        task.cancel()
    await session.close()
    conn.send(("closed",))


def client_process(base: str, game_ids: list[str], conn: Any) -> None:
    try:
        import uvloop

        uvloop.run(hold(base, game_ids, conn))
    except ImportError:
        asyncio.run(hold(base, game_ids, conn))


# --- the run --------------------------------------------------------------------------------


async def command_all(
    base: str, games: list[tuple[str, str]]
) -> tuple[dict[str, int], list[float]]:
    """One legal command per game (from GET /moves; resign if none); the seq each
    game reached and the command latencies."""
    seqs: dict[str, int] = {}
    took: list[float] = []
    async with aiohttp.ClientSession() as session:
        for game_id, token in games:
            auth = {"Authorization": f"Bearer {token}"}
            async with session.get(f"{base}/v1/games/{game_id}/moves", headers=auth) as r:
                moves = await r.json()
            command = moves["moves"][0] if moves["moves"] else {"type": "resign"}
            started = time.perf_counter()
            async with session.post(
                f"{base}/v1/games/{game_id}/commands",
                headers=auth,
                json={"command": command, "expected_seq": moves["seq"]},
            ) as r:
                body = await r.json()
                assert r.status == 200, body
            took.append(time.perf_counter() - started)
            seqs[game_id] = body["seq"]
    return seqs, took


def run_once(args: argparse.Namespace, redis_url: str, run: int) -> dict[str, float]:
    with service_processes(
        redis_url,
        1,
        root=args.root,
        SOLITAIRE_RATE_LIMIT_PER_S="100000",
        SOLITAIRE_RATE_LIMIT_BURST="100000",
        SOLITAIRE_WS_SEND_QUEUE="512",
    ) as urls:
        base, pid = urls[0], urls.pids[0]
        games = asyncio.run(make_games(base, args.games))
        game_ids = [g for g, _ in games]
        # Warm up: a few sockets opened and closed, so lazy imports and caches are in place.
        warm = mp.get_context("spawn").Pipe()
        proc = mp.get_context("spawn").Process(
            target=client_process, args=(base, game_ids[:20], warm[1])
        )
        proc.start()
        warm[0].recv()
        warm[0].send(("close",))
        warm[0].recv()
        proc.join(30)
        time.sleep(1.0)
        rss_before = process_rss_kib(pid)
        cpu_before = process_cpu_s(pid)

        per_proc = [[] for _ in range(args.procs)]  # type: list[list[str]]
        for i in range(args.sockets):
            per_proc[i % args.procs].append(game_ids[i % len(game_ids)])
        pipes, procs = [], []
        for share in per_proc:
            parent, child = mp.get_context("spawn").Pipe()
            p = mp.get_context("spawn").Process(
                target=client_process, args=(base, share, child), daemon=True
            )
            p.start()
            pipes.append(parent)
            procs.append(p)
        replies = [pipe.recv() for pipe in pipes]
        open_s = max(r[2] for r in replies)  # from the first connect to the last synced
        synced = sum(r[1] for r in replies)
        assert synced == args.sockets, replies
        time.sleep(2.0)
        rss_after = process_rss_kib(pid)
        cpu_connect = process_cpu_s(pid) - cpu_before
        status, healthz_s = get_json(base + "/healthz")
        assert status == 200
        healthz = [get_json(base + "/healthz")[1] for _ in range(20)]

        sample = random.Random(run).sample(games, min(args.sample, len(games)))

        def diffs_reach_the_sample() -> tuple[int, int, float, list[float]]:
            # a command per sampled game, then wait for its diff on each of their sockets
            seqs, took = asyncio.run(command_all(base, sample))
            for pipe in pipes:
                pipe.send(("diffs", seqs))
            answers = [pipe.recv() for pipe in pipes]
            return (
                sum(a[1] for a in answers),
                sum(a[2] for a in answers),
                max(a[3] for a in answers),
                took,
            )

        reached, missing, diffs_s, took = diffs_reach_the_sample()
        assert missing == 0, f"{missing} of {reached} sockets of the sample missed a diff"
        cpu_idle_from = process_cpu_s(pid)
        time.sleep(args.hold)
        idle_cores = (process_cpu_s(pid) - cpu_idle_from) / args.hold
        for pipe in pipes:
            pipe.send(("count",))
        still = [pipe.recv() for pipe in pipes]
        open_now = sum(s[1] for s in still)
        assert open_now == args.sockets, still
        reached2, missing2, _, _ = diffs_reach_the_sample()
        assert missing2 == 0, f"after the hold, {missing2} of {reached2} sockets missed a diff"
        status2, healthz2_s = get_json(base + "/healthz")
        rss_end = process_rss_kib(pid)
        for pipe in pipes:
            pipe.send(("close",))
        for pipe in pipes:
            pipe.recv()
        for p in procs:
            p.join(60)
        per_socket = (rss_after - rss_before) * 1024 / args.sockets
        print(
            f"run {run + 1}: {args.sockets} sockets on {args.games} games synced in {open_s:.1f} s "
            f"(hello->synced p50 {median([r[3] for r in replies]) * 1000:.1f} ms, "
            f"p99 {max(r[4] for r in replies) * 1000:.0f} ms; service CPU {cpu_connect:.1f} s); "
            f"RSS {rss_before / 1024:.1f} -> {rss_after / 1024:.1f} MiB = "
            f"{per_socket / 1024:.1f} KiB per socket ({rss_end / 1024:.1f} MiB after the hold); "
            f"/healthz {healthz_s * 1000:.1f} ms, "
            f"p50 of 20 {median(healthz) * 1000:.1f} ms; a command on {len(sample)} games "
            f"(p50 {median(took) * 1000:.1f} ms) reached all {reached} of their sockets "
            f"(all there {diffs_s * 1000:.0f} ms after the last command's answer); "
            f"after {args.hold:g} s idle ({idle_cores:.3f} cores) "
            f"{open_now} open, the next commands' diffs reached all {reached2} again, "
            f"/healthz {status2} in {healthz2_s * 1000:.1f} ms",
            flush=True,
        )
        return {
            "kib_per_socket": per_socket / 1024,
            "rss_after_mib": rss_after / 1024,
            "rss_before_mib": rss_before / 1024,
            "open_s": open_s,
            "healthz_ms": median(healthz) * 1000,
            "diffs_ms": diffs_s * 1000,
            "idle_cores": idle_cores,
        }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sockets", type=int, default=10_000)
    parser.add_argument(
        "--games", type=int, default=1_000, help="the sockets are spread evenly over these"
    )
    parser.add_argument("--procs", type=int, default=1, help="client processes holding the sockets")
    parser.add_argument(
        "--sample", type=int, default=50, help="games sent a command while all are open"
    )
    parser.add_argument("--hold", type=float, default=35.0, help="seconds to hold the sockets idle")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--cluster", action="store_true", help="a three-master Redis Cluster")
    parser.add_argument("--redis-url", default=None)
    parser.add_argument(
        "--root",
        type=Path,
        default=ROOT,
        help="the checkout whose service runs (e.g. a worktree of an older commit)",
    )
    args = parser.parse_args(argv)
    args.root = args.root.resolve()
    limit = raise_nofile()
    print(
        f"open-file limit {limit}; load average before: {load_average()} ({os.cpu_count()} cores)",
        flush=True,
    )
    if limit < args.sockets + 300:  # the service's own: its store connections, listener, log
        sys.exit(f"the open-file limit {limit} is too low for {args.sockets} sockets")
    rows = []
    with store(args.redis_url, args.cluster) as redis_url:
        for run in range(args.runs):
            rows.append(run_once(args, redis_url, run))
    print(f"load average after: {load_average()}")
    med = {k: median([r[k] for r in rows]) for k in rows[0]}
    print(
        f"\n== summary (median of {len(rows)}) ==\n{args.sockets} sockets, {args.games} games: "
        + ", ".join(f"{k} {v:,.2f}" for k, v in med.items())
    )


if __name__ == "__main__":
    main()
