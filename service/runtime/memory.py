"""Memory given back to the system after a burst of sockets has closed.

A burst of WebSockets (a reconnect storm, a busy hour) grows a worker's heap: each socket
holds about 30 KiB (its buffers, its state, its share of the fan-out). When they close,
Python frees their objects, but the memory mostly stays with the process: glibc's
``malloc`` keeps freed memory for later, and gives back to the system only what is at
the top of its heap; and the closed sockets' reference cycles wait for a full collection
of the garbage collector, which the service makes rare (see ``_tune_garbage_collector`` in
``service/__main__.py``). Measured in benchmarks/README.md ("Memory"): a worker kept its
peak after 10,000 sockets had closed.

:class:`Trimmer` watches the worker's open sockets, every :data:`CHECK_EVERY_S`. Once
their count has fallen by :data:`TRIM_AFTER_CLOSED` or more since its highest point (since
the last trim) and has stopped falling, the burst has closed. (Or it goes on falling for
:data:`SETTLE_CHECKS` checks: then it gives back without waiting for the end.) Waiting for
the end matters: a trim in the middle of the closing collected the cycles of the sockets
closed so far, and the rest, fewer than :data:`TRIM_AFTER_CLOSED`, waited for a rare full
collection, their objects scattered among the freed memory (in one run a worker trimmed
when 3,442 of its 4,436 sockets had closed, and one of the two workers kept 165 of its 181
MiB: benchmarks/README.md, "Memory"). It then lets go of what the burst left cached
(``forget``: the game cache, whose copies, read by the burst's hellos, sit scattered among
the sockets' freed memory and would keep Python's allocator from returning its arenas;
each game is read from the log again when next used), runs a full collection (a pause of
the loop, like any full collection, but once per burst), then ``malloc_trim(0)`` in a
thread, which returns every free page of the heap to the system. Nothing happens while
sockets only come. Without glibc (``malloc_trim`` missing) only the collection runs.

Between the collection and the trim, :func:`renew_free_lists`: some types keep the memory
of their last freed objects for the next ones (uvloop's callback and timer handles, 250
each; asyncio's future iterators, 255), and at the end of a burst those are the burst's
last, one or a few in each of dozens of Python's 1 MiB arenas that are otherwise empty,
so that no arena can be returned (counted in a worker after 10,000 sockets had closed:
benchmarks/README.md, "Memory given back after a burst"). Making as many again, new, and
letting go of the new ones first fills the lists with them, and the burst's go back to
the allocator, and their arenas with them. Python's own lists (tuples, floats, ...) are
emptied by the full collection itself.

The service runs on glibc's allocator (``PYTHONMALLOC=malloc``, set by
``service/__main__.py``), so Python's objects, too, come from the heap whose free pages the
trim returns. Under Python's own allocator (``PYTHONMALLOC=pymalloc``) the renewal is what
lets its arenas go, and a few live objects still hold some of them after every burst.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import gc
import logging
from collections.abc import Callable, Sized

from service.runtime.background import Background

log = logging.getLogger(__name__)

CHECK_EVERY_S = 5.0
TRIM_AFTER_CLOSED = 1000
SETTLE_CHECKS = 3
FREE_LIST_LENGTH = 256  # uvloop keeps 250 handles of each kind, asyncio 255 future iterators


def _malloc_trim() -> Callable[[], object] | None:
    """glibc's ``malloc_trim(0)``, or None where there is none (musl, macOS)."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        trim = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return lambda: trim(0)


class Trimmer:
    """Gives memory back once ``sockets`` has shrunk by ``after_closed`` from its highest
    count and stopped shrinking, or gone on shrinking for ``settle_checks`` checks (see the
    module's text); :meth:`start` and :meth:`stop` on the running loop."""

    def __init__(self, sockets: Sized, *, forget: Callable[[], object] = lambda: None,
                 check_every_s: float = CHECK_EVERY_S,
                 after_closed: int = TRIM_AFTER_CLOSED,
                 settle_checks: int = SETTLE_CHECKS) -> None:
        self.sockets = sockets
        self.forget = forget
        self.check_every_s = check_every_s
        self.after_closed = after_closed
        self.settle_checks = settle_checks
        self.trims = 0
        self._trim = _malloc_trim()
        self._highest = self._previous = len(sockets)
        self._waited = 0  # checks the count went on falling after it had fallen enough
        self._watching = Background(self._watch, "memory-trimmer")

    def start(self) -> None:
        self._watching.start()

    async def stop(self) -> None:
        await self._watching.stop()

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(self.check_every_s)
            await self.check()

    async def check(self) -> None:
        """One look at the open sockets: memory given back if a burst of them has closed."""
        now = len(self.sockets)
        self._highest = max(self._highest, now)
        if self._highest - now < self.after_closed:
            self._waited = 0
        elif now < self._previous and self._waited < self.settle_checks:
            self._waited += 1  # still closing: give back once they all have
        else:
            await self.give_back()
            log.info("%d sockets closed since there were %d: memory given back",
                     self._highest - now, self._highest)
            self._highest, self._waited = now, 0
        self._previous = now

    async def give_back(self) -> None:
        """What the burst left cached forgotten, a full collection, the free lists renewed,
        then the heap's free pages returned to the system."""
        self.forget()
        gc.collect()
        await renew_free_lists()
        if self._trim is not None:
            await asyncio.to_thread(self._trim)
        self.trims += 1


async def renew_free_lists() -> None:
    """The running loop's handles and asyncio's future iterators kept for reuse (see the
    module's text) replaced by new ones: each list drained (``old``: the objects it kept),
    as many again made (``new``), then the new let go of first, so that they fill the
    list, and the old ones are freed."""
    loop = asyncio.get_running_loop()
    length = FREE_LIST_LENGTH

    def nothing() -> None:
        pass

    def handle() -> asyncio.Handle:
        return loop.call_soon(nothing)

    def timer() -> asyncio.Handle:
        return loop.call_later(3600, nothing)

    for make in (handle, timer):
        old = [make() for _ in range(length)]
        new = [make() for _ in range(length)]
        _cancel(old)
        _cancel(new)
        for _ in range(2):
            await asyncio.sleep(0)  # the loop lets go of the cancelled handles
        del new
        del old
    future = loop.create_future()
    old_iterators = [future.__await__() for _ in range(length)]
    new_iterators = [future.__await__() for _ in range(length)]
    del new_iterators
    del old_iterators
    future.cancel()


def _cancel(handles: list[asyncio.Handle]) -> None:
    for handle in handles:  # (a loop of its own: no name outlives it to hold the last one)
        handle.cancel()
