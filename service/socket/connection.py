"""One client socket on one game: what its parts share.

A connection goes through explicit states: ``hello`` (waiting for the first message,
``hello_timeout_s`` at most: service/socket/handshake.py), ``syncing`` (snapshot or
missed diffs), ``live`` (its commands: service/socket/session.py). Everything the server
sends once it is past its hello goes through its writer (service/socket/writer.py), which
takes nothing more once the socket is closing.
"""

from __future__ import annotations

import enum

from aiohttp import web

from service.context import Context
from service.domain.ratelimit import Bucket
from service.socket.writer import Writer


class State(enum.Enum):
    HELLO = "hello"
    SYNCING = "syncing"
    LIVE = "live"


class Connection:
    __slots__ = ("address", "ctx", "game_id", "hellos", "player", "state", "token_expires",
                 "watching", "writer", "ws")

    def __init__(self, ctx: Context, ws: web.WebSocketResponse, game_id: str,
                 address: str = "") -> None:
        self.ctx = ctx
        self.ws = ws
        self.game_id = game_id
        self.address = address  # the client's, for the per-address limits
        self.state = State.HELLO
        self.player: str | None = None
        self.token_expires: int | None = None  # the socket's token stops commanding then
        self.watching = False  # counted among the game's watchers (ctx.counts)
        settings = ctx.settings
        self.hellos = Bucket(settings.hello_rate_per_s, settings.hello_burst,
                             "hellos on this socket", setting="hello_rate_per_s")
        self.writer = Writer(ctx, ws, game_id)
