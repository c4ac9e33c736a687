"""The solver's endpoints (PROTOCOL.md "Solver, and later additions"): solutions and hints."""

from __future__ import annotations

from aiohttp import web

from protocol.fields import rfc3339
from protocol.solver import Hint
from service.domain import wire
from service.domain.errors import ApiError
from service.domain.games import Loaded
from service.web.caller import caller_of, required_player
from service.web.responses import json_response
from service.web.rest import client_address, ctx_of, no_body, readable_game

routes = web.RouteTableDef()


def _daily_end(loaded: Loaded) -> str | None:
    """When a daily attempt's day ends (None for an ordinary game)."""
    meta = loaded.meta
    if meta.daily is None:
        return None
    ends = meta.closes_at or meta.readable_from
    return rfc3339(ends) if ends else None


@routes.get("/v1/games/{game_id}/solution")
async def get_solution(request: web.Request) -> web.Response:
    """The solver's line from the deal, once the game is over (it would show face-down cards)."""
    ctx = ctx_of(request)
    loaded = await readable_game(request)  # by anyone who may read it: limited alike
    game = loaded.game
    ends = _daily_end(loaded)
    # A daily attempt is over once its day is: it takes no more commands (it can no longer
    # be won or resigned), and its seed is public.
    day_over = ends is not None and ctx.games.seed_visible(loaded)
    if not game.status.is_final and not day_over:
        also = f", or once its day is over, at {ends}" if ends is not None else ""
        raise ApiError("conflict", f"the game is {game.status.value}: its solution is shown "
                       f"once it is won or resigned{also} (it would show the face-down cards)",
                       {"status": game.status.value})
    if ends is not None and not day_over:
        raise ApiError("forbidden", "the solution of a daily challenge is shown once its day "
                       f"is over, at {ends}: until then it would help the other players",
                       {"available_at": ends})
    body = await ctx.solutions.body(game.variant.id, game.variant.options, game.seed,
                                    client_address(request), caller_of(request))
    return web.Response(body=body, content_type="application/json")


@routes.post("/v1/games/{game_id}/hint")
async def post_hint(request: web.Request) -> web.Response:
    """One suggested command from what the owner sees now; counted in ``stats.hints``."""
    ctx = ctx_of(request)
    player = required_player(request)
    await no_body(request)
    # Before anything is read, as for a command: a refused hint (a stranger's 403) counts too.
    await ctx.limiter.check(player)
    loaded = await ctx.games.load(request.match_info["game_id"])
    ctx.games.check_command(loaded, player)  # the owner only; a closed daily attempt is 403
    if loaded.meta.daily is not None:
        raise ApiError("forbidden",
                       "no hints in a ranked daily attempt: its leaderboard ranks unaided play",
                       {"daily": str(loaded.meta.daily)})
    status = loaded.game.status
    if status.is_final:
        raise ApiError("conflict", f"the game is {status.value}: there is no command to suggest",
                       {"status": status.value})
    hint = await ctx.hints.suggest(loaded.game, ctx.games.takes_no_moves(loaded.meta, loaded.seq),
                                   client_address(request), player)
    await ctx.games.hint_taken(loaded)
    command = wire.command_of(hint.command) if hint.command is not None else None
    return json_response(Hint(seq=loaded.seq, command=command, samples=hint.samples,
                              wins=hint.wins))
