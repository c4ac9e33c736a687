"""The REST endpoints of PROTOCOL.md, under ``/v1`` (plus health, metrics, the spec)."""

from __future__ import annotations

import asyncio
import functools
import secrets
from importlib.resources import files
from time import perf_counter
from typing import Any, cast

import msgspec
from aiohttp import web

from protocol.codec import decode_query, decode_request, encode
from protocol.diffs import Diff
from protocol.fields import rfc3339
from protocol.rest import (
    CommandRequest,
    CommandResult,
    CreateGame,
    CreatePlayer,
    Event,
    Events,
    EventsQuery,
    GameCreated,
    Health,
    Me,
    Player,
    PlayerCreated,
    PlayerGamesQuery,
    UpdatePlayer,
)
from service.context import Context, context
from service.domain import wire
from service.domain.errors import ApiError
from service.domain.games import Loaded, new_game_id
from service.domain.moves import moves_of
from service.domain.wire import engine_command
from service.runtime.metrics import CONTENT_TYPE
from service.web import addresses
from service.web.caller import caller_of, required_player
from service.web.error_middleware import COMMANDS_ROUTE
from service.web.responses import json_response

routes = web.RouteTableDef()
# The contract documents ship inside the protocol package (links to the top-level
# files), so an installed wheel, as in the container image, serves them too.
CONTRACT_FILES = files("protocol")


def ctx_of(request: web.Request) -> Context:
    return context(request.app)


def client_address(request: web.Request) -> str:
    """The client's address: behind a trusted proxy, the last untrusted X-Forwarded-For hop."""
    return addresses.client_address(request.remote, request.headers.get("X-Forwarded-For", ""),
                                    ctx_of(request).settings.trusted_proxies)


async def count_read(request: web.Request) -> None:
    """Count a read of a game against its client address's limit (429 past it)."""
    ctx = ctx_of(request)
    await ctx.read_limiter.check(client_address(request))


async def readable_game(request: web.Request) -> Loaded:
    """The game of the route's ``{game_id}``, read by its caller: the read counted against
    the client address's limit (429), then 404 if there is no such game, 403 if the
    caller may not read it."""
    ctx = ctx_of(request)
    player = caller_of(request)
    await count_read(request)
    loaded = await ctx.games.load(request.match_info["game_id"])
    ctx.games.check_read(loaded, player)
    return loaded


async def body_of(request: web.Request, type_: type[Any]) -> Any:
    return decode_request(await request.read(), type_)


class _NoBody(msgspec.Struct, forbid_unknown_fields=True):
    """What a request that takes no body may send: nothing, or ``{}`` at most."""


async def no_body(request: web.Request) -> None:
    """Refuse a body on a request that takes none (a daily attempt, a hint): nothing or an
    empty JSON object passes, however spaced; a field (a score...) is a 400 naming it."""
    body = await request.read()
    if body.strip():
        decode_request(body, _NoBody)


# --- variants and players -----------------------------------------------------------

_VARIANTS_BODY = encode(wire.variants())


@routes.get("/v1/variants")
async def variants(request: web.Request) -> web.Response:
    return web.Response(body=_VARIANTS_BODY, content_type="application/json")


@routes.post("/v1/players")
async def create_player(request: web.Request) -> web.Response:
    ctx = ctx_of(request)
    body: CreatePlayer = await body_of(request, CreatePlayer)
    name = ctx.players.validate_name(body.name)
    address = client_address(request)
    await ctx.signup_limiter.check(address)
    # A player is made to start games: it counts as one of its address's new games, so
    # that new players cannot carry an address past its game-creation limit.
    await ctx.create_address_limiter.check(address)
    player_id = "p_" + secrets.token_urlsafe(12)
    await ctx.players.sign_up(player_id, name, ctx.clock.time(),
                              ctx.settings.unplayed_player_ttl_s)
    return json_response(PlayerCreated(player_id=player_id, name=name,
                                       token=ctx.tokens.issue(player_id)), 201)


@routes.get("/v1/players/me")
async def get_player(request: web.Request) -> web.Response:
    ctx = ctx_of(request)
    player = required_player(request)
    await count_read(request)
    found = await ctx.players.get(player)
    if found is None:
        raise ApiError("not_found", f"no player {player!r}: a player is kept "
                       f"{ctx.settings.player_ttl_days} days after its last game, and one that "
                       f"never played {ctx.settings.unplayed_player_ttl_s} s after it signed up; "
                       "a rename (PATCH /v1/players/me) brings it back")
    name, created = found
    return json_response(Me(player_id=player, name=name,
                            created_at=rfc3339(created) if created else None))


@routes.get("/v1/players/me/games")
async def get_player_games(request: web.Request) -> web.Response:
    ctx = ctx_of(request)
    player = required_player(request)
    query: PlayerGamesQuery = decode_query(request.query, PlayerGamesQuery)
    await count_read(request)
    return json_response(await ctx.games.player_games(ctx.players, player, query))


@routes.patch("/v1/players/me")
async def update_player(request: web.Request) -> web.Response:
    ctx = ctx_of(request)
    player = required_player(request)
    body: UpdatePlayer = await body_of(request, UpdatePlayer)
    await ctx.limiter.check(player)
    name = ctx.players.validate_name(body.name)
    await ctx.rename_limiter.check(player)
    settings = ctx.settings
    await ctx.players.set_name(player, name, settings.player_ttl_s,
                               settings.unplayed_player_ttl_s)
    ctx.daily.renamed(player)
    return json_response(Player(player_id=player, name=name))


async def count_new_game(request: web.Request, player: str) -> None:
    """Count a new game (or daily attempt) against its player's and its address's
    creation limits (429 past either)."""
    ctx = ctx_of(request)
    await ctx.create_limiter.check(player)
    await ctx.create_address_limiter.check(client_address(request))


# --- games ----------------------------------------------------------------------------


@routes.post("/v1/games")
async def create_game(request: web.Request) -> web.Response:
    ctx = ctx_of(request)
    player = required_player(request)
    body: CreateGame = await body_of(request, CreateGame)
    await ctx.limiter.check(player)
    await count_new_game(request, player)
    settings, now = ctx.settings, ctx.clock.time()
    game_id = new_game_id()
    await ctx.players.open_game(player, game_id, now, now + settings.game_ttl_s,
                                settings.open_games_per_player)
    try:
        loaded = await ctx.games.create(player, body.variant, body.seed, body.options,
                                        body.public, game_id=game_id)
    except Exception:
        await ctx.players.closed_game(player, game_id)  # not made after all (a bad variant: 400)
        raise
    await ctx.players.touch(player, settings.player_ttl_s)
    return json_response(GameCreated(game_id=loaded.game_id, state=ctx.games.state(loaded)), 201)


@routes.get("/v1/games/{game_id}")
async def get_game(request: web.Request) -> web.Response:
    ctx = ctx_of(request)
    loaded = await readable_game(request)
    return json_response(ctx.games.state(loaded))


@routes.post(COMMANDS_ROUTE)
async def post_command(request: web.Request) -> web.Response:
    started = perf_counter()
    ctx = ctx_of(request)
    player = required_player(request)
    body: CommandRequest = await body_of(request, CommandRequest)
    await ctx.limiter.check(player)
    seq, event = await ctx.games.command(request.match_info["game_id"], player,
                                         engine_command(body.command), body.expected_seq,
                                         body.command_id)
    ctx.metrics.rest_ack.observe(perf_counter() - started)
    return json_response(command_result(seq, event))


def command_result(seq: int, event: bytes) -> CommandResult:
    """The result of a command whose stored event is ``event``: that event is the diff, built
    from the protocol's DiffMessage when it was appended, so it goes out as it is stored
    (msgspec.Raw: spliced by the encoder, never decoded and encoded again)."""
    return CommandResult(seq=seq, diff=cast(Diff, msgspec.Raw(event)))


@routes.get("/v1/games/{game_id}/moves")
async def get_moves(request: web.Request) -> web.Response:
    ctx = ctx_of(request)
    loaded = await readable_game(request)
    return json_response(moves_of(ctx.games, loaded))


@routes.get("/v1/games/{game_id}/events")
async def get_events(request: web.Request) -> web.Response:
    ctx = ctx_of(request)
    player = caller_of(request)
    await count_read(request)
    query: EventsQuery = decode_query(request.query, EventsQuery)
    game_id = request.match_info["game_id"]
    loaded = await ctx.games.load(game_id)
    ctx.games.check_read(loaded, player)
    page = Events(events=[])
    # The log up to the seq just read, one page of it; no Redis call for an `after`
    # at or past the end (a huge one would not even fit Redis's integers).
    if query.after < loaded.seq:
        count = min(query.limit, loaded.seq - query.after)
        # A stored event is a diff message: read as an Event, it keeps only the log's fields.
        page.events = [_event(raw) for raw in await ctx.games.events(game_id, query.after, count)]
        if query.after + count < loaded.seq:
            page.next_after = query.after + count
    return json_response(page)


_event = msgspec.json.Decoder(Event).decode


# --- operations ---------------------------------------------------------------------------


_OK = Health(status="ok")


@routes.get("/healthz")
async def healthz(request: web.Request) -> web.Response:
    return json_response(_OK)


@routes.get("/readyz")
async def readyz(request: web.Request) -> web.Response:
    reason = await ctx_of(request).not_ready()
    if reason is not None:
        raise ApiError("unavailable", reason)
    return json_response(_OK)


@routes.get("/metrics")
async def metrics(request: web.Request) -> web.Response:
    # Off the event loop: the process metrics read /proc (a file per open socket).
    body = await asyncio.to_thread(ctx_of(request).metrics.exposition)
    return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE,
                                            "X-Content-Type-Options": "nosniff"})


@routes.get("/openapi.yaml")
async def openapi(request: web.Request) -> web.Response:
    return web.Response(body=_document("openapi.yaml"), content_type="application/yaml")


@routes.get("/asyncapi.yaml")
async def asyncapi(request: web.Request) -> web.Response:
    return web.Response(body=_document("asyncapi.yaml"), content_type="application/yaml")


@functools.cache
def _document(name: str) -> bytes:
    return CONTRACT_FILES.joinpath(name).read_bytes()
