"""What runs first in each of the solver's worker processes (service/domain/solving.py).

Its own module, importing nothing of the service but the solver: a spawned worker
imports the module of its initializer, and ``service.domain.solving`` would bring aiohttp,
redis-py and the app's modules (1.6 s and about 36 MB per process, measured) into a
process that only ever searches.
"""

from __future__ import annotations

import os
import signal

from service.runtime.lifetime import die_with_parent

# Request workers run at a lower CPU priority than the event loop's process: on a busy
# machine a search waits, a move does not (PROTOCOL latency over hint speed).
WORKER_NICE = 10
BACKGROUND_NICE = 19  # the background worker, where SCHED_IDLE is not available


def start(service_pid: int, background: bool) -> None:
    """Initialize a worker: the solver imported, dead with the service, niced (a
    background worker at SCHED_IDLE, the lowest CPU priority: it gets what nothing
    else wants, and a sliver beside busy processes)."""
    import service.solver  # noqa: F401 - import once per worker, not on the first job

    # A service killed with SIGKILL must not leave its workers searching on as orphans.
    if not die_with_parent(service_pid, signal.SIGKILL):
        os._exit(1)
    if background and hasattr(os, "sched_setscheduler") and hasattr(os, "SCHED_IDLE"):
        try:
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
            return
        except OSError:
            pass
    if hasattr(os, "nice"):
        os.nice(BACKGROUND_NICE if background else WORKER_NICE)
