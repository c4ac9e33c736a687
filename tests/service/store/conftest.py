"""Clusters of a test's own, for the tests that change a cluster's slot layout or fail
its nodes over (the suite's shared cluster, ``redis_cluster``, must stay as it is)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.redis_servers import LocalCluster


def own_cluster(tmp_path: Path, **options: Any) -> Iterator[LocalCluster]:
    with LocalCluster(tmp_path / "cluster", **options) as cluster:
        yield cluster


@pytest.fixture
def private_cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    """Three masters, no replicas."""
    yield from own_cluster(tmp_path)


@pytest.fixture
def cluster_with_replicas(tmp_path: Path) -> Iterator[LocalCluster]:
    """Three masters with a replica each, failing over after 2 s without an answer."""
    yield from own_cluster(tmp_path, replicas=1, node_timeout_ms=2000)
