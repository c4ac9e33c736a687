"""``python -m clients.python play`` and ``resume``: a game in the terminal, over the SDK.

The player is kept between runs in a file of its own (:mod:`.identity`), so that
``resume`` finds the player's unfinished games (``GET /v1/players/me/games``).

The I/O loop only: reading lines, printing boards. What a line means is
:mod:`.notation`'s, how a board looks :mod:`.render`'s.
"""

from __future__ import annotations

import asyncio
import queue
import shutil
import sys
import textwrap
import threading
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path

import aiohttp

from protocol.diffs import GameState
from protocol.fields import OptionValue
from protocol.rest import GameSummary
from protocol.variants import VariantInfo

from . import identity
from .defaults import command_line
from .errors import ApiError, ConnectionLost
from .notation import HELP, Action, ParseError, in_notation, parse
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


async def sign_in(client: Client, name: str, token: str | None, player_file: Path | None,
                  write: Write, *, create: bool = True) -> bool:
    """Act as the player of ``token``, else as the one kept in ``player_file`` for this
    service, else (``create``) as a new player named ``name``, kept there from then on
    (the file's path said once, when it is made). False when there is no player to be."""
    if token is not None or player_file is None:
        client.token = token
        if token is None and create:
            await client.create_player(name)
        return client.token is not None
    kept = identity.load(player_file, client.base_url)
    if kept is not None:
        client.token = kept.token
        try:
            await client.me()
            return True
        except ApiError as err:
            if err.status not in (401, 404):
                raise
            write(f"the player {kept.name} ({kept.player_id}) kept in {player_file} is no "
                  f"longer known to the service ({err.message})")
            client.token = None
    if not create:
        return False
    created = await client.create_player(name)
    identity.save(player_file, client.base_url,
                  identity.KeptPlayer(created.player_id, created.name, created.token))
    write(f"You play as {created.name} ({created.player_id}). The player and its token are kept "
          f"in {player_file} (readable by you only); "
          f"`{command_line('player', url=client.base_url, player_file=player_file)}` shows "
          f"them, and every play and resume here plays as them.")
    return True


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
    player_file: Path | None = None,
) -> int:
    """Deal a game and play it from ``read_line`` until it is won or resigned, or the
    input ends; the exit status (0, or 1 when the service refused to start a game)."""
    read_line = read_line or StdinReader()
    async with Client(url) as client:
        try:
            await sign_in(client, name, token, player_file, write)
            layouts = {v.id: v for v in await client.variants()}
            created = await client.create_game(variant, seed=seed, options=options)
        except ApiError as err:
            write(f"cannot start: {err.message}")
            return 1
        return await _play_game(client, created.game_id, created.state,
                                layouts[created.state.variant], color, read_line, write,
                                player_file, token)


# How many unfinished games `resume` offers to choose from.
RESUME_CHOICES = 10


async def resume(
    url: str,
    game_id: str | None = None,
    *,
    token: str | None = None,
    color: bool = False,
    read_line: ReadLine | None = None,
    write: Write = write_stdout,
    player_file: Path | None = None,
) -> int:
    """Go on with an unfinished game of the player (``game_id``, else one chosen from their
    newest unfinished games); the exit status (1 when there is none to go on with)."""
    read_line = read_line or StdinReader()
    async with Client(url) as client:
        try:
            if not await sign_in(client, "", token, player_file, write, create=False):
                write(f"no player is kept for {url} in {player_file}: play a game first")
                return 1
            if game_id is None:
                game_id = await _choose(client, read_line, write)
                if game_id is None:
                    return 1
            state = await client.game(game_id)
            layouts = {v.id: v for v in await client.variants()}
        except ApiError as err:
            write(f"cannot resume: {err.message}")
            return 1
        if state.status not in ("playing", "lost"):
            write(f"the game {game_id} is {state.status}: there is nothing left to play")
            return 1
        return await _play_game(client, game_id, state, layouts[state.variant], color,
                                read_line, write, player_file, token)


async def _choose(client: Client, read_line: ReadLine, write: Write) -> str | None:
    """The game the player picks among their newest unfinished ones (None: none, or no pick)."""
    games: list[GameSummary] = []
    for status in ("playing", "lost"):  # lost: an undo may save it
        async for game in client.all_my_games(status=status):
            games.append(game)
            if len(games) >= RESUME_CHOICES * 2:
                break
    games = sorted(games, key=lambda g: g.updated_at, reverse=True)[:RESUME_CHOICES]
    if not games:
        write("you have no unfinished game: play one")
        return None
    if len(games) == 1:
        return games[0].game_id
    for n, game in enumerate(games, 1):
        daily = f", daily {game.daily}" if isinstance(game.daily, str) else ""
        write(f"{n:2}. {game.game_id}  {game.variant}{daily}, {game.status}, seq {game.seq}, "
              f"last played {game.updated_at[:16].replace('T', ' ')} UTC")
    while True:
        line = await read_line(f"which game? (1-{len(games)}, Enter for 1) ")
        if line is None:
            return None
        choice = line.strip() or "1"
        if choice.isdigit() and 1 <= int(choice) <= len(games):
            return games[int(choice) - 1].game_id
        write(f"say a number from 1 to {len(games)}")


async def _play_game(client: Client, game_id: str, state: GameState, info: VariantInfo,
                     color: bool, read_line: ReadLine, write: Write,
                     player_file: Path | None, token: str | None) -> int:
    async with client.socket(game_id, state=state) as sock:
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
                again = command_line("resume", game_id, url=client.base_url,
                                     player_file=player_file, token=token)
                write(f"Bye. The game {game_id} stays where it is: go on with it with "
                      f"`{again}`.")
                return 0
            if action.kind == "help":
                write(HELP)
                continue
            try:
                if action.kind == "moves":
                    write(render_moves(await client.moves(game_id)))
                    continue
                if action.kind == "hint":
                    write(render_hint(await client.hint(game_id)))
                    continue
                assert action.command is not None
                await sock.send(action.command)
            except ApiError as err:
                write(refusal(err))
                continue
            except (ConnectionLost, aiohttp.ClientError) as exc:
                write(f"connection lost: {exc}")
                return 1
            write(render(sock.state, info, color=color))
            if sock.state.status in ("won", "resigned"):
                return 0


def refusal(err: ApiError) -> str:
    """A refusal as the player reads it: pile ids in the notation they type (``t3``, not
    ``tableau/3``), wrapped at the terminal's width between words."""
    text = f"{err.code.replace('_', ' ')}: {in_notation(err.message)}"
    width = max(40, shutil.get_terminal_size((80, 24)).columns - 1)
    return textwrap.fill(text, width, break_long_words=False, break_on_hyphens=False)


def main(
    url: str,
    variant: str,
    seed: int | None,
    name: str,
    token: str | None,
    options: Mapping[str, OptionValue],
    color: bool | None,
    player_file: Path | None = None,
) -> int:
    use_color = sys.stdout.isatty() if color is None else color
    return asyncio.run(
        play(url, variant, seed=seed, name=name, token=token, options=options, color=use_color,
             player_file=player_file)
    )


def main_resume(url: str, game_id: str | None, token: str | None, color: bool | None,
                player_file: Path | None) -> int:
    use_color = sys.stdout.isatty() if color is None else color
    return asyncio.run(resume(url, game_id, token=token, color=use_color,
                              player_file=player_file))


def main_player(url: str, player_file: Path) -> int:
    """Say which player the client plays as at ``url``, and where its token is kept."""
    kept = identity.load(player_file, url)
    if kept is None:
        print(f"no player is kept for {url} in {player_file}: `play` makes one")
        return 1
    print(f"{kept.name} ({kept.player_id}) at {url}, kept in {player_file}\n"
          f"token: {kept.token}\n"
          f"(the token acts as this player: send it as `Authorization: Bearer <token>`)")
    return 0
