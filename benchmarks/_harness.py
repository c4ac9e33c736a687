"""What the load benchmarks share: a store server (or a three-master cluster),
service processes, CPU and memory of processes, percentiles."""

from __future__ import annotations

import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from service.store.embedded import ServerProcess  # noqa: E402
from tests.live import free_port  # noqa: E402


def percentile(values: Sequence[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[k]


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


@contextlib.contextmanager
def store_server(url: str | None = None) -> Iterator[str]:
    """A store for the run: ``url`` if given, else a fresh valkey-server on a loopback port
    (AOF on)."""
    if url:
        yield url
        return
    with tempfile.TemporaryDirectory(prefix="bench-redis-") as tmp:
        server = ServerProcess(
            Path(tmp), port=0, config={"appendonly": "yes", "appendfsync": "everysec", "save": ""}
        )
        server.start()
        try:
            yield server.url
        finally:
            server.stop()


class Store(str):
    """A store's REDIS_URL that also knows the pids of its server processes."""

    pids: list[int]


@contextlib.contextmanager
def store(
    url: str | None = None, cluster: bool = False, appendfsync: str = "everysec", replicas: int = 0
) -> Iterator[Store]:
    """:func:`store_server`, or with ``cluster`` a three-master Redis Cluster on
    loopback (``tests.redis_servers.LocalCluster``, as in the tests; AOF on,
    ``appendfsync everysec``, like the single server, and like the deployment's
    Redis). Yields its REDIS_URL."""
    if url:
        yield _store(url, [])
        return
    if not cluster:
        with tempfile.TemporaryDirectory(prefix="bench-redis-") as tmp:
            server = ServerProcess(
                Path(tmp),
                port=0,
                config={"appendonly": "yes", "appendfsync": appendfsync, "save": ""},
            )
            server.start()
            try:
                yield _store(server.url, [server.pid or 0])
            finally:
                server.stop()
        return
    from tests.redis_servers import LocalCluster

    with tempfile.TemporaryDirectory(prefix="bench-cluster-") as tmp:
        nodes = LocalCluster(Path(tmp), appendonly=True, appendfsync=appendfsync, replicas=replicas)
        nodes.start()
        try:
            yield _store(nodes.url, [node.pid or 0 for node in nodes])
        finally:
            nodes.stop()


def _store(url: str, pids: list[int]) -> Store:
    out = Store(url)
    out.pids = pids
    return out


# Every benchmark client comes from 127.0.0.1: the per-address limits (and the
# per-player creation limits) would measure the limits, not the service.
LIFTED_PER_ADDRESS_LIMITS = {
    "SOLITAIRE_READ_RATE_PER_S": "1000000",
    "SOLITAIRE_READ_BURST": "1000000",
    "SOLITAIRE_CREATE_RATE_PER_S": "1000000",
    "SOLITAIRE_CREATE_BURST": "1000000",
    "SOLITAIRE_CREATE_PER_ADDRESS_RATE_PER_S": "1000000",
    "SOLITAIRE_CREATE_PER_ADDRESS_BURST": "1000000",
    "SOLITAIRE_SIGNUP_PER_ADDRESS_RATE_PER_S": "1000000",
    "SOLITAIRE_SIGNUP_PER_ADDRESS_BURST": "1000000",
    "SOLITAIRE_OPEN_GAMES_PER_PLAYER": "1000000",
    "SOLITAIRE_WS_PER_ADDRESS": "1000000",
    "SOLITAIRE_WATCHERS_PER_GAME": "1000000",
    "SOLITAIRE_SOLVER_SEARCHES_PER_ADDRESS": "1000000",
    "SOLITAIRE_SOLVER_SEARCHES_PER_PLAYER": "1000000",
}


class Instances(list[str]):
    """The base URLs of service processes, and ``pids`` (in the same order)."""

    pids: list[int]


NOACCEL = ROOT / "benchmarks" / "noaccel"


def python_path(accel: bool = True, root: Path = ROOT) -> str:
    """PYTHONPATH for a server process; without ``accel``, uvloop and hiredis are unimportable."""
    return str(root) if accel else f"{NOACCEL}{os.pathsep}{root}"


@contextlib.contextmanager
def service_processes(
    redis_url: str,
    count: int = 1,
    accel: bool = True,
    workers: int = 1,
    profile: Path | None = None,
    root: Path = ROOT,
    **env: str,
) -> Iterator[Instances]:
    """``count`` service processes (``python -m service``, each with ``workers`` worker
    processes) on one store; yields their base URLs (with their ``pids``: the parents; see
    :func:`tree_cpu_s` for the CPU of all of a parent's workers). With ``profile`` (one
    process, one worker) it runs under cProfile (CPU time: ``benchmarks/profiled_service.py``)
    and writes its statistics there on exit. ``root``: the checkout whose service runs
    (another commit's, for before/after figures in one run)."""
    procs: list[subprocess.Popen[bytes]] = []
    urls = Instances()
    urls.pids = []
    with tempfile.TemporaryDirectory(prefix="bench-svc-") as tmp:
        try:
            for i in range(count):
                port = free_port()
                proc_env = {
                    **os.environ,
                    "REDIS_URL": redis_url,
                    "SOLITAIRE_PORT": str(port),
                    "SOLITAIRE_DATA_DIR": tmp,
                    "SOLITAIRE_TOKEN_SECRET": "bench-secret-0123456789abcdef",
                    "SOLITAIRE_DAILY_SECRET": "bench-secret-0123456789abcdef",
                    "SOLITAIRE_LOG_LEVEL": "WARNING",
                    "SOLITAIRE_INSTANCE_ID": f"bench{i}",
                    "SOLITAIRE_WORKERS": str(workers),
                    "PYTHONPATH": python_path(accel, root),
                    **LIFTED_PER_ADDRESS_LIMITS,
                    **env,
                }
                command = [sys.executable, "-m", "service"]
                if profile is not None:
                    command[1:] = [str(ROOT / "benchmarks" / "profiled_service.py")]
                    proc_env["SOLITAIRE_BENCH_PROFILE"] = str(profile)
                procs.append(subprocess.Popen(command, cwd=root, env=proc_env))
                urls.append(f"http://127.0.0.1:{port}")
                urls.pids.append(procs[-1].pid)
            for url in urls:
                wait_ready(url)
            yield urls
        finally:
            for proc in procs:
                proc.terminate()
            for proc in procs:
                try:
                    proc.wait(15)
                except subprocess.TimeoutExpired:
                    proc.kill()


def wait_ready(url: str, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url + "/readyz", timeout=1) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not become ready")


def process_cpu_s(pid: int) -> float:
    """User + system CPU time the process has used so far, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def tree_pids(pid: int) -> list[int]:
    """``pid`` and all its descendants (now)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        with contextlib.suppress(OSError):
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo.extend(int(c) for c in f.read().split())
    return out


def tree_cpu_s(pid: int) -> float:
    """CPU time of ``pid`` and its live descendants (a supervisor and its workers)."""
    total = 0.0
    for p in tree_pids(pid):
        with contextlib.suppress(OSError):
            total += process_cpu_s(p)
    return total


@contextlib.contextmanager
def bare_server(redis_url: str, accel: bool = True) -> Iterator[Instances]:
    """``benchmarks/bare_server.py`` (the minimal durable path) on a free port."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": python_path(accel)}
    proc = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "bare_server.py"),
            "--redis-url",
            redis_url,
            "--port",
            str(port),
        ],
        cwd=ROOT,
        env=env,
    )
    urls = Instances([f"http://127.0.0.1:{port}"])
    urls.pids = [proc.pid]
    try:
        wait_ready_port(port)
        yield urls
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()


def load_average() -> str:
    """The 1, 5 and 15 minute load averages (how busy the shared machine was)."""
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def process_rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def wait_ready_port(port: int, timeout_s: float = 30.0) -> None:
    import socket

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            return
        time.sleep(0.1)
    raise RuntimeError(f"nothing listens on port {port}")
