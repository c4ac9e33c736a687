"""Put this folder first on PYTHONPATH to run a process without uvloop and hiredis
(``benchmarks/ws_load.py --accel off``): both become unimportable, so the service
and the bare server fall back to asyncio's loop and redis-py's pure-Python parser."""

import sys

sys.modules["uvloop"] = None  # type: ignore[assignment]  # import uvloop -> ImportError
sys.modules["hiredis"] = None  # type: ignore[assignment]
