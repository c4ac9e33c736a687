"""``python -m service``: run the service, with its own embedded store when REDIS_URL is unset."""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import logging
import os
import signal
import sys
from collections.abc import Sequence

from aiohttp import web

from service.app import create_app
from service.connections import AccessLog
from service.settings import Settings, redact_url, unknown_variables
from service.solver import native as solver_native
from service.store.embedded import EmbeddedServer, EmbeddedServerError
from service.workers import Supervisor, announce_ready, as_worker, is_worker, reserve_port

log = logging.getLogger("service")

# After SIGTERM (and its sockets closed with 1001), requests in flight get this long.
SHUTDOWN_TIMEOUT_S = 10.0


async def serve(settings: Settings) -> int:
    """Run one instance until SIGTERM/SIGINT: one process, or a supervisor of ``workers``."""
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
        log.info("store: %s", redact_url(settings.redis_url))
    try:
        if settings.workers > 1:
            return await _supervise(settings)
        await _serve_one(settings)
        return 0
    finally:
        if embedded is not None:
            await embedded.astop()
            log.info("embedded store stopped")


async def _supervise(settings: Settings) -> int:
    redis_url = settings.redis_url
    assert redis_url is not None
    try:
        reserved, settings = reserve_port(settings)
    except OSError as exc:
        log.error("cannot listen on %s:%d: %s", settings.host, settings.port, exc)
        return 2
    supervisor = Supervisor(settings, redis_url)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, supervisor.stopping.set)
    try:
        return await supervisor.run()
    finally:
        reserved.close()


async def _serve_one(settings: Settings) -> None:
    runner = web.AppRunner(create_app(settings), handle_signals=False,
                           shutdown_timeout=SHUTDOWN_TIMEOUT_S,
                           access_log_class=AccessLog)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await runner.setup()
        # A worker shares the port with the others of its instance (service/workers.py).
        site = web.TCPSite(runner, settings.host, settings.port, reuse_port=is_worker() or None)
        await site.start()
        _tune_garbage_collector()
        log.info("listening on http://%s:%d (instance %s)", settings.host, settings.port,
                 settings.instance_id)
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


def main(argv: Sequence[str] | None = None) -> None:
    settings = Settings.from_args(argv)
    logging.basicConfig(level=settings.log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if not is_worker():  # the supervisor has said it already
        for problem in unknown_variables(os.environ):
            log.warning("%s", problem)
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
    main()
