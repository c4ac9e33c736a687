"""Several worker processes of one instance on one port (``--workers N``).

One Python process uses at most about one core. With ``workers`` above 1,
``python -m service`` becomes a supervisor: it starts the embedded store once
(when ``REDIS_URL`` is unset), then ``workers`` children, each a complete
service process (``python -m service`` with one worker) on the same store and
the same port (``SO_REUSEPORT``: the kernel spreads new connections over
them). The first child is started alone and must be listening before the
others start, so that whatever is generated once into the data folder (the
token secret) is written by one process only.

- ``SIGTERM``/``SIGINT``: every child gets ``SIGTERM`` (each closes its
  WebSockets with 1001, as a single process does), then the store stops.
- A child that exits on its own is reported (its exit code, in the log) and
  restarted after a second; its sockets were lost with it and reconnect to
  the others. If children die more than ``3 * workers`` times within a minute
  the instance gives up: it stops the others and exits with status 1, for
  the orchestrator to restart (or a person to read the log).
- Children die with the supervisor (``PR_SET_PDEATHSIG`` on Linux).
- An embedded store that dies is started again (``service.store.embedded.keep_running``).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import errno
import logging
import os
import signal
import socket
import sys
import time

from service.runtime.lifetime import die_with_parent
from service.settings import Settings

log = logging.getLogger("service.runtime.workers")

WORKER_ENV = "SOLITAIRE_WORKER_OF"  # set in a child: the supervisor's pid (not a setting)
INSTANCE_ENV = "SOLITAIRE_WORKER_INSTANCE"  # set in a child: its instance's id (not a setting)
_READY_FD_ENV = "SOLITAIRE_WORKER_READY_FD"  # set in a child: write one byte there once listening
_RESTART_DELAY_S = 1.0
# A worker still running this long after its SIGTERM is killed: the longest a stop takes
# (deploy/: compose's stop_grace_period and the pod's grace period after preStop exceed it).
STOP_TIMEOUT_S = 20.0
_CRASH_WINDOW_S = 60.0


def is_worker() -> bool:
    return WORKER_ENV in os.environ


def instance_of(settings: Settings) -> str:
    """The id of the instance this process is part of: its supervisor's in a worker (each
    worker's own ``instance_id`` ends in ``-w<index>``), else its own."""
    return os.environ.get(INSTANCE_ENV) or settings.instance_id


def as_worker() -> None:
    """In a child: die with the supervisor."""
    if not die_with_parent(int(os.environ[WORKER_ENV])):
        raise SystemExit("the supervisor is gone")


def announce_ready() -> None:
    """In a child, once listening: tell the supervisor."""
    fd = os.environ.pop(_READY_FD_ENV, None)
    if fd is not None:
        with contextlib.suppress(OSError):
            os.write(int(fd), b"1")
            os.close(int(fd))


class Supervisor:
    """Runs ``settings.workers`` children on one store and one port until told to stop."""

    def __init__(self, settings: Settings, redis_url: str) -> None:
        self.settings = settings
        self.redis_url = redis_url
        self.children: dict[int, asyncio.subprocess.Process] = {}
        self.stopping = asyncio.Event()
        self.deaths: list[float] = []
        self.failed = False

    def _env(self, index: int, ready_fd: int | None) -> dict[str, str]:
        """The child's settings are the supervisor's (flags included), as environment variables."""
        child = dataclasses.replace(self.settings, redis_url=self.redis_url, workers=1,
                                    instance_id=f"{self.settings.instance_id}-w{index}")
        env = {**os.environ, **child.to_env(), WORKER_ENV: str(os.getpid()),
               INSTANCE_ENV: self.settings.instance_id}
        env.pop(_READY_FD_ENV, None)
        if ready_fd is not None:
            env[_READY_FD_ENV] = str(ready_fd)
        return env

    async def _spawn(self, index: int, wait_ready: bool) -> bool:
        """Start child ``index``; with ``wait_ready``, until it listens (False: it exited first)."""
        read_fd, write_fd = os.pipe() if wait_ready else (None, None)
        try:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "service", env=self._env(index, write_fd),
                pass_fds=(write_fd,) if write_fd is not None else (),
                # A terminal's Ctrl-C reaches the supervisor, which stops them.
                start_new_session=True)
        finally:
            if write_fd is not None:
                os.close(write_fd)
        self.children[index] = proc
        log.info("worker %d started (pid %d)", index, proc.pid)
        if read_fd is None:
            return True
        loop = asyncio.get_running_loop()
        try:
            got = await loop.run_in_executor(None, os.read, read_fd, 1)
        finally:
            os.close(read_fd)
        return got == b"1"

    async def run(self) -> int:
        n = self.settings.workers
        if not await self._spawn(0, wait_ready=True):
            code = await self.children[0].wait()
            log.error("worker 0 exited with %s before listening; not starting the others", code)
            return code or 1
        ready = await asyncio.gather(*(self._spawn(index, wait_ready=True)
                                       for index in range(1, n)))
        log.info("%d of %d workers listening on http://%s:%d", 1 + sum(ready), n,
                 self.settings.host, self.settings.port)
        watchers = [asyncio.create_task(self._watch(i)) for i in range(n)]
        await self.stopping.wait()
        await self._stop_children()
        for task in watchers:
            task.cancel()
        await asyncio.gather(*watchers, return_exceptions=True)
        return 1 if self.failed else 0

    async def _watch(self, index: int) -> None:
        while not self.stopping.is_set():
            proc = self.children[index]
            code = await proc.wait()
            if self.stopping.is_set():
                return
            now = time.monotonic()
            self.deaths = [t for t in self.deaths if now - t < _CRASH_WINDOW_S] + [now]
            if len(self.deaths) > 3 * self.settings.workers:
                log.error("worker %d (pid %d) exited with %s: %d worker exits within %.0f s, "
                          "stopping the instance", index, proc.pid, code, len(self.deaths),
                          _CRASH_WINDOW_S)
                self.failed = True
                self.stopping.set()
                return
            log.error("worker %d (pid %d) exited with %s; restarting it in %.0f s "
                      "(its sockets reconnect to the other workers)",
                      index, proc.pid, code, _RESTART_DELAY_S)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.stopping.wait(), _RESTART_DELAY_S)
            if not self.stopping.is_set():
                await self._spawn(index, wait_ready=False)

    async def _stop_children(self, timeout_s: float = STOP_TIMEOUT_S) -> None:
        alive = [p for p in self.children.values() if p.returncode is None]
        for proc in alive:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(asyncio.gather(*(p.wait() for p in alive)), timeout_s)
        except TimeoutError:
            for proc in alive:
                if proc.returncode is None:
                    log.error("worker pid %d did not stop in %.0f s: killed", proc.pid, timeout_s)
                    with contextlib.suppress(ProcessLookupError):
                        proc.kill()
            await asyncio.gather(*(p.wait() for p in alive))
        log.info("all workers stopped")


class PortInUse(OSError):
    """The instance's address is taken: by another program, or another instance."""


def claim_port(settings: Settings) -> tuple[list[socket.socket], Settings]:
    """Take the instance's address before anything else starts; :class:`PortInUse` if taken.

    One process: its listening socket (no ``SO_REUSEPORT``: nothing can share it).
    Workers: the port is shared among them (``SO_REUSEPORT``), which would let any other
    process of this user share it too, silently: a second instance on the port got half
    the connections, with another store. So the supervisor first binds the address
    without ``SO_REUSEPORT`` (which fails if anything listens there, a ``SO_REUSEPORT``
    group included), then reserves it with ``SO_REUSEPORT`` (bound, not listening: the
    workers can bind it too, no other program can take it while the supervisor lives,
    and port 0 becomes one chosen port for every worker). Between an instance's
    reservation and its workers' listening, the address is marked taken by an abstract
    unix socket of its name (Linux; held while the supervisor lives), which a second
    instance's supervisor cannot bind.

    Returns the sockets to hold (the one process's listening socket first) and the
    settings with the port that was bound."""
    family = socket.AF_INET6 if ":" in settings.host else socket.AF_INET
    held: list[socket.socket] = []
    try:
        if settings.workers <= 1:
            sock = _bind(family, settings, settings.port, reuse_port=False)
            held.append(sock)
            sock.listen(socket.SOMAXCONN)
            return held, dataclasses.replace(settings, port=sock.getsockname()[1])
        probe = _bind(family, settings, settings.port, reuse_port=False)
        port = probe.getsockname()[1]
        try:
            marker = _mark_taken(settings.host, port)
            if marker is not None:
                held.append(marker)
            held.append(_bind(family, settings, port, reuse_port=True))
        finally:
            probe.close()
        return held, dataclasses.replace(settings, port=port)
    except BaseException:
        for sock in held:
            sock.close()
        raise


def _bind(family: int, settings: Settings, port: int, reuse_port: bool) -> socket.socket:
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        # Connections of an earlier run in TIME_WAIT must not keep the port.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if reuse_port:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((settings.host, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise PortInUse(exc.errno, f"cannot listen on {settings.host}:{port}: another "
                            "program (or another instance of the service) listens there; "
                            "stop it, or give this one another --port "
                            "(SOLITAIRE_PORT)") from None
        raise
    return sock


def _mark_taken(host: str, port: int) -> socket.socket | None:
    if not sys.platform.startswith("linux"):
        return None
    marker = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        marker.bind(f"\0solitaire-service {host} {port}")
    except OSError as exc:
        marker.close()
        if exc.errno == errno.EADDRINUSE:
            raise PortInUse(exc.errno, f"cannot listen on {host}:{port}: another instance "
                            "of the service is starting there; stop it, or give this one "
                            "another --port (SOLITAIRE_PORT)") from None
        raise
    return marker
