"""What the store's cluster tests share: a game's meta, a key's slot, moving a slot as a
resharding does, and a game's subscribers on each node. The fixtures that start a
cluster of a test's own are in this folder's conftest.py."""

from __future__ import annotations

from datetime import UTC, datetime

from service.store import GameMeta, keys
from tests.redis_servers import LocalCluster, sync_client

META = GameMeta(variant="gilbert", seed=1, owner="p1", rules_version="1",
                created_at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC))


def slot(cluster: LocalCluster, key: str) -> int:
    with sync_client(cluster.nodes[0].url) as client:
        return int(client.execute_command("CLUSTER", "KEYSLOT", key))


def migrate_slot(cluster: LocalCluster, slot_: int, source_i: int, target_i: int) -> None:
    """Move a slot and its keys from one node to another, as a resharding does."""
    source, target = cluster.nodes[source_i], cluster.nodes[target_i]
    with sync_client(source.url) as src, sync_client(target.url) as dst:
        source_id = src.execute_command("CLUSTER", "MYID")
        target_id = dst.execute_command("CLUSTER", "MYID")
        dst.execute_command("CLUSTER", "SETSLOT", slot_, "IMPORTING", source_id)
        src.execute_command("CLUSTER", "SETSLOT", slot_, "MIGRATING", target_id)
        names = src.execute_command("CLUSTER", "GETKEYSINSLOT", slot_, 1000)
        if names:
            src.execute_command("MIGRATE", "127.0.0.1", target.port, "", 0, 5000, "KEYS", *names)
        for node in (target, source, *(n for n in cluster.nodes if n not in (source, target))):
            with sync_client(node.url) as client:
                client.execute_command("CLUSTER", "SETSLOT", slot_, "NODE", target_id)


def subscribers(cluster: LocalCluster, game_id: str) -> dict[int, int]:
    """SHARDNUMSUB of the game's channel on each running node (by index)."""
    out = {}
    for i, node in enumerate(cluster.nodes):
        if node.running:
            with sync_client(node.url) as client:
                out[i] = int(
                    client.execute_command("PUBSUB", "SHARDNUMSUB", keys.game_channel(game_id))[1]
                )
    return out
