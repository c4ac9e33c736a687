"""Many timeouts of one length under one timer: what ``asyncio.timeout`` does for one block,
for all the blocks of a :class:`Watch`.

With uvloop a timer is a libuv timer made, started and stopped per block: a few µs for
every command's request deadline (service/domain/deadline.py) and every batch the
store's automatic pipeline sends (service/store/pipeline.py). A :class:`Watch` holds the
running blocks in the order they end, under one timer: a block costs a place in a queue.
Blocks of the same length come in the order they end; one that would end before the last
one queued (a shorter one) is not taken (:meth:`Watch.add` returns None: the caller uses
``asyncio.timeout``).
"""

from __future__ import annotations

import asyncio
from collections import deque

LIVE, DONE, EXPIRED = 0, 1, 2
# How early a block may be cut short (never late): the watch wakes at most once a tick, and
# cuts short everything due before the next one.
TICK_S = 0.01


class Entry:
    """One running block in a :class:`Watch`."""

    __slots__ = ("cancelling", "ends_at", "state", "task")

    def __init__(self, task: asyncio.Task[object], ends_at: float) -> None:
        self.task: asyncio.Task[object] | None = task
        self.ends_at = ends_at
        self.cancelling = task.cancelling()  # the task's cancel requests before this one
        self.state = LIVE

    def end(self) -> bool:
        """The block has ended (its task is told nothing more): whether the watch cut it
        short, and the CancelledError it raised was the watch's (as ``asyncio.timeout``
        tells its own cancel from another)."""
        ours = False
        if self.state == EXPIRED:
            assert self.task is not None
            ours = self.task.uncancel() <= self.cancelling
        self.state, self.task = DONE, None
        return ours


class Watch:
    """The running blocks of one event loop, in the order they end, under one timer."""

    __slots__ = ("entries", "loop", "timer")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.entries: deque[Entry] = deque()
        self.timer: asyncio.TimerHandle | None = None

    def add(self, task: asyncio.Task[object], ends_at: float) -> Entry | None:
        """Cancel ``task`` at ``ends_at`` (the loop's time) unless :meth:`done` comes first;
        None when a block queued already ends later (use ``asyncio.timeout``)."""
        entries = self.entries
        if entries and entries[-1].ends_at > ends_at:
            return None
        entry = Entry(task, ends_at)
        entries.append(entry)
        if self.timer is None:
            self.timer = self.loop.call_at(max(ends_at - TICK_S, self.loop.time()), self._fire)
        return entry

    def done(self, entry: Entry) -> bool:
        """``entry``'s block has ended: whether it was cut short by this watch (see
        :meth:`Entry.end`). It is forgotten, with the ended ones behind it, when it is the
        oldest (the queue holds about the blocks running, not every block of the last
        ``seconds``)."""
        ours = entry.end()
        entries = self.entries
        if entries and entries[0] is entry:
            entries.popleft()
            while entries and entries[0].state != LIVE:
                entries.popleft()
        return ours

    def _fire(self) -> None:
        self.timer = None
        entries = self.entries
        now = self.loop.time()
        due = now + TICK_S
        while entries:
            entry = entries[0]
            if entry.state == LIVE:
                if entry.ends_at > due:
                    break
                entry.state = EXPIRED
                assert entry.task is not None
                entry.task.cancel()
            entries.popleft()
        if entries:
            self.timer = self.loop.call_at(max(entries[0].ends_at - TICK_S, now + TICK_S),
                                           self._fire)
