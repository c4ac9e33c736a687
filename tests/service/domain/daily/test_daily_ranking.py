"""The daily challenge's pure parts: dates, seeds, the ranking order, cursors."""

from __future__ import annotations

from datetime import UTC, date, datetime

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol.codec import decode_query
from protocol.daily import DailyQuery, LeaderboardEntry
from service.domain.cursors import encode_cursor
from service.domain.daily.challenge import Day, Seeds, challenge_body, epoch_ms, parse_date
from service.domain.daily.ranking import Standing, board_entry, duration_ms
from service.domain.daily.service import decode_board_cursor
from service.domain.errors import ApiError
from service.store.daily import KEY_LEN, Row

SECRET = b"test-secret-0123456789abcdef"


def standing(player: str = "p_a", *, won: bool = False, fc: int = 0, duration: int = 0,
             moves: int = 0, finish_ms: int = 0, new_player: bool = False,
             machine_paced: bool = False) -> Standing:
    return Standing(player_id=player, game_id="g_" + player, seq=1,
                    status="won" if won else "resigned", foundation_cards=fc, moves=moves,
                    duration_ms=duration, finished_at=None, finish_ms=finish_ms,
                    new_player=new_player, machine_paced=machine_paced)


def at(clock_time: str) -> datetime:
    """That time of 2026-11-29 (UTC)."""
    return datetime.fromisoformat(f"2026-11-29T{clock_time}Z")


def spec_order(s: Standing) -> tuple[object, ...]:
    """PROTOCOL.md: won first, then more foundation cards, then shorter duration, then
    fewer moves, then earlier finish (then the player id, so the order is total); marked
    entries after the unmarked ones: machine-paced ones after every human-paced one, and
    within each, a new player's after those of players from before the day (issue 23)."""
    return (s.machine_paced, s.new_player, not s.won, -s.foundation_cards, s.duration_ms,
            s.moves, s.finish_ms, s.player_id)


# --- dates -----------------------------------------------------------------------------


def test_a_day_ends_when_the_next_begins() -> None:
    day = Day(date(2026, 11, 29))
    assert day.starts_at == datetime(2026, 11, 29, tzinfo=UTC)
    assert day.ends_at == Day(date(2026, 11, 30)).starts_at
    body = challenge_body(day, "gate", 42, 97, datetime(2026, 11, 29, 23, 59, 59, tzinfo=UTC))
    assert msgspec.to_builtins(body) == {
        "variant": "gate", "date": "2026-11-29", "starts_at": "2026-11-29T00:00:00.000Z",
        "ends_at": "2026-11-30T00:00:00.000Z", "seed": None, "winnable": True, "par": 97}


def test_the_seed_is_shown_only_once_the_day_is_over() -> None:
    day = Day(date(2026, 11, 29))
    assert challenge_body(day, "gate", 42, 97, day.ends_at).seed == 42


@pytest.mark.parametrize("text", ["2026-02-30", "2026-13-01", "26-11-29", "2026-11-29x", "",
                                  "today", "9999-12-31", "0001-01-01", "1969-12-31"])
def test_a_malformed_date_is_a_bad_request(text: str) -> None:
    with pytest.raises(ApiError) as err:
        parse_date(text)
    assert err.value.code == "bad_request"


@pytest.mark.parametrize("text", ["2026-13-01", "2026-1-01", "26-11-29", "2026-11-29x", "",
                                  "today"])
def test_a_date_in_a_path_is_read_as_the_query_reads_it(text: str) -> None:
    with pytest.raises(msgspec.ValidationError, match="date"):
        decode_query({"date": text}, DailyQuery)
    with pytest.raises(ApiError, match="not a UTC calendar date"):
        parse_date(text)
    day = "2026-11-29"
    assert decode_query({"date": day}, DailyQuery).date == parse_date(day).isoformat() == day


def test_data_is_kept_daily_keep_days_after_the_day() -> None:
    day = Day(date(2026, 11, 29))
    assert day.keep_s(day.ends_at, 30) == 30 * 86400
    assert day.keep_s(datetime(2027, 1, 1, tzinfo=UTC), 30) == 0


# --- seeds -------------------------------------------------------------------------------


def test_a_seed_is_the_same_everywhere_and_below_2_to_the_53() -> None:
    day = date(2026, 11, 29)
    seeds = Seeds(SECRET)
    assert seeds.seed(day, "gate") == Seeds(SECRET).seed(day, "gate")
    values = {seeds.seed(date(2026, 1, 1).replace(day=d), v) for d in range(1, 29)
              for v in ("gilbert", "shamrocks", "gate", "caprice")}
    assert len(values) == 28 * 4
    assert all(0 <= v < 2**53 for v in values)


def test_a_seed_depends_on_the_secret() -> None:
    day = date(2026, 11, 29)
    assert Seeds(SECRET).seed(day, "gate") != Seeds(b"another-secret-0123456789").seed(day, "gate")


# --- the ranking order ------------------------------------------------------------------------


def test_won_ranks_above_more_foundation_cards() -> None:
    slow_win = standing("p_a", won=True, fc=52, duration=10**9)
    assert slow_win.sort_key() < standing("p_b", fc=52).sort_key()


def test_more_foundation_cards_rank_above_a_shorter_duration() -> None:
    assert standing(fc=30, duration=10**7).sort_key() < standing(fc=29, duration=0).sort_key()


def test_a_shorter_duration_ranks_above_fewer_moves() -> None:
    faster = standing(duration=999, moves=500)
    assert faster.sort_key() < standing(duration=1000, moves=1).sort_key()


def test_fewer_moves_rank_above_an_earlier_finish() -> None:
    fewer = standing(moves=10, finish_ms=10**12)
    assert fewer.sort_key() < standing(moves=11, finish_ms=1).sort_key()


def test_an_earlier_finish_ranks_higher() -> None:
    assert standing(finish_ms=epoch_ms(datetime(2026, 11, 29, 1, tzinfo=UTC))).sort_key() < \
        standing(finish_ms=epoch_ms(datetime(2026, 11, 29, 2, tzinfo=UTC))).sort_key()


def test_no_bot_ranks_above_a_person_nor_a_new_player_above_an_older_one_of_its_kind() -> None:
    """An outside client's board: a bot's better result does not lift it above a person,
    however new the person; a new player's better result does not lift it above an older
    player of its kind (a person, or a bot)."""
    old_person = standing("p_a", fc=18, duration=1575, moves=12)
    new_person = standing("p_b", fc=36, duration=4575, moves=35, new_player=True)
    old_bot = standing("p_c", fc=40, duration=257, moves=39, machine_paced=True)
    new_bot = standing("p_d", won=True, fc=52, duration=251, moves=80, new_player=True,
                       machine_paced=True)
    board = [new_bot, old_bot, new_person, old_person]
    assert sorted(board, key=lambda s: s.member().encode()) == [
        old_person, new_person, old_bot, new_bot]


@given(st.lists(st.tuples(st.booleans(), st.integers(0, 104), st.integers(0, 10**9),
                          st.integers(0, 10**6), st.integers(0, 4 * 10**12),
                          st.sampled_from([(False, False), (True, False), (False, True),
                                           (True, True)])),
                min_size=2, max_size=40))
def test_the_sort_key_orders_exactly_as_the_ranking(
        rows: list[tuple[bool, int, int, int, int, tuple[bool, bool]]]) -> None:
    standings = [standing(f"p_{i:03d}", won=w, fc=fc, duration=d, moves=m, finish_ms=f,
                          new_player=marks[0], machine_paced=marks[1])
                 for i, (w, fc, d, m, f, marks) in enumerate(rows)]
    by_key = sorted(standings, key=lambda s: s.member().encode())  # Redis compares bytes
    assert by_key == sorted(standings, key=spec_order)
    assert all(len(s.sort_key()) == KEY_LEN for s in standings)


def test_the_sort_key_is_as_long_as_the_store_reads_it_even_at_its_limits() -> None:
    least = standing(won=False, fc=0, duration=10**20, moves=10**20, finish_ms=10**20)
    most = standing(won=True, fc=104, duration=0, moves=0, finish_ms=0)
    assert len(least.sort_key()) == len(most.sort_key()) == KEY_LEN


def test_an_attempt_not_final_stands_as_it_was_at_the_day_end() -> None:
    s = Standing.of(player_id="p_a", game_id="g_a", seq=7, status="lost", foundation_cards=12,
                    moves=7, started_at=at("10:00:00.000"), last_at=at("10:01:30.250"),
                    finished_at=None, day_end_ms=epoch_ms(Day(date(2026, 11, 29)).ends_at))
    assert (s.duration_ms, s.finished_at, s.won) == (90_250, None, False)
    assert s.finish_ms == epoch_ms(datetime(2026, 11, 30, tzinfo=UTC))


def test_an_entry_read_back_is_the_protocols_entry_field_for_field() -> None:
    s = Standing.of(player_id="p_a", game_id="g_a", seq=9, status="won", foundation_cards=52,
                    moves=88, started_at=at("10:00:00.000"), last_at=None,
                    finished_at=at("10:03:00.500"), day_end_ms=0)
    read = board_entry(Row(3, "p_a", s.entry_json()), "Annie")
    expected = LeaderboardEntry(rank=3, player_id="p_a", name="Annie", game_id="g_a",
                                status="won", won=True, foundation_cards=52, moves=88,
                                duration_ms=180_500, finished_at="2026-11-29T10:03:00.500Z")
    assert isinstance(read, LeaderboardEntry)
    assert msgspec.json.encode(read) == msgspec.json.encode(expected)  # keys in the same order
    # and what it encodes passes the protocol's own checks
    assert msgspec.json.decode(msgspec.json.encode(read), type=LeaderboardEntry) == expected


def test_an_entry_whose_players_record_is_gone_shows_the_player_id() -> None:
    read = board_entry(Row(1, "p_b", standing("p_b").entry_json()), None)
    assert (read.player_id, read.name) == ("p_b", "p_b")


def test_a_duration_is_counted_in_whole_milliseconds_without_float_rounding() -> None:
    assert duration_ms(at("10:00:00.000"), at("10:00:04.350")) == 4350
    assert duration_ms(at("10:00:00.000"), None) == 0


# --- cursors -----------------------------------------------------------------------------------


def test_a_cursor_names_the_last_member_read() -> None:
    member = standing("p_Zz-9_").member().encode()
    assert decode_board_cursor(encode_cursor(member)) == member


@pytest.mark.parametrize("cursor", ["x", "!!!!", encode_cursor(b"123"),
                                    encode_cursor(b"0" * KEY_LEN),
                                    encode_cursor(b"0" * KEY_LEN + b"p a")])
def test_a_forged_cursor_is_a_bad_request(cursor: str) -> None:
    with pytest.raises(ApiError) as err:
        decode_board_cursor(cursor)
    assert err.value.code == "bad_request"


def test_each_candidate_k_of_a_day_is_another_deal_and_k_0_is_the_first() -> None:
    day = date(2026, 11, 29)
    seeds = Seeds(SECRET)
    candidates = [seeds.seed(day, "gate", k) for k in range(50)]
    assert len(set(candidates)) == 50
    assert candidates[0] == seeds.seed(day, "gate")
    assert seeds.seed(day, "gilbert", 1) != seeds.seed(day, "gate", 1)
