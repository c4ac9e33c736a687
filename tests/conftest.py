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

import contextlib
import gc
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
