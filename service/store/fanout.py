"""Cross-instance push: every event appended to a game, delivered to the local
listeners of that game (the WebSocket connections of this instance).

One :class:`Hub` per process holds one subscriber connection per Redis server
(per cluster node owning a subscribed game's slot), never one per WebSocket.
It subscribes to a game's channel when the first local listener of that game
joins and unsubscribes when the last one leaves. With sharded pub/sub
(Redis >= 7, Valkey) it uses SSUBSCRIBE, sent to the node that owns the
channel's slot; otherwise SUBSCRIBE.

Usage::

    async with hub.listen(game_id, callback=take):  # subscribed once entered
        # read the log from the client's seq; meanwhile, take(item) is called with
        # RESYNC (refill from the log by seq) or a Published event (item.seq, item.event)

What a listener gets, in order: :class:`Published` items (seq and the event
bytes, as appended) and :data:`RESYNC`, which says "you may have missed
events": the subscriber connection was lost and is back. After RESYNC, read
the log from the last seq you have: events appended after the RESYNC still
arrive, possibly some you then also read from the log, so skip seqs you
already have. Entering ``listen()`` returns only once
the subscription is confirmed by the server, so "subscribe, then read the log"
misses nothing.

The callback is called for each item, in order, from the hub's reader task; it
must not block (it puts the item into the connection's own bounded outbox), and
an exception it raises is logged and ignored.

Delivery never blocks: each message costs one dict lookup and one callback per
listener of that game.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any, NamedTuple

from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.asyncio.connection import AbstractConnection
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ResponseError

from service.store import keys
from service.store.connection import REDIS_ERRORS, RedisConn, is_closed_connection_race, translate
from service.store.errors import StoreUnavailable
from service.store.resp import ReplyReader

logger = logging.getLogger(__name__)

BACKOFF_BASE_S = 0.05
BACKOFF_CAP_S = 2.0
# A link being closed is cancelled again this often until it ends (see _Link.aclose).
CANCEL_AGAIN_S = 0.5
REROUTE_MIN_INTERVAL_S = 0.5
READ_SIZE = 65536  # bytes read from a subscriber connection at once, at most
CLOSED = "the fan-out hub is closed (the instance is shutting down)"


def stream_reader(conn: AbstractConnection) -> asyncio.StreamReader | None:
    """redis-py's StreamReader of a connected ``conn`` (its parser has nothing buffered:
    the handshake's replies were all read in connect()), or None. It is not a public
    attribute: where a redis-py release names it otherwise, the subscriber reads its
    replies one at a time through the public ``read_response``, slower, not wrong."""
    reader = getattr(conn, "_reader", None)
    return reader if isinstance(reader, asyncio.StreamReader) else None


class Published(NamedTuple):
    """One appended event: its seq and its bytes."""

    seq: int
    event: bytes


class Resync:
    """The type of :data:`RESYNC`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "RESYNC"


RESYNC = Resync()
"""Given to a listener when it may have missed events: refill from the log."""


Callback = Callable[["Published | Resync"], None]


class Listener:
    """One local listener of one game: the callback that takes its Published items
    and RESYNC."""

    def __init__(self, game_id: str, callback: Callback) -> None:
        self.game_id = game_id
        self.callback = callback
        # False until the game's subscription was confirmed with this listener in it.
        self.ready = False

    def deliver(self, item: Published | Resync) -> None:
        self.callback(item)


def _deliver_all(listeners: Iterable[Listener], item: Published | Resync) -> None:
    for listener in tuple(listeners):
        try:
            listener.deliver(item)
        except Exception:  # one listener's bug must not cost the others their events
            logger.exception("fan-out: a listener of game %s failed to take %r",
                             listener.game_id, item)


def parse_payload(payload: bytes) -> Published:
    """``b"<seq> <event>"`` (what the append script publishes) -> Published."""
    seq, _, event = payload.partition(b" ")
    return Published(int(seq), event)


class _Channel:
    __slots__ = ("link", "listeners", "live", "name", "stale")

    def __init__(self, name: bytes) -> None:
        self.name = name
        self.listeners: set[Listener] = set()
        self.link: _Link | None = None
        # Set while the server confirms our subscription: every event published
        # now reaches us.
        self.live = asyncio.Event()
        # The subscription was lost after being live: RESYNC when it is back.
        self.stale = False

    def lost(self) -> None:
        if self.live.is_set():
            self.live.clear()
            self.stale = True

    def confirmed(self) -> None:
        if self.live.is_set():
            return
        behind = []
        for listener in self.listeners:
            if not listener.ready:
                listener.ready = True
            elif self.stale:
                behind.append(listener)
        _deliver_all(behind, RESYNC)
        self.stale = False
        self.live.set()


class _Link:
    """One subscriber connection (to the server, or to one cluster node),
    kept up by one task: connect, subscribe everything, read; on any failure
    reconnect with backoff."""

    def __init__(self, hub: Hub, key: str, factory: Callable[[], AbstractConnection]) -> None:
        self.hub = hub
        self.key = key
        self._factory = factory
        self.channels: dict[bytes, _Channel] = {}
        self._conn: AbstractConnection | None = None
        self._ready = False
        self._write_lock = asyncio.Lock()
        self._unsub_pending: Counter[bytes] = Counter()
        self.failures = 0
        self._reads = 0  # chunks read from the connection (the watchdog's sign of life)
        self._silence: str | None = None  # why the watchdog closed the connection
        self._task = asyncio.create_task(self._run(), name=f"fanout-link-{key}")

    @property
    def connected(self) -> bool:
        return self._ready

    async def add(self, channel: _Channel) -> None:
        self.channels[channel.name] = channel
        channel.link = self
        async with self._write_lock:
            if self._ready:
                await self._send([(self.hub.sub_command, channel.name)])

    async def remove(self, channel: _Channel) -> None:
        if self.channels.get(channel.name) is channel:
            del self.channels[channel.name]
        if channel.link is self:
            channel.link = None
        async with self._write_lock:
            if self._ready and channel.name not in self.channels:
                self._unsub_pending[channel.name] += 1
                await self._send([(self.hub.unsub_command, channel.name)])

    async def resubscribe_unconfirmed(self) -> None:
        async with self._write_lock:
            names = [c.name for c in self.channels.values() if not c.live.is_set()]
            if self._ready and names:
                await self._send([(self.hub.sub_command, name) for name in names])

    async def _send(self, commands: list[tuple[Any, ...]]) -> None:
        conn = self._conn
        if conn is None:
            return
        try:
            await conn.send_packed_command(conn.pack_commands(commands), check_health=False)
        except REDIS_ERRORS as exc:  # the reader sees the broken connection and reconnects
            logger.debug("fan-out %s: send failed: %r", self.key, exc)
        except (AttributeError, TypeError) as exc:
            # redis-py's error for a connection closed under us
            if not is_closed_connection_race(exc):
                raise
            logger.debug("fan-out %s: send failed, the connection closed: %r", self.key, exc)

    async def _run(self) -> None:
        delay = BACKOFF_BASE_S
        while True:
            conn = self._factory()
            try:
                await conn.connect()  # type: ignore[no-untyped-call]
                async with self._write_lock:
                    self._conn = conn
                    self._unsub_pending.clear()
                    names = list(self.channels)
                    if names:
                        await conn.send_packed_command(
                            conn.pack_commands([(self.hub.sub_command, n) for n in names]),
                            check_health=False)
                    self._ready = True
                if self.failures:
                    logger.info("fan-out %s: reconnected after %d failed attempts, "
                                "resubscribing %d games", self.key, self.failures, len(names))
                self.failures = 0
                delay = BACKOFF_BASE_S
                await self._read(conn)
            except asyncio.CancelledError:
                raise
            except REDIS_ERRORS as exc:
                level = logging.WARNING if self.failures == 0 else logging.DEBUG
                logger.log(level, "fan-out %s: subscriber connection lost: %r", self.key, exc)
            except Exception:
                # A bug must not end the fan-out for good: say so loudly, start over.
                logger.exception("fan-out %s: unexpected error; reconnecting", self.key)
            finally:
                self._ready = False
                self._conn = None
                for channel in self.channels.values():
                    channel.lost()
                with contextlib.suppress(Exception):
                    await conn.disconnect(nowait=True)
            self.failures += 1
            self.hub._link_failed(self)
            await asyncio.sleep(delay * random.uniform(0.5, 1.0))
            delay = min(delay * 2, BACKOFF_CAP_S)

    async def _read(self, conn: AbstractConnection) -> None:
        """Read and handle every reply until the connection fails; a watchdog PINGs a
        silent connection and drops it when the PING gets no answer either."""
        self._silence = None
        watchdog = asyncio.create_task(self._watch(conn), name=f"fanout-watchdog-{self.key}")
        try:
            reader = stream_reader(conn)
            if reader is not None:
                await self._read_chunks(reader)
            else:
                await self._read_replies(conn)
        finally:
            watchdog.cancel()

    async def _read_chunks(self, reader: asyncio.StreamReader) -> None:
        """Whatever the socket has, parsed at once (:mod:`service.store.resp`)."""
        replies = ReplyReader()
        while True:
            data = await reader.read(READ_SIZE)
            if not data:
                raise ConnectionError(self._silence or "the store closed the subscriber "
                                      "connection")
            self._reads += 1
            for response in replies.feed(data):
                self._reply(response)

    async def _read_replies(self, conn: AbstractConnection) -> None:
        """One reply at a time, through redis-py's public ``read_response``."""
        while True:
            try:
                response = await conn.read_response(disable_decoding=True)
            except ResponseError as exc:  # an error reply: the connection is still good
                response = exc
            except Exception:
                if self._silence:  # the watchdog closed the connection: say why
                    raise ConnectionError(self._silence) from None
                raise
            self._reads += 1
            self._reply(response)

    def _reply(self, response: Any) -> None:
        if isinstance(response, ResponseError):
            # e.g. MOVED for a subscription: the slot moved
            logger.warning("fan-out %s: the server refused a subscription: %s",
                           self.key, response)
            self.hub._reroute_soon()
        else:
            self._handle(response)

    async def _watch(self, conn: AbstractConnection) -> None:
        """PING after ``ping_interval_s`` of silence; close the connection (the reader
        then fails and the link reconnects) when nothing at all comes within as long
        after the PING."""
        interval = self.hub.ping_interval_s
        while True:
            seen = self._reads
            await asyncio.sleep(interval)
            if self._reads != seen:
                continue
            # Counted before the PING is sent: its answer may be read before the send returns.
            seen = self._reads
            try:
                async with self._write_lock:
                    await conn.send_command("PING", check_health=False)
            except Exception as exc:  # noqa: BLE001 - the reader sees the connection fail
                self._silence = f"PING failed: {exc!r}"
                await conn.disconnect(nowait=True)
                return
            await asyncio.sleep(interval)
            if self._reads == seen:
                self._silence = f"no answer to PING within {interval:g} s"
                await conn.disconnect(nowait=True)
                return

    def _handle(self, response: Any) -> None:
        kind = response[0]
        if kind == b"smessage" or kind == b"message":
            channel = self.channels.get(response[1])
            if channel is not None and channel.listeners:
                try:
                    item = parse_payload(response[2])
                except ValueError:
                    logger.warning("fan-out %s: malformed message on %r", self.key, response[1])
                    return
                _deliver_all(channel.listeners, item)
        elif kind == b"ssubscribe" or kind == b"subscribe":
            channel = self.channels.get(response[1])
            if channel is not None:
                channel.confirmed()
        elif kind == b"sunsubscribe" or kind == b"unsubscribe":
            name = response[1]
            if self._unsub_pending[name] > 0:
                self._unsub_pending[name] -= 1
                if not self._unsub_pending[name]:
                    del self._unsub_pending[name]
            else:
                # Not asked for: the server dropped us (the slot moved to another node).
                channel = self.channels.get(name)
                if channel is not None:
                    logger.info("fan-out %s: the server ended the subscription to %r",
                                self.key, name)
                    channel.lost()
                    self.hub._reroute_soon()

    async def aclose(self) -> None:
        # Cancelled again until it ends: a read through redis-py's read_response (the
        # fallback reader, _read_replies) was seen to outlive its cancellation, reading
        # on (tests/service/store/test_fanout.py hung in its teardown about one run in
        # five); a second cancellation ends it.
        while not self._task.done():
            self._task.cancel()
            await asyncio.wait([self._task], timeout=CANCEL_AGAIN_S)
        with contextlib.suppress(asyncio.CancelledError):
            await self._task


class Hub:
    """The process's one fan-out subscriber; see the module docstring."""

    def __init__(self, redis: RedisConn) -> None:
        settings = redis.settings
        self.redis = redis
        self.subscribe_timeout_s = settings.redis_timeout_s
        self.ping_interval_s = settings.redis_health_check_s
        self.sub_command = "SSUBSCRIBE"
        self.unsub_command = "SUNSUBSCRIBE"
        self._sharded: bool | None = None
        self._channels: dict[bytes, _Channel] = {}
        self._links: dict[str, _Link] = {}
        self._reroute_task: asyncio.Task[None] | None = None
        self._reroute_again = False
        self._last_reroute = 0.0
        self._closed = False
        # The safety net's period: every channel not live on a ready link is
        # re-subscribed, and in a cluster the slot map is checked.
        self.sweep_interval_s = settings.redis_health_check_s
        self._sweep_task: asyncio.Task[None] | None = None

    # -- public --------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def listen(self, game_id: str, callback: Callback) -> AsyncIterator[Listener]:
        """Listen to a game's events, given to ``callback``; entered once the
        subscription is confirmed.

        Raises :class:`StoreUnavailable` if the subscription cannot be made
        within ``subscribe_timeout_s``, or the hub is closed (or closes meanwhile).
        """
        listener = Listener(game_id, callback)
        channel = await self._join(listener)
        try:
            yield listener
        finally:
            await self._leave(channel, listener)

    async def aclose(self) -> None:
        """Close every subscriber connection; a later (or a joining) :meth:`listen` is
        refused with StoreUnavailable."""
        self._closed = True  # from now on no link is made (see _link)
        for task in (self._reroute_task, self._sweep_task):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        while self._links:
            _, link = self._links.popitem()
            await link.aclose()

    # -- joining and leaving -------------------------------------------------

    async def _join(self, listener: Listener) -> _Channel:
        if self._closed:
            raise StoreUnavailable(CLOSED)
        name = keys.game_channel(listener.game_id).encode()
        self._start_sweep()
        channel = self._channels.get(name)
        if channel is None:
            channel = self._channels[name] = _Channel(name)
            channel.listeners.add(listener)
            try:
                link = await self._link_for(name)
                if self._channels.get(name) is channel:
                    await link.add(channel)
            except BaseException:
                await self._leave(channel, listener)
                raise
        else:
            channel.listeners.add(listener)
        if channel.live.is_set():
            listener.ready = True
            return channel
        try:
            async with asyncio.timeout(self.subscribe_timeout_s):
                await channel.live.wait()
        except TimeoutError:
            await self._leave(channel, listener)
            raise StoreUnavailable(
                f"could not subscribe to game {listener.game_id!r} within "
                f"{self.subscribe_timeout_s:g} s: the store is unreachable") from None
        except BaseException:
            await self._leave(channel, listener)
            raise
        listener.ready = True
        return channel

    async def _leave(self, channel: _Channel, listener: Listener) -> None:
        channel.listeners.discard(listener)
        if channel.listeners:
            return
        if self._channels.get(channel.name) is channel:
            del self._channels[channel.name]
        if channel.link is not None:
            await channel.link.remove(channel)

    # -- links ---------------------------------------------------------------

    async def _detect_mode(self) -> None:
        if self._sharded is None:
            sharded = self.redis.sharded_pubsub()
            self._sharded = sharded if isinstance(sharded, bool) else await sharded
            if not self._sharded:
                self.sub_command, self.unsub_command = "SUBSCRIBE", "UNSUBSCRIBE"

    def _connection_factory(self, connection_class: type[AbstractConnection],
                            kwargs: dict[str, Any]) -> Callable[[], AbstractConnection]:
        kwargs = dict(kwargs)
        # Our own health check and reconnect loop; RESP2 so messages are plain replies.
        kwargs.update(health_check_interval=0, retry=Retry(NoBackoff(), 0), protocol=2)
        client_name = f"solitaire-{self.redis.settings.instance_id}-fanout"
        kwargs["client_name"] = client_name[:64].replace(" ", "_")
        for name in ("maint_notifications_config", "oss_cluster_maint_notifications_handler",
                     "maint_notifications_pool_handler"):
            kwargs.pop(name, None)
        return lambda: connection_class(**kwargs)

    def _link(self, key: str, connection_class: type[AbstractConnection],
              kwargs: dict[str, Any]) -> _Link:
        if self._closed:  # a listen() that was joining when the hub closed: nobody would close it
            raise StoreUnavailable(CLOSED)
        link = self._links.get(key)
        if link is None:
            connection = self._connection_factory(connection_class, kwargs)
            link = self._links[key] = _Link(self, key, connection)
        return link

    async def _link_for(self, name: bytes) -> _Link:
        await self._detect_mode()
        client = self.redis.client
        if not isinstance(client, RedisCluster):
            pool = client.connection_pool
            return self._link("server", pool.connection_class, pool.connection_kwargs)
        cluster = await self.redis.cluster()
        try:
            node: ClusterNode | None = cluster.get_node_from_key(name.decode())
        except REDIS_ERRORS as exc:
            raise translate(exc) from exc
        if node is None:
            raise StoreUnavailable(f"no cluster node serves {name!r}")
        return self._link(node.name, node.connection_class, node.connection_kwargs)

    # -- cluster topology changes -------------------------------------------

    def _link_failed(self, link: _Link) -> None:
        if self.redis.is_cluster and self._channels:
            self._reroute_soon()

    def _reroute_soon(self) -> None:
        if not self.redis.is_cluster or self._closed:
            return
        if self._reroute_task is not None and not self._reroute_task.done():
            # One is running: it may have read the slot map before this change. Record
            # that another pass is needed, rather than drop the request.
            self._reroute_again = True
            return
        self._reroute_again = False
        self._reroute_task = asyncio.create_task(self._reroute_until_done(), name="fanout-reroute")

    async def _reroute_until_done(self) -> None:
        """Re-route until a pass finds every channel placed, with backoff between failed
        passes; an unexpected error is logged and the passes go on."""
        delay = BACKOFF_BASE_S
        while not self._closed:
            self._reroute_again = False
            try:
                done = await self._reroute()
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - a bug must not leave listeners deaf for good
                logger.exception("fan-out: re-route failed unexpectedly; trying again")
                done = False
            if done and not self._reroute_again:
                return
            if not done:
                await asyncio.sleep(delay * random.uniform(0.5, 1.0))
                delay = min(delay * 2, BACKOFF_CAP_S)

    async def _reroute(self) -> bool:
        """Refresh the cluster's slot map; move each channel to the node that owns it now.
        False when it could not finish (the refresh failed, a slot had no node)."""
        wait = self._last_reroute + REROUTE_MIN_INTERVAL_S - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)
        self._last_reroute = time.monotonic()
        cluster = self.redis.client
        assert isinstance(cluster, RedisCluster)
        try:
            await cluster.nodes_manager.initialize()
        except REDIS_ERRORS as exc:
            logger.info("fan-out: cluster topology refresh failed (%r): trying again", exc)
            return False
        moved = 0
        complete = True
        for channel in list(self._channels.values()):
            try:
                node = cluster.get_node_from_key(channel.name.decode())
            except REDIS_ERRORS as exc:
                logger.debug("fan-out: no node for %r yet: %r", channel.name, exc)
                complete = False
                continue
            if node is None:
                complete = False
                continue
            if channel.link is not None and channel.link.key == node.name:
                continue
            if channel.link is not None:
                await channel.link.remove(channel)
            channel.lost()
            if self._channels.get(channel.name) is channel and channel.listeners:
                link = self._link(node.name, node.connection_class, node.connection_kwargs)
                await link.add(channel)
                moved += 1
        if moved:
            logger.info("fan-out: moved %d game subscriptions to their new cluster nodes", moved)
        for link in list(self._links.values()):
            await link.resubscribe_unconfirmed()
        for key, link in list(self._links.items()):
            if not link.channels and not link.connected:  # a node gone for good: stop dialling it
                del self._links[key]
                await link.aclose()
        return complete

    # -- the sweep: whatever went wrong, converge -----------------------------

    def _start_sweep(self) -> None:
        if self._sweep_task is None and not self._closed and self.sweep_interval_s > 0:
            self._sweep_task = asyncio.create_task(self._sweep_loop(), name="fanout-sweep")

    async def _sweep_loop(self) -> None:
        while not self._closed:
            await asyncio.sleep(self.sweep_interval_s)
            try:
                await self.sweep()
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - the sweep is the safety net: it must not die
                logger.exception("fan-out: sweep failed; trying again in %g s",
                                 self.sweep_interval_s)

    async def sweep(self) -> None:
        """One pass of the safety net: re-subscribe any channel with listeners that is not
        live on a ready link; in a cluster, also re-route (a failover may have left a
        channel on a demoted master, which neither refuses nor ends the subscription)."""
        if not self._channels:
            return
        for link in list(self._links.values()):
            await link.resubscribe_unconfirmed()
        if self.redis.is_cluster:
            if any(c.link is None or not c.live.is_set() for c in self._channels.values()):
                logger.info("fan-out: sweep found game subscriptions that are not live: re-routing")
            self._reroute_soon()
