"""``--workers 2``: two processes of one instance on one port, one embedded store.

Which worker takes a connection is the kernel's choice (SO_REUSEPORT hashes the
addresses): the tests find out by looking up each connection's server-side
socket in the workers' file descriptors, and open connections until both
workers hold one (each try lands on either worker; 40 tries all on one worker
would be a 1 in 2^39 event).
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.live import ServiceProcess
from tests.service.helpers import Api, Socket, apply, game_state, same_state, wait_for, ws_url


def _children(pid: int) -> list[int]:
    out: list[int] = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as f:
            out += [int(c) for c in f.read().split()]
    return out


def workers(supervisor: int) -> list[int]:
    """The supervisor's children that are service workers (not the store)."""
    out = []
    for pid in _children(supervisor):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"service" in cmdline and b"-m" in cmdline:
            out.append(pid)
    return sorted(out)


def _socket_inodes(pid: int) -> set[int]:
    out = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            out.add(int(target[8:-1]))
    return out


def listening(pid: int, port: int) -> bool:
    """Whether process ``pid`` holds a socket listening on ``port``."""
    inodes = set()
    with open("/proc/net/tcp") as f:
        for line in f.readlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and int(fields[1].split(":")[1], 16) == port:  # 0A: LISTEN
                inodes.add(int(fields[9]))
    return bool(inodes & _socket_inodes(pid))


def owner_of(client_port: int, server_port: int, pids: list[int]) -> int | None:
    """The worker holding the server side of the TCP connection from ``client_port``."""
    inode = None
    with open("/proc/net/tcp") as f:
        for line in f.readlines()[1:]:
            fields = line.split()
            local, remote = fields[1], fields[2]
            if (
                int(local.split(":")[1], 16) == server_port
                and int(remote.split(":")[1], 16) == client_port
            ):
                inode = int(fields[9])
    if inode is None:
        return None
    for pid in pids:
        if inode in _socket_inodes(pid):
            return pid
    return None


@pytest.fixture
def service(tmp_path: Path) -> Iterator[ServiceProcess]:
    with ServiceProcess(None, tmp_path / "svc", SOLITAIRE_WORKERS="2") as process:
        yield process


async def both_workers_listening(service: ServiceProcess) -> list[int]:
    """The two workers' pids, once both listen: the supervisor starts them one after the other."""
    assert service.process is not None
    supervisor = service.process.pid
    return await wait_for(lambda: (lambda now: now if len(now) == 2
                                   and all(listening(p, service.port) for p in now) else None)(
                              workers(supervisor)), what="both workers listening")  # type: ignore[no-any-return]


async def _socket_on_each_worker(
    session: aiohttp.ClientSession, service: ServiceProcess, game_id: str, token: str
) -> dict[int, tuple[Socket, list[dict[str, Any]]]]:
    """A socket past its hello on each worker (by pid), with the messages of its hello."""
    assert service.process is not None
    pids = await both_workers_listening(service)
    found: dict[int, tuple[Socket, list[dict[str, Any]]]] = {}
    for _ in range(40):
        ws = await session.ws_connect(ws_url(service.url, game_id), max_msg_size=0)
        sock = Socket(ws)
        client_port = ws.get_extra_info("sockname")[1]
        pid = await wait_for(lambda port=client_port: owner_of(port, service.port, pids),
                             what="the connection's worker")
        if pid in found:
            await ws.close()
            continue
        found[pid] = (sock, await sock.hello(token))
        if len(found) == 2:
            return found
    raise AssertionError("40 connections all went to one worker")


async def test_a_game_played_through_both_workers_stays_consistent(service: ServiceProcess) -> None:
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as session:
        api = Api(session, service.url)
        _, token = await api.player()  # made by one worker, its token verified by both
        game_id = (await api.create(token, "gilbert", seed=4242))["game_id"]
        on_worker = await _socket_on_each_worker(session, service, game_id, token)
        sockets = [sock for sock, _ in on_worker.values()]
        got = {id(sock): hello for sock, hello in on_worker.values()}  # snapshot at seq 0, synced
        try:
            seq = 0
            for step in range(12):
                moves = await api.moves(game_id, token)
                assert moves["seq"] == seq
                command = (
                    {"type": "undo"}
                    if step % 3 == 2
                    else moves["moves"][step % len(moves["moves"])]
                )
                sock = sockets[step % 2]  # the commands go through each worker in turn
                cid = await sock.command(command, expected_seq=seq)
                got[id(sock)] += await sock.until(lambda m, cid=cid: m.get("command_id") == cid)
                assert got[id(sock)][-1]["type"] == "ack", got[id(sock)][-1]
                seq += 1
            final = await api.state(game_id, token)
            assert final["seq"] == 12
            assert [e["seq"] for e in await api.events(game_id, token)] == list(range(1, 13))
            for sock in sockets:  # every diff reached both workers' sockets, once and in order
                if not any(m["type"] == "diff" and m["seq"] == 12 for m in got[id(sock)]):
                    got[id(sock)] += await sock.until(
                        lambda m: m["type"] == "diff" and m["seq"] == 12
                    )
                diffs = [m for m in got[id(sock)] if m["type"] == "diff"]
                assert [d["seq"] for d in diffs] == list(range(1, 13))
                assert got[id(sock)][0]["type"] == "snapshot" and got[id(sock)][0]["seq"] == 0
                state = game_state(got[id(sock)][0]["state"])
                for d in diffs:
                    state = apply(state, d)
                assert same_state(state, game_state(final))
        finally:
            for sock in sockets:
                await sock.ws.close()


async def test_a_worker_that_dies_is_reported_and_replaced_and_sigterm_stops_them_all(
        service: ServiceProcess) -> None:
    assert service.process is not None
    supervisor = service.process.pid
    pids = await both_workers_listening(service)
    os.kill(pids[0], signal.SIGKILL)
    replaced = await wait_for(lambda: (lambda now: now if len(now) == 2 and pids[0] not in now
                                       and all(listening(p, service.port) for p in now) else None)(
                                  workers(supervisor)), what="a new worker listening")
    assert pids[1] in replaced
    assert f"(pid {pids[0]}) exited with -9; restarting it" in service.log()
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as session:
        api = Api(session, service.url)
        for _ in range(6):  # whichever worker answers, the instance works
            _, token = await api.player()
            await api.create(token, "gate", seed=1)
    everything = _children(supervisor)  # the workers and the store
    assert service.stop(signal.SIGTERM) == 0
    for pid in everything:
        assert (
            not Path(f"/proc/{pid}").exists()
            or b"Z" in Path(f"/proc/{pid}/stat").read_bytes().split()[2]
        )
    log = service.log()
    assert "all workers stopped" in log and "embedded store stopped" in log
    assert log.count("shutting down: closing WebSockets with 1001") == 2


def test_a_worker_gets_the_supervisors_settings_through_its_environment() -> None:
    """Flags given to the supervisor reach its workers as environment variables."""
    from service.settings import Settings

    given = Settings.from_args(
        [
            "--port",
            "9123",
            "--rate-limit-per-s",
            "7.5",
            "--redis-autopipeline",
            "false",
            "--data-dir",
            "/srv/x",
            "--workers",
            "3",
            "--trusted-proxies",
            "10.0.0.1",
        ],
        environ={},
    )
    assert Settings.from_env(given.to_env()) == given
