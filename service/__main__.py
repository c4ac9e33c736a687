"""``python -m service``: run the service, with its own embedded store when REDIS_URL is unset."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import logging
import os
import platform
import signal
import socket
import sys
from collections.abc import Sequence

from service.runtime import logs
from service.runtime.workers import (
    PortInUse,
    Supervisor,
    announce_ready,
    as_worker,
    claim_port,
    is_worker,
)
from service.settings import Settings, redact_url, unknown_variables
from service.solver import native as solver_native
from service.store import persistence
from service.store.connection import RedisConn
from service.store.embedded import EmbeddedServer, EmbeddedServerError, keep_running
from service.store.errors import StoreError

log = logging.getLogger("service")

# After SIGTERM (and its sockets closed with 1001), requests in flight get this long.
SHUTDOWN_TIMEOUT_S = 10.0


async def serve(settings: Settings) -> int:
    """Run one instance until SIGTERM/SIGINT: one process, or a supervisor of ``workers``."""
    held: list[socket.socket] = []
    if not is_worker():
        # First: an address in use stops the start before any store starts.
        try:
            held, settings = claim_port(settings)
        except OSError as exc:
            log.error("%s", exc.strerror if isinstance(exc, PortInUse) else
                      f"cannot listen on {settings.host}:{settings.port}: {exc}")
            return 2
    try:
        return await _serve_with_store(settings, held[0] if settings.workers <= 1 and held
                                       else None)
    finally:
        for sock in held:
            sock.close()


async def _serve_with_store(settings: Settings, listener: socket.socket | None) -> int:
    embedded: EmbeddedServer | None = None
    if not settings.redis_url:
        # When new: its owner's alone.
        settings.data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        embedded = EmbeddedServer.from_settings(settings)
        try:
            await embedded.astart()
        except EmbeddedServerError as exc:
            log.error("%s", exc)
            raise SystemExit(2) from None
        log.info("embedded store: %s (%s), data in %s, appendfsync %s, durability %s", embedded.url,
                 embedded.binary or "valkey-server", settings.data_dir / "redis",
                 embedded.appendfsync, settings.durability)
        settings = dataclasses.replace(settings, redis_url=embedded.url)
    elif not is_worker():
        if not await _store_keeps_the_level(settings):
            return 2
    # An embedded store that dies is started again (its data back from its AOF).
    watch = asyncio.create_task(keep_running(embedded)) if embedded is not None else None
    try:
        if settings.workers > 1:
            return await _supervise(settings)
        await _serve_one(settings, listener)
        return 0
    finally:
        if watch is not None:
            watch.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await watch  # an error of its own was logged where it happened
        if embedded is not None:
            await embedded.astop()
            log.info("embedded store stopped")


async def _store_keeps_the_level(settings: Settings) -> bool:
    """Ask the store (``REDIS_URL``) whether it can keep ``settings.durability``
    (service/store/persistence.py): False, after one line saying why and the ways out,
    if it cannot. A store that does not answer yet is asked again at the service's
    first connection to it."""
    assert settings.redis_url is not None
    conn = RedisConn(settings, settings.redis_url, watch_persistence=False)  # asked here
    try:
        finding = await persistence.check(conn, settings.durability,
                                          settings.redis_timeout_s * (2 + settings.redis_retries))
    except (StoreError, TimeoutError) as exc:
        log.info("store: %s", redact_url(settings.redis_url))
        log.warning("the store's persistence could not be checked at start (%s): it is "
                    "asked at the first connection to it", exc or "no answer in time")
        return True
    finally:
        await conn.aclose()
    if finding.fault is not None:
        log.error("%s", finding.fault)
        return False
    log.info("store: %s (%s)", redact_url(settings.redis_url), finding.summary)
    for warning in finding.warnings:
        log.warning("%s", warning)
    return True


async def _supervise(settings: Settings) -> int:
    redis_url = settings.redis_url
    assert redis_url is not None
    supervisor = Supervisor(settings, redis_url)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, supervisor.stopping.set)
    return await supervisor.run()


async def _serve_one(settings: Settings, listener: socket.socket | None) -> None:
    """Serve on ``listener`` (the one process's socket), or, in a worker, on the port it
    shares with the others of its instance (``SO_REUSEPORT``: service/runtime/workers.py)."""
    # Imported here, not at the top: a supervisor of workers runs none of it, and the
    # web service's modules were a third of its memory (benchmarks/README.md, "Memory").
    from aiohttp import web

    from service.app import create_app
    from service.domain.auth import UnsafeSecretFile
    from service.web.connections import app_runner

    try:
        app = create_app(settings)
    except UnsafeSecretFile as exc:
        log.error("%s", exc)
        raise SystemExit(2) from None
    runner = app_runner(app, handle_signals=False, shutdown_timeout=SHUTDOWN_TIMEOUT_S)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await runner.setup()
        site: web.BaseSite = (web.SockSite(runner, listener) if listener is not None
                              else web.TCPSite(runner, settings.host, settings.port,
                                               reuse_port=True))
        await site.start()
        _tune_garbage_collector()
        log.info("listening on http://%s:%d (instance %s, PYTHONMALLOC=%s)", settings.host,
                 settings.port, settings.instance_id, os.environ.get("PYTHONMALLOC", "unset"))
        announce_ready()
        await stop.wait()
        log.info("shutting down: closing WebSockets with 1001")
    finally:
        await runner.cleanup()


def _tune_garbage_collector() -> None:
    """Fewer, not longer, collections: with thousands of sockets and cached games,
    the default thresholds ran several full collections of 100-240 ms a minute
    under load, each stalling every socket of the instance (benchmarks/README.md)."""
    gc.collect()
    gc.freeze()  # what start-up made (modules, rule tables) is never collected again
    gc.set_threshold(50_000, 50, 1_000)


def say_solver_core() -> None:
    """One line at start when the solver's native core was not built (no compiler at
    install): every solve then runs in pure Python, about 30 times slower."""
    if not solver_native.AVAILABLE:
        log.warning("%s", solver_native.MISSING)


# The allocator of a service process unless PYTHONMALLOC says otherwise. Python's own
# (pymalloc) keeps each 1 MiB arena while any small object in it lives, so after a burst
# of sockets a worker kept a third of what the burst added, and more after each burst;
# with glibc's, the trimmer (service/runtime/memory.py) gives nearly all of it back,
# every time, for more CPU per command (benchmarks/README.md, "Issue 25's goals on a
# quiet machine, and glibc's allocator by default").
ALLOCATOR = "malloc"


def use_allocator() -> str | None:
    """Start again, as the same process, with ``PYTHONMALLOC=malloc`` when the variable is
    unset or empty (it is read only when Python starts) and the C library is glibc (where
    ``malloc_trim`` gives memory back); an operator's ``PYTHONMALLOC=pymalloc`` keeps
    Python's allocator. The workers inherit it. Returns why it could not, or None."""
    if (os.environ.get("PYTHONMALLOC") or sys.flags.ignore_environment or not sys.executable
            or platform.libc_ver()[0] != "glibc"):
        return None
    try:
        os.execve(sys.executable, sys.orig_argv, {**os.environ, "PYTHONMALLOC": ALLOCATOR})
    except OSError as exc:
        return (f"could not start again with PYTHONMALLOC={ALLOCATOR} ({exc}): running on "
                f"Python's allocator, which keeps more memory after bursts of sockets")


def run() -> None:
    """The program (``python -m service``, ``solitaire-service``): :func:`main` on the
    allocator of :func:`use_allocator`."""
    main(allocator_problem=use_allocator())


def main(argv: Sequence[str] | None = None, allocator_problem: str | None = None) -> None:
    settings = Settings.from_args(argv)
    logs.configure(settings.log_level)
    if not is_worker():  # the supervisor has said it already
        for problem in unknown_variables(os.environ):
            log.warning("%s", problem)
        if allocator_problem:
            log.warning("%s", allocator_problem)
        say_solver_core()
    if is_worker():
        as_worker()
    try:
        import uvloop
    except ImportError:
        uvloop = None  # type: ignore[assignment]
    # Outside the except block: a traceback of the service must not be chained to
    # "No module named 'uvloop'".
    if uvloop is None:
        code = asyncio.run(serve(settings))
    else:
        code = uvloop.run(serve(settings))
    if code:
        raise SystemExit(code)


if __name__ == "__main__":
    run()
