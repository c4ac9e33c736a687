"""Issue 20, point 2: one service per port.

The workers of an instance share its port among themselves (SO_REUSEPORT), never with
another service: a second start on a port in use, whether each runs one process or
several workers, exits with status 2 and one line saying so, before it starts a store,
and the first instance keeps every connection. Real processes on loopback.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.live import ROOT, TOKEN_SECRET, ServiceProcess


def second_start(port: int, data_dir: Path, workers: int) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SOLITAIRE_PORT": str(port), "SOLITAIRE_DATA_DIR": str(data_dir),
           "SOLITAIRE_WORKERS": str(workers), "SOLITAIRE_TOKEN_SECRET": TOKEN_SECRET,
           "PYTHONPATH": str(ROOT)}
    env.pop("REDIS_URL", None)  # its own embedded store, as a second clone's ./run has
    return subprocess.run([sys.executable, "-m", "service"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(("first", "second"), [(2, 2), (1, 2), (2, 1), (1, 1)],
                         ids=["workers-then-workers", "one-then-workers",
                              "workers-then-one", "one-then-one"])
def test_a_second_start_on_a_port_in_use_exits_2_with_one_line(
    redis_url: str, tmp_path: Path, first: int, second: int
) -> None:
    with ServiceProcess(redis_url, tmp_path / "first", SOLITAIRE_WORKERS=str(first)) as service:
        done = second_start(service.port, tmp_path / "second", second)
        assert done.returncode == 2, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1, lines
        assert f"cannot listen on 127.0.0.1:{service.port}" in lines[0]
        assert "--port" in lines[0]
        assert not (tmp_path / "second" / "redis").exists()  # no store was started
        assert service.process is not None and service.process.poll() is None
        # Every connection still reaches the first instance alone.
        for _ in range(20):
            with socket.create_connection(("127.0.0.1", service.port), timeout=30) as s:
                s.sendall(b"GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                assert s.recv(64).startswith(b"HTTP/1.1 200")


def test_another_programs_port_is_refused_even_when_it_shares_with_reuseport(
    tmp_path: Path,
) -> None:
    """A listener of this user with SO_REUSEPORT (what a supervisor's workers are)."""
    with socket.socket() as other:
        other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        for workers in (2, 1):
            done = second_start(port, tmp_path / f"w{workers}", workers)
            assert done.returncode == 2, done.stderr
            assert len(done.stderr.strip().splitlines()) == 1, done.stderr
            assert f"cannot listen on 127.0.0.1:{port}" in done.stderr
