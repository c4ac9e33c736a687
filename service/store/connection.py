"""The Redis client of the process, built from :class:`~service.settings.Settings`.

``REDIS_URL`` is one server (``redis://``, ``rediss://``, ``unix://``) or, when
it holds a comma, the start-up nodes of a Redis Cluster
(``redis://h1:7000,redis://h2:7001`` or ``h1:7000,h2:7001``; a single cluster
endpoint is written with a trailing comma: ``redis://h1:7000,``).

:class:`RedisConn` wraps the redis-py client so that:

- the pool size is deliberate: a single server gets a ``BlockingConnectionPool``
  (:class:`~service.store.pool.ClosingPool`) of ``redis_pool_size`` connections
  (a caller waits up to ``redis_timeout_s`` for a free one instead of failing);
  in Cluster mode, where redis-py's per-node pool raises ``MaxConnectionsError``
  when exhausted, a semaphore of the same size makes callers wait instead;
- connection errors are retried with jittered exponential backoff
  (``redis_retries`` times), idle connections are health-checked
  (``redis_health_check_s``), and a client keeps working after Redis comes back;
- once closed, it leaves no connection open: the batches still in flight are
  abandoned, and later commands refused (see pool.py; in Cluster mode, where
  redis-py keeps a pool per node, cluster_pool.py);
- every failure surfaces as :class:`~service.store.errors.StoreUnavailable`
  (unreachable, or refusing: loading, read-only, out of memory; see ``REFUSALS``) or
  :class:`~service.store.errors.StoreError` (anything else), never as a
  redis-py exception.
"""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import logging
from collections.abc import Coroutine, Sequence
from typing import Any
from urllib.parse import urlsplit

from redis import exceptions as rex
from redis.asyncio import Redis
from redis.asyncio.cluster import ClusterNode, PipelineCommand, RedisCluster
from redis.asyncio.connection import SSLConnection, parse_url
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialWithJitterBackoff

from service.settings import Settings, redact_url
from service.store import keys
from service.store.cluster_pool import ClusterConnections
from service.store.durability import Durability, Publish
from service.store.errors import StoreError, StoreUnavailable
from service.store.persistence import Watch
from service.store.pipeline import AutoPipeline
from service.store.pool import CLOSED, ClientClosed, ClosingPool

logger = logging.getLogger(__name__)

RETRY_BASE_S = 0.05
RETRY_CAP_S = 1.0

# Server replies that mean "not now" rather than "wrong", by their code: answered as 503,
# with why the store refuses (the words a person reads in the error's message).
REFUSALS: dict[str, str] = {
    "OOM": "it is out of memory (maxmemory reached, and it evicts nothing)",
    "READONLY": "it is a read-only replica",
    "LOADING": "it is loading its data",
    "MISCONF": "it cannot write to its disk",
    "BUSY": "it is busy running a script",
    "NOREPLICAS": "it has too few replicas to accept writes",
    "MASTERDOWN": "its link to its master is down",
    "CLUSTERDOWN": "the cluster is down",
    "TRYAGAIN": "the cluster is moving the game's keys",
}
_UNAVAILABLE_TYPES: tuple[type[BaseException], ...] = (
    rex.ConnectionError,  # includes BusyLoadingError and MaxConnectionsError
    rex.TimeoutError,
    rex.ClusterDownError,
    rex.SlotNotCoveredError,
    rex.TryAgainError,
    rex.ReadOnlyError,
    rex.MasterDownError,
    rex.ClusterError,
    # Not a RedisError: "cannot be connected", "could not agree on a valid slots cache".
    rex.RedisClusterException,
    OSError,  # includes the builtin TimeoutError, which asyncio.timeout raises
)


# What a call into redis-py may raise besides programming errors.
REDIS_ERRORS = (rex.RedisError, rex.RedisClusterException, OSError)


def is_closed_connection_race(exc: BaseException) -> bool:
    """redis-py (8.1) lets a connection that was closed under a write escape as
    ``AttributeError: 'NoneType' object has no attribute 'writelines'`` (or a
    TypeError from the transport) instead of ConnectionError (redis-py issues
    3546 and 4287). Seen here when a cluster master shuts down while commands
    run: the store is unreachable, not a bug of ours."""
    if not isinstance(exc, (AttributeError, TypeError)):
        return False
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return False
    where = tb.tb_frame.f_code.co_filename.replace("\\", "/")
    return "/redis/asyncio/" in where or where.endswith(
        ("/asyncio/streams.py", "/asyncio/selector_events.py"))


def is_cluster_url(url: str) -> bool:
    return "," in url


def cluster_nodes(url: str) -> list[tuple[str, int]]:
    """``"redis://h1:7000,h2:7001"`` -> ``[("h1", 7000), ("h2", 7001)]``."""
    nodes = []
    for part in url.split(","):
        part = part.strip()
        if not part:
            continue
        if "://" not in part:
            part = "redis://" + part
        split = urlsplit(part)
        if not split.hostname:
            raise ValueError(f"REDIS_URL: no host in cluster node {redact_url(part)!r}")
        nodes.append((split.hostname, split.port or 6379))
    if not nodes:
        raise ValueError(f"REDIS_URL={redact_url(url)!r}: no cluster nodes")
    return nodes


# Set while a task is inside a retrying call: the calls nested in it run once.
_retrying: contextvars.ContextVar[bool] = contextvars.ContextVar("solitaire_retrying",
                                                                 default=False)


class FlatRetry(Retry):
    """A Retry whose nested uses do not multiply.

    redis-py 8.1 retries at three levels with the same object: a command, the
    connect() inside it, the health-check PING inside that. With ``n`` retries a
    stalled server costs up to ``(n + 1) ** 3`` socket timeouts per call. Here
    only the outermost call retries; the calls nested in it run once and let
    their failure reach it. (The request deadline bounds the whole request in
    any case: see :mod:`service.web.deadline`.)
    """

    async def call_with_retry(self, do: Any, fail: Any, *args: Any, **kwargs: Any) -> Any:
        if _retrying.get():
            return await do()
        token = _retrying.set(True)
        try:
            return await super().call_with_retry(do, fail, *args, **kwargs)
        finally:
            _retrying.reset(token)


def _retry(settings: Settings) -> Retry:
    return FlatRetry(ExponentialWithJitterBackoff(base=RETRY_BASE_S, cap=RETRY_CAP_S),
                     retries=settings.redis_retries,
                     supported_errors=(rex.ConnectionError, rex.TimeoutError))


def _common_kwargs(settings: Settings) -> dict[str, Any]:
    return {
        "socket_timeout": settings.redis_timeout_s,
        "socket_connect_timeout": settings.redis_timeout_s,
        "health_check_interval": settings.redis_health_check_s,
        "retry": _retry(settings),
        "client_name": f"solitaire-{settings.instance_id}"[:64].replace(" ", "_"),
    }


def build_client(settings: Settings, url: str) -> Redis | RedisCluster:
    """A redis-py asyncio client for ``url`` (no I/O happens here)."""
    if is_cluster_url(url):
        first = url.split(",")[0].strip()
        first_kwargs = parse_url(first if "://" in first else "redis://" + first)
        extra: dict[str, Any] = {}
        for name in ("username", "password"):
            if first_kwargs.get(name):
                extra[name] = first_kwargs[name]
        if first_kwargs.get("connection_class") is SSLConnection:
            extra["ssl"] = True
        return RedisCluster(
            startup_nodes=[ClusterNode(host, port) for host, port in cluster_nodes(url)],
            socket_keepalive=True,
            max_connections=settings.redis_pool_size,
            **_common_kwargs(settings),
            **extra,
        )
    tcp = {} if url.startswith("unix:") else {"socket_keepalive": True}
    pool = ClosingPool.from_url(
        url,
        **tcp,
        max_connections=settings.redis_pool_size,
        timeout=settings.redis_timeout_s,  # wait for a free connection this long
        **_common_kwargs(settings),
    )
    return Redis.from_pool(pool)


def _answer(reply: Any) -> Any:
    """A pipeline's reply, or raise the failure it holds unless the store answered it (an
    error reply: a refusal is an answer; a lost connection is none)."""
    if isinstance(reply, BaseException) and not isinstance(reply, rex.ResponseError):
        raise reply
    return reply


def reply_code(exc: BaseException) -> str | None:
    """The code of a server's error reply (``"OOM"``, ``"READONLY"``), or None. redis-py
    strips it from the message of the exceptions it has a class for (OutOfMemoryError,
    ReadOnlyError, BusyLoadingError...) and keeps it in ``status_code``. A reply refused
    while connecting counts too: redis-py raises a plain ConnectionError from it (a store
    restarted with a large append-only file answers the handshake LOADING until loaded)."""
    cause = exc.__cause__
    if isinstance(exc, rex.ConnectionError) and isinstance(cause, rex.RedisError):
        code = _own_reply_code(cause)
        if code is not None:
            return code
    return _own_reply_code(exc)


def _own_reply_code(exc: BaseException) -> str | None:
    if not isinstance(exc, rex.RedisError):
        return None
    code = getattr(exc, "status_code", None)
    if code:
        return str(code)
    if isinstance(exc, rex.ResponseError):
        return str(exc).split(" ", 1)[0]
    return None


def translate(exc: BaseException) -> StoreError:
    """The store exception for a redis-py (or socket) exception."""
    if isinstance(exc, ClientClosed):
        return StoreUnavailable(str(exc))
    refusal = REFUSALS.get(reply_code(exc) or "")
    if refusal is not None:
        err = StoreUnavailable(f"the store refuses this now: {refusal}: {exc}")
        err.reason = refusal
        return err
    if isinstance(exc, _UNAVAILABLE_TYPES):
        return StoreUnavailable(f"the store is unreachable: {exc}")
    return StoreError(f"store error: {type(exc).__name__}: {exc}")


class Script:
    """A Lua script run with EVALSHA; on NOSCRIPT (first use, server restart,
    another cluster node) it is sent once with EVAL, which caches it again."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.sha = hashlib.sha1(source.encode()).hexdigest()


class RedisConn:
    """The process's one Redis client, single server or Cluster, with error mapping.

    Use :meth:`execute` and :meth:`run` for every command: they map failures to
    the store's exceptions.
    """

    def __init__(self, settings: Settings, url: str, watch_persistence: bool = True) -> None:
        self.settings = settings
        self.url = url
        self.is_cluster = is_cluster_url(url)
        self.client: Redis | RedisCluster = build_client(settings, url)
        # Cluster mode: what closes every node's connections (see cluster_pool.py).
        self._connections: ClusterConnections | None = None
        if isinstance(self.client, RedisCluster):
            self._connections = ClusterConnections()
            self._connections.install(self.client)
        self._limit = asyncio.Semaphore(settings.redis_pool_size) if self.is_cluster else None
        # Single server: concurrent commands share pipelines (see pipeline.py).
        self._auto = (AutoPipeline(self.client)
                      if settings.redis_autopipeline and isinstance(self.client, Redis)
                      else None)
        self._sharded: bool | None = None
        self._closed = False
        # redis-py 8.1's RedisCluster fails ('NoneType' has no 'writelines') when
        # its first commands run concurrently: the first caller initializes it alone.
        self._cluster_ready = False
        self._cluster_init = asyncio.Lock()
        self.durability = Durability(self, settings.durability, settings.redis_timeout_s)
        # Asked again after each new connection whether the store can keep the level
        # (persistence.py; a cluster's masters are asked at start-up only).
        self.persistence = Watch(self, settings.durability, settings.redis_timeout_s)
        pool = getattr(self.client, "connection_pool", None)
        if isinstance(pool, ClosingPool):  # a Redis Cluster always waits: nothing to forget
            pool.on_connect.append(self.durability.forget)
            if watch_persistence:
                pool.on_connect.append(self.persistence.connected)

    async def durable(self, slot_key: str, publish: Publish | None = None) -> None:
        """Wait until the writes answered so far to ``slot_key``'s slot are as durable as
        ``settings.durability`` asks (see durability.py), then send ``publish``;
        StoreUnavailable if not durable. With ``publish``, the caller has asked
        :meth:`Durability.needs_wait` already (its script did not publish): it waits."""
        if publish is None:
            needed = self.durability.needs_wait()
            if not (needed if isinstance(needed, bool) else await needed):
                return
        try:
            await self.durability.wait(slot_key, publish)
        except REDIS_ERRORS as exc:
            err = translate(exc)
            if isinstance(err, StoreUnavailable):
                err.sent = True
            raise err from exc

    async def execute(self, *args: Any) -> Any:
        """One command (``await conn.execute("LRANGE", key, 0, -1)``), failures translated."""
        self._refuse_if_closed()
        try:
            if self._auto is not None:
                return await self._auto.execute(*args)
            if self._limit is None:
                return await self.client.execute_command(*args)
            if not self._cluster_ready:
                await self._initialize_cluster()
            async with asyncio.timeout(self.settings.redis_timeout_s):
                await self._limit.acquire()
            try:
                return await self.client.execute_command(*args)
            finally:
                self._limit.release()
        except REDIS_ERRORS as exc:
            raise self._translate(exc) from exc
        except (AttributeError, TypeError) as exc:
            if is_closed_connection_race(exc):
                raise StoreUnavailable(
                    f"the store is unreachable: the connection closed: {exc}") from exc
            raise

    def _translate(self, exc: BaseException) -> StoreError:
        """:func:`translate`, but an outage the close caused says so: in Cluster mode the
        retry that the close refused fails as 'Redis Cluster cannot be connected'."""
        err = translate(exc)
        if self._closed and isinstance(err, StoreUnavailable) and not isinstance(exc, ClientClosed):
            return StoreUnavailable(CLOSED)
        return err

    def _refuse_if_closed(self) -> None:
        """A closed client sends nothing. (The single server's pool refuses too; redis-py's
        cluster client, closed, would ask for the cluster's nodes again and reconnect.)"""
        if self._closed:
            raise StoreUnavailable(CLOSED)

    async def _initialize_cluster(self) -> None:
        async with self._cluster_init:
            if not self._cluster_ready:
                assert isinstance(self.client, RedisCluster)
                async with asyncio.timeout(self.settings.redis_timeout_s * 2):
                    await self.client.initialize()
                self._cluster_ready = True

    async def run(self, script: Script, keys_: Sequence[str], args: Sequence[Any]) -> Any:
        """Run a Lua script: EVALSHA, and EVAL once if the server lacks it."""
        try:
            return await self.execute("EVALSHA", script.sha, len(keys_), *keys_, *args)
        except StoreError as exc:
            if not isinstance(exc.__cause__, rex.NoScriptError):
                raise
        return await self.execute("EVAL", script.source, len(keys_), *keys_, *args)

    async def pipeline(self, calls: Sequence[tuple[Any, ...]]) -> list[Any]:
        """Send ``calls`` in one pipeline (not a transaction; in Cluster mode split by node)."""
        if not calls:
            return []
        self._refuse_if_closed()
        client = self.client
        try:
            pipe = (client.pipeline() if isinstance(client, RedisCluster)
                    else client.pipeline(transaction=False))
            for call in calls:
                pipe.execute_command(*call)
            replies: list[Any] = await pipe.execute(raise_on_error=True)
        except REDIS_ERRORS as exc:
            raise self._translate(exc) from exc
        return replies

    async def every_master(self, calls: Sequence[tuple[Any, ...]]
                           ) -> list[tuple[str, list[Any]]]:
        """``calls`` in one pipeline on each master (the one server, or every master of a
        cluster): per master, its name and its replies, an error reply as an exception in
        its place (a refused command is an answer). An unreachable store: StoreUnavailable."""
        self._refuse_if_closed()
        client = self.client
        try:
            if isinstance(client, RedisCluster):
                await self.cluster()
                out = []
                for node in client.get_primaries():
                    commands = [PipelineCommand(i, *args) for i, args in enumerate(calls)]
                    await node.execute_pipeline(commands)
                    out.append((str(node.name), [_answer(c.result) for c in commands]))
                return out
            pipe = client.pipeline(transaction=False)
            for args in calls:
                pipe.execute_command(*args)
            replies = [_answer(r) for r in await pipe.execute(raise_on_error=False)]
            return [(redact_url(self.url), replies)]
        except REDIS_ERRORS as exc:
            raise self._translate(exc) from exc

    async def ping(self) -> None:
        """Raise :class:`StoreUnavailable` unless Redis answers (every node, in Cluster mode)."""
        if isinstance(self.client, RedisCluster):
            self._refuse_if_closed()
            try:
                await self.client.ping(target_nodes=RedisCluster.ALL_NODES)
            except REDIS_ERRORS as exc:
                raise self._translate(exc) from exc
            except (AttributeError, TypeError) as exc:
                if is_closed_connection_race(exc):
                    raise StoreUnavailable(f"the store is unreachable: {exc}") from exc
                raise
        else:
            await self.execute("PING")

    def sharded_pubsub(self) -> bool | Coroutine[Any, Any, bool]:
        """Whether the server has SPUBLISH/SSUBSCRIBE: asked once (until then, a coroutine
        that asks it: await it), then remembered (the answer itself: every append asks)."""
        return self._sharded if self._sharded is not None else self._ask_sharded()

    async def _ask_sharded(self) -> bool:
        if self._sharded is None:
            try:
                await self.execute("SPUBLISH", keys.PROBE_CHANNEL, b"")
                sharded = True
            except StoreUnavailable:
                raise
            except StoreError as exc:
                logger.info("the store has no sharded pub/sub (%s): using PUBLISH/SUBSCRIBE", exc)
                sharded = False
            self._sharded = sharded
        return self._sharded

    async def cluster(self) -> RedisCluster:
        """The initialized cluster client (Cluster mode only)."""
        assert isinstance(self.client, RedisCluster)
        self._refuse_if_closed()
        try:
            await self.client.initialize()
        except REDIS_ERRORS as exc:
            raise translate(exc) from exc
        return self.client

    async def aclose(self) -> None:
        """Close every connection; what is still in flight is abandoned (its caller hears
        StoreUnavailable), and nothing is sent after this."""
        if self._closed:
            return
        self._closed = True
        if self._auto is not None:
            await self._auto.aclose()
        await self.durability.aclose()
        await self.persistence.aclose()
        if self._connections is not None:
            await self._connections.aclose()
        await self.client.aclose()
