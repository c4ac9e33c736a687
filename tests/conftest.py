"""Shared fixtures: real store servers started by the tests themselves.
Servers (started lazily, only when a test asks for them):

- ``redis_server`` (session): one embedded valkey-server on a unix socket;
  ``redis_url`` (function) flushes it and gives its URL.
- ``redis_cluster`` (session): a Redis Cluster of three masters and three replicas on loopback
  ports; ``cluster_url`` (function) flushes it and gives REDIS_URL's comma list.
- ``any_redis_url``: ``redis_url`` then ``cluster_url`` (a test using it runs twice).
- ``server_factory`` (function): private servers a test may kill, stop and
  restart (same directory and address: the AOF brings the data back);
  ``restartable_server`` is one of them, started.

Clients:

- ``make_settings(url, **overrides)``: Settings for a test, data under tmp_path.
- ``store_factory(url, **overrides)``: an opened :class:`service.store.Store`,
  closed after the test; ``store`` is one on ``any_redis_url``.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import random
import secrets
import signal
import sys
import traceback
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from service.settings import Settings
from service.store.embedded import EmbeddedServer
from tests.redis_servers import LocalCluster, flush
from tests.stores import Store, open_store

# -- leaks --------------------------------------------------------------------


@pytest.fixture(autouse=True, scope="module")
def _no_leak_outlives_its_module() -> Iterator[None]:
    """A socket or transport left unclosed by a test is found when the garbage
    collector frees it, which may be many tests later, and pytest then fails
    whatever test was running (it once failed a solver test, which opens no socket).
    Collecting at the end of each module makes the module that leaked the one
    that fails, and names what leaked."""
    yield
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        gc.collect()
    leaks = [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
    if leaks:
        pytest.fail("left unclosed by a test of this module: " + "; ".join(leaks), pytrace=False)


# -- hangs --------------------------------------------------------------------

# A guard against a hung test, not a speed requirement: the slowest test takes well under
# a minute. TEST_HANG_S changes it (0 turns the guard off, e.g. under a debugger).
HANG_S = float(os.environ.get("TEST_HANG_S", "300"))
# After the hung test is failed, its fixtures' teardown gets this long before the run ends.
TEARDOWN_GRACE_S = float(os.environ.get("TEST_HANG_GRACE_S", "60"))


class Hung(Exception):
    """A test (with its fixtures) ran longer than HANG_S."""


def _awaiting(awaitable: Any) -> list[str]:
    """Where a coroutine waits: each frame down its chain of awaits."""
    lines = []
    while awaitable is not None:
        frame = getattr(awaitable, "cr_frame", None) or getattr(awaitable, "gi_frame", None)
        if frame is None:
            lines.append(f"  waiting for {awaitable!r}")
            break
        lines.extend(traceback.format_stack(frame, limit=1))
        awaitable = getattr(awaitable, "cr_await", None) or getattr(awaitable, "gi_yieldfrom", None)
    return lines


def _hang_report(what: str) -> str:
    """Every thread's stack and every pending asyncio task's: a hung asyncio test shows
    only its loop's ``select`` in the thread's stack; its tasks show what waits."""
    lines = [f"=== {what}: the stacks of every thread, then of every pending asyncio task ==="]
    for thread_id, frame in sys._current_frames().items():
        lines.append(f"--- thread {thread_id}")
        lines.extend(traceback.format_stack(frame))
    for obj in gc.get_objects():
        if isinstance(obj, asyncio.Task) and not obj.done():
            lines.append(f"--- {obj!r}")
            lines.extend(_awaiting(obj.get_coro()))
    return "\n".join(line.rstrip("\n") for line in lines)


@pytest.fixture(autouse=True)
def _a_hung_test_fails(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fails a test that runs (fixtures included) longer than HANG_S, with the stacks of
    what it waits for, and lets the run go on; if its teardown hangs too, ends the run.
    One hang once held a CI run until it was killed, with nothing to show where."""
    if HANG_S <= 0 or not hasattr(signal, "SIGALRM"):
        yield
        return
    test = request.node.nodeid

    def never_ends(signum: int, frame: Any) -> None:
        os._exit(3)  # the run could not even stop: nothing more can be said

    def teardown_hung(signum: int, frame: Any) -> None:
        signal.signal(signal.SIGALRM, never_ends)
        signal.setitimer(signal.ITIMER_REAL, TEARDOWN_GRACE_S)
        pytest.exit(_hang_report(f"{test}: its teardown still runs {TEARDOWN_GRACE_S:g} s "
                                 "after it was failed; the run ends"), returncode=3)

    def hung(signum: int, frame: Any) -> None:
        # Printed into the test's captured output, shown with its failure.
        print(_hang_report(f"{test}: still running after {HANG_S:g} s"), file=sys.stderr)
        signal.signal(signal.SIGALRM, teardown_hung)
        signal.setitimer(signal.ITIMER_REAL, TEARDOWN_GRACE_S)
        raise Hung(f"{test} ran longer than {HANG_S:g} s (TEST_HANG_S): the stacks of "
                   f"its threads and tasks are in its captured stderr")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.setitimer(signal.ITIMER_REAL, HANG_S)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# -- deals --------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _deals_seeded_by_the_test(monkeypatch: pytest.MonkeyPatch,
                              request: pytest.FixtureRequest) -> None:
    """The seeds a service in this process chooses for a game made without one (and keeps
    secret) come from a generator seeded by the test's name: the same deals on every run, so
    no test passes or fails by the deal it happens to draw (a Shamrocks deal can be lost
    before its first command, and a test once failed on a fresh clone for that)."""
    monkeypatch.setattr(secrets, "randbelow", random.Random(request.node.nodeid).randrange)


# -- servers ------------------------------------------------------------------


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    # "always": the default durability (local) waits for an fsync of each command.
    with EmbeddedServer(tmp_path_factory.mktemp("redis"), appendfsync="always") as server:
        yield server


@pytest.fixture
def redis_url(redis_server: EmbeddedServer) -> str:
    flush(redis_server.url)
    return redis_server.url


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    # Three masters with a replica each: durability "replicated" and failovers are tested on it.
    with LocalCluster(tmp_path_factory.mktemp("cluster"), replicas=1) as cluster:
        yield cluster


@pytest.fixture
def cluster_url(redis_cluster: LocalCluster) -> str:
    redis_cluster.flush()
    return redis_cluster.url


@pytest.fixture(params=["server", "cluster"])
def any_redis_url(request: pytest.FixtureRequest) -> str:
    url: str = request.getfixturevalue("redis_url" if request.param == "server" else "cluster_url")
    return url


@pytest.fixture
def server_factory(tmp_path: Path) -> Iterator[Callable[..., EmbeddedServer]]:
    """``server_factory(name="s", **kwargs)``: a started private EmbeddedServer in tmp_path/name."""
    servers: list[EmbeddedServer] = []

    def factory(name: str = "server", **kwargs: Any) -> EmbeddedServer:
        # Tests kill these servers and expect every acknowledged write back: only
        # "always" promises that (under everysec Redis may postpone the AOF write).
        kwargs.setdefault("appendfsync", "always")
        server = EmbeddedServer(tmp_path / name, **kwargs)
        servers.append(server)
        server.start()
        return server

    try:
        yield factory
    finally:
        for server in servers:
            server.stop()


@pytest.fixture
def restartable_server(server_factory: Callable[..., EmbeddedServer]) -> EmbeddedServer:
    return server_factory("restartable")


# -- clients ------------------------------------------------------------------


@pytest.fixture
def make_settings(tmp_path: Path) -> Callable[..., Settings]:
    def make(url: str | None, **overrides: Any) -> Settings:
        values: dict[str, Any] = {
            "redis_url": url,
            "data_dir": tmp_path / "data",
            "redis_timeout_s": 2.0,
            "redis_pool_size": 32,
            "instance_id": "test",
        }
        values.update(overrides)
        return Settings(**values)

    return make


@pytest.fixture
async def store_factory(
    make_settings: Callable[..., Settings],
) -> AsyncIterator[Callable[..., Awaitable[Store]]]:
    async with contextlib.AsyncExitStack() as stack:

        async def factory(url: str | None, **overrides: Any) -> Store:
            return await stack.enter_async_context(open_store(make_settings(url, **overrides)))

        yield factory


@pytest.fixture
async def store(any_redis_url: str, store_factory: Callable[..., Awaitable[Store]]) -> Store:
    return await store_factory(any_redis_url)
