"""The store while Redis is down: 503 material (StoreUnavailable), then recovery
with the same client, and nothing acknowledged is lost."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime

import pytest

from service.store import Conflict, Duplicate, GameMeta, StoreError, StoreUnavailable, keys
from service.store.connection import RedisConn, translate
from service.store.embedded import EmbeddedServer
from tests.service.listening import listen
from tests.stores import Store

META = GameMeta(variant="gilbert", seed=1, owner="p1", rules_version="1",
                created_at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC))


async def every_call(store: Store) -> list[Callable[[], Awaitable[object]]]:
    return [
        lambda: store.ping(),
        lambda: store.games.create("g2", META, ttl_s=3600),
        lambda: store.games.load("g1"),
        lambda: store.games.load("g1"),
        lambda: store.games.append("g1", 1, "c2", b"e2"),
        lambda: store.games.events("g1"),
        lambda: store.games.event_at("g1", 1),
        lambda: store.games.first_application("g1", "c1"),
        lambda: store.rate_limiter.allow(keys.command_limit("p1"), 10, 10),
    ]


@pytest.mark.parametrize("how", ["kill", "stop"])
async def test_every_call_is_unavailable_while_the_server_is_down_and_works_after_restart(
        how: str, restartable_server: EmbeddedServer,
        store_factory: Callable[..., Awaitable[Store]]) -> None:
    store = await store_factory(restartable_server.url)
    await store.games.create("g1", META, ttl_s=3600)
    assert await store.games.append("g1", 0, "c1", b"e1") == 1

    restartable_server.kill() if how == "kill" else restartable_server.stop()
    for call in await every_call(store):
        with pytest.raises(StoreUnavailable):
            await call()

    restartable_server.start()
    # The same client, no restart of ours; the acknowledged append came back from the AOF.
    await store.ping()
    loaded = await store.games.load("g1")
    assert (loaded.meta.seq, loaded.events) == (1, [b"e1"])
    assert await store.games.append("g1", 1, "c2", b"e2") == 2
    first = await store.games.first_application("g1", "c1")
    assert first is not None and first[0] == 1


async def test_an_unreachable_store_at_start_up_is_unavailable_not_fatal(
        tmp_path: object, store_factory: Callable[..., Awaitable[Store]]) -> None:
    store = await store_factory("unix:///nonexistent/redis.sock", redis_retries=1)
    with pytest.raises(StoreUnavailable):
        await store.ping()
    with pytest.raises(StoreUnavailable):
        await store.games.load("g1")
    with pytest.raises(StoreUnavailable):
        async with listen(store.hub, "g1"):
            pass


async def test_an_unreachable_cluster_is_unavailable(
        store_factory: Callable[..., Awaitable[Store]]) -> None:
    from service.store.embedded import free_port

    url = f"redis://127.0.0.1:{free_port()},redis://127.0.0.1:{free_port()}"
    store = await store_factory(url, redis_retries=1)
    with pytest.raises(StoreUnavailable):
        await store.games.load("g1")
    with pytest.raises(StoreUnavailable):
        await store.ping()


def test_server_refusals_that_mean_not_now_are_unavailable_and_others_are_errors() -> None:
    from redis import exceptions as rex

    assert isinstance(translate(rex.ResponseError("LOADING Redis is loading")), StoreUnavailable)
    assert isinstance(translate(rex.ReadOnlyError("READONLY replica")), StoreUnavailable)
    assert isinstance(translate(rex.ResponseError("OOM command not allowed")), StoreUnavailable)
    assert isinstance(translate(rex.MaxConnectionsError("Too many connections")), StoreUnavailable)
    assert isinstance(translate(TimeoutError()), StoreUnavailable)
    # A store restarted with a large append-only file answers a new connection's handshake
    # LOADING until it has read it: redis-py raises a ConnectionError from that reply.
    loading = rex.ConnectionError("Valkey is loading the dataset in memory")
    loading.__cause__ = rex.BusyLoadingError("Valkey is loading the dataset in memory",
                                             status_code="LOADING")
    assert translate(loading).reason == "it is loading its data"
    error = translate(rex.ResponseError("WRONGTYPE Operation against a key"))
    assert isinstance(error, StoreError) and not isinstance(error, StoreUnavailable)


# How a store refuses every write while it is up, and how it is made to accept them again.
REFUSALS = {
    "out of memory": (("CONFIG", "SET", "maxmemory", "1"), ("CONFIG", "SET", "maxmemory", "0")),
    "read-only replica": (("REPLICAOF", "127.0.0.1", "1"), ("REPLICAOF", "NO", "ONE")),
}


@pytest.mark.parametrize("refusal", sorted(REFUSALS))
async def test_a_store_that_refuses_writes_is_unavailable_and_says_why(
        refusal: str, server_factory: Callable[..., EmbeddedServer],
        store_factory: Callable[..., Awaitable[Store]]) -> None:
    # A real server's refusal: redis-py strips its code ("OOM") from the message of the
    # exception it raises, which a check of the message alone misses.
    refuse, accept = REFUSALS[refusal]
    store = await store_factory(server_factory("refusing").url)
    await store.games.create("g1", META, ttl_s=3600)
    assert await store.games.append("g1", 0, "c1", b"e1") == 1

    await store.redis.execute(*refuse)
    writes: list[Callable[[], Awaitable[object]]] = [
        lambda: store.games.create("g2", META, ttl_s=3600),
        lambda: store.games.append("g1", 1, "c2", b"e2"),
        lambda: store.rate_limiter.allow(keys.command_limit("p1"), 10, 10),
    ]
    for write in writes:
        with pytest.raises(StoreUnavailable) as caught:
            await write()
        assert caught.value.reason is not None and refusal in caught.value.reason

    await store.redis.execute(*accept)
    assert await store.games.append("g1", 1, "c2", b"e2") == 2


async def test_a_wrong_type_is_a_store_error_not_unavailable(
        redis_url: str, store_factory: Callable[..., Awaitable[Store]]) -> None:
    store = await store_factory(redis_url)
    await store.redis.execute("SET", keys.game_meta("g1"), "not a hash")
    with pytest.raises(StoreError) as caught:
        await store.games.load("g1")
    assert not isinstance(caught.value, StoreUnavailable)


async def test_cluster_urls_are_recognised(make_settings: Callable[..., object]) -> None:
    from service.store.connection import cluster_nodes, is_cluster_url

    assert not is_cluster_url("redis://h:1")
    assert is_cluster_url("h1:7000,h2:7001")
    assert cluster_nodes("redis://h1:7000, h2:7001,") == [("h1", 7000), ("h2", 7001)]
    assert cluster_nodes("rediss://h1:7000,") == [("h1", 7000)]
    conn = RedisConn(make_settings("rediss://:pw@h1:7000,h2:7001"), "rediss://:pw@h1:7000,h2:7001")  # type: ignore[arg-type]
    assert conn.is_cluster
    await conn.aclose()


class ReplyDroppingProxy:
    """A loopback TCP proxy to a unix-socket server that can lose the next reply:
    the request reaches the server, the connection breaks before the answer."""

    def __init__(self, unix_socket: str) -> None:
        self.unix_socket = unix_socket
        self.drop_next_reply = False
        self.dropped = 0
        self.server: asyncio.Server | None = None
        self.tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> str:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self.server.sockets[0].getsockname()[1]
        return f"redis://127.0.0.1:{port}"

    async def _serve(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        server_r, server_w = await asyncio.open_unix_connection(self.unix_socket)

        async def pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter, replies: bool) -> None:
            while data := await src.read(65536):
                if replies and self.drop_next_reply:
                    self.drop_next_reply = False
                    self.dropped += 1
                    break
                dst.write(data)
                await dst.drain()

        try:
            up = asyncio.create_task(pump(client_r, server_w, False))
            await pump(server_r, client_w, True)
            up.cancel()
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            for writer in (client_w, server_w):
                writer.close()
                with contextlib.suppress(Exception):
                    await writer.wait_closed()

    async def aclose(self) -> None:
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()


@pytest.fixture
async def proxy(redis_server: EmbeddedServer, redis_url: str) -> AsyncIterator[ReplyDroppingProxy]:
    assert redis_server.unix_socket is not None
    proxy = ReplyDroppingProxy(str(redis_server.unix_socket))
    try:
        yield proxy
    finally:
        await proxy.aclose()


async def test_an_append_whose_reply_was_lost_is_retried_without_being_applied_twice(
        proxy: ReplyDroppingProxy, store_factory: Callable[..., Awaitable[Store]]) -> None:
    store = await store_factory(await proxy.start())
    await store.games.create("g1", META, ttl_s=3600)
    assert await store.games.append("g1", 0, None, b"e1") == 1
    # No command_id: the store's own id lets the retry see its first attempt.
    proxy.drop_next_reply = True
    assert await store.games.append("g1", 1, None, b"e2") == 2
    assert proxy.dropped == 1
    # With the client's command_id: the retry reports the first application.
    proxy.drop_next_reply = True
    with pytest.raises(Duplicate) as caught:
        await store.games.append("g1", 2, "c3", b"e3")
    assert caught.value.seq == 3
    assert proxy.dropped == 2
    assert await store.games.events("g1") == [b"e1", b"e2", b"e3"]


async def _writes_while(close: Callable[[], Awaitable[object]], store: Store,
                        rounds: int = 50) -> tuple[int, int]:
    """Many appends and pings in flight while ``close`` closes connections under them, until
    some were cut (at most ``rounds`` rounds): (done, unavailable). Any other outcome (an
    AttributeError or TypeError from inside the client, a bare redis-py error) is raised."""
    done = unavailable = 0
    for r in range(rounds):
        game = f"cut{r}"
        await store.games.create(game, META, ttl_s=3600)
        calls = [store.games.append(game, 0, f"c{i}", b"e") for i in range(20)]
        calls += [store.ping() for _ in range(20)]
        tasks = [asyncio.ensure_future(c) for c in calls]
        await asyncio.sleep(0)
        await close()
        for outcome in await asyncio.gather(*tasks, return_exceptions=True):
            if isinstance(outcome, StoreUnavailable):
                unavailable += 1
            elif isinstance(outcome, Conflict):
                done += 1  # the store answered: another append of the round came first
            elif isinstance(outcome, BaseException):
                raise outcome
            else:
                done += 1
        if unavailable:
            break
        await store.ping()
    return done, unavailable


async def test_connections_closed_under_writes_are_an_unreachable_store_never_a_crash(
        restartable_server: EmbeddedServer,
        store_factory: Callable[..., Awaitable[Store]]) -> None:
    """A connection that another task closes while commands are on it (what a cluster
    master's polite stop, or a pool reset, does): each call either completes or fails as
    StoreUnavailable (a 503), and the same client works again afterwards."""
    store = await store_factory(restartable_server.url, redis_retries=0,
                                redis_autopipeline=False)
    pool = store.redis.client.connection_pool

    async def close_in_use() -> None:
        await pool.disconnect(inuse_connections=True)

    done, unavailable = await _writes_while(close_in_use, store)
    assert unavailable, "no call was cut: the test closed nothing under a write"
    await store.ping()
    await store.games.create("after", META, ttl_s=3600)
    assert await store.games.append("after", 0, "c", b"e") == 1
