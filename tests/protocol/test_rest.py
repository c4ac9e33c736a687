"""REST bodies: seed bounds, unknown fields, omitted defaults, nulls that stay."""

from __future__ import annotations

import msgspec
import pytest

import protocol as p


def create_game(body: object) -> p.CreateGame:
    return p.decode(msgspec.json.encode(body), p.CreateGame)


@pytest.mark.parametrize("seed", [0, 1, 2**32, 2**53 - 1])
def test_a_seed_is_a_deal_number_below_2_to_the_53(seed: int) -> None:
    assert create_game({"variant": "gilbert", "seed": seed}).seed == seed


@pytest.mark.parametrize("seed", [-1, 2**53, 2**63, 1.0, "1", True])
def test_a_seed_out_of_bounds_or_not_an_integer_is_refused(seed: object) -> None:
    with pytest.raises(msgspec.ValidationError, match="seed"):
        create_game({"variant": "gilbert", "seed": seed})


def test_create_game_defaults() -> None:
    game = create_game({"variant": "gilbert"})
    assert (game.seed, game.options, game.public) == (None, None, False)
    assert create_game({"variant": "gilbert", "seed": None}).seed is None


def test_requests_omit_their_defaults_when_encoded() -> None:
    assert p.encode(p.CreateGame(variant="gilbert")) == b'{"variant":"gilbert"}'
    assert p.encode(p.CommandRequest(command=p.Draw())) == b'{"command":{"type":"draw"}}'


@pytest.mark.parametrize(
    ("type_", "body"),
    [
        (p.CreatePlayer, {"name": "Ada", "admin": True}),
        (p.UpdatePlayer, {"name": "Ada", "player_id": "p_2"}),
        (p.CreateGame, {"variant": "gilbert", "private": True}),
        (p.CommandRequest, {"command": {"type": "draw"}, "seq": 3}),
        (p.CommandRequest, {"command": {"type": "draw", "x": 1}}),
    ],
)
def test_unknown_fields_in_requests_are_refused(type_: type, body: object) -> None:
    with pytest.raises(msgspec.ValidationError, match="unknown field"):
        p.decode(msgspec.json.encode(body), type_)


@pytest.mark.parametrize(
    ("type_", "wire", "field"),
    [
        (p.CreatePlayer, b'{"name": "Ada", "name": "Eve"}', "name"),
        (p.CreateGame, b'{"variant": "gate", "options": {"single_card_moves": true, '
         b'"single_card_moves": false}}', "options.single_card_moves"),
        (p.CommandRequest, b'{"command": {"type": "draw"}, "command": {"type": "undo"}}',
         "command"),
        (p.CommandRequest, b'{"command": {"type": "move", "type": "draw"}}', "command.type"),
    ],
)
def test_a_key_repeated_in_a_request_is_refused_naming_it(
        type_: type, wire: bytes, field: str) -> None:
    with pytest.raises(msgspec.ValidationError, match="duplicate field") as caught:
        p.decode_request(wire, type_)
    assert p.bad_request_from(caught.value).error.details == {"field": field}


@pytest.mark.parametrize(
    ("type_", "body"),
    [
        (p.CreatePlayer, {}),
        (p.CreatePlayer, {"name": ""}),
        (p.CreatePlayer, {"name": "x" * 33}),
        (p.CreatePlayer, {"name": "a\nb"}),
        (p.CreatePlayer, {"name": 7}),
        (p.CreateGame, {"variant": "Gilbert"}),
        (p.CreateGame, {"variant": "gilbert", "options": []}),
        (p.CreateGame, {"variant": "gilbert", "options": {"x": [1]}}),
        (p.CreateGame, {"variant": "gilbert", "public": "yes"}),
        (p.CommandRequest, {"command": {"type": "draw"}, "expected_seq": -1}),
        (p.CommandRequest, {"command": {"type": "draw"}, "command_id": ""}),
        (p.CommandRequest, {"command": {"type": "draw"}, "command_id": "x" * 65}),
        (p.CommandRequest, {"command": {"type": "draw"}, "command_id": 5}),
        (p.CommandRequest, {"expected_seq": 1}),
    ],
)
def test_wrong_types_and_values_in_requests_are_refused(type_: type, body: object) -> None:
    with pytest.raises(msgspec.ValidationError):
        p.decode(msgspec.json.encode(body), type_)


def test_a_command_id_may_be_64_characters() -> None:
    body = {"command": {"type": "undo"}, "command_id": "x" * 64}
    assert p.decode_command_request(msgspec.json.encode(body)).command_id == "x" * 64


def test_leaderboard_nulls_are_sent() -> None:
    wire = msgspec.json.decode(p.encode(p.Leaderboard(entries=[], next_cursor=None, me=None)))
    assert wire == {"entries": [], "next_cursor": None, "me": None}


def test_my_entry_is_an_entry_with_its_neighbours() -> None:
    me = msgspec.json.decode(
        b'{"rank": 3, "player_id": "p", "name": "n", "game_id": "g", "status": "playing",'
        b' "won": false, "foundation_cards": 4, "moves": 9, "duration_ms": 0,'
        b' "finished_at": null, "around": []}'
    )
    entry = p.decode(msgspec.json.encode(me), p.MyEntry)
    assert isinstance(entry, p.LeaderboardEntry)
    assert msgspec.json.decode(p.encode(entry))["finished_at"] is None


def test_a_challenge_seed_is_null_until_the_day_is_over() -> None:
    challenge = p.Challenge(
        variant="gate",
        date="2026-03-01",
        starts_at="2026-03-01T00:00:00Z",
        ends_at="2026-03-02T00:00:00Z",
        seed=None,
        winnable=True,
        par=40,
    )
    assert msgspec.json.decode(p.encode(challenge))["seed"] is None


@pytest.mark.parametrize("date", ["2026-3-1", "2026-13-01", "2026-02-32", "today", ""])
def test_malformed_dates_are_refused(date: str) -> None:
    with pytest.raises(msgspec.ValidationError, match="date"):
        p.decode_query({"date": date}, p.DailyQuery)


def test_queries_parse_numbers_and_apply_defaults() -> None:
    assert p.decode_query({}, p.LeaderboardQuery) == p.LeaderboardQuery(limit=20, cursor=None)
    assert p.decode_query({"limit": "100", "cursor": "abc"}, p.LeaderboardQuery) == (
        p.LeaderboardQuery(limit=100, cursor="abc")
    )
    assert p.decode_query({"after": "7"}, p.EventsQuery).after == 7
    assert p.decode_query({"date": "2026-03-01"}, p.DailyQuery).date == "2026-03-01"


@pytest.mark.parametrize("limit", ["0", "101", "-1", "ten", "1.5", ""])
def test_a_limit_outside_1_to_100_is_refused(limit: str) -> None:
    with pytest.raises(msgspec.ValidationError, match="limit"):
        p.decode_query({"limit": limit}, p.LeaderboardQuery)


def test_unknown_query_parameters_are_ignored() -> None:
    assert p.decode_query({"after": "2", "_": "1700000000"}, p.EventsQuery).after == 2


def test_a_repeated_query_parameter_counts_once() -> None:
    class MultiDict(dict[str, str]):
        """The shape of aiohttp's MultiDict.items(): every pair, repeats included."""

        def items(self) -> list[tuple[str, str]]:  # type: ignore[override]
            return [("after", "3"), ("after", "9")]

    assert p.decode_query(MultiDict(), p.EventsQuery).after == 3
