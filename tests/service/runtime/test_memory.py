"""service/runtime/memory.py: memory is given back once a burst of sockets has closed, and not
while sockets only come (the figures are in benchmarks/README.md, "Memory"). What renewing
the free lists gives back depends on how uvloop and asyncio keep freed objects, which is
theirs to change: it is measured by benchmarks/footprint.py, not asserted here; the tests
below run it with every give-back."""

from __future__ import annotations

import asyncio
import platform
import subprocess
import sys
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from service.domain.games import GameService
from service.engine import DRAW
from service.runtime import memory
from service.runtime.memory import Trimmer
from service.runtime.metrics import Metrics
from service.store import keys
from service.store.solver import SolverStore
from tests.fakes import FakeClock
from tests.live import ServiceProcess, settings_for_test
from tests.service.helpers import wait_for
from tests.service.runtime.test_workers import both_workers_listening
from tests.stores import Store


async def test_memory_is_given_back_once_a_burst_of_sockets_has_closed() -> None:
    sockets: set[int] = set()
    forgotten: list[int] = []
    trimmer = Trimmer(sockets, forget=lambda: forgotten.append(len(sockets)),
                      check_every_s=0.01, after_closed=3)
    trimmer.start()
    try:
        sockets.update(range(5))
        await asyncio.sleep(0.05)  # several checks while the sockets came: no trim
        assert trimmer.trims == 0 and forgotten == []
        sockets.difference_update(range(4))
        await wait_for(lambda: trimmer.trims == 1, what="a trim after 4 of 5 sockets closed")
        assert forgotten == [1]  # what the burst left cached, forgotten before the trim
        # The count it fell to is the new highest: the next trim waits for another burst.
        sockets.update(range(10, 12))
        sockets.discard(10)
        await asyncio.sleep(0.05)
        assert trimmer.trims == 1
    finally:
        await trimmer.stop()


async def test_memory_is_given_back_once_the_burst_has_closed_not_in_the_middle() -> None:
    # A trim while the burst is still closing would leave the sockets closed after it to a
    # rare full collection: the trimmer waits until the count stops falling.
    sockets = set(range(10))
    forgotten: list[int] = []
    trimmer = Trimmer(sockets, forget=lambda: forgotten.append(len(sockets)),
                      after_closed=3, settle_checks=3)
    await trimmer.check()
    sockets.difference_update(range(5))  # 5 closed: enough, but still closing
    await trimmer.check()
    sockets.difference_update(range(5, 8))
    await trimmer.check()
    assert trimmer.trims == 0
    await trimmer.check()  # no fewer than at the last check: the burst has closed
    assert trimmer.trims == 1 and forgotten == [2]
    await trimmer.check()
    assert trimmer.trims == 1


async def test_memory_is_given_back_when_the_sockets_go_on_closing_for_long() -> None:
    sockets = set(range(20))
    trimmer = Trimmer(sockets, after_closed=3, settle_checks=2)
    await trimmer.check()
    closing = iter(range(20))
    # Fell enough at the first check, waited two checks still falling, then gave back; the
    # count it fell to is the next highest.
    for trims in (0, 0, 1, 1):
        sockets.difference_update(next(closing) for _ in range(4))
        await trimmer.check()
        assert trimmer.trims == trims


@pytest.mark.parametrize("loop_factory", ["asyncio", "uvloop"])
def test_renewing_the_free_lists_leaves_the_loop_working(loop_factory: str) -> None:
    # The renewal runs on the service's loop (uvloop) and on asyncio's own, and the callbacks
    # and timers scheduled around it run as before.
    factory = (pytest.importorskip("uvloop").new_event_loop if loop_factory == "uvloop"
               else asyncio.new_event_loop)

    async def around_a_renewal() -> list[str]:
        loop = asyncio.get_running_loop()
        ran: list[str] = []
        loop.call_soon(ran.append, "before")
        timer = loop.create_future()
        loop.call_later(0.01, timer.set_result, None)
        await memory.renew_free_lists()
        loop.call_soon(ran.append, "after")
        await timer
        await asyncio.sleep(0)
        return ran

    with asyncio.Runner(loop_factory=factory) as runner:
        assert runner.run(around_a_renewal()) == ["before", "after"]


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="malloc_trim is glibc's")
def test_glibc_malloc_trim_is_found() -> None:
    trim = memory._malloc_trim()
    assert trim is not None
    assert trim() in (0, 1)  # 1: memory was returned, 0: there was none to return


async def test_reading_a_game_the_cache_has_as_it_is_keeps_the_cached_copy(
        redis_url: str, store_factory: Callable[..., Awaitable[Store]], tmp_path: Path) -> None:
    # Each hello reads its game: a burst of hellos must not leave a new long-lived copy of
    # each game among the sockets' memory (it would keep that memory from the system).
    store = await store_factory(redis_url)
    service = GameService(store.games, SolverStore(store.redis),
                          settings_for_test(redis_url, tmp_path),
                          FakeClock(datetime(2026, 5, 1, 9, tzinfo=UTC)), Metrics(), store.hub)
    created = await service.create("p1", "gilbert", 3, None, False)
    first = await service.load(created.game_id)
    assert await service.load(created.game_id) is first
    await service.command(created.game_id, "p1", DRAW, None, "c1")
    after = await service.load(created.game_id)
    assert after is not first and after.seq == 1
    assert await service.load(created.game_id) is after
    # After a burst (the trimmer forgets the cache) the game is read from the log again.
    service.cache.forget()
    again = await service.load(created.game_id)
    assert again is not after and (again.seq, again.game.piles) == (after.seq, after.game.piles)
    after = again
    # Another instance's hint (the count beside the log) is not the cached copy's.
    await store.redis.execute("HINCRBY", keys.game_meta(created.game_id), "hints", 1)
    hinted = await service.load(created.game_id)
    assert hinted is not after and hinted.hints == after.hints + 1


def test_the_supervisor_does_not_load_the_service_it_runs_in_its_workers() -> None:
    # A supervisor of workers (python -m service with workers > 1) runs none of the web
    # service: importing it was a third of the supervisor's memory (about 19 MiB of 54).
    code = ("import sys, service.__main__; print(sorted(m for m in "
            "('aiohttp', 'service.app', 'service.socket.endpoint') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60, cwd=Path(__file__).resolve().parents[3])
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def _environment(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode().split("=", 1) for item in raw if b"=" in item)


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads /proc")
@pytest.mark.parametrize(("given", "used"), [(None, "malloc"), ("pymalloc", "pymalloc")])
async def test_the_service_and_its_workers_run_on_glibcs_allocator_unless_the_operator_chose(
        tmp_path: Path, given: str | None, used: str) -> None:
    process = ServiceProcess(None, tmp_path / "svc", SOLITAIRE_WORKERS="2")
    process.env.pop("PYTHONMALLOC", None)
    if given is not None:
        process.env["PYTHONMALLOC"] = given
    with process:
        assert process.process is not None
        supervisor = process.process.pid  # started again in place: the same process
        children = await both_workers_listening(process)
        for pid in (supervisor, *children):
            assert _environment(pid).get("PYTHONMALLOC") == used, pid
