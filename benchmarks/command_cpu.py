"""A command's CPU cost in the service: this checkout against another commit, in one run.

For each of two source trees (this checkout, "after", and ``--before REF``, checked out
with ``git worktree add`` into a temporary folder) it starts the real service, ``python
-m service`` with that tree on PYTHONPATH, on a free port, with its own embedded store
and one worker process. One client then plays the same games on both: lines of legal
commands (a quarter of them undos, the rest picked at random from ``GET /moves`` with a
seeded generator) recorded once on the "after" service, then replayed, command after
command, each sent when the last one's ack and diff are back, on new games of the same
deals. The figure is the CPU time (user + system, ``/proc/<pid>/stat``) the *service
process* spent while the batch's commands were played, divided by the commands: the
store (a child process), the client and the games' creation are outside it.

The rounds alternate which tree goes first (after, before; before, after; ...), so
neither always gets the machine's quieter half. It prints each batch's figure, then the
medians and their ratio (after / before: below 1 is cheaper). Only the service's
command line, environment variables and HTTP/WebSocket API are used, so it works
across a refactor that moves modules. Both trees run on this interpreter (this
checkout's .venv): a change of dependencies between them is not measured.

    python benchmarks/command_cpu.py --before main
    python benchmarks/command_cpu.py --before HEAD~0 --rounds 5      # the noise: one tree twice
    python benchmarks/command_cpu.py --before-root ../main --via rest
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import itertools
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
from _harness import LIFTED_PER_ADDRESS_LIMITS

ROOT = Path(__file__).resolve().parent.parent
VARIANTS = ("gilbert", "shamrocks", "gate", "caprice")
WAIT_S = 60.0

# Every command of the benchmark comes from one player at one address: the limits
# would measure the limits, not the command. The daily chooser searches few nodes per
# candidate (as the tests' instances do), so it is done before the measuring starts.
SERVICE_ENV = {
    "SOLITAIRE_WORKERS": "1",
    "SOLITAIRE_LOG_LEVEL": "WARNING",
    "SOLITAIRE_TOKEN_SECRET": "bench-secret-0123456789abcdef",
    "SOLITAIRE_DAILY_SECRET": "bench-daily-secret-0123456789abcdef",
    "SOLITAIRE_DAILY_SOLVE_NODES": "15000",
    **LIFTED_PER_ADDRESS_LIMITS,
    "SOLITAIRE_RATE_LIMIT_PER_S": "1000000",
    "SOLITAIRE_RATE_LIMIT_BURST": "1000000",
    "SOLITAIRE_HELLO_RATE_PER_S": "1000000",
    "SOLITAIRE_HELLO_BURST": "1000000",
}


# --- processes ---------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def process_cpu_s(pid: int) -> float:
    """User + system CPU time the process itself has used so far, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load_average() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def git(*args: str, cwd: Path = ROOT) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


@contextlib.contextmanager
def checkout(ref: str) -> Iterator[Path]:
    """``ref`` checked out (detached) in a temporary worktree, removed afterwards."""
    commit = git("rev-parse", "--verify", f"{ref}^{{commit}}")
    folder = Path(tempfile.mkdtemp(prefix="command-cpu-before-"))
    git("worktree", "add", "--detach", str(folder), commit)
    try:
        yield folder
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(folder)], cwd=ROOT,
                       check=False, capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)


@dataclass
class Service:
    label: str
    root: Path
    url: str
    pid: int


@contextlib.contextmanager
def service(label: str, root: Path, durability: str | None) -> Iterator[Service]:
    """``python -m service`` from ``root``, with its own embedded store in a temporary
    folder (REDIS_URL unset), on a free port."""
    port = free_port()
    with tempfile.TemporaryDirectory(prefix=f"command-cpu-{label}-") as data:
        env = {k: v for k, v in os.environ.items()
               if k != "REDIS_URL" and not k.startswith("SOLITAIRE_")}
        env.update(SERVICE_ENV, PYTHONPATH=str(root), SOLITAIRE_PORT=str(port),
                   SOLITAIRE_DATA_DIR=data)
        if durability:
            env["SOLITAIRE_DURABILITY"] = durability
        proc = subprocess.Popen([sys.executable, "-m", "service"], cwd=root, env=env)
        try:
            url = f"http://127.0.0.1:{port}"
            wait_ready(url, proc)
            yield Service(label, root, url, proc.pid)
        finally:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def wait_ready(url: str, proc: subprocess.Popen[bytes], timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the service at {url} exited with {proc.returncode}")
        with contextlib.suppress(OSError):
            with urllib.request.urlopen(url + "/readyz", timeout=2) as r:
                if r.status == 200:
                    return
        time.sleep(0.2)
    raise RuntimeError(f"{url} did not become ready in {timeout_s:g} s")


# --- the client ----------------------------------------------------------------------------


@dataclass
class Line:
    """A game's deal and the commands played on it."""

    variant: str
    seed: int
    commands: list[dict[str, Any]]


_ids = itertools.count()


class Client:
    """One player on one service, over REST and one WebSocket per game."""

    def __init__(self, session: aiohttp.ClientSession, svc: Service) -> None:
        self.session = session
        self.svc = svc
        self.token = ""

    async def call(self, method: str, path: str, body: Any = None, expect: int = 200) -> Any:
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        async with self.session.request(method, self.svc.url + path, json=body,
                                        headers=headers) as r:
            data = await r.json(content_type=None)
            if r.status != expect:
                raise RuntimeError(f"{self.svc.label}: {method} {path} answered {r.status}: {data}")
            return data

    async def sign_up(self) -> None:
        self.token = (await self.call("POST", "/v1/players", {"name": "bench"}, 201))["token"]

    async def wait_daily(self) -> None:
        """Until today's and tomorrow's daily deals are chosen: the chooser idle before
        measuring (its searches run in processes of the service's own)."""
        deadline = time.monotonic() + 600
        today = datetime.datetime.now(datetime.UTC).date()
        for day in (today, today + datetime.timedelta(days=1)):
            while True:
                async with self.session.get(self.svc.url + "/v1/daily",
                                            params={"date": day.isoformat()}) as r:
                    if r.status == 200:
                        break
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{self.svc.label}: the daily deals of {day} were not "
                                       "chosen in time")
                await asyncio.sleep(0.5)

    async def create(self, variant: str, seed: int) -> str:
        body = await self.call("POST", "/v1/games", {"variant": variant, "seed": seed}, 201)
        return str(body["game_id"])

    async def record(self, variant: str, seed: int, commands: int, undos: float,
                     rng: random.Random) -> Line:
        """Up to ``commands`` legal commands on a new game of the deal (fewer if it ends)."""
        game = await self.create(variant, seed)
        line: list[dict[str, Any]] = []
        for seq in range(commands):
            moves = await self.call("GET", f"/v1/games/{game}/moves")
            options = moves["moves"]
            if moves["can_undo"] and (not options or rng.random() < undos):
                command = {"type": "undo"}
            elif options:
                command = rng.choice(options)
            else:
                break
            await self.call("POST", f"/v1/games/{game}/commands",
                            {"command": command, "expected_seq": seq})
            line.append(command)
        return Line(variant, seed, line)

    async def batch(self, lines: list[Line], via: str) -> tuple[int, float]:
        """Every line on a new game of its deal: (commands, the service's CPU seconds over
        them). Games and sockets are made first, outside the measured span."""
        games = [await self.create(line.variant, line.seed) for line in lines]
        sockets: list[aiohttp.ClientWebSocketResponse] = []
        try:
            if via == "ws":
                for game in games:
                    ws = await self.session.ws_connect(
                        self.svc.url.replace("http://", "ws://") + f"/v1/games/{game}/ws")
                    sockets.append(ws)
                    await ws.send_json({"type": "hello", "token": self.token})
                    while (await self.receive(ws))["type"] != "synced":
                        pass
            count = 0
            before = process_cpu_s(self.svc.pid)
            for i, (game, line) in enumerate(zip(games, lines, strict=True)):
                for seq, command in enumerate(line.commands):
                    if via == "ws":
                        await self.send_ws(sockets[i], command, seq)
                    else:
                        await self.call("POST", f"/v1/games/{game}/commands", {
                            "command": command, "expected_seq": seq,
                            "command_id": f"c{next(_ids)}"})
                    count += 1
            spent = process_cpu_s(self.svc.pid) - before
        finally:
            for ws in sockets:
                await ws.close()
        return count, spent

    async def receive(self, ws: aiohttp.ClientWebSocketResponse) -> dict[str, Any]:
        msg = await ws.receive(timeout=WAIT_S)
        if msg.type is not aiohttp.WSMsgType.TEXT:
            raise RuntimeError(f"{self.svc.label}: the socket got {msg.type} {msg.data!r}")
        data: dict[str, Any] = msg.json()
        if data["type"] == "error":
            raise RuntimeError(f"{self.svc.label}: {data}")
        return data

    async def send_ws(self, ws: aiohttp.ClientWebSocketResponse, command: dict[str, Any],
                      seq: int) -> None:
        """One command; back when its ack and its diff have come."""
        cid = f"c{next(_ids)}"
        await ws.send_json({"type": "command", "command_id": cid, "expected_seq": seq,
                            "command": command})
        acked = diffed = False
        while not (acked and diffed):
            m = await self.receive(ws)
            acked = acked or (m["type"] == "ack" and m["command_id"] == cid)
            diffed = diffed or (m["type"] == "diff" and m["seq"] == seq + 1)


# --- the run -------------------------------------------------------------------------------


async def measure(services: list[Service], args: argparse.Namespace) -> dict[str, list[float]]:
    figures: dict[str, list[float]] = {svc.label: [] for svc in services}
    timeout = aiohttp.ClientTimeout(total=None, sock_read=WAIT_S)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        clients = [Client(session, svc) for svc in services]
        for client in clients:
            await client.wait_daily()
            await client.sign_up()
        rng = random.Random(args.seed)
        lines = [await clients[0].record(VARIANTS[k % len(VARIANTS)], rng.randrange(2**32),
                                         args.commands, args.undos, rng)
                 for k in range(args.games)]
        total = sum(len(line.commands) for line in lines)
        print(f"{len(lines)} games, {total} commands a batch "
              f"({sum(c['type'] == 'undo' for line in lines for c in line.commands)} undos), "
              f"over {'the WebSocket' if args.via == 'ws' else 'REST'}", flush=True)
        for client in clients:  # warm-up: imports, scripts loaded, caches filled
            await client.batch(lines[: max(1, len(lines) // 4)], args.via)
        for r in range(args.rounds):
            order = clients if r % 2 == 0 else clients[::-1]
            parts = []
            for client in order:
                count, spent = await client.batch(lines, args.via)
                per_command = spent / count * 1e6
                figures[client.svc.label].append(per_command)
                parts.append(f"{client.svc.label} {per_command:6.1f} µs ({spent:.2f} s CPU)")
            print(f"round {r + 1}: " + ", ".join(parts) + f"; load average {load_average()}",
                  flush=True)
    return figures


def describe(root: Path) -> str:
    try:
        head = git("rev-parse", "--short", "HEAD", cwd=root)
        dirty = git("status", "--porcelain", "--untracked-files=no", cwd=root)
    except subprocess.CalledProcessError:
        return str(root)
    return f"{head}{' with uncommitted changes' if dirty else ''} ({root})"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--before", metavar="REF",
                       help="the commit to compare with, checked out in a temporary worktree")
    which.add_argument("--before-root", type=Path, metavar="DIR",
                       help="or a checkout of it that exists already")
    parser.add_argument("--games", type=int, default=20, help="games a batch (default 20)")
    parser.add_argument("--commands", type=int, default=100,
                        help="commands a game, at most (default 100)")
    parser.add_argument("--undos", type=float, default=0.25,
                        help="the share of commands that are undos (default 0.25)")
    parser.add_argument("--rounds", type=int, default=5, help="batches per tree (default 5)")
    parser.add_argument("--via", choices=("ws", "rest"), default="ws",
                        help="the commands' way in: the WebSocket (default) or REST")
    parser.add_argument("--durability", choices=("memory", "local", "replicated"),
                        help="the services' --durability (default: the service's default)")
    parser.add_argument("--seed", type=int, default=1, help="the lines' random seed")
    args = parser.parse_args(argv)

    with contextlib.ExitStack() as stack:
        before_root = (args.before_root.resolve() if args.before_root
                       else stack.enter_context(checkout(args.before)))
        print(f"after:  {describe(ROOT)}\nbefore: {describe(before_root)}"
              + (f" = {args.before}" if args.before else ""), flush=True)
        print(f"{os.cpu_count()} cores, load average {load_average()}", flush=True)
        services = [stack.enter_context(service("after", ROOT, args.durability)),
                    stack.enter_context(service("before", before_root, args.durability))]
        figures = asyncio.run(measure(services, args))
    after, before = (statistics.median(figures[k]) for k in ("after", "before"))
    print(f"median CPU per command: after {after:.1f} µs, before {before:.1f} µs; "
          f"after / before = {after / before:.3f}")
    print(f"spread: after {min(figures['after']):.1f}–{max(figures['after']):.1f} µs, "
          f"before {min(figures['before']):.1f}–{max(figures['before']):.1f} µs; "
          f"load average {load_average()}")


if __name__ == "__main__":
    main()
