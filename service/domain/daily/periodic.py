"""A background job of the daily challenges: one step every ``period_s`` until stopped.

A step that fails is logged and tried again at the next period: the job outlives one
bad day or one store outage.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from service.domain.errors import ApiError
from service.store.errors import StoreError


class Periodic:
    def __init__(self, name: str, what: str, step: Callable[[], Awaitable[object]], period_s: float,
                 log: logging.Logger) -> None:
        self.name = name  # the task's
        self.what = what  # for the log: "choosing the daily deals"
        self.step = step
        self.period_s = period_s
        self.log = log
        self._task: asyncio.Task[None] | None = None
        self._stopping = asyncio.Event()

    async def _run(self) -> None:
        while not self._stopping.is_set():
            try:
                await self.step()
            except (StoreError, ApiError) as exc:
                self.log.info("%s: %s (will retry)", self.what, exc)
            except Exception:  # the task must outlive one failure
                self.log.exception("%s failed", self.what)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), self.period_s)

    def start(self) -> None:
        if self._task is None:
            self._stopping = asyncio.Event()
            self._task = asyncio.create_task(self._run(), name=self.name)

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            # The event ends the loop even if a store call swallowed the cancellation
            # (redis-py's Cluster client can), which would otherwise leave it asleep.
            self._stopping.set()
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                await asyncio.wait_for(task, 5.0)
