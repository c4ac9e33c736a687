"""A game's life through the API (the domain's games, service/domain/games.py), as PROTOCOL.md and
RULES.md tell it: a deal is its variant, options and seed; who may read a game and who may
command it; ``expected_seq`` as the game's version; undo and resign as commands of their
own; a finished game takes nothing more; the most commands one game takes; face-down
cards shown only as counts, and a server-chosen seed kept secret until the game is over.

Through REST and the WebSocket of a running instance on a real store, never through the
module's insides. Other files hold the rest of a game's behaviour, each on one theme:
test_command_ids.py (a command_id applied once), test_commands_concurrency.py (racing
commands), test_hidden_information.py (every byte checked for unseen cards), test_rest.py
and test_ws.py (the whole flow of a game over each door).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.live import running_service, settings_for_test
from tests.service.helpers import Api, check_error, connect


@pytest.fixture
def base(live_base: str) -> str:
    return live_base


def face_down_as_counts(state: dict[str, Any]) -> bool:
    """Every pile says how many cards lie face down, never which."""
    return all(set(pile) == {"down", "up"} and isinstance(pile["down"], int)
               and all(isinstance(card, str) and len(card) == 2 for card in pile["up"])
               for pile in state["piles"].values())


# --- a deal ------------------------------------------------------------------------------


async def test_a_deal_is_its_variant_options_and_seed(api: Api, owner: tuple[str, str]) -> None:
    _, token = owner
    a = await api.create(token, "gate", seed=11)
    b = await api.create(token, "gate", seed=11, options={"single_card_moves": False})
    other = await api.create(token, "gate", seed=12)
    # Options left out are the variant's defaults, filled in: the same deal either way.
    assert a["state"]["options"] == b["state"]["options"] == {"single_card_moves": False}
    assert a["state"]["piles"] == b["state"]["piles"] != other["state"]["piles"]
    assert (a["state"]["seq"], a["state"]["status"], a["state"]["seed"]) == (0, "playing", 11)
    assert await api.state(a["game_id"], token) == a["state"]


async def test_face_down_cards_are_counts_and_a_chosen_seed_is_secret_until_the_end(
        api: Api, owner: tuple[str, str]) -> None:
    _, token = owner
    created = await api.create(token, "gilbert")  # the server chooses the seed
    game_id, state = created["game_id"], created["state"]
    assert state["seed"] is None and face_down_as_counts(state)
    assert sum(pile["down"] for pile in state["piles"].values()) > 0  # there is something hidden
    await api.command(token, game_id, {"type": "draw"})
    sock, hello = await connect(api.session, api.base, game_id, token)
    try:
        snapshot = next(m for m in hello if m["type"] == "snapshot")["state"]
        assert snapshot["seed"] is None and face_down_as_counts(snapshot)
        assert snapshot == await api.state(game_id, token)
    finally:
        await sock.ws.close()
    await api.command(token, game_id, {"type": "resign"})
    final = await api.state(game_id, token)
    assert isinstance(final["seed"], int) and face_down_as_counts(final)  # over: the seed shows


# --- who may read and command -------------------------------------------------------------


async def test_a_public_game_is_read_by_anyone_without_a_token(
    api: Api, owner: tuple[str, str]
) -> None:
    _, token = owner
    game_id = (await api.create(token, "gilbert", seed=5, public=True))["game_id"]
    assert (await api.state(game_id))["public"] is True
    assert (await api.moves(game_id))["seq"] == 0
    assert await api.events(game_id) == []
    _, other = await api.player("other")
    assert (await api.state(game_id, other))["game_id"] == game_id


async def test_another_players_command_on_a_public_game_is_403(
    api: Api, owner: tuple[str, str]
) -> None:
    game_id = (await api.create(owner[1], "gilbert", seed=3, public=True))["game_id"]
    _, other = await api.player("other")
    for command in ({"type": "draw"}, {"type": "resign"}):
        check_error(await api.command(other, game_id, command, expect=None), 403, "forbidden")
    assert (await api.state(game_id))["seq"] == 0


async def test_a_private_game_is_404_to_everyone_but_its_owner(
    api: Api, owner: tuple[str, str]
) -> None:
    game_id = (await api.create(owner[1], "gilbert", seed=3))["game_id"]
    _, other = await api.player("other")
    for token in (None, other):
        for path in (
            f"/v1/games/{game_id}",
            f"/v1/games/{game_id}/moves",
            f"/v1/games/{game_id}/events",
        ):
            check_error(await api.request("GET", path, token), 404, "not_found")
    check_error(await api.command(other, game_id, {"type": "draw"}, expect=None), 404, "not_found")
    unknown = await api.request("GET", "/v1/games/g_nope", other)
    private = await api.request("GET", f"/v1/games/{game_id}", other)
    # Indistinguishable from an unknown game, but for the id it names.
    assert unknown.error["message"].replace("g_nope", game_id) == private.error["message"]
    assert (await api.state(game_id, owner[1]))["seq"] == 0


# --- the version, undo, the end ---------------------------------------------------------


async def test_a_stale_expected_seq_is_409_with_the_current_seq(
    api: Api, owner: tuple[str, str]
) -> None:
    token = owner[1]
    game_id = (await api.create(token, "gilbert", seed=3))["game_id"]
    await api.command(token, game_id, {"type": "draw"}, expected_seq=0)
    for stale in (0, 2, 50):
        err = check_error(
            await api.command(token, game_id, {"type": "draw"}, expected_seq=stale, expect=None),
            409,
            "conflict",
        )
        assert err["details"]["seq"] == 1 and err["details"]["expected_seq"] == stale
    assert (await api.state(game_id, token))["seq"] == 1


async def test_undo_takes_back_the_last_command_in_effect_and_is_one_of_its_own(
        api: Api, owner: tuple[str, str]) -> None:
    _, token = owner
    game_id = (await api.create(token, "gilbert", seed=7))["game_id"]
    assert (await api.moves(game_id, token))["can_undo"] is False
    check_error(await api.command(token, game_id, {"type": "undo"}, expect=None), 422,
                "illegal_move")
    dealt = await api.state(game_id, token)
    await api.command(token, game_id, {"type": "draw"}, expected_seq=0)
    once = await api.state(game_id, token)
    await api.command(token, game_id, {"type": "draw"}, expected_seq=1)
    assert (await api.moves(game_id, token))["can_undo"] is True
    undone = await api.command(token, game_id, {"type": "undo"}, expected_seq=2)
    assert undone.body["seq"] == 3  # a command in the log: the version moves on
    state = await api.state(game_id, token)
    assert state["piles"] == once["piles"]  # two draws and an undo: as one draw
    assert state["stats"]["moves"] == 3  # the move counter still counts all three
    await api.command(token, game_id, {"type": "undo"}, expected_seq=3)
    assert (await api.state(game_id, token))["piles"] == dealt["piles"]  # back to the deal
    assert (await api.moves(game_id, token))["can_undo"] is False
    assert [e["command"]["type"] for e in await api.events(game_id, token)] == [
        "draw", "draw", "undo", "undo"]


async def test_a_resigned_game_is_over_and_takes_no_command_by_any_door(
        api: Api, owner: tuple[str, str]) -> None:
    _, token = owner
    game_id = (await api.create(token, "gilbert", seed=5))["game_id"]
    await api.command(token, game_id, {"type": "draw"})
    resigned = await api.command(token, game_id, {"type": "resign"}, expected_seq=1)
    assert resigned.body["diff"]["status"] == "resigned"
    state = await api.state(game_id, token)
    assert state["status"] == "resigned" and state["stats"]["finished_at"] is not None
    assert await api.moves(game_id, token) == {"seq": 2, "moves": [], "can_undo": False}
    for command in ({"type": "draw"}, {"type": "undo"}, {"type": "resign"}):
        err = check_error(await api.command(token, game_id, command, expect=None), 422,
                          "illegal_move")
        assert err["details"]["rule"] == "game_over", err
    sock, _ = await connect(api.session, api.base, game_id, token)
    try:
        await sock.command({"type": "undo"}, command_id="late")
        error = (await sock.until(lambda m: m["type"] == "error"))[-1]
        assert error["command_id"] == "late" and error["error"]["code"] == "illegal_move"
        assert error["error"]["details"]["rule"] == "game_over"
    finally:
        await sock.ws.close()
    assert (await api.state(game_id, token))["seq"] == 2


# --- limits -----------------------------------------------------------------------------


async def test_a_game_takes_at_most_the_most_commands_a_game_may_have_then_only_resign(
        redis_url: str, tmp_path: Path) -> None:
    # A bound on what one game costs (its log, its snapshot, an undo after a load): Gilbert's
    # unlimited redeals would otherwise let one game grow without end.
    async with running_service(settings_for_test(redis_url, tmp_path,
                                                 max_commands_per_game=3)) as base, \
            aiohttp.ClientSession() as session:
        api = Api(session, base)
        _, token = await api.player()
        game_id = (await api.create(token, "gilbert", seed=1))["game_id"]
        for command in ({"type": "draw"}, {"type": "draw"}, {"type": "undo"}):
            await api.command(token, game_id, command)
        assert await api.moves(game_id, token) == {"seq": 3, "moves": [], "can_undo": False}
        for command in ({"type": "draw"}, {"type": "undo"}):
            refused = (await api.command(token, game_id, command, expect=422)).body["error"]
            assert refused["code"] == "illegal_move"
            assert refused["details"]["rule"] == "command_limit"
            assert "3 commands" in refused["message"] and "only resign" in refused["message"]
        hint = (await api.request("POST", f"/v1/games/{game_id}/hint", token, 200)).body
        assert hint["command"] is None
        await api.command(token, game_id, {"type": "resign"})
        assert (await api.state(game_id, token))["status"] == "resigned"
