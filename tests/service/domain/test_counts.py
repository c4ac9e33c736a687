"""Per-instance counts: each worker's share in the store, summed over the live workers."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import pytest

from service.domain.counts import Full, InstanceCounts
from service.store.counts import CountsStore, Taken
from service.store.embedded import EmbeddedServer
from service.store.errors import StoreError
from tests.service.helpers import wait_for
from tests.stores import Store

LEASE_MS = 15_000
KEEP_S = 3600


async def test_a_count_is_the_sum_of_the_workers_shares(store: Store) -> None:
    a, b = CountsStore(store.redis, "i1", "wa"), CountsStore(store.redis, "i1", "wb")
    assert (await a.take([("ws:x", 3, 1)], LEASE_MS, KEEP_S)).taken
    assert (await a.take([("ws:x", 3, 2)], LEASE_MS, KEEP_S)).taken
    assert (await b.take([("ws:x", 3, 1)], LEASE_MS, KEEP_S)).taken
    assert await b.take([("ws:x", 3, 2)], LEASE_MS, KEEP_S) == Taken(False, 0, 2)
    await a.set([("ws:x", 1)], KEEP_S)  # a gave one back
    assert (await b.take([("ws:x", 3, 2)], LEASE_MS, KEEP_S)).taken


async def test_a_workers_write_that_arrives_after_a_later_one_changes_nothing(
        store: Store) -> None:
    # The store's batches in flight travel on several connections: a worker's second take
    # can reach the store before its first.
    a, b = CountsStore(store.redis, "i1", "wa"), CountsStore(store.redis, "i1", "wb")
    first = a.take([("search:a:x", 2, 1)], LEASE_MS, KEEP_S)  # a holds 1
    second = a.take([("search:a:x", 2, 2)], LEASE_MS, KEEP_S)  # then 2
    assert (await second).taken
    assert (await first).taken  # counted by the second already, and a's share stays 2
    assert await b.take([("search:a:x", 2, 1)], LEASE_MS, KEEP_S) == Taken(False, 0, 2)
    giving_back = a.set([("search:a:x", 1)], KEEP_S)
    late = a.set([("search:a:x", 2)], KEEP_S)
    await late
    await giving_back  # the earlier write arrives last: a holds 2, as its later write says
    assert await b.take([("search:a:x", 2, 1)], LEASE_MS, KEEP_S) == Taken(False, 0, 2)


async def test_a_count_given_back_to_0_keeps_its_number_for_a_write_that_arrives_late(
        store: Store) -> None:
    a, b = CountsStore(store.redis, "i1", "wa"), CountsStore(store.redis, "i1", "wb")
    taking = a.take([("ws:x", 1, 1)], LEASE_MS, KEEP_S)
    giving_back = a.set([("ws:x", 0)], KEEP_S)
    await giving_back
    assert (await taking).taken  # judged by the later count, 0, and not written
    assert (await b.take([("ws:x", 1, 1)], LEASE_MS, KEEP_S)).taken  # a holds none


async def test_several_counts_are_taken_all_or_none(store: Store) -> None:
    a, b = CountsStore(store.redis, "i1", "wa"), CountsStore(store.redis, "i1", "wb")
    assert (await a.take([("search:p:p1", 1, 1)], LEASE_MS, KEEP_S)).taken
    refused = await b.take([("search:a:x", 5, 1), ("search:p:p1", 1, 1)], LEASE_MS, KEEP_S)
    assert refused == Taken(False, 1, 1)  # the second count is full...
    # ...and the first was not counted: b may still take 5 of it.
    assert (await b.take([("search:a:x", 5, 5)], LEASE_MS, KEEP_S)).taken


async def test_another_instance_counts_apart(store: Store) -> None:
    a, other = CountsStore(store.redis, "i1", "wa"), CountsStore(store.redis, "i2", "wa")
    assert (await a.take([("watch:g", 1, 1)], LEASE_MS, KEEP_S)).taken
    assert (await other.take([("watch:g", 1, 1)], LEASE_MS, KEEP_S)).taken


async def test_a_worker_whose_lease_ran_out_stops_counting(store: Store) -> None:
    dead, live = CountsStore(store.redis, "i1", "dead"), CountsStore(store.redis, "i1", "live")
    assert (await dead.take([("ws:x", 1, 1)], 200, KEEP_S)).taken  # a lease of 0.2 s, never renewed
    assert not (await live.take([("ws:x", 1, 1)], LEASE_MS, KEEP_S)).taken

    async def taken() -> bool:
        return (await live.take([("ws:x", 1, 1)], LEASE_MS, KEEP_S)).taken

    await wait_for(taken, what="the dead worker's share to stop counting")


async def test_a_worker_that_leaves_stops_counting_at_once(store: Store) -> None:
    leaving, staying = CountsStore(store.redis, "i1", "w1"), CountsStore(store.redis, "i1", "w2")
    assert (await leaving.take([("ws:x", 1, 1)], LEASE_MS, KEEP_S)).taken
    await leaving.leave()
    assert (await staying.take([("ws:x", 1, 1)], LEASE_MS, KEEP_S)).taken


async def test_a_worker_refuses_what_it_holds_itself_without_asking_the_store(
        store: Store) -> None:
    counts = InstanceCounts(CountsStore(store.redis, "i1", "w1"))
    assert await counts.take([("ws:x", 2)]) is None
    assert await counts.take([("ws:x", 2)]) is None
    full = await counts.take([("ws:x", 2)])
    assert full is not None and (full.what, full.held) == ("ws:x", 2)
    await counts.give_back(["ws:x"])
    assert counts.here == {"ws:x": 1}
    other = InstanceCounts(CountsStore(store.redis, "i1", "w2"))
    assert await other.take([("ws:x", 2)]) is None  # the instance holds 2 now
    full = await other.take([("ws:x", 2)])
    assert full is not None and full.held == 2 and other.here == {"ws:x": 1}


async def test_a_limit_of_0_refuses_at_once(store: Store) -> None:
    counts = InstanceCounts(CountsStore(store.redis, "i1", "w1"))
    full = await counts.take([("watch:g", 0)])  # watchers_per_game=0: only the owner
    assert full is not None and full.held == 0 and counts.here == {}


def counts_said(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "service.domain.counts"]


async def test_a_worker_whose_store_does_not_answer_counts_alone_and_says_so(
        restartable_server: EmbeddedServer, store_factory: Callable[..., Awaitable[Store]],
        caplog: pytest.LogCaptureFixture) -> None:
    """While the store does not answer, a worker counts alone (it still holds at most the
    limit itself), says so once, and says so again when the store answers."""
    store = await store_factory(restartable_server.url, redis_timeout_s=0.5)
    counts = InstanceCounts(CountsStore(store.redis, "i1", "w1"))
    caplog.set_level(logging.WARNING, logger="service.domain.counts")
    restartable_server.stop()
    assert await counts.take([("ws:x", 2)]) is None
    assert await counts.take([("ws:x", 2)]) is None
    assert (await counts.take([("ws:x", 2)])) == Full("ws:x", 2)  # the worker's own count
    said = counts_said(caplog)
    assert len(said) == 1 and "counted in this worker alone" in said[0], said
    restartable_server.start()
    await counts.give_back(["ws:x"])  # it holds one

    async def answered() -> bool:
        try:
            await counts.take([("watch:g", 5)])
        except StoreError:
            return False
        return "counted across the instance's workers again" in counts_said(caplog)[-1]

    await wait_for(answered, what="the store to answer the worker again")
    # The share it counted alone is written when its lease renews; another worker then
    # sees it: the instance holds one.
    counts.start()
    try:
        other = InstanceCounts(CountsStore(store.redis, "i1", "w2"))

        async def seen() -> bool:
            if await other.take([("ws:x", 1)]) is None:  # not yet: it took one itself
                await other.give_back(["ws:x"])
                return False
            return True

        await wait_for(seen, what="the worker's share to be written")
    finally:
        await counts.stop()
