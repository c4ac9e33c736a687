"""The solver's worker pool: CPU-heavy searches in other processes, never on the event loop.

One :class:`SolverPool` per instance, made and closed in the app's cleanup_ctx.
It holds ``workers`` processes and lets at most ``queue`` more jobs wait; a job
beyond that is refused at once with 503 ``unavailable`` and ``Retry-After``
(:class:`ApiError`), so a burst of hints can never pile up unbounded work.
A caller waits at most ``wait_s`` for its result; the job itself runs on (its
budget bounds it), so whoever stores its result still gets it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import multiprocessing
import os
import signal
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from service.errors import ApiError, retry_seconds
from service.lifetime import die_with_parent

log = logging.getLogger("service.solving")

T = TypeVar("T")


# Workers run at a lower CPU priority than the event loop's process: on a busy machine a
# search waits, a move does not (PROTOCOL latency over hint speed).
WORKER_NICE = 10


WAIT_MARGIN_S = 5.0  # a worker's start-up (spawned on first use) and the result's way back


def request_wait_s(search_s: float, request_deadline_s: float) -> float:
    """How long a request waits for a search of ``search_s`` seconds: the search and the
    margin, but within the request's deadline, so that a busy pool answers as a busy pool
    (its own 503) rather than as the deadline's."""
    return min(search_s + WAIT_MARGIN_S, max(0.5, request_deadline_s - 1.0))


def _warm_up(service_pid: int) -> None:
    import service.solver  # noqa: F401 - import once per worker, not on the first job

    # A service killed with SIGKILL must not leave its workers searching on as orphans.
    if not die_with_parent(service_pid, signal.SIGKILL):
        os._exit(1)
    if hasattr(os, "nice"):
        os.nice(WORKER_NICE)


def _retrieve(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


def _call_soon(loop: asyncio.AbstractEventLoop, fn: Callable[[], None]) -> None:
    try:
        loop.call_soon_threadsafe(fn)
    except RuntimeError:  # the loop closed first: nobody counts any more
        pass


class SolverPool:
    """A bounded pool of solver processes."""

    def __init__(self, workers: int, queue: int, per_client: int | None = None) -> None:
        if workers < 1:
            raise ValueError(f"solver_workers={workers}: at least one worker is needed")
        if queue < 0:
            raise ValueError(f"solver_queue={queue}: may not be negative")
        self.workers = workers
        self.queue = queue
        self._pending = 0
        # Jobs running or waiting per client (a request's address): at most ``per_client``.
        self.per_client = per_client
        self._by_client: dict[str, int] = {}
        self._executor = self._new_executor()
        # Background searches (the daily deals) leave one worker free for requests.
        self.background_slots = max(1, workers - 1)
        self._background: asyncio.Semaphore | None = None

    def _new_executor(self) -> concurrent.futures.ProcessPoolExecutor:
        # spawn, not fork: forking a process that runs an event loop and threads copies
        # their locks in whatever state they are.
        return concurrent.futures.ProcessPoolExecutor(
            max_workers=self.workers, mp_context=multiprocessing.get_context("spawn"),
            initializer=_warm_up, initargs=(os.getpid(),))

    @property
    def pending(self) -> int:
        """Jobs running or waiting."""
        return self._pending

    @property
    def capacity(self) -> int:
        return self.workers + self.queue

    def busy_error(self, what: str, retry_s: float) -> ApiError:
        retry = retry_seconds(retry_s)
        return ApiError("unavailable",
                        f"the solver is busy ({self._pending} searches running or queued, "
                        f"at most {self.capacity}): {what} could not be computed now; "
                        f"retry in {retry} s", retry_after_s=retry)

    def submit(self, fn: Callable[..., T], *args: Any, what: str, retry_s: float,
               client: str | None = None, **kwargs: Any) -> asyncio.Future[T]:
        """Start ``fn(*args, **kwargs)`` in a worker; 503 when the queue is full, 429 when
        ``client`` (a request's address) has ``per_client`` jobs running or waiting."""
        if self._pending >= self.capacity:
            raise self.busy_error(what, retry_s)
        mine = self._by_client.get(client, 0) if client is not None else 0
        if client is not None and self.per_client is not None and mine >= self.per_client:
            retry = retry_seconds(retry_s)
            raise ApiError("rate_limited",
                           f"{mine} searches from this address are running or waiting, at "
                           f"most {self.per_client} at once (SOLITAIRE_SOLVER_SEARCHES_PER_ADDRESS)"
                           f": {what} could not be started; retry in {retry} s",
                           {"limit": "solver_searches_per_address"}, retry_after_s=retry)
        try:
            future = self._executor.submit(fn, *args, **kwargs)
        except (BrokenProcessPool, RuntimeError):  # a dead worker broke the pool
            log.warning("a solver worker died; starting a new pool")
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = self._new_executor()
            future = self._executor.submit(fn, *args, **kwargs)
        self._pending += 1
        if client is not None:
            self._by_client[client] = mine + 1
        loop = asyncio.get_running_loop()
        # The callback runs in the executor's thread: count down on the loop's thread.
        future.add_done_callback(lambda _: _call_soon(loop, lambda: self._done(client)))
        return asyncio.wrap_future(future, loop=loop)

    def _done(self, client: str | None) -> None:
        self._pending -= 1
        if client is not None:
            left = self._by_client.pop(client) - 1
            if left:
                self._by_client[client] = left

    async def run(self, fn: Callable[..., T], *args: Any, what: str, wait_s: float,
                  client: str | None = None, **kwargs: Any) -> T:
        """Run ``fn`` in a worker and wait up to ``wait_s`` for it; 503 after that."""
        future = self.submit(fn, *args, what=what, retry_s=wait_s, client=client, **kwargs)
        try:
            return await asyncio.wait_for(asyncio.shield(future), wait_s)
        except TimeoutError:
            future.add_done_callback(_retrieve)  # nobody awaits it any more
            raise self.busy_error(what, wait_s) from None
        except BrokenProcessPool:
            # A worker died (killed, out of memory): the next job gets a new pool.
            raise self.busy_error(what, 1) from None

    async def background(self, fn: Callable[..., T], *args: Any, what: str, **kwargs: Any) -> T:
        """Run ``fn`` in a worker when one is free for background work: at most
        ``background_slots`` at once, so a hint or a solution never waits behind them
        (when there are two workers or more). Never refused: waits for room instead."""
        if self._background is None:
            self._background = asyncio.Semaphore(self.background_slots)
        async with self._background:
            while True:
                try:
                    future = self.submit(fn, *args, what=what, retry_s=1, **kwargs)
                except ApiError:  # requests fill the queue: wait for room
                    await asyncio.sleep(0.5)
                    continue
                return await future

    async def aclose(self) -> None:
        """Stop every worker now: a search in progress is abandoned (its caller is gone too)."""
        executor = self._executor
        processes = list(getattr(executor, "_processes", {}).values())
        executor.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            if process.is_alive():
                process.terminate()
        loop = asyncio.get_running_loop()
        for process in processes:
            await loop.run_in_executor(None, process.join, 5.0)
