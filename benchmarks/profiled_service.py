"""``python -m service`` under cProfile counting CPU time (``time.thread_time``), not wall
time, so that a busy shared machine does not charge its waits to whatever function was
running; the statistics go to the file named by ``SOLITAIRE_BENCH_PROFILE`` on exit.
Used by ``benchmarks/ws_load.py --profile``."""

import cProfile
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from service.__main__ import run  # noqa: E402

if __name__ == "__main__":  # not in the solver's worker processes, which re-import this file
    profiler = cProfile.Profile(time.thread_time)
    try:
        profiler.runcall(run)  # on the service's allocator: run starts this script again
    finally:
        profiler.dump_stats(os.environ["SOLITAIRE_BENCH_PROFILE"])
