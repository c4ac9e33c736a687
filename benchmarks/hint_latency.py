"""A hint's answer time through the service, with the default hint settings.

One service process (``python -m service``, default settings but for the per-address and
per-player rate limits, which would measure the limits) on a fresh store. For each game
(``--configs``), ``--games`` games of the first deals the full-information solver wins
(``benchmarks/data/winnability-<config>.csv``) are played by a client that asks
``POST /v1/games/{id}/hint`` and sends the command it suggests, as a player following
the hints would, up to ``--hints`` hints a game or its end: hints on the positions of
real games, early and late, one request at a time. Prints the answer times (from
sending the request to reading the whole reply), median and p95, per game and overall,
with the load average of the shared machine.

    python benchmarks/hint_latency.py --games 5 --hints 60
"""

from __future__ import annotations

import argparse
import http.client
import json
import sys
import time
from typing import Any
from urllib.parse import urlsplit

from _harness import load_average, median, percentile, service_processes, store
from winnability import CONFIGS, read_rows

from service.solver import native

LIFTED = {"SOLITAIRE_RATE_LIMIT_PER_S": "1000000", "SOLITAIRE_RATE_LIMIT_BURST": "1000000"}


class Client:
    def __init__(self, base: str) -> None:
        url = urlsplit(base)
        self.conn = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port, timeout=30)

    def request(self, method: str, path: str, token: str | None = None,
                body: Any = None) -> tuple[int, Any, float]:
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        data = None if body is None else json.dumps(body).encode()
        began = time.perf_counter()
        self.conn.request(method, path, body=data, headers=headers)
        reply = self.conn.getresponse()
        raw = reply.read()
        took = time.perf_counter() - began
        return reply.status, json.loads(raw) if raw else None, took


def play(client: Client, token: str, variant: str, options: dict[str, Any], seed: int,
         hints: int) -> list[float]:
    status, body, _ = client.request("POST", "/v1/games", token,
                                     {"variant": variant, "seed": seed, "options": options})
    assert status == 201, (status, body)
    game = body["game_id"]
    times: list[float] = []
    for _ in range(hints):
        status, hint, took = client.request("POST", f"/v1/games/{game}/hint", token)
        if status == 409:  # the game is over
            break
        assert status == 200, (status, hint)
        times.append(took)
        if hint["command"] is None:
            break
        status, reply, _ = client.request("POST", f"/v1/games/{game}/commands", token,
                                          {"command": hint["command"]})
        assert status == 200, (status, reply)
        if reply["diff"]["status"] != "playing":
            break
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configs", nargs="*", default=list(CONFIGS))
    parser.add_argument("--games", type=int, default=5)
    parser.add_argument("--hints", type=int, default=60, help="at most this many a game")
    args = parser.parse_args()
    print(f"native core: {native.AVAILABLE}; load average before: {load_average()}")
    everything: list[float] = []
    # appendfsync always: a command is acknowledged at once (everysec waits up to a second).
    with store(appendfsync="always") as url, service_processes(url, **LIFTED) as urls:
        client = Client(urls[0])
        status, player, _ = client.request("POST", "/v1/players", body={"name": "bench"})
        assert status == 201, (status, player)
        token = player["token"]
        print("| game | games | hints | median | p95 | max |")
        print("|---|---|---|---|---|---|")
        for config in args.configs:
            variant, options = CONFIGS[config]
            seeds = sorted(int(r["seed"]) for r in read_rows(config)
                           if r["result"] == "won")[:args.games]
            times: list[float] = []
            for seed in seeds:
                times += play(client, token, variant, dict(options), seed, args.hints)
            everything += times
            print(f"| {config} | {len(seeds)} | {len(times)} | {median(times) * 1000:.0f} ms | "
                  f"{percentile(times, 95) * 1000:.0f} ms | {max(times) * 1000:.0f} ms |",
                  flush=True)
    print(f"| all | | {len(everything)} | {median(everything) * 1000:.0f} ms | "
          f"{percentile(everything, 95) * 1000:.0f} ms | {max(everything) * 1000:.0f} ms |")
    print(f"load average after: {load_average()}")


if __name__ == "__main__":
    sys.exit(main())
