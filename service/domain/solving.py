"""The solver's worker pool: CPU-heavy searches in other processes, never on the event loop.

One :class:`SolverPool` per worker process of the service, made and closed in the app's
cleanup_ctx. It costs nothing until it is used: its processes start with the first job
and stop after ``idle_s`` without one.

- Requests (hints and solutions) run on ``workers`` processes, niced below the service.
  A solution's search (long: up to ``solution_solve_s``) takes at most ``workers - 1``
  of them, so a hint (short) always finds a worker free of searches; searches beyond
  that wait their turn here. A hint is refused (503 ``unavailable`` with ``Retry-After``)
  only when ``workers + queue`` hints are running or waiting, whatever the searches do;
  a search when ``search_slots + queue`` searches are, or the pool is full.
- Background work (choosing the daily deals) runs in one process of its own at the
  lowest CPU priority (``SCHED_IDLE``: the kernel gives it what nothing else wants, and
  a sliver beside busy processes), so it never takes a request's worker and the first
  players' commands do not wait for it.

A caller waits at most ``wait_s`` for its result; the job itself runs on (its budget
bounds it), so whoever stores its result still gets it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import multiprocessing
import os
import sys
import types
from collections.abc import Callable, Iterator
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from service.domain import solver_worker
from service.domain.errors import ApiError, retry_seconds

log = logging.getLogger("service.domain.solving")

T = TypeVar("T")


WAIT_MARGIN_S = 5.0  # a worker's start-up (spawned on first use) and the result's way back
BACKGROUND_PROCESSES = 1  # background work's own processes (its jobs run one at a time)


def request_wait_s(search_s: float, request_deadline_s: float) -> float:
    """How long a request waits for a search of ``search_s`` seconds: the search and the
    margin, but within the request's deadline, so that a busy pool answers as a busy pool
    (its own 503) rather than as the deadline's."""
    return min(search_s + WAIT_MARGIN_S, max(0.5, request_deadline_s - 1.0))


@contextlib.contextmanager
def _main_left_behind() -> Iterator[None]:
    """While processes are spawned: a spawned child imports its parent's ``__main__``
    (``python -m service``: aiohttp, the app and every module, 1.6 s and 38 MB more
    per process, measured) unless there is none to import. Its jobs need only the
    solver, imported by name."""
    main = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        if main is not None:
            sys.modules["__main__"] = main


def _retrieve(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


def _call_soon(loop: asyncio.AbstractEventLoop, fn: Callable[[], None]) -> None:
    try:
        loop.call_soon_threadsafe(fn)
    except RuntimeError:  # the loop closed first: nobody counts any more
        pass


class _Processes:
    """A process pool started on its first job and stopped after ``idle_s`` without one."""

    def __init__(self, name: str, workers: int, background: bool, idle_s: float) -> None:
        self.name = name
        self.workers = workers
        self.background = background
        self.idle_s = idle_s
        self.running = 0  # jobs handed to the processes and not done
        self._executor: concurrent.futures.ProcessPoolExecutor | None = None
        self._idle: asyncio.TimerHandle | None = None
        self._closed = False

    def _new_executor(self) -> concurrent.futures.ProcessPoolExecutor:
        # spawn, not fork: forking a process that runs an event loop and threads copies
        # their locks in whatever state they are.
        return concurrent.futures.ProcessPoolExecutor(
            max_workers=self.workers, mp_context=multiprocessing.get_context("spawn"),
            initializer=solver_worker.start, initargs=(os.getpid(), self.background))

    def pids(self) -> list[int]:
        """The processes running now (none until the first job, none after an idle spell)."""
        processes = getattr(self._executor, "_processes", None) or {}
        return [p.pid for p in processes.values() if p.is_alive()]

    def submit(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> asyncio.Future[T]:
        loop = asyncio.get_running_loop()
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None
        if self._closed:  # the service is stopping: no new process
            raise BrokenProcessPool(f"the {self.name} is closed")
        if self._executor is None:
            self._executor = self._new_executor()
        try:
            with _main_left_behind():  # a submit may spawn a process
                future = self._executor.submit(fn, *args, **kwargs)
        except (BrokenProcessPool, RuntimeError):  # a dead worker broke the pool
            log.warning("a %s worker died; starting new ones", self.name)
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = self._new_executor()
            with _main_left_behind():
                future = self._executor.submit(fn, *args, **kwargs)
        self.running += 1
        # The callback runs in the executor's thread: count down on the loop's thread.
        future.add_done_callback(lambda _: _call_soon(loop, self._done))
        wrapped = asyncio.wrap_future(future, loop=loop)
        # Its waiter may be gone (waits are shielded): a failure is then nobody's to log.
        wrapped.add_done_callback(_retrieve)
        return wrapped

    def _done(self) -> None:
        self.running -= 1
        if self.running == 0 and self._executor is not None:
            self._idle = asyncio.get_running_loop().call_later(self.idle_s, self._stop_idle)

    def _stop_idle(self) -> None:
        self._idle = None
        if self.running == 0 and self._executor is not None:
            log.debug("no %s job for %g s: stopping its processes", self.name, self.idle_s)
            self._executor.shutdown(wait=False)  # idle: each process exits at once
            self._executor = None

    async def aclose(self) -> None:
        """Stop every process now: a search in progress is abandoned (its caller is gone too)."""
        self._closed = True
        if self._idle is not None:
            self._idle.cancel()
        executor, self._executor = self._executor, None
        if executor is None:
            return
        processes = list(getattr(executor, "_processes", {}).values())
        # No future is cancelled (nor is any ever: every wait on one is shielded): the
        # processes' end fails them all, and Python 3.11's executor raises in its thread
        # when it fails a future already cancelled.
        executor.shutdown(wait=False)
        for process in processes:
            if process.is_alive():
                process.terminate()
        loop = asyncio.get_running_loop()
        for process in processes:
            await loop.run_in_executor(None, process.join, 5.0)


class SolverPool:
    """The solver's processes: requests' (hints, searches) and the background's."""

    def __init__(self, workers: int, queue: int, idle_s: float = 60.0) -> None:
        if workers < 1:
            raise ValueError(f"solver_workers={workers}: at least one worker is needed")
        if queue < 0:
            raise ValueError(f"solver_queue={queue}: may not be negative")
        self.workers = workers
        self.queue = queue
        # Searches running at once; with two workers or more, one is always left for hints.
        self.search_slots = max(1, workers - 1)
        self._requests = _Processes("solver", workers, background=False, idle_s=idle_s)
        self._background = _Processes("background solver", BACKGROUND_PROCESSES, background=True,
                                      idle_s=idle_s)
        self._hints = 0  # short jobs running or waiting
        self._searches = 0  # searches running or waiting (a turn, or a worker)
        self._background_jobs = 0
        self._search_turns = asyncio.Semaphore(self.search_slots)
        self._background_turns = asyncio.Semaphore(1)

    @property
    def pending(self) -> int:
        """Jobs running or waiting: requests' and background."""
        return self._hints + self._searches + self._background_jobs

    @property
    def capacity(self) -> int:
        return self.workers + self.queue

    def pids(self) -> list[int]:
        """The pool's processes running now."""
        return self._requests.pids() + self._background.pids()

    def busy_error(self, what: str, retry_s: float) -> ApiError:
        retry = retry_seconds(retry_s)
        return ApiError("unavailable",
                        f"the solver is busy ({self._hints} hints and {self._searches} "
                        f"solutions running or waiting, at most {self.capacity} hints and "
                        f"{self.search_slots + self.queue} solutions): {what} could not be "
                        f"computed now; retry in {retry} s", retry_after_s=retry)

    def submit(self, fn: Callable[..., T], *args: Any, what: str, retry_s: float,
               search: bool = False, **kwargs: Any) -> asyncio.Future[T]:
        """Start ``fn(*args, **kwargs)`` in a worker; 503 when there is no room for it.
        ``search``: a long search (a solution), which takes at most ``search_slots``
        workers and waits here for its turn."""
        if search:
            if (self._searches >= self.search_slots + self.queue
                    or self._hints + self._searches >= self.capacity):
                raise self.busy_error(what, retry_s)
            self._searches += 1
            return asyncio.ensure_future(self._search(fn, args, kwargs))
        if self._hints >= self.capacity:
            raise self.busy_error(what, retry_s)
        future = self._requests.submit(fn, *args, **kwargs)
        self._hints += 1
        future.add_done_callback(self._hint_done)
        return future

    def _hint_done(self, _: object) -> None:
        self._hints -= 1

    async def _search(self, fn: Callable[..., T], args: tuple[Any, ...],
                      kwargs: dict[str, Any]) -> T:
        try:
            async with self._search_turns:
                return await asyncio.shield(self._requests.submit(fn, *args, **kwargs))
        finally:
            self._searches -= 1

    async def run(self, fn: Callable[..., T], *args: Any, what: str, wait_s: float,
                  **kwargs: Any) -> T:
        """Run ``fn`` (a short job: a hint) in a worker and wait up to ``wait_s`` for it;
        503 after that."""
        return await self.wait(self.submit(fn, *args, what=what, retry_s=wait_s, **kwargs),
                               what, wait_s)

    async def wait(self, future: asyncio.Future[T], what: str, wait_s: float) -> T:
        """Wait up to ``wait_s`` for a job's result; 503 after that (the job runs on)."""
        try:
            return await asyncio.wait_for(asyncio.shield(future), wait_s)
        except TimeoutError:
            future.add_done_callback(_retrieve)  # nobody awaits it any more
            raise self.busy_error(what, wait_s) from None
        except BrokenProcessPool:
            # A worker died (killed, out of memory): the next job gets a new pool.
            raise self.busy_error(what, 1) from None

    async def background(self, fn: Callable[..., T], *args: Any, what: str, **kwargs: Any) -> T:
        """Run ``fn`` in the background process, at the lowest CPU priority, one job at a time;
        never refused (a job waits for the one before). ``what`` names it in the log."""
        log.debug("background search: %s", what)
        self._background_jobs += 1
        try:
            async with self._background_turns:  # one job in the process's queue at a time
                return await asyncio.shield(self._background.submit(fn, *args, **kwargs))
        finally:
            self._background_jobs -= 1

    async def aclose(self) -> None:
        """Stop every process now: a search in progress is abandoned (its caller is gone too)."""
        await self._requests.aclose()
        await self._background.aclose()
