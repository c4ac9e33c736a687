"""How late the event loop runs: the one measure of "this process gets less CPU than its
load needs" (or "something blocked the loop").

A task sleeps :data:`PROBE_S` at a time and records how much later than asked it woke
up, in the ``solitaire_event_loop_lag_seconds`` histogram. Every latency the service
has (a command's ack, a diff's fan-out) is late by at least as much. A lateness over
:data:`WARN_S` is also logged, at most once a minute, with how often it happened.
A probe costs one timer wake-up (a few microseconds) every :data:`PROBE_S`.
"""

from __future__ import annotations

import asyncio
import logging
import time

from service.runtime.background import Background
from service.runtime.metrics import Histogram

log = logging.getLogger(__name__)

PROBE_S = 0.1
WARN_S = 1.0
WARN_EVERY_S = 60.0


class LoopLag:
    """The probe task (see the module's text); :meth:`start` and :meth:`stop` on the
    running loop."""

    def __init__(self, histogram: Histogram) -> None:
        self.histogram = histogram
        self._probing = Background(self._probe, "loop-lag")

    def start(self) -> None:
        self._probing.start()

    async def stop(self) -> None:
        await self._probing.stop()

    async def _probe(self) -> None:
        observe = self.histogram.observe
        clock = time.perf_counter
        warned_at, late_since_warned, worst = -WARN_EVERY_S, 0, 0.0
        while True:
            due = clock() + PROBE_S
            await asyncio.sleep(PROBE_S)
            late = max(0.0, clock() - due)
            observe(late)
            if late > WARN_S:
                late_since_warned += 1
                worst = max(worst, late)
                now = clock()
                if now - warned_at >= WARN_EVERY_S:
                    log.warning(
                        "the event loop ran late by up to %.1f s (%d times over %.0f s since "
                        "the last warning): this process gets less CPU than its load needs, "
                        "or something blocked the loop; every reply was late by as much",
                        worst, late_since_warned, WARN_S)
                    warned_at, late_since_warned, worst = now, 0, 0.0
