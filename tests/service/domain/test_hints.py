"""Hints (service/domain/hints.py, PROTOCOL.md): ``POST /v1/games/{id}/hint`` suggests one
command from what the player sees, the face-down cards unknown. Only the owner asks, of
a game being played; a hint takes no body; it is counted in the game's stats and against
the player's rate limit; two positions that look the same get the same hint wherever
their face-down cards are; a game that takes no move or draw gets none.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator, Mapping
from pathlib import Path
from typing import Any

import aiohttp
import msgspec
import pytest

from protocol.solver import Hint
from service.app import Context
from service.domain import hint_job
from service.domain.hints import view_seed
from service.engine import Game, Move, Status
from service.solver import suggest
from service.store import keys
from tests.commands import from_json, to_json
from tests.live import settings_for_test
from tests.service.helpers import Api, running_app

ENGINE_DATA = Path(__file__).parents[2] / "engine" / "data"


@pytest.fixture
async def service(redis_url: str, tmp_path: Path) -> AsyncIterator[tuple[Api, Context]]:
    settings = settings_for_test(redis_url, tmp_path, snapshot_every=1)
    async with running_app(settings) as (base, ctx), aiohttp.ClientSession() as session:
        yield Api(session, base), ctx


async def hint(api: Api, token: str | None, game: str, expect: int = 200) -> Any:
    return (await api.request("POST", f"/v1/games/{game}/hint", token, expect)).body


def test_the_sampling_seed_is_a_digest_of_exactly_what_the_player_sees() -> None:
    """Equal views, however their keys are ordered, seed the search alike; a view that
    differs in a face-up card, a face-down count or an option does not."""
    piles = {"stock": {"down": 24, "up": []}, "tableau/0": {"down": 0, "up": ["7H"]}}
    same = {"tableau/0": {"up": ["7H"], "down": 0}, "stock": {"up": [], "down": 24}}
    seed = view_seed("gate", {"single_card_moves": False}, piles)
    assert view_seed("gate", {"single_card_moves": False}, same) == seed
    assert view_seed("gate", {"single_card_moves": True}, piles) != seed
    assert view_seed("gilbert", {"single_card_moves": False}, piles) != seed
    assert view_seed("gate", {"single_card_moves": False},
                     {**piles, "tableau/0": {"down": 0, "up": ["8H"]}}) != seed
    assert view_seed("gate", {"single_card_moves": False},
                     {**piles, "stock": {"down": 23, "up": []}}) != seed
    assert 0 <= seed < 2**64


async def test_a_hint_suggests_a_legal_command_and_is_counted_in_stats(
    service: tuple[Api, Context],
) -> None:
    api, _ = service
    _, token = await api.player()
    game = (await api.create(token, "gilbert", 21))["game_id"]
    body = await hint(api, token, game)
    msgspec.convert(body, Hint)
    assert set(body) == {"seq", "command", "samples", "wins"}
    assert body["seq"] == 0 and body["samples"] > 0 and 0 <= body["wins"] <= body["samples"]
    if body["command"] is not None:
        legal = (await api.moves(game, token))["moves"]
        assert body["command"] in legal + [{"type": "draw"}], body
    state = await api.state(game, token)
    assert state["stats"]["hints"] == 1
    await hint(api, token, game)
    reply = await api.command(token, game, {"type": "draw"})
    assert reply.body["diff"]["stats"]["hints"] == 2
    assert (await api.state(game, token))["stats"]["hints"] == 2


async def test_a_hint_does_not_depend_on_where_the_face_down_cards_are(
        service: tuple[Api, Context]) -> None:
    """Two games that differ only in their face-down cards, at the same visible position,
    get the same hint. The second game's face-down stock is reordered in the store."""
    api, ctx = service
    _, token = await api.player()
    a = (await api.create(token, "gilbert", 31))["game_id"]
    b = (await api.create(token, "gilbert", 31))["game_id"]
    for game in (a, b):  # one command each: a snapshot (snapshot_every=1) holds every pile
        first = (await api.moves(game, token))["moves"][0]
        await api.command(token, game, first)
    snap_key = keys.game_snapshot(b)
    data = json.loads(await ctx.redis.execute("HGET", snap_key, "data"))
    stock_down = data["piles"]["stock"][0]
    assert len(stock_down) >= 2
    data["piles"]["stock"][0] = list(reversed(stock_down))
    await ctx.redis.execute("HSET", snap_key, "data", json.dumps(data))
    state_a, state_b = await api.state(a, token), await api.state(b, token)
    assert state_a["piles"] == state_b["piles"]  # the same visible position
    hint_a, hint_b = await hint(api, token, a), await hint(api, token, b)
    assert hint_a == hint_b
    # and the hidden cards really differ: the next stock card dealt is another one
    da = (await api.command(token, a, {"type": "draw"})).body["diff"]
    db = (await api.command(token, b, {"type": "draw"})).body["diff"]
    assert da["ops"] != db["ops"]


async def test_only_the_owner_may_ask_for_a_hint(service: tuple[Api, Context]) -> None:
    api, _ = service
    _, owner = await api.player("ann")
    _, other = await api.player("bob")
    game = (await api.create(owner, "gate", 3, public=True))["game_id"]
    assert (await api.request("POST", f"/v1/games/{game}/hint", None, 401)).error[
        "code"
    ] == "unauthorized"
    assert (await api.request("POST", f"/v1/games/{game}/hint", other, 403)).error[
        "code"
    ] == "forbidden"
    assert (await api.state(game))["stats"]["hints"] == 0


async def test_a_hint_takes_no_body_and_an_empty_object_like_any_json_client_sends_it(
        service: tuple[Api, Context]) -> None:
    """No body, or an empty JSON object however it is spaced (as a daily attempt takes it);
    a field is refused and named, as every other body's unknown field is."""
    api, _ = service
    _, token = await api.player()
    game = (await api.create(token, "gate", 3))["game_id"]
    json_type = {"Content-Type": "application/json"}
    for body in (b"", b"{}", b"{ }", b"{\n}\n"):
        await api.request("POST", f"/v1/games/{game}/hint", token, 200, data=body,
                          headers=json_type)
    err = (await api.request("POST", f"/v1/games/{game}/hint", token, 400,
                             json={"seq": 0})).error
    assert err["code"] == "bad_request" and err["details"]["field"] == "seq", err
    for body in (b"null", b"[]", b"not json"):
        await api.request("POST", f"/v1/games/{game}/hint", token, 400, data=body,
                          headers=json_type)
    assert (await api.state(game, token))["stats"]["hints"] == 4


def lost_gilbert_line() -> tuple[int, list[dict[str, Any]]]:
    """A deal and the commands in effect of a Gilbert game of it that is lost, with
    face-down cards still on the tableau: from the engine's pinned perft games."""
    games = json.loads((ENGINE_DATA / "perft_gilbert.json").read_text())["games"]
    record = next(g for g in games if g["seed"] == 52 and g["policy"] == "random")
    game = Game.deal("gilbert", record["seed"])
    for command in record["commands"]:
        game = game.apply(from_json(command))[0]
        if game.status is Status.LOST:
            return record["seed"], [to_json(c) for c in game.effective_commands()]
    raise AssertionError("the pinned game is never lost")


async def test_a_hint_in_a_lost_game_suggests_nothing(service: tuple[Api, Context]) -> None:
    """A lost game accepts only undo and resign, which a hint never suggests: no move or
    draw is legal, so the hint is null (a draw would be refused: "the game is lost")."""
    api, _ = service
    _, token = await api.player()
    seed, line = lost_gilbert_line()
    game = (await api.create(token, "gilbert", seed))["game_id"]
    for command in line:
        await api.command(token, game, command)
    state = await api.state(game, token)
    assert state["status"] == "lost" and state["piles"]["tableau/6"]["down"] > 0
    assert (await api.moves(game, token))["moves"] == []
    body = await hint(api, token, game)
    assert body == {"seq": len(line), "command": None, "samples": 0, "wins": 0}
    assert (await api.state(game, token))["stats"]["hints"] == 1


async def test_no_hint_for_a_finished_game(service: tuple[Api, Context]) -> None:
    api, _ = service
    _, token = await api.player()
    game = (await api.create(token, "gate", 3))["game_id"]
    await api.command(token, game, {"type": "resign"})
    err = (await api.request("POST", f"/v1/games/{game}/hint", token, 409)).error
    assert err["code"] == "conflict" and "resigned" in err["message"]


async def test_a_hint_counts_against_the_rate_limit(redis_url: str, tmp_path: Path) -> None:
    settings = settings_for_test(redis_url, tmp_path, rate_limit_per_s=0.001, rate_limit_burst=3)
    async with running_app(settings) as (base, _), aiohttp.ClientSession() as session:
        api = Api(session, base)
        _, token = await api.player()  # an address's request, not the player's
        game = (await api.create(token, "gate", 3))["game_id"]  # 1
        await hint(api, token, game)  # 2
        await hint(api, token, game)  # 3
        reply = await api.request("POST", f"/v1/games/{game}/hint", token, 429)
        assert reply.error["code"] == "rate_limited" and reply.headers["Retry-After"]
        assert reply.error["details"]["limit"] == "rate_limit_per_s"  # the setting's name
        assert (await api.state(game, token))["stats"]["hints"] == 2


async def test_a_strangers_hints_count_against_the_rate_limit_too(
        redis_url: str, tmp_path: Path) -> None:
    """A hint refused to a stranger (403 on a public game) is limited like a refused
    command: each one loads the game, and a flood of them must not go unbounded."""
    settings = settings_for_test(redis_url, tmp_path, rate_limit_per_s=0.001, rate_limit_burst=3)
    async with running_app(settings) as (base, _), aiohttp.ClientSession() as session:
        api = Api(session, base)
        _, owner = await api.player("ann")
        _, stranger = await api.player("bob")
        game = (await api.create(owner, "gate", 3, public=True))["game_id"]
        statuses = [(await api.request("POST", f"/v1/games/{game}/hint", stranger)).status
                    for _ in range(5)]
        assert statuses == [403, 403, 403, 429, 429], statuses


async def test_a_hint_does_not_lead_back_to_a_position_the_game_has_shown(
        service: tuple[Api, Context]) -> None:
    """Caprice's deal 2 with a card taken off a foundation: from that view alone the hint
    is to put it back (checked below with the solver); the service gives the hint the
    positions the game has shown, and it suggests a command leading somewhere new."""
    from service.solver import Budget, suggest

    api, ctx = service
    _, token = await api.player()
    game_id = (await api.create(token, "caprice", 2))["game_id"]
    off = {"type": "move", "from": "foundation/3", "to": "tableau/2", "count": 1}
    await api.command(token, game_id, off)
    state = await api.state(game_id, token)
    s = ctx.settings
    alone = suggest("caprice", state["options"], state["piles"], samples=s.hint_samples,
                    budget_per_sample=Budget(s.hint_sample_nodes, s.hint_sample_s),
                    rng_seed=view_seed("caprice", state["options"], state["piles"]))
    back = {"type": "move", "from": "tableau/2", "to": "foundation/3", "count": 1}
    assert alone.command == back  # what the view alone would suggest
    body = await hint(api, token, game_id)
    assert body["command"] is not None and body["command"] != back
    game = Game.deal("caprice", 2).apply(from_json(off))[0]
    dealt = Game.deal("caprice", 2).public_piles()
    assert game.apply(from_json(body["command"]))[0].public_piles() != dealt


def plain_values(value: Any) -> Iterator[Any]:
    """Every value inside ``value``: mappings' keys and values, sequences' items, the
    fields of dataclasses, each down to what holds nothing more."""
    if isinstance(value, Mapping):
        for k, v in value.items():
            yield from plain_values(k)
            yield from plain_values(v)
    elif isinstance(value, list | tuple | set | frozenset):
        for item in value:
            yield from plain_values(item)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            yield from plain_values(getattr(value, field.name))
    else:
        yield value


async def test_the_hints_search_gets_no_face_down_card(
        service: tuple[Api, Context], monkeypatch: pytest.MonkeyPatch) -> None:
    """A hint is one job in the pool: it rebuilds the views the game has shown from the
    game's snapshot (which needs the deal), then searches. The search gets the public view
    and the views shown as their keys (face-down counts, face-up cards): none of its
    arguments is a face-down card. The job the pool got is run again here, its search
    watched."""
    api, ctx = service
    _, token = await api.player()
    game_id = (await api.create(token, "gate", 3))["game_id"]
    game = Game.deal("gate", 3)
    for _ in range(2):  # views shown before: the rebuild has something to do
        move = next(m for m in game.legal_moves() if isinstance(m, Move))
        await api.command(token, game_id, to_json(move))
        game = game.apply(move)[0]
    face_down = {card for pile in game.piles.values() for card in pile.down}
    assert face_down
    jobs: list[tuple[Any, tuple[Any, ...], dict[str, Any]]] = []
    submit = ctx.pool.submit

    def recording(fn: Any, *args: Any, **kwargs: Any) -> asyncio.Future[Any]:
        jobs.append((fn, args, kwargs))
        return submit(fn, *args, **kwargs)

    monkeypatch.setattr(ctx.pool, "submit", recording)
    await hint(api, token, game_id)
    assert [fn.__name__ for fn, *_ in jobs] == ["hint_in_game"]
    fn, args, kwargs = jobs[0]
    searched: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

    def watched(*args: Any, **kwargs: Any) -> Any:
        searched.append((args, kwargs))
        return suggest(*args, **kwargs)

    monkeypatch.setattr(hint_job, "suggest", watched)
    fn(*args, **{k: v for k, v in kwargs.items() if k not in ("what", "retry_s")})
    assert len(searched) == 1
    leaked = face_down & set(plain_values(searched))
    assert not leaked, f"the search got face-down card(s) {sorted(leaked)}"
    assert searched[0][1]["shown"]  # the views shown before, as their keys


def test_the_hints_job_brings_only_the_solver_into_a_worker() -> None:
    """A spawned worker imports the module of each job's function: the hint's brings the
    solver and the engine, not the service's modules, the store's client or aiohttp."""
    found = subprocess.run(
        [sys.executable, "-c", "import sys, service.domain.hint_job; print(*sys.modules)"],
        capture_output=True, text=True, check=True).stdout.split()
    service = {m for m in found if m.split(".")[0] == "service"
               and not m.startswith(("service.solver", "service.engine"))}
    assert service == {"service", "service.domain", "service.domain.hint_job"}
    assert not {"aiohttp", "redis", "msgspec"} & set(found)
