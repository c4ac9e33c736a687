"""The SDK's REST client against a real service: every endpoint, every variant, errors."""

from __future__ import annotations

import asyncio
import datetime as dt
from pathlib import Path

import msgspec
import pytest

from clients.python.errors import ApiError
from clients.python.rest import EVENTS_PAGE, Client
from protocol import Draw, GameCreated, Move, Resign, apply_diff
from tests.fakes import FakeClock
from tests.live import daily_chosen, running_service, settings_for_test

from .conftest import VARIANTS, assert_same_state

SOCKETS_PAST_THE_CAP = 105  # aiohttp's TCPConnector allows 100 connections by default


async def test_variants_lists_the_four_with_their_layouts(client: Client) -> None:
    variants = {v.id: v for v in await client.variants()}
    assert set(variants) >= set(VARIANTS)
    for info in variants.values():
        assert info.piles and info.rules
        assert len({(p.row, p.col) for p in info.piles}) == len(info.piles)  # one pile per cell


@pytest.mark.parametrize("variant", VARIANTS)
async def test_diffs_from_commands_rebuild_the_state_of_every_variant(
    client: Client, variant: str
) -> None:
    created = await client.create_game(variant, seed=7)
    assert created.state.seq == 0 and created.state.seed == 7 and created.state.status == "playing"
    assert await client.game(created.game_id) == created.state
    state = created.state
    for _ in range(6):
        legal = await client.moves(created.game_id)
        if state.status != "playing":
            break
        assert legal.seq == state.seq and legal.moves
        result = await client.command(created.game_id, legal.moves[0], expected_seq=state.seq)
        assert result.seq == state.seq + 1 and result.diff.command == legal.moves[0]
        state = apply_diff(state, result.diff)
    assert_same_state(state, await client.game(created.game_id))
    events = await client.events(created.game_id)
    assert [e.seq for e in events] == list(range(1, state.seq + 1))
    assert [e.seq for e in await client.events(created.game_id, after=2)] == list(
        range(3, state.seq + 1)
    )


async def test_diff_stats_equal_get_stats_with_sub_millisecond_times(
    redis_url: str, tmp_path: Path
) -> None:
    clock = FakeClock(dt.datetime(2026, 3, 1, 12, 0, 0, 900, tzinfo=dt.UTC))  # .000900
    async with (
        running_service(settings_for_test(redis_url, tmp_path), clock) as url,
        Client(url) as client,
    ):
        await client.create_player("clocked")
        game = await client.create_game("gilbert", seed=1)
        await client.command(game.game_id, Draw())  # started_at .000900, stored as .000
        clock.advance(0.0012)
        result = await client.command(game.game_id, Draw())  # at .002100: 1.2 ms played
        assert result.diff.stats == (await client.game(game.game_id)).stats  # 1 ms vs 2 ms


async def test_a_command_may_be_a_dict_in_its_json_form(client: Client) -> None:
    game = await client.create_game("gilbert", seed=1)
    result = await client.command(game.game_id, {"type": "draw"})
    assert result.diff.command == Draw()


async def test_a_bad_command_dict_is_refused_before_any_request(client: Client) -> None:
    game = await client.create_game("gilbert", seed=1)
    with pytest.raises(msgspec.ValidationError, match="from"):
        await client.command(game.game_id, {"type": "move", "from": "pile 3", "to": "foundation"})
    assert (await client.game(game.game_id)).seq == 0


async def test_a_server_chosen_seed_stays_secret_until_the_game_is_over(client: Client) -> None:
    game = await client.create_game("gate")
    assert game.state.seed is None
    await client.command(game.game_id, Resign())
    assert (await client.game(game.game_id)).seed is not None


# --- errors ---------------------------------------------------------------------------


async def test_an_illegal_move_is_a_422_with_a_reason(client: Client) -> None:
    game = await client.create_game("gilbert", seed=1)  # tableau/0 holds 7D, tableau/5 shows 6S
    with pytest.raises(ApiError) as caught:
        await client.command(game.game_id, Move(from_="tableau/0", to="tableau/5"))
    err = caught.value
    assert (err.status, err.code) == (422, "illegal_move")
    assert "7D" in str(game.state.piles["tableau/0"].up) and len(err.message) > 10
    assert err.details.get("rule")
    assert (await client.game(game.game_id)).seq == 0


async def test_a_command_on_a_finished_game_is_a_422(client: Client) -> None:
    game = await client.create_game("caprice", seed=2)
    await client.command(game.game_id, Resign())
    with pytest.raises(ApiError) as caught:
        await client.command(game.game_id, Draw())
    assert (caught.value.status, caught.value.code) == (422, "illegal_move")
    assert "over" in caught.value.message


async def test_a_stale_expected_seq_is_a_409_conflict(client: Client) -> None:
    game = await client.create_game("gate", seed=3)
    await client.command(game.game_id, Draw(), expected_seq=0)
    with pytest.raises(ApiError) as caught:
        await client.command(game.game_id, Draw(), expected_seq=0)
    assert (caught.value.status, caught.value.code) == (409, "conflict")
    assert caught.value.details.get("seq") == 1


async def test_an_unknown_game_is_a_404_everywhere(client: Client) -> None:
    for call in (
        client.game("g_nope"),
        client.moves("g_nope"),
        client.events("g_nope"),
        client.command("g_nope", Draw()),
    ):
        with pytest.raises(ApiError) as caught:
            await call
        assert (caught.value.status, caught.value.code) == (404, "not_found")


async def test_a_private_game_is_a_404_to_another_player(client: Client, other: Client) -> None:
    game = await client.create_game("gilbert", seed=1)
    with pytest.raises(ApiError) as caught:
        await other.game(game.game_id)
    assert caught.value.status == 404


async def test_only_the_owner_commands_a_public_game(
    client: Client, other: Client, service_url: str
) -> None:
    game = await client.create_game("gilbert", seed=1, public=True)
    assert (await other.game(game.game_id)).public
    with pytest.raises(ApiError) as caught:
        await other.command(game.game_id, Draw())
    assert (caught.value.status, caught.value.code) == (403, "forbidden")
    async with Client(service_url) as anonymous:
        assert await anonymous.game(game.game_id) == game.state
        with pytest.raises(ApiError) as caught:
            await anonymous.command(game.game_id, Draw())
        assert (caught.value.status, caught.value.code) == (401, "unauthorized")


async def test_a_bad_token_is_a_401(service_url: str) -> None:
    async with Client(service_url, token="v1.forged.token") as forged:
        with pytest.raises(ApiError) as caught:
            await forged.create_game("gilbert")
    assert (caught.value.status, caught.value.code) == (401, "unauthorized")


async def test_an_unknown_variant_or_option_is_a_400(client: Client) -> None:
    for call in (
        client.create_game("klondike"),
        client.create_game("gate", options={"no_such_option": True}),
    ):
        with pytest.raises(ApiError) as caught:
            await call
        assert (caught.value.status, caught.value.code) == (400, "bad_request")


def test_an_error_body_that_is_not_the_contracts_still_gets_a_code() -> None:
    err = ApiError.from_response(502, b"<html>Bad Gateway</html>")
    assert (err.status, err.code, err.message) == (502, "unavailable", "<html>Bad Gateway</html>")
    err = ApiError.from_response(
        409, b'{"error": {"code": "conflict", "message": "m", "details": {"seq": 3}}}'
    )
    assert (err.status, err.code, err.message, err.details) == (409, "conflict", "m", {"seq": 3})
    assert ApiError.from_response(413, b"").code == "bad_request"


# --- idempotency ------------------------------------------------------------------------


async def test_the_same_command_id_returns_the_first_result_and_applies_nothing(
    client: Client,
) -> None:
    game = await client.create_game("gilbert", seed=1)
    first = await client.command(game.game_id, Draw(), expected_seq=0, command_id="draw-1")
    again = await client.command(game.game_id, Draw(), expected_seq=0, command_id="draw-1")
    assert again == first
    assert (await client.game(game.game_id)).seq == 1
    assert len(await client.events(game.game_id)) == 1


# --- daily challenges -------------------------------------------------------------------


async def _daily_or_skip(client: Client) -> str:
    today = dt.datetime.now(dt.UTC).date().isoformat()
    await daily_chosen(client.base_url)  # a 503 until the service has chosen the day's deals
    try:
        await client.daily(today)
    except ApiError as err:
        if err.status == 404 and "no such endpoint" in err.message:
            pytest.skip("the service has no daily endpoints yet")
        raise
    return today


async def test_the_daily_challenges_keep_their_seeds_secret(client: Client) -> None:
    today = await _daily_or_skip(client)
    day = await client.daily(today)
    assert day.date == today
    assert {c.variant for c in day.challenges} >= set(VARIANTS)
    assert all(c.seed is None for c in day.challenges)
    assert (await client.daily()).date == today


async def test_a_daily_attempt_is_ranked_once_it_ends(client: Client) -> None:
    today = await _daily_or_skip(client)
    attempt = await client.daily_attempt(today, "gilbert")
    assert attempt.state.seq == 0 and attempt.state.seed is None
    with pytest.raises(ApiError) as caught:
        await client.daily_attempt(today, "gilbert")
    assert (caught.value.status, caught.value.code) == (409, "conflict")
    yesterday = (dt.date.fromisoformat(today) - dt.timedelta(days=1)).isoformat()
    with pytest.raises(ApiError) as caught:
        await client.daily_attempt(yesterday, "gilbert")
    assert (caught.value.status, caught.value.code) == (403, "forbidden")
    await client.command(attempt.game_id, Draw())
    await client.command(attempt.game_id, Resign())
    board = await client.leaderboard(today, "gilbert", limit=5)
    assert [e.game_id for e in board.entries] == [attempt.game_id]
    assert board.next_cursor is None
    assert board.me is not None and board.me.game_id == attempt.game_id
    assert board.me.status == "resigned"


# --- long games ---------------------------------------------------------------------------


async def test_the_whole_log_comes_back_however_long(
    client: Client, long_game: GameCreated
) -> None:
    events = await client.events(long_game.game_id)
    assert [e.seq for e in events] == list(range(1, EVENTS_PAGE + 6))
    assert [e.seq for e in await client.events(long_game.game_id, after=EVENTS_PAGE)] == [
        EVENTS_PAGE + i for i in range(1, 6)
    ]


async def test_a_client_with_an_expired_or_forged_token_registers_anew(service_url: str) -> None:
    """The service checks every token it is sent, even on POST /v1/players (401): a
    client whose token went stale must not send it when it creates a player, and acts
    as the new player afterwards."""
    async with Client(service_url, token="v1.forged.token") as stale:
        player = await stale.create_player("fresh")
        assert stale.token == player.token
        game = await stale.create_game("gate", seed=2)  # the new token is the one sent
        assert (await stale.game(game.game_id)).seq == 0


async def test_me_and_my_games_newest_first_across_pages(client: Client, other: Client) -> None:
    me = await client.me()
    assert me.name == "tester" and me.player_id.startswith("p_") and me.created_at
    made = [(await client.create_game(v, seed=3)).game_id for v in ("gilbert", "gate") * 3]
    await other.create_game("gilbert", seed=3)
    await client.command(made[0], Resign())
    page = await client.my_games(limit=4)
    assert len(page.games) == 4 and page.next_cursor is not None
    rest = await client.my_games(limit=4, cursor=page.next_cursor)
    assert rest.next_cursor is None
    assert [g.game_id for g in page.games + rest.games] == made[::-1]  # newest first
    assert [g.game_id async for g in client.all_my_games(status="resigned")] == [made[0]]
    assert {g.game_id async for g in client.all_my_games(variant="gate")} == set(made[1::2])
    with pytest.raises(ApiError) as refused:
        await client.my_games(cursor="not-a-cursor")
    assert refused.value.status == 400 and refused.value.details["field"] == "cursor"


async def test_a_client_keeps_answering_with_more_sockets_open_than_aiohttps_default_cap(
    client: Client,
) -> None:
    """A bot that follows many games through one Client: its sockets share the client's
    session, so a cap on the session's connections (aiohttp's default is 100, open
    WebSockets included) would leave the next socket and every REST call waiting."""
    created = await client.create_game("gilbert", seed=7, public=True)
    sockets = [client.socket(created.game_id, token=None) for _ in range(SOCKETS_PAST_THE_CAP)]
    try:
        async with asyncio.timeout(60):
            for sock in sockets:
                await sock.connect()
            assert await client.game(created.game_id) == created.state
    finally:
        for sock in sockets:
            await sock.close()


async def test_a_refusal_asking_for_more_than_a_minute_is_raised_at_once(
        redis_url: str, tmp_path: Path) -> None:
    # One rename a day: the second is refused for most of a day. The client does not wait
    # that out (it would hang for hours): it raises, saying when to try again.
    settings = settings_for_test(redis_url, tmp_path, renames_per_day=1)
    async with running_service(settings) as url, Client(url) as client:
        await client.create_player("one")
        await client.rename("two")
        with pytest.raises(ApiError) as refused:
            await asyncio.wait_for(client.rename("three"), 20)
    assert refused.value.code == "rate_limited"
    assert refused.value.retry_after_s is not None and refused.value.retry_after_s > 80_000
