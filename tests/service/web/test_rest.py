"""The REST API of PROTOCOL.md through a running instance on a real store: the whole
flow of a game in every variant, and the error shape of every refusal."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import aiohttp
import msgspec
import pytest

from protocol.codec import decode
from protocol.errors import bad_request_from
from protocol.rest import CommandResult, CreateGame, Events, LegalMoves
from service.engine import DRAW, UNDO, BadCommand, Game, Move, Status
from service.store import keys
from tests.commands import to_json
from tests.live import running_service, settings_for_test
from tests.redis_servers import sync_client
from tests.service.helpers import (
    CONFIGS,
    Api,
    apply,
    check_error,
    game_state,
    new_command_id,
    running_app,
    same_state,
)

WON_SHAMROCKS = 49  # a Shamrocks deal that greedy_line wins (in 61 commands)


@pytest.fixture
def base(live_base: str) -> str:
    return live_base


def stored_seed(redis_url: str, game_id: str) -> int:
    with sync_client(redis_url) as r:
        return int(r.hget(keys.game_meta(game_id), "seed"))


# --- the flow of a game -----------------------------------------------------------------


async def test_variants_lists_every_variant_with_its_layout_and_options(api: Api) -> None:
    body = (await api.request("GET", "/v1/variants", expect=200)).body
    by_id = {v["id"]: v for v in body["variants"]}
    assert set(by_id) == {"gilbert", "shamrocks", "gate", "caprice"}
    for v in by_id.values():
        assert v["name"] and v["rules"] and v["decks"] in (1, 2)
        assert all({"id", "kind", "suit", "direction"} <= set(p) for p in v["piles"])
    assert "single_card_moves" in by_id["gate"]["options"]


@pytest.mark.parametrize("chosen_seed", [True, False], ids=["client_seed", "server_seed"])
@pytest.mark.parametrize(("variant", "options"), CONFIGS,
                         ids=[v + ("+" + ",".join(o) if o else "") for v, o in CONFIGS])
async def test_a_whole_game_over_rest(
    api: Api,
    owner: tuple[str, str],
    redis_url: str,
    variant: str,
    options: dict[str, Any],
    chosen_seed: bool,
) -> None:
    """Create, read, play legal moves from /moves, check every diff against GET, read the log,
    undo, resign, and be refused after the end."""
    _, token = owner
    seed = 1234 if chosen_seed else None
    created = await api.create(token, variant, seed=seed, options=options or None)
    game_id = created["game_id"]
    state = game_state(created["state"])
    assert (state.seq, state.status, state.variant) == (0, "playing", variant)
    assert state.options == (
        {"single_card_moves": False, **options} if variant == "gate" else options
    )
    assert state.seed == seed  # a server-chosen seed stays secret: null
    assert same_state(game_state(await api.state(game_id, token)), state)

    rng = random.Random(f"{variant}{options}{chosen_seed}")
    results: list[Any] = []
    for _ in range(8):
        moves = msgspec.convert(await api.moves(game_id, token), LegalMoves)
        assert moves.seq == state.seq
        if not moves.moves:
            break
        command = msgspec.to_builtins(rng.choice(moves.moves))
        reply = await api.command(
            token, game_id, command, expected_seq=state.seq, command_id=new_command_id()
        )
        result = reply.body
        msgspec.convert(result, CommandResult)
        assert result["seq"] == state.seq + 1 == result["diff"]["seq"]
        state = apply(state, result["diff"])
        assert same_state(state, game_state(await api.state(game_id, token))), result
        results.append(result)
    assert results, "no legal move at all in this deal"

    if (await api.moves(game_id, token))["can_undo"]:
        reply = await api.command(token, game_id, {"type": "undo"}, expected_seq=state.seq)
        state = apply(state, reply.body["diff"])
        assert same_state(state, game_state(await api.state(game_id, token)))
        results.append(reply.body)

    events = msgspec.convert({"events": await api.events(game_id, token)}, Events).events
    assert [e.seq for e in events] == list(range(1, state.seq + 1))
    assert [msgspec.to_builtins(e.command) for e in events] == [
        r["diff"]["command"] for r in results
    ]
    tail = await api.events(game_id, token, after=2)
    assert [e["seq"] for e in tail] == list(range(3, state.seq + 1))
    assert await api.events(game_id, token, after=state.seq) == []
    assert await api.events(game_id, token, after=state.seq + 100) == []

    reply = await api.command(token, game_id, {"type": "resign"}, expected_seq=state.seq)
    assert reply.body["diff"]["ops"] == [] and reply.body["diff"]["status"] == "resigned"
    state = apply(state, reply.body["diff"])
    final = await api.state(game_id, token)
    assert same_state(state, game_state(final) if chosen_seed else
                      msgspec.structs.replace(game_state(final), seed=None))
    assert final["status"] == "resigned"
    assert final["seed"] == stored_seed(redis_url, game_id)  # shown once the game is over
    assert final["stats"]["finished_at"] is not None
    moves = await api.moves(game_id, token)
    assert (moves["moves"], moves["can_undo"]) == ([], False)

    for command in (
        {"type": "draw"},
        {"type": "undo"},
        {"type": "resign"},
        results[0]["diff"]["command"],
    ):
        err = (await api.command(token, game_id, command, expect=422)).error
        assert err["code"] == "illegal_move"
        assert err["message"] == "the game is over"
        assert err["details"]["rule"] == "game_over"
    assert (await api.state(game_id, token))["seq"] == state.seq


def greedy_line(variant: str, seed: int) -> list[dict[str, Any]]:
    """Foundation moves first, never back to a position seen before: the commands it played."""
    game = Game.deal(variant, seed)

    def key(g: Game) -> Any:
        return tuple((pid, pile.down, pile.up) for pid, pile in sorted(g.piles.items()))

    def score(m: Any) -> int:
        if not isinstance(m, Move):
            return 0
        return (
            -1 if m.from_.startswith("foundation") else 10 if m.to.startswith("foundation") else 1
        )

    seen, line = {key(game)}, []
    while game.status is Status.PLAYING:
        for move in sorted(game.legal_moves(), key=score, reverse=True):
            nxt = game.apply(move)[0]
            if score(move) >= 0 and (key(nxt) not in seen or not isinstance(move, Move)):
                game = nxt
                seen.add(key(game))
                line.append(to_json(move))
                break
        else:
            break
    assert game.status is Status.WON, f"the greedy line no longer wins {variant} {seed}"
    return line


async def test_a_secret_seed_is_shown_once_the_game_is_won(redis_url: str, tmp_path: Path) -> None:
    async with running_app(settings_for_test(redis_url, tmp_path)) as (base, ctx), \
            aiohttp.ClientSession() as session:
        api = Api(session, base)
        owner_id, token = await api.player()
        # A server-chosen seed would be unknown to the test: deal a known one, kept secret alike.
        loaded = await ctx.games.create(
            owner_id, "shamrocks", WON_SHAMROCKS, None, False, seed_secret=True
        )
        game_id = loaded.game_id
        state = game_state(await api.state(game_id, token))
        line = greedy_line("shamrocks", WON_SHAMROCKS)
        for i, command in enumerate(line):
            assert state.seed is None and state.status == "playing"
            reply = await api.command(token, game_id, command, expected_seq=i)
            state = apply(state, reply.body["diff"])
            if i < len(line) - 1:
                assert (await api.state(game_id, token))["seed"] is None
        final = await api.state(game_id, token)
        assert (final["status"], final["seed"]) == ("won", WON_SHAMROCKS)
        assert (
            final["stats"]["foundation_cards"] == 52 and final["stats"]["finished_at"] is not None
        )
        assert same_state(state, msgspec.structs.replace(game_state(final), seed=None))
        err = (await api.command(token, game_id, {"type": "undo"}, expect=422)).error
        assert err["message"] == "the game is over"


async def test_a_move_to_the_word_foundation_lands_on_the_lowest_index_that_accepts(
        api: Api, owner: tuple[str, str]) -> None:
    _, token = owner
    game_id = (await api.create(token, "gilbert", seed=7))["game_id"]
    move = next(m for m in (await api.moves(game_id, token))["moves"]
                if m["type"] == "move" and m["to"].startswith("foundation/"))
    reply = await api.command(token, game_id, {**move, "to": "foundation"})
    assert reply.body["diff"]["command"] == move  # resolved to the explicit index


# --- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize("body", [
    b'{"variant": "gilbert", "colour": "red"}',  # unknown field
    b'{"variant": "gilbert"',  # bad JSON
    b"",
    b"[]",
    b'{"variant": "gilbert", "seed": -1}',
    b'{"variant": "gilbert", "seed": 9007199254740992}',  # 2**53
    b'{"variant": "gilbert", "seed": "42"}',
    b'{"variant": "gilbert", "seed": 4.5}',
    b'{"variant": "klondike"}',  # unknown variant
    b'{"variant": "Gilbert!"}',
    b'{"variant": "gate", "options": {"single_card_moves": "yes"}}',  # bad option value
    b'{"variant": "gate", "options": {"draw_three": true}}',  # unknown option
    b'{"variant": "gilbert", "options": {"single_card_moves": true}}',  # not an option of gilbert
    b'{"variant": "gilbert", "public": "yes"}',
    "{\"variant\": \"gilbert\xff\"}".encode("latin-1"),  # not UTF-8
])
async def test_a_bad_create_game_body_is_400(api: Api, owner: tuple[str, str], body: bytes) -> None:
    reply = await api.request("POST", "/v1/games", owner[1], data=body,
                              headers={"Content-Type": "application/json"})
    err = check_error(reply, 400, "bad_request")
    assert len(err["message"]) > 10


@pytest.mark.parametrize(("path", "body", "field"), [
    ("/v1/players", b'{"name": "ann", "name": "bob"}', "name"),
    ("/v1/games", b'{"variant": "gilbert", "seed": 1, "seed": 2}', "seed"),
    ("/v1/games/{game_id}/commands", b'{"command": {"type": "move", "type": "draw"}}',
     "command.type"),
])
async def test_a_key_given_twice_in_a_body_is_400_naming_it(
        api: Api, owner: tuple[str, str], path: str, body: bytes, field: str) -> None:
    """Which of two values a client meant is a guess (the JSON RFC leaves it open): neither
    is taken, and nothing is done."""
    game_id = (await api.create(owner[1], "gilbert", seed=3))["game_id"]
    reply = await api.request("POST", path.format(game_id=game_id), owner[1], data=body,
                              headers={"Content-Type": "application/json"})
    err = check_error(reply, 400, "bad_request")
    assert err["details"] == {"field": field} and "duplicate" in err["message"], err
    assert (await api.state(game_id, owner[1]))["seq"] == 0


async def test_a_seed_of_2_to_the_53_is_refused_in_the_words_of_the_protocol(
        api: Api, owner: tuple[str, str]) -> None:
    body = b'{"variant": "gilbert", "seed": 9007199254740992}'  # 2**53
    reply = await api.request("POST", "/v1/games", owner[1], data=body,
                              headers={"Content-Type": "application/json"})
    err = check_error(reply, 400, "bad_request")
    with pytest.raises(msgspec.ValidationError) as refused:
        decode(body, CreateGame)
    assert err["message"] == bad_request_from(refused.value).error.message
    assert "<= 9007199254740991" in err["message"] and "$.seed" in err["message"]
    with pytest.raises(BadCommand, match=r"0 <= seed < 2\*\*53"):  # the engine's own guard
        Game.deal("gilbert", 2**53)


@pytest.mark.parametrize("body", [
    {"command": {"type": "draw"}, "force": True},
    {"command": {"type": "fly"}},
    {"command": {"type": "draw", "count": 2}},
    {"command": {"type": "move", "from": "tableau/0"}},
    {"command": {"type": "move", "from": "tableau/0", "to": "tableau/1", "count": 0}},
    {"command": {"type": "move", "from": "nowhere", "to": "tableau/1"}},
    {"command": {"type": "draw"}, "expected_seq": -1},
    {"command": {"type": "draw"}, "command_id": ""},
    {"command": {"type": "draw"}, "command_id": "x" * 65},
    {},
])
async def test_a_bad_command_body_is_400_and_changes_nothing(api: Api, owner: tuple[str, str],
                                                             body: dict[str, Any]) -> None:
    game_id = (await api.create(owner[1], "gilbert", seed=3))["game_id"]
    reply = await api.request("POST", f"/v1/games/{game_id}/commands", owner[1], json=body)
    check_error(reply, 400, "bad_request")
    assert (await api.state(game_id, owner[1]))["seq"] == 0


@pytest.mark.parametrize(
    "body",
    [
        b'{"name": ""}',
        b'{"name": "a\\u0007b"}',
        b'{"name": "x", "age": 3}',
        b'{"name": "' + b"n" * 33 + b'"}',
        b"nope",
    ],
)
async def test_a_bad_player_body_is_400(api: Api, body: bytes) -> None:
    reply = await api.request(
        "POST", "/v1/players", data=body, headers={"Content-Type": "application/json"}
    )
    check_error(reply, 400, "bad_request")


@pytest.mark.parametrize(("path", "body", "field"), [
    ("/v1/players", {"name": 5}, "name"),
    ("/v1/players", {"name": "x", "age": 3}, "age"),
    ("/v1/games", {"variant": "gilbert", "seed": -1}, "seed"),
    ("/v1/games", {"variant": "gilbert", "colour": "red"}, "colour"),
    ("/v1/games", {"variant": "klondike"}, "variant"),
    ("/v1/games", {"variant": "gate", "options": {"draw_three": True}}, "options.draw_three"),
    ("/v1/games", {"variant": "gate", "options": {"single_card_moves": "yes"}},
     "options.single_card_moves"),
    ("/v1/games", {"variant": "gate", "options": {"x": [1]}}, "options"),
    ("/v1/games", {}, "variant"),
    ("{game}", {"command": {"type": "fly"}}, "command.type"),
    ("{game}", {"command": {"type": "move", "from": "tableau/0"}}, "command.to"),
    ("{game}", {"command": {"type": "draw", "count": 2}}, "command.count"),
    ("{game}", {"command": {"type": "draw"}, "expected_seq": -1}, "expected_seq"),
    ("{game}", {}, "command"),
])
async def test_a_400_names_the_field_to_blame(api: Api, owner: tuple[str, str], path: str,
                                              body: dict[str, Any], field: str) -> None:
    """docs/protocol.md: ``details.field``, the input that is wrong, where one field is to
    blame (the message says it in words too)."""
    if path == "{game}":
        path = f"/v1/games/{(await api.create(owner[1], 'gilbert', seed=3))['game_id']}/commands"
    reply = await api.request("POST", path, owner[1], json=body)
    err = check_error(reply, 400, "bad_request")
    assert err["details"].get("field") == field, err
    query = await api.request("GET", "/v1/daily/2026-01-01/gilbert/leaderboard",
                              params={"limit": "0"})
    assert check_error(query, 400, "bad_request")["details"].get("field") == "limit"


async def test_malformed_json_blames_no_field(api: Api) -> None:
    reply = await api.request("POST", "/v1/players", data=b'{"name": ',
                              headers={"Content-Type": "application/json"})
    assert "field" not in check_error(reply, 400, "bad_request")["details"]


async def test_the_events_endpoint_pages_the_whole_log_however_long(
    redis_url: str, tmp_path: Path
) -> None:
    """PROTOCOL.md "later additions": `?after=N&limit=M`, limit 1..1000 (default 1000),
    `next_after` the next page's `after`, null on the last page."""
    async with running_app(settings_for_test(redis_url, tmp_path)) as (base, ctx), \
            aiohttp.ClientSession() as session:
        api = Api(session, base)
        owner_id, token = await api.player()
        game_id = (await api.create(token, "gilbert", seed=3))["game_id"]
        for i in range(1203):  # the service's own command path, to be quick
            await ctx.games.command(game_id, owner_id, UNDO if i % 2 else DRAW, i, None)
        path = f"/v1/games/{game_id}/events"
        first = (await api.request("GET", path, token, expect=200)).body
        assert [e["seq"] for e in first["events"]] == list(range(1, 1001))
        assert first["next_after"] == 1000
        last = (await api.request("GET", path, token, expect=200, params={"after": "1000"})).body
        assert [e["seq"] for e in last["events"]] == list(range(1001, 1204))
        assert last["next_after"] is None
        small = (
            await api.request("GET", path, token, expect=200, params={"after": "7", "limit": "5"})
        ).body
        assert [e["seq"] for e in small["events"]] == [8, 9, 10, 11, 12]
        assert small["next_after"] == 12
        exact = (
            await api.request(
                "GET", path, token, expect=200, params={"after": "1198", "limit": "5"}
            )
        ).body
        assert [e["seq"] for e in exact["events"]] == list(range(1199, 1204))
        assert exact["next_after"] is None
        for after in (1203, 1204, 2**53, 10**30):  # past the end, however far: nothing, not a 500
            page = (
                await api.request("GET", path, token, expect=200, params={"after": str(after)})
            ).body
            assert page == {"events": [], "next_after": None}
        for limit in ("0", "1001", "-1", "x"):
            reply = await api.request("GET", path, token, params={"limit": limit})
            check_error(reply, 400, "bad_request")


@pytest.mark.parametrize("after", ["-1", "x", "1.5"])
async def test_a_bad_events_query_is_400(api: Api, owner: tuple[str, str], after: str) -> None:
    game_id = (await api.create(owner[1], "gilbert", seed=3))["game_id"]
    reply = await api.request(
        "GET", f"/v1/games/{game_id}/events", owner[1], params={"after": after}
    )
    check_error(reply, 400, "bad_request")


async def test_an_unknown_game_or_endpoint_is_404(api: Api, owner: tuple[str, str]) -> None:
    token = owner[1]
    for method, path in [
        ("GET", "/v1/games/g_nope"),
        ("GET", "/v1/games/g_nope/moves"),
        ("GET", "/v1/games/g_nope/events"),
        ("GET", "/v1/nothing"),
        ("GET", "/v2/variants"),
        ("POST", "/v1/games/g_nope/undo"),
    ]:
        check_error(await api.request(method, path, token), 404, "not_found")
    check_error(await api.command(token, "g_nope", {"type": "draw"}, expect=None), 404, "not_found")


async def test_a_body_over_the_size_limit_is_413(api: Api, owner: tuple[str, str]) -> None:
    token = owner[1]
    game_id = (await api.create(token, "gilbert", seed=3))["game_id"]
    huge = json.dumps({"command": {"type": "draw"}, "command_id": "x" * 17_000}).encode()
    for path in (f"/v1/games/{game_id}/commands", "/v1/games", "/v1/players"):
        reply = await api.request(
            "POST", path, token, data=huge, headers={"Content-Type": "application/json"}
        )
        err = check_error(reply, 413, "bad_request")
        assert "larger than 16384 bytes" in err["message"]
        assert err["details"] == {"limit": "max_body_bytes", "max_bytes": 16384}
    assert (await api.state(game_id, token))["seq"] == 0


@pytest.mark.parametrize(("command", "rule"), [
    ({"type": "move", "from": "waste", "to": "foundation"}, "nothing_to_move"),
    ({"type": "move", "from": "tableau/0", "to": "stock"}, "never_onto"),
    ({"type": "move", "from": "tableau/0", "to": "tableau/0"}, "same_pile"),
    ({"type": "move", "from": "tableau/9", "to": "tableau/0"}, "unknown_pile"),
    ({"type": "move", "from": "reserve/0", "to": "tableau/0"}, "unknown_pile"),
    ({"type": "move", "from": "stock", "to": "tableau/0"}, "stock_by_draw_only"),
    ({"type": "move", "from": "tableau/0", "to": "tableau/1", "count": 5}, "not_enough_cards"),
    ({"type": "undo"}, "nothing_to_undo"),
])
async def test_an_illegal_command_is_422_with_a_reason_and_its_rule(
        api: Api, owner: tuple[str, str], command: dict[str, Any], rule: str) -> None:
    token = owner[1]
    game_id = (await api.create(token, "gilbert", seed=3))["game_id"]
    err = check_error(await api.command(token, game_id, command, expected_seq=0, expect=None),
                      422, "illegal_move")
    assert err["details"]["rule"] == rule
    assert err["details"]["seq"] == 0
    assert " " in err["message"] and err["message"][0].isalpha()
    assert (await api.state(game_id, token))["seq"] == 0


async def test_a_move_against_the_build_rule_says_which_cards(
    api: Api, owner: tuple[str, str]
) -> None:
    token = owner[1]
    game_id = (await api.create(token, "gilbert", seed=7))["game_id"]
    state = await api.state(game_id, token)
    legal = {
        (m["from"], m["to"])
        for m in (await api.moves(game_id, token))["moves"]
        if m["type"] == "move"
    }
    pair = next((f"tableau/{a}", f"tableau/{b}") for a in range(7) for b in range(7)
                if a != b and (f"tableau/{a}", f"tableau/{b}") not in legal)
    err = check_error(
        await api.command(
            token, game_id, {"type": "move", "from": pair[0], "to": pair[1]}, expect=None
        ),
        422,
        "illegal_move",
    )
    assert err["details"]["rule"] == "build"
    top = state["piles"][pair[0]]["up"][-1]
    from service.engine.cards import name

    assert name(top) in err["message"], err


async def test_the_error_of_an_unknown_method_is_the_contract_shape(api: Api) -> None:
    reply = await api.request("DELETE", "/v1/variants")
    assert reply.status == 405
    assert reply.error["code"] == "bad_request"
    # RFC 9110: a 405 says which methods the resource has.
    assert {m.strip() for m in reply.headers["Allow"].split(",")} == {"GET", "HEAD"}
    reply = await api.request("DELETE", "/v1/players/me")
    assert reply.status == 405
    assert {m.strip() for m in reply.headers["Allow"].split(",")} == {"GET", "HEAD", "PATCH"}


async def test_only_the_web_clients_assets_are_served(api: Api) -> None:
    for path in ("/", "/web/app.js", "/web/style.css", "/web/index.html",
                 "/js/src/index.js", "/js/src/contract.js"):  # the client package's modules
        await api.request("GET", path, expect=200)
    for path in ("/web/README.md", "/web/%2e%2e/app.py", "/web/..%2f..%2fpyproject.toml",
                 "/web/missing.js", "/web/", "/js/src/", "/js/src/..%2fREADME.md",
                 "/js/src/..%2fpackage.json", "/js/src/%2e%2e/test/helpers.js"):
        reply = await api.request("GET", path)
        assert reply.status == 404, (path, reply.raw[:200])
        assert b"web client" not in reply.raw or b"asset" in reply.raw


async def test_health_readiness_metrics_and_the_spec(api: Api) -> None:
    assert (await api.request("GET", "/healthz", expect=200)).body == {"status": "ok"}
    assert (await api.request("GET", "/readyz", expect=200)).body == {"status": "ok"}
    assert b"# TYPE" in (await api.request("GET", "/metrics", expect=200)).raw
    assert (await api.request("GET", "/openapi.yaml", expect=200)).raw.startswith(b"openapi: 3.1")


async def test_the_asyncapi_document_is_served(api: Api) -> None:
    from protocol.asyncapi import ASYNCAPI_PATH

    reply = await api.request("GET", "/asyncapi.yaml", expect=200)
    assert reply.raw == ASYNCAPI_PATH.read_bytes()
    assert b"\nasyncapi: 3.1.0\n" in reply.raw


async def test_a_header_too_large_for_http_parsing_gets_the_contracts_json_error(
    redis_url: str, tmp_path: Path
) -> None:
    """aiohttp refuses a header over 8 KiB before any middleware: still the contract's shape."""
    import aiohttp

    from tests.live import settings_for_test

    async with (
        running_service(settings_for_test(redis_url, tmp_path)) as base,
        aiohttp.ClientSession() as s,
    ):
        async with s.get(base + "/v1/variants", headers={"X-Big": "x" * 20_000}) as r:
            assert r.status == 400
            body = await r.json()
    assert body["error"]["code"] == "bad_request"
    assert "malformed HTTP request" in body["error"]["message"]

