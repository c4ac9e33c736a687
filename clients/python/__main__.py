"""``python -m clients.python``: play in the terminal, go on with a game, or run the bot.

python -m clients.python play gilbert --seed 7
python -m clients.python resume            # an unfinished game of yours
python -m clients.python player            # who you play as, and your token
python -m clients.python bot --games 20 --variant gate --concurrency 8 --seed 1

The service's address is ``--url``, else the ``SOLITAIRE_URL`` environment
variable, else http://127.0.0.1:8080 (where ``./run`` starts it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import aiohttp

from protocol.fields import OptionValue

from . import identity
from .bot import BotSummary, GameResult, run_bot
from .defaults import DEFAULT_URL, URL_VARIABLE, default_url
from .notation import HELP

VARIANTS = ("gilbert", "shamrocks", "gate", "caprice")


def _option(text: str) -> tuple[str, OptionValue]:
    """``key=value``: true/false become booleans, digits integers, the rest strings."""
    key, sep, raw = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected key=value, got {text!r}")
    value: OptionValue = raw
    if raw.lower() in ("true", "false"):
        value = raw.lower() == "true"
    elif raw.lstrip("-").isdigit():
        value = int(raw)
    return key, value


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def unreachable(url: str, exc: aiohttp.ClientConnectorError) -> str:
    """The one line said when nothing answers at ``url``: where, why, and what to do."""
    error = exc.os_error
    if isinstance(error, ConnectionRefusedError):
        reason = "connection refused"
    else:
        reason = error.strerror or str(error)
    return (
        f"cannot reach the solitaire service at {url} ({reason}): start it with ./run "
        f"or python -m service, or point --url or {URL_VARIABLE} at a running one"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m clients.python",
        description="Terminal client and bot for the solitaire service (API v1).",
    )
    sub = parser.add_subparsers(dest="mode", required=True, metavar="{play,resume,player,bot}")

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--url",
        default=default_url(),
        help=f"the service's base URL (default: ${URL_VARIABLE} if set, else {DEFAULT_URL})",
    )
    common.add_argument(
        "--option",
        "-o",
        action="append",
        type=_option,
        default=[],
        metavar="KEY=VALUE",
        help="a variant option, e.g. single_card_moves=true (repeatable)",
    )

    kept = argparse.ArgumentParser(add_help=False)
    kept.add_argument(
        "--player-file",
        type=Path,
        default=None,
        help=f"where your player and its token are kept (default: ${identity.FILE_VARIABLE} if "
        f"set, else $XDG_CONFIG_HOME/solitaire/player.json or ~/.config/solitaire/player.json)",
    )
    colors = argparse.ArgumentParser(add_help=False)
    color = colors.add_mutually_exclusive_group()
    color.add_argument(
        "--color",
        dest="color",
        action="store_true",
        default=None,
        help="red cards in red (default: when writing to a terminal)",
    )
    color.add_argument("--no-color", dest="color", action="store_false")

    play = sub.add_parser(
        "play",
        parents=[common, kept, colors],
        help="play a game in the terminal",
        description="Deal a game and play it by typing short commands.",
        epilog=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    play.add_argument(
        "variant", help=f"the variant to play: {', '.join(VARIANTS)} (see GET /v1/variants)"
    )
    play.add_argument(
        "--seed", type=int, default=None, help="a deal number (default: the server picks one)"
    )
    play.add_argument(
        "--name",
        default="player",
        help="your player's name, when the first game makes your player (default: player)",
    )
    play.add_argument(
        "--token",
        default=None,
        help="play as this player (its bearer token) instead of the one kept in the player file",
    )

    resume = sub.add_parser(
        "resume",
        parents=[common, kept, colors],
        help="go on with an unfinished game of yours",
        description="Go on with GAME_ID, or with one of your newest unfinished games (listed "
        "by the service: GET /v1/players/me/games), as the player kept in the player file.",
        epilog=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    resume.add_argument("game_id", nargs="?", default=None, help="the game (default: choose)")
    resume.add_argument("--token", default=None, help="as this player (its bearer token)")

    sub.add_parser(
        "player",
        parents=[common, kept],
        help="who you play as at the service, and your token",
        description="Print the player kept in the player file for the service, with its "
        "token (which acts as the player: keep it to yourself).",
    )

    bot = sub.add_parser(
        "bot",
        parents=[common],
        help="play many games with a greedy bot and print a summary",
        description="Play games through the service with a greedy policy that uses only the "
        "server's legal moves (GET /v1/games/{id}/moves), sending each command over "
        "the game's WebSocket. Progress goes to stderr, the summary to stdout.",
    )
    bot.add_argument("--variant", default="gilbert", help="the variant (default: gilbert)")
    bot.add_argument("--games", type=_positive, default=10, help="how many games (default: 10)")
    bot.add_argument(
        "--concurrency",
        "-c",
        type=_positive,
        default=4,
        help="games played at once, each worker a player of its own (default: 4)",
    )
    bot.add_argument(
        "--seed",
        type=int,
        default=None,
        help="game i is dealt with seed+i (default: the server picks each deal)",
    )
    bot.add_argument(
        "--max-steps",
        type=_positive,
        default=500,
        help="commands per game before the bot resigns (default: 500)",
    )
    bot.add_argument(
        "--progress-s",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="a progress line every SECONDS instead of one per game (0: per game)",
    )
    bot.add_argument("--quiet", "-q", action="store_true", help="no progress lines")
    bot.add_argument("--json", action="store_true", help="print the summary as JSON")
    return parser


def _per_game(total: int) -> object:
    def report(result: GameResult, summary: BotSummary) -> None:
        deal = "" if result.seed is None else f" deal {result.seed}"
        cap = " (step cap)" if result.resigned_at_cap else ""
        print(
            f"[{summary.games}/{total}] {result.game_id}{deal}: {result.status}{cap}, "
            f"{result.moves} moves, {result.foundation_cards} on foundations",
            file=sys.stderr,
            flush=True,
        )

    return report


def _periodic(total: int) -> object:
    def report(summary: BotSummary) -> None:
        print(
            f"... {summary.games}/{total} games, {summary.wins} won, {summary.commands} commands, "
            f"{summary.commands_per_s:.0f} commands/s",
            file=sys.stderr,
            flush=True,
        )

    return report


def run_bot_cli(args: argparse.Namespace) -> int:
    on_result = None if args.quiet or args.progress_s > 0 else _per_game(args.games)
    on_tick = _periodic(args.games) if not args.quiet and args.progress_s > 0 else None
    summary = asyncio.run(
        run_bot(
            args.url,
            args.variant,
            args.games,
            concurrency=args.concurrency,
            seed=args.seed,
            options=dict(args.option) or None,
            max_steps=args.max_steps,
            on_result=on_result,  # type: ignore[arg-type]
            on_tick=on_tick,  # type: ignore[arg-type]
            tick_s=args.progress_s or 5.0,
        )
    )
    if args.json:
        print(json.dumps(summary.as_dict()))
    else:
        print(summary.format())
        for failure in summary.failures[:10]:
            print(f"  failed: {failure}")
    return 1 if summary.failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.mode in ("play", "resume", "player"):
            from .play import main as play_main
            from .play import main_player, main_resume

            player_file = args.player_file or identity.default_path()
            if args.mode == "player":
                return main_player(args.url, player_file)
            if args.mode == "resume":
                return main_resume(args.url, args.game_id, args.token, args.color, player_file)
            return play_main(
                args.url,
                args.variant,
                args.seed,
                args.name,
                args.token,
                dict(args.option),
                args.color,
                player_file,
            )
        return run_bot_cli(args)
    except aiohttp.ClientConnectorError as exc:  # nothing listens there, or no such host
        print(unreachable(args.url, exc), file=sys.stderr)
        return 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
