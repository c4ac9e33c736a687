"""``python -m clients.python play``: a game in the terminal, over the SDK.

The I/O loop only: reading lines, printing boards. What a line means is
:mod:`.notation`'s, how a board looks :mod:`.render`'s.
"""

from __future__ import annotations

import asyncio
import queue
import sys
import threading
from collections.abc import Awaitable, Callable, Mapping

import aiohttp

from protocol.fields import OptionValue

from .errors import ApiError, ConnectionLost
from .notation import HELP, Action, ParseError, parse
from .render import render, render_hint, render_moves
from .rest import Client

ReadLine = Callable[[str], Awaitable[str | None]]
Write = Callable[[str], None]


class StdinReader:
    """Lines from the terminal (None at end of input) without blocking the event loop.

    ``input()`` runs in a daemon thread, one prompt at a time (so the prompt comes
    after what was printed before it, and readline editing works); a daemon thread
    does not keep Ctrl-C waiting for a line."""

    def __init__(self) -> None:
        self._requests: queue.SimpleQueue[
            tuple[str, asyncio.AbstractEventLoop, asyncio.Future[str | None]]
        ] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._ended = False

    async def __call__(self, prompt: str) -> str | None:
        if self._ended:
            return None
        loop = asyncio.get_running_loop()
        future: asyncio.Future[str | None] = loop.create_future()
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="stdin", daemon=True)
            self._thread.start()
        self._requests.put((prompt, loop, future))
        return await future

    def _run(self) -> None:
        while True:
            prompt, loop, future = self._requests.get()
            try:
                line: str | None = input(prompt)
            except (EOFError, OSError, ValueError):
                line = None
                self._ended = True
            loop.call_soon_threadsafe(_resolve, future, line)
            if line is None:
                return


def _resolve(future: asyncio.Future[str | None], line: str | None) -> None:
    if not future.done():
        future.set_result(line)


def write_stdout(text: str) -> None:
    print(text, flush=True)


async def play(
    url: str,
    variant: str,
    *,
    seed: int | None = None,
    name: str = "player",
    token: str | None = None,
    options: Mapping[str, OptionValue] | None = None,
    color: bool = False,
    read_line: ReadLine | None = None,
    write: Write = write_stdout,
) -> int:
    """Deal a game and play it from ``read_line`` until it is won or resigned, or the
    input ends; the exit status (0, or 1 when the service refused to start a game)."""
    read_line = read_line or StdinReader()
    async with Client(url, token) as client:
        try:
            if client.token is None:
                await client.create_player(name)
            layouts = {v.id: v for v in await client.variants()}
            created = await client.create_game(variant, seed=seed, options=options)
        except ApiError as err:
            write(f"cannot start: {err.message}")
            return 1
        info = layouts[created.state.variant]
        async with client.socket(created.game_id, state=created.state) as sock:
            write(render(sock.state, info, color=color))
            write("Type h for help.")
            while True:
                line = await read_line("> ")
                if line is not None and not line.strip():
                    continue
                try:
                    action = Action("leave") if line is None else parse(line)
                except ParseError as err:
                    write(str(err))
                    continue
                if action.kind == "leave":
                    write(f"Bye. The game {created.game_id} stays where it is.")
                    return 0
                if action.kind == "help":
                    write(HELP)
                    continue
                try:
                    if action.kind == "moves":
                        write(render_moves(await client.moves(created.game_id)))
                        continue
                    if action.kind == "hint":
                        write(render_hint(await client.hint(created.game_id)))
                        continue
                    assert action.command is not None
                    await sock.send(action.command)
                except ApiError as err:
                    write(f"{err.code.replace('_', ' ')}: {err.message}")
                    continue
                except (ConnectionLost, aiohttp.ClientError) as exc:
                    write(f"connection lost: {exc}")
                    return 1
                write(render(sock.state, info, color=color))
                if sock.state.status in ("won", "resigned"):
                    return 0


def main(
    url: str,
    variant: str,
    seed: int | None,
    name: str,
    token: str | None,
    options: Mapping[str, OptionValue],
    color: bool | None,
) -> int:
    use_color = sys.stdout.isatty() if color is None else color
    return asyncio.run(
        play(url, variant, seed=seed, name=name, token=token, options=options, color=use_color)
    )
