"""What one anonymous watcher can make the service send: bytes in and out for
``--hellos`` hellos ``{"since": 0}`` on one socket of a public game of
``--events`` events, with the service's defaults and with the hardening lifted
(hellos unlimited, replays never replaced by a snapshot), as issue 11 measured it.

    python benchmarks/amplification.py --events 300 --hellos 200

Prints, per configuration: bytes sent by the client, bytes and messages received,
the refused hellos, and the ratio out/in. Bounded: every wait has a timeout.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._harness import load_average, service_processes, store  # noqa: E402

LIFTED = {
    "SOLITAIRE_HELLO_RATE_PER_S": "1000000",
    "SOLITAIRE_HELLO_BURST": "1000000",
    "SOLITAIRE_REPLAY_MAX_DIFFS": "1000000000",
}


async def measure(base: str, events: int, hellos: int) -> dict[str, float]:
    async with aiohttp.ClientSession() as s:
        async with s.post(base + "/v1/players", json={"name": "owner"}) as r:
            token = (await r.json())["token"]
        auth = {"Authorization": f"Bearer {token}"}
        async with s.post(
            base + "/v1/games", json={"variant": "gilbert", "seed": 3, "public": True}, headers=auth
        ) as r:
            game_id = (await r.json())["game_id"]
        for i in range(events):
            command = {"type": "undo"} if i % 2 else {"type": "draw"}
            async with s.post(
                base + f"/v1/games/{game_id}/commands", json={"command": command}, headers=auth
            ) as r:
                assert r.status == 200, await r.text()
        ws_url = base.replace("http", "ws") + f"/v1/games/{game_id}/ws"
        sent = received = messages = refused = 0
        async with s.ws_connect(ws_url, max_msg_size=0) as ws:
            hello = json.dumps({"type": "hello", "since": 0})
            for _ in range(hellos):
                await ws.send_str(hello)
                sent += len(hello)
            answered = 0
            while answered < hellos:
                msg = await ws.receive(timeout=30)
                if msg.type is not aiohttp.WSMsgType.TEXT:
                    break
                received += len(msg.data)
                messages += 1
                body = json.loads(msg.data)
                if body["type"] == "synced":
                    answered += 1
                elif body["type"] == "error":
                    refused += 1
                    answered += 1
    return {
        "in_bytes": sent,
        "out_bytes": received,
        "messages": messages,
        "refused": refused,
        "ratio": received / sent,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=300)
    parser.add_argument("--hellos", type=int, default=200)
    args = parser.parse_args()
    print(f"load average before: {load_average()}")
    with store() as redis_url:
        setup = {
            "SOLITAIRE_RATE_LIMIT_PER_S": "100000",
            "SOLITAIRE_RATE_LIMIT_BURST": "100000",
        }  # the owner's moves
        for name, env in (("defaults", {}), ("hardening lifted", LIFTED)):
            with service_processes(redis_url, 1, **setup, **env) as urls:
                m = asyncio.run(measure(urls[0], args.events, args.hellos))
            print(
                f"{name:17s} in {m['in_bytes']:>7,} B  out {m['out_bytes']:>11,} B "
                f"in {m['messages']:>7,} "
                f"messages  refused hellos {m['refused']:>4}  out/in {m['ratio']:,.0f}"
            )
    print(f"load average after: {load_average()}  (pid {os.getpid()})")


if __name__ == "__main__":
    main()
