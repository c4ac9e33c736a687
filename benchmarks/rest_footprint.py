"""The footprint of one instance at rest: its processes, their RSS and PSS.

Starts ``python -m service`` (its own embedded store, the default settings but the
daily deals' node budget and the port) from a checkout, waits until it is ready and
has chosen today's and tomorrow's daily deals, waits ``--settle-s`` more (past the
solver's idle time, so its processes may stop), then reads every process of the
instance's tree in /proc: each one's command, RSS (``VmRSS`` of /proc/<pid>/status)
and PSS (``Pss`` of /proc/<pid>/smaps_rollup: shared pages divided among their
sharers, so the PSS of the processes adds up to what they hold together).

    python -m benchmarks.rest_footprint [--root CHECKOUT] [--settle-s 75]

``--root`` runs another checkout's service (a worktree of an older commit) with this
Python, to compare before and after in one session. Linux only.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def tree(pid: int) -> list[int]:
    """``pid`` and its descendants."""
    out = [pid]
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as f:
            for child in f.read().split():
                out += tree(int(child))
    return out


def field_kib(path: str, name: str) -> int:
    with open(path) as f:
        for line in f:
            if line.startswith(name + ":"):
                return int(line.split()[1])
    return 0


def describe(pid: int) -> str:
    args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    text = " ".join(a.decode(errors="replace") for a in args if a)
    if "resource_tracker" in text:
        return "multiprocessing resource tracker"
    if "multiprocessing" in text:
        return "solver process (multiprocessing spawn)"
    if "-m service" in text:
        return "service (python -m service)"
    return text[:60]


def wait_ready(url: str, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    today = dt.datetime.now(dt.UTC).date()
    for path in ["/readyz"] + [f"/v1/daily?date={d.isoformat()}"
                               for d in (today, today + dt.timedelta(days=1))]:
        while True:
            try:
                with urllib.request.urlopen(url + path, timeout=5) as r:
                    if r.status == 200:
                        break
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                raise SystemExit(f"{path} did not answer 200 within {timeout_s} s")
            time.sleep(0.5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to run")
    parser.add_argument("--settle-s", type=float, default=75.0,
                        help="seconds at rest after the daily deals are chosen")
    parser.add_argument("--daily-solve-nodes", type=int, default=200_000,
                        help="the daily deals' node budget (smaller than the default, to "
                             "bound the start-up; the same for every checkout compared)")
    parser.add_argument("--timeout-s", type=float, default=900.0)
    args = parser.parse_args()
    port = free_port()
    with tempfile.TemporaryDirectory() as data:
        env = {**os.environ, "SOLITAIRE_PORT": str(port), "SOLITAIRE_DATA_DIR": data,
               "SOLITAIRE_DAILY_SOLVE_NODES": str(args.daily_solve_nodes),
               "PYTHONPATH": str(args.root)}
        env.pop("REDIS_URL", None)
        started = time.monotonic()
        proc = subprocess.Popen([sys.executable, "-m", "service"], cwd=args.root, env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_ready(f"http://127.0.0.1:{port}", args.timeout_s)
            chosen_s = time.monotonic() - started
            time.sleep(args.settle_s)
            rows = []
            for pid in tree(proc.pid):
                try:
                    rows.append((describe(pid), pid,
                                 field_kib(f"/proc/{pid}/status", "VmRSS"),
                                 field_kib(f"/proc/{pid}/smaps_rollup", "Pss")))
                except OSError:
                    continue
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
    print(f"checkout {args.root}, {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.1f}; daily deals chosen {chosen_s:.0f} s after the start, "
          f"measured {args.settle_s:g} s later")
    print("| process | pid | RSS MiB | PSS MiB |")
    print("|---|---|---|---|")
    for name, pid, rss, pss in rows:
        print(f"| {name} | {pid} | {rss / 1024:.1f} | {pss / 1024:.1f} |")
    print(f"| **{len(rows)} processes** | | **{sum(r[2] for r in rows) / 1024:.0f}** | "
          f"**{sum(r[3] for r in rows) / 1024:.0f}** |")


if __name__ == "__main__":
    main()
