"""The minimal durable path: what a command can cost at best on this stack.

An aiohttp WebSocket server that answers the same load generator as the
service (``benchmarks/ws_load.py``: ``POST /v1/players``, ``POST /v1/games``,
``GET /v1/games/{id}/ws`` with ``hello`` -> ``synced``, ``command`` -> ``ack``)
but does per command only what a durable game service cannot avoid:

- msgspec JSON decode of the message;
- one ``EVALSHA`` through redis-py's default client and pool (``Redis.from_url``:
  a connection checked out of the pool per call, at most 100 of them): check
  and bump the game's seq, ``RPUSH`` the event (about 150 B), ``PUBLISH`` it
  with its seq (about 200 B);
- the ack (msgspec encode, one text frame).

No rules, no cache, no fan-out listener, no rate limit, no metrics, and no more
than the default pool (the service, too, never has more than one store
connection per concurrent command). The HTTP endpoints write nothing: a game's
seq starts at 0 by its key being absent. Its size is the default pool's, 100
connections; above 100 concurrent commands (the 1,000-client runs) they wait
for a free connection (an ``asyncio.Semaphore`` of the pool's size) instead of
redis-py raising ``MaxConnectionsError``.

    python benchmarks/bare_server.py --redis-url redis://127.0.0.1:6379 --port 8099

uvloop is used when it can be imported and hiredis by redis-py when it can;
``benchmarks/ws_load.py --accel off`` starts this (and the service) with both
made unimportable (``benchmarks/noaccel/sitecustomize.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import secrets
import signal
from typing import Any

import msgspec
import redis.asyncio as aioredis
from aiohttp import WSMsgType, web

LUA = """
local seq = tonumber(redis.call('HGET', KEYS[1], 'seq') or '0')
if seq ~= tonumber(ARGV[1]) then return -1 - seq end
local new = seq + 1
redis.call('HSET', KEYS[1], 'seq', new)
redis.call('RPUSH', KEYS[2], ARGV[2])
redis.call('PUBLISH', KEYS[3], new .. ' ' .. ARGV[2] .. ARGV[3])
return new
"""

EVENT_BYTES = 150  # the event appended (a diff of one move is 150-250 B)
_PAD = b" " * EVENT_BYTES
_PUBLISH_EXTRA = b"x" * 45  # the published message is the event, its seq and this: about 200 B
_decode = msgspec.json.Decoder(dict[str, Any]).decode
_encode = msgspec.json.Encoder().encode
_SYNCED = _encode({"type": "synced", "seq": 0})


def make_app(redis_url: str) -> web.Application:
    client = aioredis.Redis.from_url(redis_url)  # the default pool
    script = client.register_script(LUA)
    slots = asyncio.Semaphore(client.connection_pool.max_connections)
    ids = itertools.count()
    run = secrets.token_hex(4)  # the store outlives this process: a new game is a new key

    async def player(request: web.Request) -> web.Response:
        return web.json_response({"player_id": "p_bare", "token": "bare"})

    async def game(request: web.Request) -> web.Response:
        return web.json_response({"game_id": f"{run}-{next(ids)}"}, status=201)

    async def socket(request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(compress=False)
        await ws.prepare(request)
        key = request.match_info["game_id"]
        keys = [f"b:{{{key}}}:m", f"b:{{{key}}}:e", f"b:{{{key}}}:c"]
        async for msg in ws:
            if msg.type is not WSMsgType.TEXT:
                break
            data = _decode(msg.data)
            if data["type"] == "hello":
                await ws.send_frame(_SYNCED, WSMsgType.TEXT)
                continue
            raw = msg.data.encode()
            event = raw + _PAD[: max(0, EVENT_BYTES - len(raw))]
            async with slots:
                seq = await script(keys=keys, args=[data["expected_seq"], event, _PUBLISH_EXTRA])
            if seq < 0:
                await ws.send_frame(
                    _encode(
                        {
                            "type": "error",
                            "command_id": data["command_id"],
                            "error": {
                                "code": "conflict",
                                "message": "stale seq",
                                "details": {"seq": -1 - seq},
                            },
                        }
                    ),
                    WSMsgType.TEXT,
                )
            else:
                await ws.send_frame(
                    _encode({"type": "ack", "command_id": data["command_id"], "seq": seq}),
                    WSMsgType.TEXT,
                )
        return ws

    app = web.Application()
    app.router.add_post("/v1/players", player)
    app.router.add_post("/v1/games", game)
    app.router.add_get("/v1/games/{game_id}/ws", socket)

    async def close_client(app: web.Application) -> None:
        await client.aclose()

    app.on_cleanup.append(close_client)
    return app


async def serve(redis_url: str, host: str, port: int) -> None:
    runner = web.AppRunner(make_app(redis_url), handle_signals=False)
    await runner.setup()
    await web.TCPSite(runner, host, port).start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await runner.cleanup()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--redis-url", required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    try:
        import uvloop
    except ImportError:
        asyncio.run(serve(args.redis_url, args.host, args.port))
    else:
        uvloop.run(serve(args.redis_url, args.host, args.port))


if __name__ == "__main__":
    main()
