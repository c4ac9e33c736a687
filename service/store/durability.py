"""Durable acknowledgements: a write is acknowledged only once the store has it
as durably as ``settings.durability`` asks.

- ``memory``: when the script returned (in the store's memory; a crash of the
  store, or a failover to a replica that had not received it, may lose it);
- ``local``: also fsynced to the store's append-only file (``WAITAOF 1 0``);
- ``replicated``: also received by at least one replica (``WAITAOF 1 0`` then
  ``WAIT 1``): a failover to that replica keeps it. (Not ``WAITAOF 1 1``, which
  also waits for the replica's own fsync: a replica reports that offset when
  asked *before* its fsync, then only once a second, so every wait took ~1 s.)

``WAITAOF`` waits for the writes *of its own connection*, and a pooled client
sends a command on any connection. So a wait writes a small marker key in the
same slot as the write it covers, then ``WAITAOF``, both on one connection: the
store fsyncs (and replicates) in order, so once the marker is durable so is
every write the store answered before it.

Group commit: callers that wait at the same time share one marker and one
``WAITAOF`` (per cluster node): while one wait is in flight the next callers
gather into the next one.

Diffs, like acks, go out only once durable: above ``memory`` the append script
does not publish its event; the batch publishes its callers' events, in one
pipeline, after the wait succeeded. A publish lost to a crash between the two
is healed by the listeners themselves: the next event shows them a gap, which
they fill from the log.

A store that fsyncs before it replies needs no wait for ``local``. With
``appendonly yes`` and ``appendfsync always``, Redis and Valkey write and fsync
the append-only file once per event-loop cycle, before they send that cycle's
replies and published messages ("must be done before handleClientsWithPendingWrites,
in case of appendfsync=always", in their ``beforeSleep``). So the script's own
reply already means "fsynced", and a message it publishes reaches no listener
before that: the append publishes in its script and nothing waits, as under
``memory``. The store is asked (``CONFIG GET``, and ``INFO persistence`` for an
append-only file rewrite in progress, during which the server does not count
writes as fsynced) at most every :data:`CHECK_EVERY_S`, and again after any new
connection to it (:meth:`Durability.forget`: a restarted or replaced store may run without
an append-only file, and the old answer must not vouch for it); a store that does not
answer (``CONFIG`` renamed away), any other setting, a rewrite in progress, or a
Redis Cluster (not asked node by node) keeps the ``WAITAOF``.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from redis.asyncio.cluster import PipelineCommand, RedisCluster
from redis.exceptions import ResponseError

from service.settings import DURABILITY_LEVELS, one_of
from service.store.errors import StoreUnavailable

logger = logging.getLogger(__name__)

# level -> (local fsyncs, replicas that must have the write)
LEVELS: dict[str, tuple[int, int] | None] = {"memory": None, "local": (1, 0), "replicated": (1, 1)}
MARKER_TTL_MS = 60_000
# An error reply that refuses the wait itself (no append-only file, a command not allowed
# or unknown), not the marker's write.
_WAIT_REFUSED = re.compile(r"\bwait(aof)?\b|appendonly", re.IGNORECASE)
CHECK_EVERY_S = 10.0  # how long a store's "fsynced before it replies" answer is trusted


class Publish(NamedTuple):
    """An event to publish once durable: ``b"<seq> <event>"`` on the game's channel."""

    channel: str
    payload: bytes
    sharded: bool  # SPUBLISH (a cluster's sharded pub/sub) rather than PUBLISH


@dataclass
class _Batch:
    slot_key: str
    future: asyncio.Future[None]
    publishes: list[Publish] = field(default_factory=list)


@dataclass
class Durability:
    """``await durability.wait(slot_key)`` after a write to ``slot_key``'s slot."""

    conn: Any  # RedisConn (not imported: connection.py builds this)
    level: str
    timeout_s: float
    _forming: dict[str, _Batch] = field(default_factory=dict)
    _running: set[str] = field(default_factory=set)
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)
    _fsyncs_before_reply: bool = False
    _checked_at: float | None = None
    _heard: bool = False  # an answer was had (the first is logged, later ones on change)
    _asking: asyncio.Future[bool] | None = None  # the one question in flight
    _closed: bool = False
    generation: int = 0  # counts :meth:`forget`: a write compares it across its call
    _refusal: str | None = None  # the last refusal logged (see _refused)

    def __post_init__(self) -> None:
        self.need = LEVELS[one_of("durability", self.level, DURABILITY_LEVELS)]

    def forget(self) -> None:
        """A connection to the store was made (or made again): it may reach another store
        process than the one that was asked how it fsyncs. Ask again before a reply is
        taken for an fsync; a write sent meanwhile sees :attr:`generation` change."""
        self._checked_at = None
        self.generation += 1

    def needs_wait(self) -> bool | Coroutine[Any, Any, bool]:
        """Whether a write, once the store answered it, still needs :meth:`wait` (and
        its event published after it) to be as durable as the level asks: the answer
        itself when it is known, a coroutine that asks the store when it is not (await
        it). Every write asks: the usual answer costs no coroutine."""
        if self.need is None:
            return False
        # is_cluster, not isinstance(client, RedisCluster): a check of redis-py's Protocol
        # classes, which cost most of this call, on every write.
        if self.need != (1, 0) or self.conn.is_cluster:
            return True
        checked_at = self._checked_at
        # time.monotonic, not the loop's time: with Python 3.11 every get_running_loop is
        # a getpid system call, and every write at ``local`` asks.
        if checked_at is not None and time.monotonic() - checked_at < CHECK_EVERY_S:
            return not self._fsyncs_before_reply
        return self._ask()

    async def _ask(self) -> bool:
        # One question at a time: the writers that arrive meanwhile share its answer.
        if self._asking is None:
            self._asking = asyncio.ensure_future(self._store_fsyncs_before_reply())
            self._asking.add_done_callback(self._answered)
        return not await asyncio.shield(self._asking)

    def _answered(self, asking: asyncio.Future[bool]) -> None:
        self._asking = None
        if not asking.cancelled():
            self._fsyncs_before_reply = asking.result()
            self._checked_at = time.monotonic()
            self._heard = True

    async def _store_fsyncs_before_reply(self) -> bool:
        """``appendonly yes``, ``appendfsync always`` and no append-only file rewrite in
        progress (see the module's docstring); False when the store will not say."""
        try:
            aof, fsync, info = await self._pipeline("", [
                ("CONFIG", "GET", "appendonly"), ("CONFIG", "GET", "appendfsync"),
                ("INFO", "persistence")])
        except Exception as exc:  # noqa: BLE001 - not an error: the WAITAOF path is safe
            if not self._heard:
                logger.info("durability local: the store did not say how it fsyncs (%s: %s); "
                            "each acknowledgement waits for WAITAOF", type(exc).__name__, exc)
            return False
        answer = (_config_value(aof) == "yes" and _config_value(fsync) == "always"
                  and _info_field(info, "aof_rewrite_in_progress") == "0")
        if answer != self._fsyncs_before_reply or not self._heard:
            logger.info("durability local: %s", "the store fsyncs before it replies "
                        "(appendfsync always): no WAITAOF" if answer else
                        "the store does not fsync before it replies now: each "
                        "acknowledgement waits for WAITAOF")
        return answer

    async def wait(self, slot_key: str, publish: Publish | None = None) -> None:
        """``slot_key``: a marker key in the slot of the writes to cover (it is written).
        Return once every write the store answered before this call is durable, and
        ``publish`` (if any) was sent; raise StoreUnavailable (``sent``: the write
        happened, its durability is unknown; its event is then not published)."""
        if self.need is None:
            return
        if self._closed:
            raise self._closing()
        group = self._group_of(slot_key)
        batch = self._forming.get(group)
        if batch is None:
            future = asyncio.get_running_loop().create_future()
            batch = self._forming[group] = _Batch(slot_key, future)
            batch.future.add_done_callback(_retrieve)
            if group not in self._running:
                self._running.add(group)
                task = asyncio.ensure_future(self._run(group))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
        if publish is not None:
            batch.publishes.append(publish)
        # Shielded: one caller's deadline must not cancel the wait the others share.
        await asyncio.shield(batch.future)

    def _group_of(self, slot_key: str) -> str:
        client = self.conn.client
        if isinstance(client, RedisCluster):
            try:
                node = client.get_node_from_key(slot_key)
            except Exception:  # noqa: BLE001 - no slot map yet: a group of its own
                return slot_key
            return slot_key if node is None else str(node.name)
        return ""

    async def _run(self, group: str) -> None:
        try:
            while (batch := self._forming.pop(group, None)) is not None:
                try:
                    await self._settle(batch)
                finally:
                    if not batch.future.done():  # cancelled: the store is closing
                        batch.future.set_exception(self._closing())
        finally:
            self._running.discard(group)

    async def _settle(self, batch: _Batch) -> None:
        """Wait for ``batch``'s marker to be durable, publish its events, and tell its
        callers (through its future) how it went."""
        try:
            async with asyncio.timeout(self.timeout_s * 2):
                await self._sync(batch.slot_key)
        except StoreUnavailable as exc:
            exc.sent = True
            batch.future.set_exception(exc)
        except Exception as exc:  # noqa: BLE001 - every waiter hears of it
            self._refused(exc)
            err = StoreUnavailable(f"the store did not confirm the write as durable "
                                   f"({self.level}): {type(exc).__name__}: {exc}")
            err.sent = True
            batch.future.set_exception(err)
        else:
            self._refusal = None
            try:
                if batch.publishes:
                    await self._publish(batch.slot_key, batch.publishes)
            finally:  # durable, even if the close cut the publish short (see _publish)
                batch.future.set_result(None)

    def _refused(self, exc: BaseException) -> None:
        """A wait the store refused (an error reply: no append-only file any more, WAITAOF
        not allowed), not one it did not answer in time: said in the log, once a reason,
        since every write is 503 "unknown outcome" until the store or the setting changes."""
        if not isinstance(exc, ResponseError) or not _WAIT_REFUSED.search(str(exc)):
            return  # a write refused (OOM, READONLY...): the caller's 503 says why
        reason = f"{type(exc).__name__}: {exc}"
        if reason != self._refusal:
            self._refusal = reason
            logger.error("durability %s: the store refuses the wait that acknowledges a write "
                         "(%s): every write is answered 503 'unknown outcome' (it may have been "
                         "done) until the store has appendonly yes and appendfsync always "
                         "again, or the service runs with --durability memory",
                         self.level, reason)

    async def _sync(self, slot_key: str) -> None:
        assert self.need is not None
        numlocal, numreplicas = self.need
        marker = slot_key  # the caller's marker key, in the slot of the writes it covers
        timeout_ms = max(1, int(self.timeout_s * 1000 * 0.8))
        calls: list[tuple[Any, ...]] = [("SET", marker, "1", "PX", MARKER_TTL_MS),
                                        ("WAITAOF", numlocal, 0, timeout_ms)]
        if numreplicas:
            calls.append(("WAIT", numreplicas, timeout_ms))
        replies = await self._pipeline(slot_key, calls)
        local = int(replies[1][0])
        replicas = int(replies[2]) if numreplicas else 0
        if local < numlocal or replicas < numreplicas:
            raise StoreUnavailable(
                f"the store did not confirm the write as {self.level} within {timeout_ms} ms "
                f"(fsynced locally: {'yes' if local else 'no'}; replicas with it: {replicas}, "
                f"needed {numreplicas})")

    async def _pipeline(self, slot_key: str, calls: list[tuple[Any, ...]]) -> list[Any]:
        """Send ``calls`` in order on one connection to the node of ``slot_key``'s slot."""
        client = self.conn.client
        if isinstance(client, RedisCluster):
            node = client.get_node_from_key(slot_key)
            if node is None:
                raise StoreUnavailable(f"no node of the cluster is known to serve {slot_key!r} "
                                       "yet (its slot map is not loaded)")
            commands = [PipelineCommand(i, *args) for i, args in enumerate(calls)]
            limit: asyncio.Semaphore | None = self.conn._limit  # the pool's size holds here too
            if limit is not None:
                await limit.acquire()
            try:
                await node.execute_pipeline(commands)
            finally:
                if limit is not None:
                    limit.release()
            for command in commands:
                if isinstance(command.result, BaseException):
                    raise command.result
            return [command.result for command in commands]
        else:
            pipe = client.pipeline(transaction=False)
            for args in calls:
                pipe.execute_command(*args)
            return list(await pipe.execute())

    async def _publish(self, slot_key: str, publishes: list[Publish]) -> None:
        """Send the batch's diffs; a failure is logged, not raised: the events are durable,
        and the listeners fill the gap from the log at the game's next event."""
        calls = [("SPUBLISH" if p.sharded else "PUBLISH", p.channel, p.payload) for p in publishes]
        try:
            async with asyncio.timeout(self.timeout_s):
                await self._pipeline(slot_key, calls)
        except Exception as exc:  # noqa: BLE001 - see the docstring
            logger.warning("%d durable event(s) not published (%s: %s); listeners will "
                           "fill the gap from the log", len(calls), type(exc).__name__, exc)

    async def aclose(self) -> None:
        """Stop every wait: its callers hear StoreUnavailable (the store is closing), and
        later calls of :meth:`wait` too."""
        self._closed = True
        if self._asking is not None:
            self._asking.cancel()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        # The batches gathering behind the cancelled ones: nothing will run them now.
        for batch in self._forming.values():
            if not batch.future.done():
                batch.future.set_exception(self._closing())
        self._forming.clear()

    def _closing(self) -> StoreUnavailable:
        err = StoreUnavailable(f"the store client is closing (the instance is shutting down): "
                               f"the write was sent, but whether it is durable ({self.level}) "
                               f"is not known")
        err.sent = True
        return err


def _config_value(reply: Any) -> str:
    """The value in a ``CONFIG GET`` reply (a list under RESP2, a map under RESP3)."""
    values = list(reply.values()) if isinstance(reply, dict) else list(reply)[1::2]
    value = values[0] if values else b""
    return value.decode() if isinstance(value, bytes) else str(value)


def _info_field(info: Any, name: str) -> str | None:
    """One field of an ``INFO`` reply (parsed into a dict by redis-py, or raw text)."""
    if isinstance(info, dict):
        value = info.get(name)
        return None if value is None else str(value)
    text = info.decode() if isinstance(info, bytes) else str(info)
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key == name:
            return value.strip()
    return None


def _retrieve(future: asyncio.Future[None]) -> None:
    if not future.cancelled():
        future.exception()  # a batch all of whose waiters gave up: not an unhandled error
