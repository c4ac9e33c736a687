"""A `command_id` is an idempotency key: sent again with the same command it gets the first
result, sent again with another command it is refused (409 `conflict` naming the first),
over REST and on the socket alike."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from service.domain.fingerprints import command_of, fingerprint
from service.engine import DRAW, RESIGN, UNDO, Command, Game, Move
from tests.commands import to_json
from tests.live import settings_for_test
from tests.service.helpers import Api, connect, running_app

DRAW_JSON = {"type": "draw"}


@pytest.fixture
async def base(redis_url: str, tmp_path: Path) -> AsyncIterator[str]:
    async with running_app(settings_for_test(redis_url, tmp_path)) as (url, _):
        yield url


@pytest.fixture
async def api(base: str) -> AsyncIterator[Api]:
    async with aiohttp.ClientSession() as session:
        yield Api(session, base)


def refused_for_the_first(err: dict[str, Any], command_id: str) -> None:
    assert err["code"] == "conflict", err
    assert err["details"] == {"command_id": command_id, "command": DRAW_JSON, "seq": 1}, err
    assert command_id in err["message"] and "draw" in err["message"], err


@pytest.mark.parametrize("other", [
    {"command": {"type": "resign"}},
    {"command": {"type": "undo"}},
    {"command": {"type": "resign"}, "expected_seq": 0},  # stale too: the id is what is wrong
    {"command": {"type": "move", "from": "tableau/0", "to": "tableau/0"}},  # illegal too
])
async def test_a_command_id_sent_again_with_another_command_is_a_409_naming_the_first(
        api: Api, other: dict[str, Any]) -> None:
    _, token = await api.player()
    game_id = (await api.create(token, "gilbert", seed=7))["game_id"]
    first = await api.command(token, game_id, DRAW_JSON, command_id="c-1")
    reply = await api.request("POST", f"/v1/games/{game_id}/commands", token,
                              json={**other, "command_id": "c-1"})
    assert reply.status == 409
    refused_for_the_first(reply.error, "c-1")
    state = await api.state(game_id, token)
    assert (state["seq"], state["status"]) == (1, "playing")  # nothing applied
    again = await api.command(token, game_id, DRAW_JSON, expected_seq=0, command_id="c-1")
    assert again.body == first.body  # the same command still gets its first result


async def test_the_409_names_a_first_move_as_it_was_sent_with_its_count(api: Api) -> None:
    _, token = await api.player()
    game_id = (await api.create(token, "gilbert", seed=7))["game_id"]
    move = Game.deal("gilbert", 7).legal_moves()[0]
    await api.command(token, game_id, to_json(move), command_id="c-1")
    reply = await api.request("POST", f"/v1/games/{game_id}/commands", token,
                              json={"command": DRAW_JSON, "command_id": "c-1"})
    assert reply.status == 409
    assert reply.error["details"]["command"] == {
        "type": "move", "from": move.from_, "to": move.to, "count": move.count}, reply.error


async def test_on_the_socket_the_refusal_is_an_error_naming_the_command_id(
        api: Api, base: str) -> None:
    _, token = await api.player()
    game_id = (await api.create(token, "gilbert", seed=7))["game_id"]
    async with aiohttp.ClientSession() as session:
        sock, _ = await connect(session, base, game_id, token)
        try:
            await sock.command(DRAW_JSON, command_id="c-1")
            await sock.until(lambda m: m["type"] == "ack" and m["command_id"] == "c-1")
            await sock.command({"type": "resign"}, command_id="c-1")
            err = await sock.recv()
            assert (err["type"], err["command_id"]) == ("error", "c-1"), err
            refused_for_the_first(err["error"], "c-1")
            await sock.command(DRAW_JSON, command_id="c-1")
            assert await sock.recv() == {"type": "ack", "command_id": "c-1", "seq": 1}
        finally:
            await sock.ws.close()
    assert (await api.state(game_id, token))["status"] == "playing"


def test_commands_are_the_same_when_every_field_is() -> None:
    assert fingerprint(Move("waste", "foundation")) == fingerprint(Move("waste", "foundation", 1))
    assert fingerprint(Move("waste", "foundation")) != fingerprint(Move("waste", "foundation/0"))
    assert fingerprint(Move("tableau/1", "tableau/2", 2)) != fingerprint(
        Move("tableau/1", "tableau/2", 3))
    assert fingerprint(DRAW) != fingerprint(RESIGN)


@pytest.mark.parametrize("command", [DRAW, UNDO, RESIGN, Move("waste", "foundation/0"),
                                     Move("tableau/1", "tableau/12", 3)])
def test_a_fingerprint_names_its_command(command: Command) -> None:
    assert command_of(fingerprint(command)) == command
