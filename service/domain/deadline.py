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
from contextvars import ContextVar, Token
from types import TracebackType

from service.domain.errors import ApiError, unknown_outcome
from service.runtime.timeouts import Entry, Watch

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


_watches = threading.local()  # each thread's loop's Watch


def _watch(loop: asyncio.AbstractEventLoop) -> Watch:
    watch: Watch | None = getattr(_watches, "watch", None)
    if watch is None or watch.loop is not loop:
        watch = _watches.watch = Watch(loop)
    return watch


class deadline:  # noqa: N801 - used as a function: ``async with deadline(5.0):``
    """Run the block within ``seconds``, else raise the 503 :class:`ApiError`.

    (A class, not a generator-based context manager: every command enters one; and its
    timer is the loop's :class:`~service.runtime.timeouts.Watch`, not one of its own.)"""

    __slots__ = ("seconds", "write", "command", "shown", "_timeout", "_watch", "_entry",
                 "_ends_at")

    def __init__(self, seconds: float, write: bool = False, shown: float | None = None,
                 command: bool = True) -> None:
        self.seconds = seconds
        self.write = write
        self.command = command  # a write of a command (else of another request)
        self.shown = seconds if shown is None else shown  # the deadline the error names
        self._timeout: asyncio.Timeout | None = None
        self._watch: Watch | None = None
        self._entry: Entry | None = None
        self._ends_at: Token[float | None] | None = None

    async def __aenter__(self) -> None:
        if self.seconds > 0:
            loop = asyncio.get_running_loop()
            ends_at = loop.time() + self.seconds
            outer = _ENDS_AT.get()
            self._ends_at = _ENDS_AT.set(ends_at if outer is None else min(outer, ends_at))
            task = asyncio.current_task(loop)  # with its loop: no second getpid (3.11)
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
            assert self._watch is not None
            # As asyncio.timeout: the cancel was ours unless another came since.
            if self._watch.done(entry) and exc_type is asyncio.CancelledError:
                raise too_late(self.shown, self.write, self.command) from None
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
