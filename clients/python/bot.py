"""``python -m clients.python bot``: a greedy player that knows no rules.

It plays only what the server lists as legal (the ``moves`` its game's socket sends
after each diff) and sends its choice over that WebSocket (:class:`GameSocket`). The
policy, in order:

1. a move to a foundation (not between foundations);
2. a move that turns a face-down card up, or empties a pile (not onto an empty one);
3. a draw;
4. any other move: from the waste, stock or a reserve, then between tableau piles,
   then from a foundation.

It never plays the exact reverse of its previous move, nor the same command twice
from the same position (a position is the visible piles): that is what ends the
draw cycles of Gilbert. With nothing left to try, or after ``max_steps`` commands,
it resigns. The policy is a pure function (:func:`choose`), tested without a server.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from protocol.commands import Command, Draw, Move, Resign
from protocol.diffs import GameState
from protocol.fields import OptionValue

from .errors import ApiError, ConnectionLost
from .notation import format_command
from .rest import Client

Position = tuple[tuple[str, int, tuple[str, ...]], ...]
Tried = set[tuple[Position, str]]


def position(state: GameState) -> Position:
    """What the player sees of a game: every pile's face-down count and face-up cards."""
    return tuple(sorted((pid, pile.down, tuple(pile.up)) for pid, pile in state.piles.items()))


def _kind(pile_id: str) -> str:
    return pile_id.partition("/")[0]


def _priority(command: Command, state: GameState) -> int:
    """Lower is better; see the module's docstring."""
    if isinstance(command, Draw):
        return 3
    if not isinstance(command, Move):
        return 9
    source = state.piles.get(command.from_)
    target = state.piles.get(command.to)
    source_kind, target_kind = _kind(command.from_), _kind(command.to)
    if target_kind == "foundation" and source_kind != "foundation":
        return 1
    if source is not None and source_kind != "foundation" and command.count >= len(source.up):
        if source.down > 0:
            return 2  # turns a card face up
        if (
            source_kind in ("tableau", "reserve")
            and target is not None
            and (target.up or target.down)
        ):
            return 2  # empties a pile
    if source_kind in ("waste", "stock", "reserve"):
        return 4
    if source_kind == "tableau":
        return 5
    return 6


def _reverses(command: Command, previous: Command | None) -> bool:
    return (
        isinstance(command, Move)
        and isinstance(previous, Move)
        and command.from_ == previous.to
        and command.to == previous.from_
    )


def choose(
    moves: Iterable[Command],
    state: GameState,
    previous: Command | None = None,
    tried: Tried | None = None,
) -> Command | None:
    """The bot's pick among the legal ``moves`` (None: nothing worth trying; resign).

    ``previous`` is the bot's last command; ``tried`` the (position, command) pairs
    already played, which are not played again. Ties keep the server's order."""
    here = position(state)
    candidates = [
        m
        for m in moves
        if not isinstance(m, Resign)
        and not _reverses(m, previous)
        and (tried is None or (here, format_command(m)) not in tried)
    ]
    if not candidates:
        return None
    return min(candidates, key=lambda m: _priority(m, state))  # min is stable: first of the best


@dataclass
class GameResult:
    """How one game went."""

    game_id: str
    variant: str
    seed: int | None
    status: str
    moves: int
    foundation_cards: int
    commands: int  # acknowledged commands, a resign included
    resigned_at_cap: bool = False


@dataclass
class BotSummary:
    """What a run did; ``commands_per_s`` over the whole run's wall time."""

    variant: str
    games: int = 0
    wins: int = 0
    losses: int = 0
    resigned: int = 0
    failed: int = 0  # games abandoned on an error (see ``failures``)
    moves: int = 0
    commands: int = 0  # acknowledged, counted as they come (failed games' included)
    errors: int = 0
    reconnects: int = 0
    elapsed_s: float = 0.0
    results: list[GameResult] = field(default_factory=list, repr=False)
    failures: list[str] = field(default_factory=list, repr=False)

    @property
    def commands_per_s(self) -> float:
        return self.commands / self.elapsed_s if self.elapsed_s > 0 else 0.0

    def add(self, result: GameResult) -> None:
        self.games += 1
        self.moves += result.moves
        if result.status == "won":
            self.wins += 1
        elif result.status == "lost":
            self.losses += 1
        elif result.status == "resigned":
            self.resigned += 1
        self.results.append(result)

    def fail(self, what: str) -> None:
        self.failed += 1
        self.errors += 1
        self.failures.append(what)

    def as_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        del data["results"]
        data["failures"] = self.failures[:20]
        data["commands_per_s"] = round(self.commands_per_s, 1)
        data["elapsed_s"] = round(self.elapsed_s, 3)
        return data

    def format(self) -> str:
        return (
            f"{self.variant}: {self.games} games, {self.wins} won, {self.losses} lost, "
            f"{self.resigned} resigned"
            + (f", {self.failed} failed" if self.failed else "")
            + f"; {self.moves} moves, {self.commands} commands in {self.elapsed_s:.1f} s "
            f"({self.commands_per_s:.0f} commands/s)"
            + (f"; {self.errors} errors" if self.errors else "")
            + (f"; {self.reconnects} reconnects" if self.reconnects else "")
        )


async def play_game(
    client: Client,
    variant: str,
    seed: int | None = None,
    options: Mapping[str, OptionValue] | None = None,
    max_steps: int = 500,
    summary: BotSummary | None = None,
) -> GameResult:
    """Deal one game and play it to the end with :func:`choose`, over the WebSocket."""
    created = await client.create_game(variant, seed=seed, options=options)
    game_id = created.game_id
    commands = 0
    capped = False
    # The legal moves come with each diff over the socket (moves=True): a REST read per
    # step would count against the address's read limit, which concurrent bots share.
    async with client.socket(game_id, state=created.state, moves=True) as sock:

        async def send(command: Command, expected_seq: int) -> None:
            nonlocal commands
            await sock.send(command, expected_seq=expected_seq)
            commands += 1
            if summary is not None:
                summary.commands += 1

        previous: Command | None = None
        tried: Tried = set()
        while sock.state.status == "playing":
            if commands >= max_steps:
                capped = True
                await send(Resign(), sock.seq)
                break
            legal = await sock.legal_moves()
            state = sock.state
            choice = choose(legal.moves, state, previous, tried)
            if choice is None:
                await send(Resign(), legal.seq)
                break
            tried.add((position(state), format_command(choice)))
            try:
                await send(choice, legal.seq)
            except ApiError as err:
                if err.code not in ("illegal_move", "conflict"):
                    raise
                if summary is not None:
                    summary.errors += 1
                continue  # the position changed under us: ask for the moves again
            previous = choice
        if summary is not None:
            summary.reconnects += sock.stats.reconnects
        final = sock.state
    return GameResult(
        game_id,
        variant,
        final.seed if final.seed is not None else seed,
        final.status,
        final.stats.moves,
        final.stats.foundation_cards,
        commands,
        capped,
    )


async def run_bot(
    url: str,
    variant: str,
    games: int,
    *,
    concurrency: int = 4,
    seed: int | None = None,
    options: Mapping[str, OptionValue] | None = None,
    max_steps: int = 500,
    on_result: Callable[[GameResult, BotSummary], None] | None = None,
    on_tick: Callable[[BotSummary], None] | None = None,
    tick_s: float = 5.0,
) -> BotSummary:
    """Play ``games`` games of ``variant`` with ``concurrency`` workers, each a player of
    its own (rate limits are per player); game ``i`` uses deal ``seed + i`` when ``seed``
    is given. ``on_result`` is called as each game ends, ``on_tick`` every ``tick_s``.

    A game that fails (an error from the service, a lost connection) is counted in
    ``failed`` with the reason in ``failures``, and the run goes on. A worker refused its
    player leaves its games to the others (its reason in ``failures``); games no worker
    could play are counted ``failed``. Only a service that does not answer at all
    (``aiohttp.ClientConnectorError``) ends the run with that error."""
    summary = BotSummary(variant)
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(games):
        queue.put_nowait(i)
    started = time.monotonic()
    # No connection cap: every worker holds a WebSocket and makes REST calls beside it.
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:

        async def worker(n: int) -> None:
            client = Client(url, session=session)
            try:
                await client.create_player(f"bot-{n}")
            except aiohttp.ClientConnectorError:
                raise  # nothing answers there: the run cannot start (one line, from main)
            except (TimeoutError, ApiError, aiohttp.ClientError) as exc:
                # Not a game: the games this worker would have played are left to the
                # others, and those no worker could play are counted failed below.
                summary.failures.append(f"worker {n}: no player: {exc!r}")
                return
            while not queue.empty():
                i = queue.get_nowait()
                deal = None if seed is None else seed + i
                try:
                    result = await play_game(client, variant, deal, options, max_steps, summary)
                except (TimeoutError, ApiError, ConnectionLost, aiohttp.ClientError) as exc:
                    summary.fail(f"game {i} (deal {deal}): {exc!r}")
                    continue
                summary.elapsed_s = time.monotonic() - started
                summary.add(result)
                if on_result is not None:
                    on_result(result, summary)

        async def ticker() -> None:
            assert on_tick is not None
            while True:
                await asyncio.sleep(tick_s)
                summary.elapsed_s = time.monotonic() - started
                on_tick(summary)

        tick = asyncio.create_task(ticker()) if on_tick is not None else None
        try:
            await asyncio.gather(*(worker(n) for n in range(max(1, min(concurrency, games)))))
            while not queue.empty():
                summary.fail(f"game {queue.get_nowait()}: not played, no worker has a player")
        finally:
            if tick is not None:
                tick.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await tick
    summary.elapsed_s = time.monotonic() - started
    return summary
