"""Running real service instances for tests: in this event loop, or as a subprocess.

``running_service(redis_url)`` is an async context manager that starts the
aiohttp application on a free loopback port and yields its base URL;
``ServiceProcess`` runs ``python -m service`` in a child process (for tests
that drive it from another process, a browser, or kill it).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from aiohttp import web

from service.app import create_app
from service.runtime.clock import Clock
from service.settings import Settings
from service.web.connections import app_runner

ROOT = Path(__file__).resolve().parent.parent
# The token secret of every test instance: a test may sign a token of its own with it.
TOKEN_SECRET = "test-secret-0123456789abcdef"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# A daily candidate is decided by its node budget, as a hint is: which candidate k
# becomes a day's deal must not depend on how loaded the machine is. The time cap
# is only a backstop.
DAILY_SOLVE_NODES = 15_000
DAILY_SOLVE_S = 600.0
# Hints are decided by their node budget; a time cap that a loaded machine could hit
# would make two hints of one view differ.
HINT_SAMPLE_S = 60.0


def alive(pid: int) -> bool:
    """Whether a process runs (a zombie, waiting for a reaper, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_until_dead(pid: int, patience_s: float = 30.0) -> bool:
    deadline = time.monotonic() + patience_s
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def settings_for_test(redis_url: str, data_dir: Path, **overrides: Any) -> Settings:
    """Settings for a test instance: generous rate limits unless a test sets them; a small
    node budget per daily candidate (a quick "unknown" moves on to the next candidate, so a
    day's winnable deals are found sooner than with the default); daily candidates and hints
    bounded by nodes only, so what they find does not depend on the machine's load."""
    # Every test client comes from 127.0.0.1: the per-address limits (and the per-player
    # ones, for tests that play many games as one player) are lifted like the rate limit;
    # the tests of those limits set them, and tests/web runs with their defaults.
    base = Settings(
        redis_url=redis_url,
        data_dir=data_dir,
        token_secret=TOKEN_SECRET,
        daily_secret="test-daily-secret-0123456789abcdef",
        rate_limit_per_s=10_000.0,
        rate_limit_burst=10_000,
        hello_timeout_s=5.0,
        read_rate_per_s=10_000.0,
        read_burst=10_000,
        create_rate_per_s=10_000.0,
        create_burst=10_000,
        create_per_address_rate_per_s=10_000.0,
        create_per_address_burst=10_000,
        signup_per_address_rate_per_s=10_000.0,
        signup_per_address_burst=10_000,
        renames_per_day=10_000,
        open_games_per_player=100_000,
        ws_per_address=100_000,
        watchers_per_game=100_000,
        solver_searches_per_address=100_000,
        solver_searches_per_player=100_000,
        hello_rate_per_s=10_000.0,
        hello_burst=10_000,
        replay_max_diffs=1_000_000,
        daily_solve_s=DAILY_SOLVE_S,
        daily_solve_nodes=DAILY_SOLVE_NODES,
        hint_sample_s=HINT_SAMPLE_S,
    )
    return dataclasses.replace(base, **overrides)


@contextlib.asynccontextmanager
async def running_service(settings: Settings, clock: Clock | None = None) -> AsyncIterator[str]:
    """Start the app on a free port in this event loop; yield ``http://127.0.0.1:<port>``."""
    port = free_port()
    runner = app_runner(create_app(dataclasses.replace(settings, port=port), clock=clock),
                        shutdown_timeout=2.0)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", port)
    await site.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


class ServiceProcess:
    """``python -m service`` in a child process on a free port."""

    def __init__(self, redis_url: str | None, data_dir: Path, **env: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.data_dir = data_dir
        self.env = {
            **os.environ,
            "SOLITAIRE_PORT": str(self.port),
            "SOLITAIRE_DATA_DIR": str(data_dir),
            "SOLITAIRE_TOKEN_SECRET": TOKEN_SECRET,
            "SOLITAIRE_DAILY_SECRET": "test-daily-secret-0123456789abcdef",
            "SOLITAIRE_RATE_LIMIT_PER_S": "10000",
            "SOLITAIRE_RATE_LIMIT_BURST": "10000",
            # one process (the tests kill, signal and read the log of this pid);
            # tests/service/runtime/test_workers.py passes SOLITAIRE_WORKERS=2
            "SOLITAIRE_WORKERS": "1",
            "SOLITAIRE_DAILY_SOLVE_S": str(DAILY_SOLVE_S),
            "SOLITAIRE_DAILY_SOLVE_NODES": str(DAILY_SOLVE_NODES),
            "SOLITAIRE_HINT_SAMPLE_S": str(HINT_SAMPLE_S),
            "PYTHONPATH": str(ROOT),
            **env,
        }
        if redis_url:
            self.env["REDIS_URL"] = redis_url
        else:
            self.env.pop("REDIS_URL", None)
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path = data_dir / f"service-{self.port}.log"

    def start(self, timeout_s: float = 30.0) -> ServiceProcess:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "ab")  # noqa: SIM115 - closed by the child's exit
        self.process = subprocess.Popen([sys.executable, "-m", "service"], cwd=ROOT, env=self.env,
                                        stdout=log, stderr=subprocess.STDOUT)
        log.close()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"the service exited with {self.process.returncode}:\n{self.log()}"
                )
            try:
                with urllib.request.urlopen(self.url + "/readyz", timeout=1) as r:
                    if r.status == 200:
                        return self
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"the service did not become ready in {timeout_s} s:\n{self.log()}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def stop(self, sig: int = signal.SIGTERM, timeout_s: float = 15.0) -> int | None:
        if self.process is None or self.process.poll() is not None:
            return None if self.process is None else self.process.returncode
        self.process.send_signal(sig)
        try:
            return self.process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()

    def kill(self) -> None:
        self.stop(signal.SIGKILL)

    def __enter__(self) -> ServiceProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def wait_daily_chosen(url: str, timeout_s: float = 900.0) -> None:
    """Block until the service has chosen today's and tomorrow's daily deals (503 until then)."""
    import datetime as dt
    import urllib.error

    today = dt.datetime.now(dt.UTC).date()
    deadline = time.monotonic() + timeout_s
    for day in (today, today + dt.timedelta(days=1)):
        while True:
            try:
                with urllib.request.urlopen(
                    f"{url}/v1/daily?date={day.isoformat()}", timeout=10
                ) as r:
                    if r.status == 200:
                        break
            except urllib.error.HTTPError as err:
                if err.code != 503:
                    raise
            if time.monotonic() > deadline:
                raise RuntimeError(f"the daily deals of {day} were not chosen in {timeout_s} s")
            time.sleep(0.5)


async def daily_chosen(url: str, timeout_s: float = 900.0) -> None:
    """As :func:`wait_daily_chosen`, without blocking the event loop (an in-process service
    chooses its deals on this very loop)."""
    import asyncio
    import datetime as dt

    import aiohttp

    today = dt.datetime.now(dt.UTC).date()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    async with aiohttp.ClientSession() as session:
        for day in (today, today + dt.timedelta(days=1)):
            while True:
                async with session.get(f"{url}/v1/daily", params={"date": day.isoformat()}) as r:
                    if r.status == 200:
                        break
                    assert r.status == 503, (r.status, await r.text())
                if loop.time() > deadline:
                    raise RuntimeError(f"the daily deals of {day} were not chosen in {timeout_s} s")
                await asyncio.sleep(0.5)
