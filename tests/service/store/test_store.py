"""The event log's contract, run against a single server and a Redis Cluster."""

from __future__ import annotations

import asyncio
from datetime import UTC, date, datetime
from typing import get_args, get_origin, get_type_hints

import pytest

from service.store import Conflict, Duplicate, GameExists, GameMeta, NotFound, StoreError, keys
from service.store import meta as fields
from service.store.games import TTL_SLACK_S
from service.store.meta import DailyTag
from tests.stores import Store

CREATED = datetime(2026, 1, 2, 3, 4, 5, 678_000, tzinfo=UTC)
DAY_END = datetime(2026, 1, 3, tzinfo=UTC)
CHALLENGE = DailyTag(date(2026, 1, 2), "gilbert")


def meta(**changes: object) -> GameMeta:
    base = GameMeta(variant="gilbert", seed=1234, owner="p_owner", rules_version="1",
                    created_at=CREATED, options={"draw": 3})
    return base.replace(**changes)


async def command_seq(store: Store, game_id: str, command_id: str) -> int | None:
    """The seq at which ``command_id`` was applied, or None."""
    first = await store.games.first_application(game_id, command_id)
    return None if first is None else first[0]


async def test_a_created_game_loads_with_its_metadata_at_seq_0(store: Store) -> None:
    await store.games.create("g1", meta(public=True, daily=CHALLENGE, closes_at=DAY_END),
                             ttl_s=3600)
    loaded = await store.games.load("g1")
    assert loaded.meta == meta(public=True, daily=CHALLENGE, closes_at=DAY_END)
    assert loaded.meta.seq == 0
    assert (loaded.snapshot, loaded.snapshot_seq, loaded.events) == (None, 0, [])
    assert (await store.games.load("g1")).meta == loaded.meta


async def test_create_refuses_a_game_id_that_exists(store: Store) -> None:
    await store.games.create("g1", meta(), ttl_s=3600)
    with pytest.raises(GameExists):
        await store.games.create("g1", meta(owner="someone else"), ttl_s=3600)
    assert (await store.games.load("g1")).meta.owner == "p_owner"


async def test_an_unknown_game_is_not_found(store: Store) -> None:
    with pytest.raises(NotFound):
        await store.games.load("nope")
    with pytest.raises(NotFound):
        await store.games.append("nope", 0, "c1", b"e")
    assert await store.games.events("nope") == []
    assert await store.games.event_at("nope", 1) is None


async def test_append_returns_the_next_seq_and_the_log_keeps_the_events_in_order(
    store: Store,
) -> None:
    await store.games.create("g1", meta(), ttl_s=3600)
    for seq in range(1, 6):
        assert await store.games.append("g1", seq - 1, f"c{seq}", b'{"n":%d}' % seq) == seq
    assert await store.games.events("g1") == [b'{"n":%d}' % n for n in range(1, 6)]
    assert await store.games.events("g1", after=3) == [b'{"n":4}', b'{"n":5}']
    assert await store.games.events("g1", after=1, limit=2) == [b'{"n":2}', b'{"n":3}']
    assert await store.games.events("g1", after=5) == []
    assert await store.games.event_at("g1", 1) == b'{"n":1}'
    assert await store.games.event_at("g1", 5) == b'{"n":5}'
    assert await store.games.event_at("g1", 6) is None
    assert (await store.games.load("g1")).meta.seq == 5


async def test_append_sets_the_meta_updates_with_the_event(store: Store) -> None:
    await store.games.create("g1", meta(), ttl_s=3600)
    await store.games.append(
        "g1", 0, None, b"e1", {"status": "won", "finished_at": "2026-01-02T04:00:00.000Z"}
    )
    got = (await store.games.load("g1")).meta
    assert got.status == "won"
    assert got.finished_at == datetime(2026, 1, 2, 4, tzinfo=UTC)
    assert (got.moves, got.started_at, got.hints) == (None, None, None)  # never written
    with pytest.raises(ValueError):
        await store.games.append("g1", 1, None, b"e2", {"seq": "7"})


async def test_a_stale_expected_seq_is_a_conflict_and_writes_nothing(store: Store) -> None:
    await store.games.create("g1", meta(), ttl_s=3600)
    await store.games.append("g1", 0, "c1", b"e1")
    with pytest.raises(Conflict) as caught:
        await store.games.append("g1", 0, "c2", b"e2")
    assert (caught.value.expected_seq, caught.value.current_seq) == (0, 1)
    assert await store.games.events("g1") == [b"e1"]
    assert await command_seq(store, "g1", "c2") is None


async def test_a_repeated_command_id_is_applied_once_and_names_its_first_seq(store: Store) -> None:
    await store.games.create("g1", meta(), ttl_s=3600)
    await store.games.append("g1", 0, "c1", b"e1")
    await store.games.append("g1", 1, "c2", b"e2")
    with pytest.raises(Duplicate) as caught:
        await store.games.append("g1", 0, "c1", b"e1 again")  # stale seq: still a duplicate
    assert caught.value.seq == 1
    with pytest.raises(Duplicate):
        await store.games.append("g1", 2, "c2", b"e2 again")  # current seq: still a duplicate
    assert await store.games.events("g1") == [b"e1", b"e2"]
    assert await command_seq(store, "g1", "c1") == 1
    assert await command_seq(store, "g1", "c2") == 2
    assert await command_seq(store, "g1", "c3") is None


async def test_a_command_id_keeps_the_fingerprint_of_its_first_command(store: Store) -> None:
    await store.games.create("g1", meta(), ttl_s=3600)
    await store.games.append("g1", 0, "c1", b"e1", fingerprint="draw")
    with pytest.raises(Duplicate) as caught:
        await store.games.append("g1", 1, "c1", b"e1 again", fingerprint="resign")
    assert (caught.value.seq, caught.value.fingerprint) == (1, "draw")
    assert await store.games.first_application("g1", "c1") == (1, "draw")
    assert await store.games.events("g1") == [b"e1"]


async def test_of_20_concurrent_appends_at_the_same_seq_exactly_one_wins(store: Store) -> None:
    await store.games.create("g1", meta(), ttl_s=3600)
    await store.games.append("g1", 0, None, b"e0")
    results = await asyncio.gather(
        *(store.games.append("g1", 1, f"c{i}", b"e%d" % i) for i in range(20)),
        return_exceptions=True,
    )
    winners = [r for r in results if r == 2]
    conflicts = [r for r in results if isinstance(r, Conflict)]
    assert len(winners) == 1, results
    assert len(conflicts) == 19 and all(c.current_seq == 2 for c in conflicts)
    events = await store.games.events("g1")
    assert len(events) == 2
    assert events[1] == b"e%d" % results.index(2)


async def test_load_gives_the_latest_snapshot_and_only_the_events_after_it(store: Store) -> None:
    await store.games.create("g1", meta(), ttl_s=3600)
    await store.games.append("g1", 0, None, b"e1")
    await store.games.append("g1", 1, None, b"e2", snapshot=b"state@2")
    await store.games.append("g1", 2, None, b"e3")
    await store.games.append("g1", 3, None, b"e4", snapshot=b"state@4")
    await store.games.append("g1", 4, None, b"e5")
    await store.games.append("g1", 5, None, b"e6")
    loaded = await store.games.load("g1")
    assert (loaded.snapshot, loaded.snapshot_seq) == (b"state@4", 4)
    assert loaded.events == [b"e5", b"e6"]
    assert loaded.meta.seq == 6
    # The whole log is still there.
    assert len(await store.games.events("g1")) == 6


async def test_a_snapshot_at_the_last_seq_leaves_no_events_to_replay(store: Store) -> None:
    await store.games.create("g1", meta(), ttl_s=3600)
    await store.games.append("g1", 0, None, b"e1", snapshot=b"state@1")
    loaded = await store.games.load("g1")
    assert (loaded.snapshot, loaded.snapshot_seq, loaded.events) == (b"state@1", 1, [])


async def ttls(store: Store, game_id: str) -> list[int]:
    client = store.redis.client
    return [int(await client.ttl(key)) for key in keys.game_keys(game_id)]


async def test_an_active_game_has_a_time_to_live_on_every_key(store: Store) -> None:
    await store.games.create("g1", meta(), ttl_s=3600)
    assert 0 < (await ttls(store, "g1"))[0] <= 3600
    await store.games.append("g1", 0, "c1", b"e1", ttl_s=7200, snapshot=b"s1")
    assert all(3600 < ttl <= 7200 for ttl in await ttls(store, "g1"))


async def test_the_time_to_live_is_set_again_only_once_it_fell_a_minute_short(
        store: Store) -> None:
    # Each command need not set four times to live: a game is kept ttl_s (up to
    # TTL_SLACK_S less) after its last command.
    client = store.redis.client
    await store.games.create("g1", meta(), ttl_s=3600)
    await store.games.append("g1", 0, "c1", b"e1", ttl_s=3600)
    meta_key, events_key, commands_key, snap_key = keys.game_keys("g1")
    for key in (meta_key, events_key, commands_key):
        await client.expire(key, 3600 - TTL_SLACK_S + 10)
    await store.games.append("g1", 1, "c2", b"e2", ttl_s=3600)
    left = await ttls(store, "g1")
    assert all(ttl <= 3600 - TTL_SLACK_S + 10 for ttl in left[:3]) and left[3] == -2
    for key in (meta_key, events_key, commands_key):
        await client.expire(key, 3600 - TTL_SLACK_S - 10)
    await store.games.append("g1", 2, "c3", b"e3", ttl_s=3600)
    assert all(3600 - TTL_SLACK_S < ttl <= 3600 for ttl in (await ttls(store, "g1"))[:3])


async def test_a_key_a_command_makes_gets_the_time_to_live_at_once(store: Store) -> None:
    await store.games.create("g1", meta(), ttl_s=3600)
    await store.games.append("g1", 0, "c1", b"e1", ttl_s=3600)  # makes the events, the cmds
    assert all(3600 - TTL_SLACK_S < ttl <= 3600 for ttl in (await ttls(store, "g1"))[:3])
    await store.games.append("g1", 1, "c2", b"e2", ttl_s=3600, snapshot=b"s2")  # the snap
    assert all(3600 - TTL_SLACK_S < ttl <= 3600 for ttl in await ttls(store, "g1"))


async def test_a_new_lifetime_is_set_at_once_longer_or_shorter(store: Store) -> None:
    await store.games.create("g1", meta(), ttl_s=3600)
    await store.games.append("g1", 0, "c1", b"e1", ttl_s=3600, snapshot=b"s1")
    await store.games.append("g1", 1, "c2", b"e2", ttl_s=7200)
    assert all(7200 - TTL_SLACK_S < ttl <= 7200 for ttl in await ttls(store, "g1"))
    await store.games.append("g1", 2, "c3", b"e3", ttl_s=1800)
    assert all(1800 - TTL_SLACK_S < ttl <= 1800 for ttl in await ttls(store, "g1"))


async def test_a_finished_game_is_kept_without_a_time_to_live(store: Store) -> None:
    await store.games.create("g1", meta(), ttl_s=3600)
    await store.games.append("g1", 0, "c1", b"e1", ttl_s=3600, snapshot=b"s1")
    await store.games.append("g1", 1, "c2", b"e2", {"status": "won"}, ttl_s=None)
    assert await ttls(store, "g1") == [-1, -1, -1, -1]


async def test_a_game_whose_time_to_live_ran_out_is_gone(store: Store) -> None:
    await store.games.create("g1", meta(), ttl_s=3600)
    await store.games.append("g1", 0, "c1", b"e1", ttl_s=3600)
    for key in keys.game_keys("g1"):
        await store.redis.client.delete(key)  # what expiry does, without waiting for it
    with pytest.raises(NotFound):
        await store.games.load("g1")


async def test_an_append_without_command_id_is_applied_once_and_not_reported_duplicate(
        store: Store) -> None:
    await store.games.create("g1", meta(), ttl_s=3600)
    assert await store.games.append("g1", 0, None, b"e1") == 1
    assert await store.games.append("g1", 1, None, b"e2") == 2
    assert await store.games.events("g1") == [b"e1", b"e2"]


async def test_ping_answers_when_the_store_is_up(store: Store) -> None:
    await store.ping()


def test_game_meta_has_an_attribute_of_its_kinds_type_for_each_field_of_the_catalogue() -> None:
    hints = get_type_hints(GameMeta)
    # $create_id is written only by the store's own script, never as a GameMeta attribute.
    assert set(hints) == fields.NAMES - {fields.CREATE_ID}
    for name, hint in hints.items():
        types = {get_origin(t) or t for t in (hint, *get_args(hint))}  # X | None, dict[...]
        assert fields.BY_NAME[name].kind.type in types, (name, hint)


def test_game_meta_round_trips_through_its_hash_fields() -> None:
    original = meta(public=True, seq=7, status="resigned", seed_secret=True, daily=CHALLENGE,
                    readable_from=DAY_END, seed_from=DAY_END, closes_at=DAY_END, moves=12,
                    foundation_cards=5, started_at=CREATED, last_at=CREATED,
                    finished_at=CREATED, hash="0123456789abcdef", hints=2)
    raw = {k.encode(): v.encode() for k, v in original.to_fields().items()}
    assert GameMeta.from_fields(raw) == original
    assert raw[b"daily"] == b"2026-01-02/gilbert" and raw[b"public"] == b"1"
    assert raw[b"created_at"] == b"2026-01-02T03:04:05.678Z"
    assert raw[b"options"] == b'{"draw":3}'


def test_a_meta_value_not_of_its_fields_type_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="'moves' holds int"):
        meta(moves="12").to_fields()
    with pytest.raises(ValueError, match="'public' holds bool"):
        fields.to_texts({fields.PUBLIC: 1})
    with pytest.raises(ValueError, match="'moves' holds int"):
        fields.to_texts({fields.MOVES: True})
    with pytest.raises(ValueError, match="catalogue"):
        fields.to_texts({"tag": "x"})


def test_a_malformed_meta_hash_is_a_store_error_that_shows_it() -> None:
    raw = meta().to_fields()
    with pytest.raises(StoreError, match="closes_at"):
        GameMeta.from_fields({**raw, "closes_at": "tomorrow"})
    with pytest.raises(StoreError, match="daily"):
        GameMeta.from_fields({**raw, "daily": "2026-01-02"})
    del raw["owner"]
    with pytest.raises(StoreError, match="owner"):
        GameMeta.from_fields(raw)
