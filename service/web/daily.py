"""The daily-challenge endpoints of PROTOCOL.md, under ``/v1/daily``."""

from __future__ import annotations

from aiohttp import web

from protocol.codec import decode_query
from protocol.daily import DailyDay, DailyQuery, LeaderboardQuery
from protocol.rest import GameCreated
from service.domain.daily.challenge import Day, challenge_body, parse_date, today
from service.domain.daily.service import DailyService, decode_board_cursor
from service.domain.errors import ApiError
from service.engine import VARIANTS
from service.web.caller import caller_of, required_player
from service.web.responses import json_response
from service.web.rest import count_new_game, ctx_of, no_body

routes = web.RouteTableDef()


def daily_of(request: web.Request) -> DailyService:
    return ctx_of(request).daily


def _variant(request: web.Request) -> str:
    variant = request.match_info["variant"]
    if variant not in VARIANTS:
        raise ApiError("not_found",
                       f"no variant {variant!r}: expected one of {', '.join(VARIANTS)}",
                       {"variant": variant})
    return variant


@routes.get("/v1/daily")
async def get_daily(request: web.Request) -> web.Response:
    daily = daily_of(request)
    query: DailyQuery = decode_query(request.query, DailyQuery)
    now = daily.clock.now()
    day = Day(parse_date(query.date) if query.date is not None else today(now))
    challenges = []
    # 503 until every deal of the day is chosen: never a challenge without par.
    for variant in VARIANTS:
        seed, deal = await daily.deals.require(day, variant)
        challenges.append(challenge_body(day, variant, seed, deal.par, now))
    return json_response(DailyDay(date=day.iso, challenges=challenges))


@routes.post("/v1/daily/{date}/{variant}/attempts")
async def start_attempt(request: web.Request) -> web.Response:
    ctx = ctx_of(request)
    daily = daily_of(request)
    player = required_player(request)
    await no_body(request)  # an attempt takes none: a client cannot submit a score
    day = Day(parse_date(request.match_info["date"]))
    variant = _variant(request)
    await ctx.limiter.check(player)
    await count_new_game(request, player)  # an attempt is a new game: the same limits
    loaded = await daily.start_attempt(player, day, variant)
    await ctx.players.touch(player, ctx.settings.player_ttl_s)
    return json_response(GameCreated(game_id=loaded.game_id, state=ctx.games.state(loaded)), 201)


@routes.get("/v1/daily/{date}/{variant}/leaderboard")
async def get_leaderboard(request: web.Request) -> web.Response:
    daily = daily_of(request)
    day = Day(parse_date(request.match_info["date"]))
    variant = _variant(request)
    query: LeaderboardQuery = decode_query(request.query, LeaderboardQuery)
    after = decode_board_cursor(query.cursor) if query.cursor is not None else None
    player = caller_of(request)
    # A day with no challenge has no board: 404 as GET /v1/daily says for it (503 while
    # its deals are being chosen). A day's deal is kept longer than its board.
    await daily.deals.require(day, variant)
    return json_response(await daily.leaderboard(day, variant, after, query.limit, player))
