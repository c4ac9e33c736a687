"""The daily store's contract, run against a single server and a Redis Cluster."""

from __future__ import annotations

import asyncio
import itertools
import random
from datetime import UTC, datetime
from typing import Any

import msgspec
import pytest
from redis.crc import key_slot

from service.domain.daily.ranking import Standing, board_entry
from service.store import GameMeta, keys
from service.store.daily import DailyStore, Page, Record
from service.store.games import Attempt
from tests.stores import Store

DATE, VARIANT = "2026-11-29", "gate"
TTL_S = 3600


@pytest.fixture
async def daily(store: Store) -> DailyStore:
    # One command first: redis-py 8.1's RedisCluster fails (AttributeError) when its
    # very first commands run concurrently while it initializes (reported to the lead).
    await store.redis.execute("EXISTS", "warm-up")
    return DailyStore(store.redis)


def standing(player: str, *, won: bool = False, fc: int = 0, duration: int = 0, moves: int = 0,
             finish_ms: int = 1_800_000_000_000, game: str | None = None, seq: int = 1) -> Standing:
    return Standing(player_id=player, game_id=game or "g_" + player, seq=seq,
                    status="won" if won else "resigned", foundation_cards=fc, moves=moves,
                    duration_ms=duration, finished_at=None, finish_ms=finish_ms)


def record(s: Standing) -> Record:
    return Record(s.player_id, s.game_id, s.seq, s.sort_key(), s.entry_json())


async def write(daily: DailyStore, *standings: Standing) -> int:
    return await daily.record(DATE, VARIANT, [record(s) for s in standings], TTL_S)


def entries(page: Page | None) -> list[dict[str, Any]]:
    """The page's entries as the service sends them."""
    assert page is not None
    return [msgspec.to_builtins(board_entry(row, None)) for row in page.entries]


def me(page: Page | None) -> dict[str, Any] | None:
    assert page is not None
    if page.me is None:
        return None
    return {**msgspec.to_builtins(board_entry(page.me, None)),
            "around": [msgspec.to_builtins(board_entry(row, None)) for row in page.around]}


async def read(
    daily: DailyStore,
    after: bytes | None = None,
    limit: int = 100,
    caller: str | None = None,
    require_closed: bool = False,
) -> Page | None:
    return await daily.page(DATE, VARIANT, after, limit, caller, 2, require_closed=require_closed)


async def board(daily: DailyStore, limit: int = 100) -> list[str]:
    return [e["player_id"] for e in entries(await read(daily, limit=limit))]


def test_every_key_of_a_challenge_is_in_one_slot() -> None:
    slots = {key_slot(k.encode()) for k in keys.daily_keys(DATE, VARIANT)}
    assert len(slots) == 1
    assert keys.daily_keys(DATE, VARIANT).board == "daily:{2026-11-29:gate}:board"


async def test_entries_rank_won_first_then_foundation_cards_duration_moves_and_finish(
        daily: DailyStore) -> None:
    # Written in a shuffled order; each pair ties on every criterion before the one it tests.
    rows = [
        standing("p_a", won=True, fc=52, duration=90_000, moves=200),
        standing("p_b", won=True, fc=52, duration=90_000, moves=201),  # more moves
        standing("p_c", won=True, fc=52, duration=90_001, moves=100),  # longer
        standing("p_d", fc=51, duration=1, moves=1),  # not won
        standing("p_e", fc=50, duration=0, moves=0),  # fewer cards
        standing("p_f", fc=50, duration=0, moves=0, finish_ms=1_800_000_000_001),  # later finish
        # A full tie: by id.
        standing("p_h", fc=50, duration=0, moves=0, finish_ms=1_800_000_000_001),
        standing("p_g", fc=50, duration=0, moves=0, finish_ms=1_800_000_000_001),
    ]
    shuffled = rows[:]
    random.Random(7).shuffle(shuffled)
    assert await write(daily, *shuffled) == len(rows)
    assert await board(daily) == ["p_a", "p_b", "p_c", "p_d", "p_e", "p_f", "p_g", "p_h"]


async def test_a_page_carries_its_ranks_and_a_cursor_to_the_next(daily: DailyStore) -> None:
    await write(daily, *(standing(f"p_{i:02d}", fc=i) for i in range(25)))
    page = await read(daily, limit=10)
    rows = entries(page)
    assert page is not None and page.more and [e["rank"] for e in rows] == list(range(1, 11))
    assert [e["player_id"] for e in rows] == [f"p_{i:02d}" for i in range(24, 14, -1)]
    assert page.last == standing("p_15", fc=15).member().encode()
    page2 = await read(daily, page.last, limit=10)
    assert page2 is not None and page2.more and entries(page2)[0]["rank"] == 11
    page3 = await read(daily, page2.last, limit=10)
    assert page3 is not None and not page3.more
    assert [(e["rank"], e["player_id"]) for e in entries(page3)] == [
        (21 + i, f"p_{4 - i:02d}") for i in range(5)]


async def test_an_entry_shows_the_figures_it_was_written_with(daily: DailyStore) -> None:
    s = standing("p_a", won=True, fc=52, duration=90_250, moves=150)
    await write(daily, s)
    page = await read(daily)
    assert entries(page) == [
        {
            "rank": 1,
            "player_id": "p_a",
            "name": "p_a",  # the service puts the player's name here when it shows the page
            "game_id": "g_p_a",
            "status": "won",
            "won": True,
            "foundation_cards": 52,
            "moves": 150,
            "duration_ms": 90_250,
            "finished_at": None,
            "new_player": False,
            "machine_paced": False,
        }
    ]


async def test_the_board_keeps_player_ids_and_their_names_are_read_in_one_call(
        daily: DailyStore) -> None:
    """A rename touches no board: the names of a page are the players' own, read when
    shown; a player whose record is gone has none (the service shows the id)."""
    await write(daily, standing("p_a"), standing("p_b"), standing("p_c"))
    page = await read(daily, caller="p_b")
    assert page is not None and page.player_ids() == ["p_a", "p_b", "p_c"]
    for pid, name in (("p_a", 'Zoë "the Ace" 李'), ("p_b", "bob")):
        await daily.redis.execute("HSET", keys.player(pid), "name", name, "joined", 1_700_000_000)
    profiles = await daily.profiles(page.player_ids())
    assert profiles == {"p_a": ('Zoë "the Ace" 李', 1_700_000_000),
                        "p_b": ("bob", 1_700_000_000), "p_c": (None, None)}
    assert await daily.profiles([]) == {}


async def test_a_board_written_with_names_in_its_members_still_reads_and_updates(
        daily: DailyStore) -> None:
    """Members an older version wrote (``<key><player>|<entry>|<name JSON>``) are read
    without their name, and a new best attempt of theirs replaces them."""
    k = keys.daily_keys(DATE, VARIANT)
    old = standing("p_a", fc=3, game="g_old")
    member = (old.sort_key() + "p_a|").encode() + old.entry_json() + b'|"Old Name"'
    await daily.redis.execute("ZADD", k.board, 0, member)
    await daily.redis.execute("HSET", k.ranked, "p_a", member)
    await daily.redis.execute("HSET", k.entries, "g_old",
                              f"1|{old.sort_key()}|".encode() + old.entry_json())
    assert [(e["player_id"], e["foundation_cards"]) for e in entries(await read(daily))] == [
        ("p_a", 3)]
    await write(daily, standing("p_a", won=True, fc=52, game="g_new"))
    assert [(e["player_id"], e["won"]) for e in entries(await read(daily))] == [("p_a", True)]
    assert int(await daily.redis.execute("ZCARD", k.board)) == 1


async def test_pages_skip_and_repeat_nothing_while_entries_are_added(daily: DailyStore) -> None:
    rng = random.Random(11)

    def some(prefix: str, n: int) -> list[Standing]:
        return [standing(f"{prefix}{i:04d}", won=rng.random() < 0.3, fc=rng.randrange(53),
                         duration=rng.randrange(10**6), moves=rng.randrange(400)) for i in range(n)]

    before = some("p_old", 300)
    await write(daily, *before)
    later = some("p_new", 300)

    async def writer() -> None:
        for i in range(0, len(later), 5):
            await write(daily, *later[i:i + 5])
            await asyncio.sleep(0)

    seen: list[str] = []
    ranks: list[int] = []

    async def reader() -> None:
        after = None
        while True:
            page = await read(daily, after, limit=7)
            rows = entries(page)
            seen.extend(e["player_id"] for e in rows)
            ranks.extend(e["rank"] for e in rows)
            assert page is not None
            if not page.more:
                return
            after = page.last
            await asyncio.sleep(0)

    await asyncio.gather(writer(), reader())
    assert len(seen) == len(set(seen)), "an entry was repeated"
    assert all(b > a for a, b in itertools.pairwise(ranks)), "pages went back in the ranking"
    everyone = {s.player_id: s for s in before + later}
    members = [everyone[p].member().encode() for p in seen]
    assert members == sorted(members), "pages left the ranking order"
    assert {s.player_id for s in before} <= set(seen), (
        "an entry that was there all along was skipped"
    )


async def test_me_comes_with_two_neighbours_above_and_below(daily: DailyStore) -> None:
    await write(daily, *(standing(f"p_{i}", fc=10 - i) for i in range(10)))  # p_0 ranks first
    mine = me(await read(daily, limit=3, caller="p_5"))
    assert mine is not None and (mine["rank"], mine["player_id"]) == (6, "p_5")
    assert [(e["rank"], e["player_id"]) for e in mine["around"]] == [
        (4, "p_3"),
        (5, "p_4"),
        (7, "p_6"),
        (8, "p_7"),
    ]
    top = me(await read(daily, limit=3, caller="p_0"))
    assert (
        top is not None
        and top["rank"] == 1
        and [e["player_id"] for e in top["around"]] == ["p_1", "p_2"]
    )
    last = me(await read(daily, limit=3, caller="p_9"))
    assert last is not None and [e["rank"] for e in last["around"]] == [8, 9]
    assert me(await read(daily, limit=3, caller="p_stranger")) is None


async def test_an_entry_is_replaced_only_by_a_later_state_of_its_game(daily: DailyStore) -> None:
    assert await write(daily, standing("p_a", fc=10, seq=5)) == 1
    assert await write(daily, standing("p_a", fc=3, seq=4)) == 0  # older: ignored
    assert await write(daily, standing("p_a", fc=10, seq=5)) == 0  # the same: idempotent
    assert await write(daily, standing("p_a", fc=12, seq=6)) == 1
    rows = entries(await read(daily))
    assert [(e["player_id"], e["foundation_cards"]) for e in rows] == [("p_a", 12)]
    assert await daily.size(DATE, VARIANT) == 1


async def test_the_best_attempt_of_a_player_counts(daily: DailyStore) -> None:
    await daily.reserve(DATE, VARIANT, "p_a", "g_1", 3, TTL_S)
    await daily.reserve(DATE, VARIANT, "p_a", "g_2", 3, TTL_S)
    await write(daily, standing("p_b", fc=20))
    await write(daily, standing("p_a", fc=10, game="g_1"))
    assert await board(daily) == ["p_b", "p_a"]
    await write(daily, standing("p_a", fc=30, game="g_2"))  # better: replaces
    rows = entries(await read(daily))
    assert [(e["player_id"], e["game_id"]) for e in rows] == [("p_a", "g_2"), ("p_b", "g_p_b")]
    # The best got worse: g_1 is best now.
    await write(daily, standing("p_a", fc=5, game="g_2", seq=2))
    rows = entries(await read(daily))
    assert [(e["player_id"], e["game_id"]) for e in rows] == [("p_b", "g_p_b"), ("p_a", "g_1")]
    assert await daily.size(DATE, VARIANT) == 2


async def test_a_player_gets_as_many_attempts_as_the_limit(daily: DailyStore) -> None:
    assert await daily.reserve(DATE, VARIANT, "p_a", "g_1", 1, TTL_S) == ("ok", [])
    assert await daily.reserve(DATE, VARIANT, "p_a", "g_2", 1, TTL_S) == ("used", ["g_1"])
    assert await daily.reserve(DATE, VARIANT, "p_a", "g_2", 2, TTL_S) == ("ok", [])
    assert await daily.reserve(DATE, VARIANT, "p_b", "g_3", 1, TTL_S) == ("ok", [])
    assert await daily.attempts(DATE, VARIANT, "p_a") == ["g_1", "g_2"]
    await daily.unreserve(DATE, VARIANT, "p_a", "g_2")
    assert await daily.attempts(DATE, VARIANT, "p_a") == ["g_1"]


async def test_concurrent_reservations_never_exceed_the_limit(daily: DailyStore) -> None:
    results = await asyncio.gather(*(daily.reserve(DATE, VARIANT, "p_a", f"g_{i}", 1, TTL_S)
                                     for i in range(20)))
    assert sum(state == "ok" for state, _ in results) == 1


async def test_one_caller_ranks_the_day_and_no_attempt_starts_after(daily: DailyStore) -> None:
    await daily.reserve(DATE, VARIANT, "p_a", "g_1", 1, TTL_S)
    starts = await asyncio.gather(*(daily.begin_close(DATE, VARIANT, f"t{i}", 60_000, TTL_S)
                                    for i in range(10)))
    mine = [s for s in starts if s.state == "mine"]
    assert len(mine) == 1 and mine[0].open_attempts == {"g_1": "p_a"}
    assert all(s.state == "busy" for s in starts if s is not mine[0])
    assert await daily.reserve(DATE, VARIANT, "p_b", "g_2", 1, TTL_S) == ("over", [])
    assert await read(daily, require_closed=True) is None
    assert not await daily.is_closed(DATE, VARIANT)
    idx = starts.index(mine[0])
    await daily.finish_close(DATE, VARIANT, f"t{idx}", TTL_S)
    assert await daily.is_closed(DATE, VARIANT)
    assert (await daily.begin_close(DATE, VARIANT, "t99", 60_000, TTL_S)).state == "closed"
    assert await read(daily, require_closed=True) is not None


async def test_writing_an_entry_takes_its_game_out_of_the_open_attempts(daily: DailyStore) -> None:
    await daily.reserve(DATE, VARIANT, "p_a", "g_p_a", 1, TTL_S)
    await daily.reserve(DATE, VARIANT, "p_b", "g_p_b", 1, TTL_S)
    await write(daily, standing("p_a", fc=1))
    start = await daily.begin_close(DATE, VARIANT, "t", 60_000, TTL_S)
    assert start.open_attempts == {"g_p_b": "p_b"}


async def test_every_key_of_a_challenge_expires(daily: DailyStore, store: Store) -> None:
    await daily.reserve(DATE, VARIANT, "p_a", "g_1", 1, TTL_S)
    await write(daily, standing("p_a"))
    await daily.begin_close(DATE, VARIANT, "t", 60_000, TTL_S)
    await daily.finish_close(DATE, VARIANT, "t", TTL_S)
    k = keys.daily_keys(DATE, VARIANT)
    for key in (k.board, k.entries, k.ranked, k.attempts, k.over, k.closed):
        ttl = await store.redis.execute("TTL", key)
        assert 0 < ttl <= TTL_S, (key, ttl)


async def test_attempts_read_games_across_slots_and_keep_open_ones(
        daily: DailyStore, store: Store) -> None:
    base = GameMeta(variant="gate", seed=1, owner="p_a", rules_version="1",
                    created_at=datetime(2026, 11, 29, 10, tzinfo=UTC))
    ids = [f"g_{i}" for i in range(12)]
    for i, gid in enumerate(ids):
        await store.games.create(gid, base.replace(owner=f"p_{i}"), ttl_s=100)
    await store.games.append(
        "g_0",
        0,
        "c1",
        b"{}",
        {
            "status": "lost",
            "moves": "1",
            "foundation_cards": "3",
            "started_at": "2026-11-29T10:00:01.000Z",
            "last_at": "2026-11-29T10:00:01.000Z",
        },
        ttl_s=100,
    )
    states = await store.games.attempts([*ids, "g_missing"], 5000, ["won", "resigned"])
    assert states[-1] is None
    first = datetime(2026, 11, 29, 10, 0, 1, tzinfo=UTC)
    assert states[0] == Attempt(owner="p_0", seq=1, status="lost", moves=1, foundation_cards=3,
                                started_at=first, last_at=first, finished_at=None)
    assert [s.owner for s in states[1:-1] if s] == [f"p_{i}" for i in range(1, 12)]
    assert 100 < await store.redis.execute("TTL", keys.game_meta("g_0")) <= 5000


async def test_names_come_in_one_call_across_slots_and_a_gone_player_has_none(
    daily: DailyStore, store: Store
) -> None:
    for i in range(5):
        await store.redis.execute("HSET", keys.player(f"p_{i}"), "name", f"Name {i}")
    profiles = await daily.profiles([f"p_{i}" for i in range(6)])
    assert {pid: p.name for pid, p in profiles.items()} == {
        **{f"p_{i}": f"Name {i}" for i in range(5)}, "p_5": None}


async def test_a_board_of_many_entries_is_written_in_batches(daily: DailyStore) -> None:
    rows = [standing(f"p_{i:05d}", fc=i % 53, moves=i) for i in range(2_000)]
    assert await daily.record(DATE, VARIANT, [record(s) for s in rows], TTL_S, batch=300) == 2_000
    assert await daily.size(DATE, VARIANT) == 2_000
