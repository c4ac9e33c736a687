"""Issue 20, point 3: the durability level must fit the store, asked of the store.

On real stores: a start under ``local`` or ``replicated`` against a store that cannot
confirm writes (no append-only file, ``appendfsync no``, WAITAOF or WAIT refused) exits
2 with one line naming the setting and both ways out; ``everysec`` starts with a warning
giving its cost; ``replicated`` without a replica starts, and ``/readyz`` says why it is
not ready until one is attached; a store whose persistence changes while the service
runs (switched off, or restarted without it) is named in the log.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest

from service.store.embedded import EmbeddedServer
from service.store.persistence import EVERYSEC_FIGURES
from tests.live import ROOT, ServiceProcess
from tests.redis_servers import sync_client

Factory = Callable[..., EmbeddedServer]


def refused_start(url: str, data_dir: Path, durability: str) -> str:
    """Start the service; it must exit 2. Its whole log (one line)."""
    service = ServiceProcess(url, data_dir, SOLITAIRE_DURABILITY=durability)
    with pytest.raises(RuntimeError, match="exited with 2"):
        service.start()
    lines = service.log().strip().splitlines()
    assert len(lines) == 1, lines
    assert " ERROR " in lines[0]
    return lines[0]


def assert_names_both_ways_out(line: str, durability: str) -> None:
    assert f"durability {durability}" in line
    assert "--durability memory" in line and "SOLITAIRE_DURABILITY=memory" in line
    assert "appendonly yes and appendfsync always" in line


@pytest.mark.parametrize("durability", ["local", "replicated"])
def test_a_store_without_an_append_only_file_stops_the_start(
    server_factory: Factory, tmp_path: Path, durability: str
) -> None:
    server = server_factory("noaof", config={"appendonly": "no"})
    line = refused_start(server.url, tmp_path / "service", durability)
    assert_names_both_ways_out(line, durability)
    assert "aof_enabled:0" in line


def test_a_store_that_never_fsyncs_stops_the_start(server_factory: Factory, tmp_path: Path
                                                  ) -> None:
    server = server_factory("nofsync", appendfsync="no")
    line = refused_start(server.url, tmp_path / "service", "local")
    assert_names_both_ways_out(line, "local")
    assert "appendfsync no" in line


@pytest.mark.parametrize(("durability", "command"), [("local", "waitaof"),
                                                     ("replicated", "wait")])
def test_a_store_that_refuses_the_wait_stops_the_start(
    server_factory: Factory, tmp_path: Path, durability: str, command: str
) -> None:
    server = server_factory("managed")
    with sync_client(server.url) as client:  # as a managed store's command list may
        client.execute_command("ACL", "SETUSER", "default", f"-{command}")
    line = refused_start(server.url, tmp_path / "service", durability)
    assert f"durability {durability}" in line and command.upper() in line and "refuses" in line
    assert "--durability" in line


def test_everysec_under_local_starts_with_a_warning_that_gives_the_cost(
    server_factory: Factory, tmp_path: Path
) -> None:
    server = server_factory("everysec", appendfsync="everysec")
    with ServiceProcess(server.url, tmp_path / "service") as service:
        service.stop()
        log = service.log()
    warnings = [line for line in log.splitlines() if " WARNING " in line]
    assert len(warnings) == 1, warnings
    assert "appendfsync everysec" in warnings[0] and "next fsync" in warnings[0]
    assert EVERYSEC_FIGURES in warnings[0] and "ms" in EVERYSEC_FIGURES
    assert "set appendfsync always" in warnings[0]
    assert "appendfsync everysec" in next(line for line in log.splitlines() if "store:" in line)


def test_always_under_local_starts_without_a_warning(server_factory: Factory, tmp_path: Path
                                                     ) -> None:
    server = server_factory("always")
    with ServiceProcess(server.url, tmp_path / "service") as service:
        service.stop()
        log = service.log()
    assert " WARNING " not in log and " ERROR " not in log
    assert "append-only file on, appendfsync always" in log


def readyz(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url + "/readyz", timeout=30) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def start_unready(service: ServiceProcess) -> None:
    """Start it without waiting for /readyz (which it will not pass)."""
    service.data_dir.mkdir(parents=True, exist_ok=True)
    with open(service.log_path, "ab") as log:
        service.process = subprocess.Popen([sys.executable, "-m", "service"], cwd=ROOT,
                                           env=service.env, stdout=log, stderr=subprocess.STDOUT)


def test_replicated_without_a_replica_is_not_ready_and_says_why_until_one_is_attached(
    server_factory: Factory, tmp_path: Path
) -> None:
    primary = server_factory("primary", port=0)
    service = ServiceProcess(primary.url, tmp_path / "service", SOLITAIRE_DURABILITY="replicated")
    start_unready(service)
    try:
        for _ in range(300):  # bounded: until it answers
            try:
                status, body = readyz(service.url)
                break
            except OSError:
                time.sleep(0.1)
        assert status == 503
        message = json.loads(body)["error"]["message"]
        assert "no replica attached" in message and "connected_slaves:0" in message
        replica = server_factory("replica", port=0)
        with sync_client(replica.url) as client:
            client.execute_command("REPLICAOF", "127.0.0.1", primary.port)
        for _ in range(300):  # bounded: until the replica is attached
            if readyz(service.url)[0] == 200:
                break
            time.sleep(0.1)
        assert readyz(service.url)[0] == 200
    finally:
        service.stop()
    assert "has no replica attached" in service.log()  # said at start, as a warning


def wait_for_line(service: ServiceProcess, text: str) -> str:
    for _ in range(300):  # bounded
        line = next((line for line in service.log().splitlines() if text in line), None)
        if line is not None:
            return line
        time.sleep(0.1)
    raise AssertionError(f"no log line with {text!r}:\n{service.log()}")


def post(url: str, path: str, body: dict[str, object], token: str | None = None
         ) -> tuple[int, dict[str, object]]:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url + path, data=json.dumps(body).encode(), method="POST",
                                     headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_an_append_only_file_switched_off_while_running_is_named_in_the_log(
    server_factory: Factory, tmp_path: Path
) -> None:
    server = server_factory("everysec", appendfsync="everysec")  # each write waits: WAITAOF
    with ServiceProcess(server.url, tmp_path / "service") as service:
        status, player = post(service.url, "/v1/players", {"name": "ann"})
        assert status == 201
        token = str(player["token"])
        assert post(service.url, "/v1/games", {"variant": "gilbert"}, token)[0] == 201
        with sync_client(server.url) as client:
            client.config_set("appendonly", "no")
        status, body = post(service.url, "/v1/games", {"variant": "gilbert"}, token)
        assert status == 503 and "unknown outcome" in json.dumps(body)
        line = wait_for_line(service, "refuses the wait")
    assert " ERROR " in line and "appendonly is disabled" in line
    assert "--durability memory" in line and "appendonly yes and appendfsync always" in line


def test_a_store_restarted_without_an_append_only_file_is_named_in_the_log(
    server_factory: Factory, tmp_path: Path
) -> None:
    first = server_factory("first", port=0)
    with ServiceProcess(first.url, tmp_path / "service") as service:
        status, player = post(service.url, "/v1/players", {"name": "ann"})
        assert status == 201
        first.kill()
        second = server_factory("second", port=first.port, config={"appendonly": "no"})
        assert second.url == first.url
        for _ in range(50):  # bounded: until the service has reconnected and asked
            post(service.url, "/v1/games", {"variant": "gilbert"}, str(player["token"]))
            if "can no longer confirm writes" in service.log():
                break
            time.sleep(0.1)
        line = wait_for_line(service, "can no longer confirm writes")
    assert " ERROR " in line and "aof_enabled:0" in line and "--durability memory" in line


def test_replicated_on_the_cluster_with_a_replica_per_master_starts_and_is_ready(
    cluster_url: str, tmp_path: Path
) -> None:
    """Every master is asked (the test cluster: three, each with a replica, AOF always)."""
    with ServiceProcess(cluster_url, tmp_path / "service",
                        SOLITAIRE_DURABILITY="replicated") as service:
        assert readyz(service.url)[0] == 200
        service.stop()
        log = service.log()
    assert "append-only file on, appendfsync always on 3 masters" in log
    assert " WARNING " not in log and " ERROR " not in log
