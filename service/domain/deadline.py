"""The request deadline: every request answers within ``request_deadline_s``.

redis-py's timeouts and retries bound one call, not a request: a request makes
several calls, and a paused store (SIGSTOP, a stalled disk, a partition that
drops packets) held one for minutes. :func:`deadline` bounds the whole of it;
when it passes, the work is cancelled and the client gets 503 ``unavailable``
with ``Retry-After``. A command cut short may have been applied: the error
says so, and a resend with the same ``command_id`` returns the first result.

Work that waits on something other than the store (another instance ranking a day)
asks :func:`time_left` and gives up in time to say what it was waiting for.

Every HTTP request runs in one (service/web/deadline.py, the middleware); a socket's
commands each in their own (service/socket/session.py).
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from contextvars import ContextVar, Token
from types import TracebackType

from service.domain.errors import ApiError, unknown_outcome

# When the innermost running deadline passes (the event loop's time), None outside any.
_ENDS_AT: ContextVar[float | None] = ContextVar("deadline_ends_at", default=None)


def time_left() -> float | None:
    """Seconds left before the current request's deadline passes (0 once it has), or None
    when no deadline bounds the caller (a background task, a deadline of 0)."""
    ends_at = _ENDS_AT.get()
    if ends_at is None:
        return None
    return max(0.0, ends_at - asyncio.get_running_loop().time())


def too_late(seconds: float, write: bool, command: bool = True) -> ApiError:
    what = (f"the game store did not answer within the request deadline ({seconds:g} s); "
            + (unknown_outcome(command) if write else "nothing was written, try again"))
    # A read has no outcome to tell: nothing was written (as the store's own 503 says).
    details: dict[str, object] = {"deadline_s": seconds}
    if write:
        details["outcome"] = "unknown"
    return ApiError("unavailable", what, details, retry_after_s=seconds)


class _Entry:
    """One running deadline in a :class:`_Watch`."""

    __slots__ = ("cancelling", "ends_at", "state", "task")

    def __init__(self, task: asyncio.Task[object], ends_at: float) -> None:
        self.task: asyncio.Task[object] | None = task
        self.ends_at = ends_at
        self.cancelling = task.cancelling()  # the task's cancel requests before this one
        self.state = _LIVE


_LIVE, _DONE, _EXPIRED = 0, 1, 2
# How early a deadline may pass (never late): the watch wakes at most once a tick, and
# cuts short everything due before the next one.
TICK_S = 0.01


class _Watch:
    """The running deadlines of one event loop, in the order they pass, under one timer.

    What ``asyncio.timeout`` does for one block, for all of them: a command's deadline
    costs no timer of its own (made, scheduled and cancelled per command), only a place
    in a queue. Every deadline of the same length comes in the order it passes; one that
    would pass before the last one queued (a shorter one) goes to ``asyncio.timeout``."""

    __slots__ = ("entries", "loop", "timer")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.entries: deque[_Entry] = deque()
        self.timer: asyncio.TimerHandle | None = None

    def add(self, task: asyncio.Task[object], ends_at: float) -> _Entry | None:
        entries = self.entries
        if entries and entries[-1].ends_at > ends_at:
            return None
        entry = _Entry(task, ends_at)
        entries.append(entry)
        if self.timer is None:
            self.timer = self.loop.call_at(max(ends_at - TICK_S, self.loop.time()), self._fire)
        return entry

    def done(self, entry: _Entry) -> None:
        """``entry``'s block has ended: forget it, and the ended ones behind it, when it is
        the oldest (the queue holds about the blocks running, not every block of the last
        ``seconds``)."""
        entries = self.entries
        if entries and entries[0] is entry:
            entries.popleft()
            while entries and entries[0].state != _LIVE:
                entries.popleft()

    def _fire(self) -> None:
        self.timer = None
        entries = self.entries
        now = self.loop.time()
        due = now + TICK_S
        while entries:
            entry = entries[0]
            if entry.state == _LIVE:
                if entry.ends_at > due:
                    break
                entry.state = _EXPIRED
                assert entry.task is not None
                entry.task.cancel()
            entries.popleft()
        if entries:
            self.timer = self.loop.call_at(max(entries[0].ends_at - TICK_S, now + TICK_S),
                                           self._fire)


_watches = threading.local()  # each thread's loop's _Watch


def _watch(loop: asyncio.AbstractEventLoop) -> _Watch:
    watch: _Watch | None = getattr(_watches, "watch", None)
    if watch is None or watch.loop is not loop:
        watch = _watches.watch = _Watch(loop)
    return watch


class deadline:  # noqa: N801 - used as a function: ``async with deadline(5.0):``
    """Run the block within ``seconds``, else raise the 503 :class:`ApiError`.

    (A class, not a generator-based context manager: every command enters one; and its
    timer is the loop's :class:`_Watch`, not one of its own.)"""

    __slots__ = ("seconds", "write", "command", "shown", "_timeout", "_watch", "_entry",
                 "_ends_at")

    def __init__(self, seconds: float, write: bool = False, shown: float | None = None,
                 command: bool = True) -> None:
        self.seconds = seconds
        self.write = write
        self.command = command  # a write of a command (else of another request)
        self.shown = seconds if shown is None else shown  # the deadline the error names
        self._timeout: asyncio.Timeout | None = None
        self._watch: _Watch | None = None
        self._entry: _Entry | None = None
        self._ends_at: Token[float | None] | None = None

    async def __aenter__(self) -> None:
        if self.seconds > 0:
            loop = asyncio.get_running_loop()
            ends_at = loop.time() + self.seconds
            outer = _ENDS_AT.get()
            self._ends_at = _ENDS_AT.set(ends_at if outer is None else min(outer, ends_at))
            task = asyncio.current_task()
            if task is not None:
                self._watch = _watch(loop)
                self._entry = self._watch.add(task, ends_at)
            if self._entry is None:
                self._timeout = asyncio.timeout(self.seconds)
                await self._timeout.__aenter__()

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        if self._ends_at is not None:
            _ENDS_AT.reset(self._ends_at)
        entry = self._entry
        if entry is not None:
            if entry.state == _EXPIRED:
                # As asyncio.timeout: the cancel was ours unless another came since.
                assert entry.task is not None
                if entry.task.uncancel() <= entry.cancelling and exc_type is asyncio.CancelledError:
                    raise too_late(self.shown, self.write, self.command) from None
            entry.state, entry.task = _DONE, None
            assert self._watch is not None
            self._watch.done(entry)
            return
        timeout = self._timeout
        if timeout is None:
            return
        try:
            await timeout.__aexit__(exc_type, exc, tb)
        except TimeoutError:
            if timeout.expired():
                raise too_late(self.shown, self.write, self.command) from None
            raise
        if exc_type is TimeoutError and timeout.expired():
            raise too_late(self.shown, self.write, self.command) from None
        # else a timeout of an inner call, not ours, goes on as it is
