"""The solver's pool (service/domain/solving.py) through the running service and on its own:
searches run in processes of their own, started when needed and stopped when idle, at
the idle priority for the daily deals; a busy pool answers 503 with Retry-After, within
the request's deadline; solutions leave a worker to hints. What a hint and a solution
answer is in test_hints.py and test_solutions.py.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import aiohttp
import pytest

from service.domain.errors import ApiError
from tests.live import alive, settings_for_test, wait_until_dead
from tests.service.helpers import Api, running_app, wait_for, wait_for_file


async def hint(api: Api, token: str | None, game: str, expect: int = 200) -> object:
    return (await api.request("POST", f"/v1/games/{game}/hint", token, expect)).body


async def test_a_busy_solver_answers_503_with_retry_after(redis_url: str, tmp_path: Path) -> None:
    settings = settings_for_test(
        redis_url, tmp_path, solver_workers=1, solver_queue=0, daily_solve_s=0.5
    )
    async with running_app(settings) as (base, ctx), aiohttp.ClientSession() as session:
        api = Api(session, base)
        await ctx.daily.deals.stop()
        await wait_for(lambda: ctx.pool.pending == 0, 60, "the daily chooser's last search")
        _, token = await api.player()
        game = (await api.create(token, "caprice", 17))["game_id"]
        resigned = (await api.create(token, "caprice", 18))["game_id"]
        await api.command(token, resigned, {"type": "resign"})
        release = tmp_path / "release"
        blocker = ctx.pool.submit(wait_for_file, str(release), what="a test's blocker", retry_s=1)
        try:
            for path, method in (
                (f"/v1/games/{game}/hint", "POST"),
                (f"/v1/games/{resigned}/solution", "GET"),
            ):
                reply = await api.request(method, path, token, 503)
                assert reply.error["code"] == "unavailable" and "busy" in reply.error["message"]
                assert int(reply.headers["Retry-After"]) >= 1
            # A refused hint is not counted.
            assert (await api.state(game, token))["stats"]["hints"] == 0
            release.touch()
            await blocker
            await wait_for(lambda: ctx.pool.pending == 0, 60, "the pool to drain")
            await hint(api, token, game)  # room again
        finally:
            release.touch()


async def test_the_pool_runs_jobs_in_other_processes(tmp_path: Path) -> None:
    import os

    from service.domain.solving import SolverPool

    pool = SolverPool(1, 0)
    try:
        assert await pool.run(os.getpid, what="a pid", wait_s=60) != os.getpid()
        release = tmp_path / "release"
        first = pool.submit(wait_for_file, str(release), what="a blocker", retry_s=2)
        with pytest.raises(Exception) as refused:
            pool.submit(os.getpid, what="a second job", retry_s=2)
        assert getattr(refused.value, "status", None) == 503
        assert refused.value.headers == {"Retry-After": "2"}  # type: ignore[attr-defined]
        release.touch()
        await first
    finally:
        await pool.aclose()



POOL_CHILD = """
import asyncio, sys, time
from service.domain.solving import SolverPool

async def main():
    pool = SolverPool(2, 0)
    jobs = [pool.submit(time.sleep, 600, what="a long search", retry_s=1) for _ in range(2)]
    while len(pool.pids()) < 2:
        await asyncio.sleep(0.05)
    print(*pool.pids(), flush=True)
    await asyncio.gather(*jobs)

asyncio.run(main())
"""


def test_the_workers_die_with_a_killed_service() -> None:
    # SIGKILL runs no cleanup: without the kernel's help the workers would search on.
    root = Path(__file__).parents[3]
    child = subprocess.Popen([sys.executable, "-c", POOL_CHILD], stdout=subprocess.PIPE, cwd=root,
                             env={**os.environ, "PYTHONPATH": str(root)})
    try:
        assert child.stdout is not None
        workers = [int(pid) for pid in child.stdout.readline().split()]
        assert len(workers) == 2 and all(alive(pid) for pid in workers)
    finally:
        child.kill()
        child.wait()
        if child.stdout is not None:
            child.stdout.close()
    survivors = [pid for pid in workers if not wait_until_dead(pid)]
    for pid in survivors:  # clean up before failing
        os.kill(pid, signal.SIGKILL)
    assert not survivors, f"solver workers {survivors} outlived their killed service"


async def test_background_searches_run_in_their_own_process_at_the_idle_priority(
        tmp_path: Path) -> None:
    from service.domain.solving import SolverPool

    pool = SolverPool(1, 0)
    release = tmp_path / "release"
    try:
        # Three daily-deal searches at once: one runs, the others wait for it.
        daily = [asyncio.ensure_future(pool.background(wait_for_file, str(release), what="a deal"))
                 for _ in range(3)]
        background = await wait_for(lambda: pool.pids(), 60, "the background process")
        await wait_for(lambda: os.sched_getscheduler(background[0]) == os.SCHED_IDLE, 60,
                       "the background process at the idle priority")
        # A request is answered meanwhile, by the request worker (the only one, with no
        # queue: the background work takes none of the requests' room).
        worker = await pool.run(os.getpid, what="a hint", wait_s=60)
        assert worker not in (os.getpid(), background[0])
        # Niced 10 below the service, as far as the lowest priority (19) lets it go: under
        # `nice -n 19` the service is already there, and its workers cannot go lower.
        service_nice = os.getpriority(os.PRIO_PROCESS, 0)
        assert os.getpriority(os.PRIO_PROCESS, worker) >= min(service_nice + 10, 19)
        assert pool.pending == 3 and not any(job.done() for job in daily)
        release.touch()
        await asyncio.gather(*daily)
    finally:
        release.touch()
        await pool.aclose()


async def test_searches_leave_a_worker_to_hints_and_have_their_own_room(tmp_path: Path) -> None:
    from service.domain.solving import SolverPool

    pool = SolverPool(2, 2)  # one worker for searches at a time; room for 1 + 2 of them
    release = tmp_path / "release"
    try:
        searches = [pool.submit(wait_for_file, str(release), what="a solution", retry_s=3,
                                search=True) for _ in range(3)]
        with pytest.raises(ApiError) as refused:
            pool.submit(os.getpid, what="a solution", retry_s=3, search=True)
        assert refused.value.status == 503 and refused.value.headers == {"Retry-After": "3"}
        # Hints are answered meanwhile, by the worker searches may not take.
        for _ in range(4):
            assert await pool.run(os.getpid, what="a hint", wait_s=60) != os.getpid()
        assert not any(search.done() for search in searches)
        release.touch()
        await asyncio.gather(*searches)
    finally:
        release.touch()
        await pool.aclose()


async def test_the_pool_starts_no_process_until_used_and_stops_them_when_idle() -> None:
    from service.domain.solving import SolverPool

    pool = SolverPool(2, 0, idle_s=0.5)
    try:
        assert pool.pids() == []
        worker = await pool.run(os.getpid, what="a hint", wait_s=60)
        assert worker in pool.pids()
        await wait_for(lambda: not pool.pids(), 60, "the idle processes to stop")
        assert not alive(worker) or wait_until_dead(worker)
        assert await pool.run(os.getpid, what="a hint", wait_s=60) != worker  # started again
    finally:
        await pool.aclose()


async def test_a_hint_behind_a_busy_pool_is_a_busy_pool_within_the_request_deadline(
        redis_url: str, tmp_path: Path) -> None:
    # The samples' budget is far longer than the request deadline: the answer is still the
    # solver's 503 (retry later), not the deadline's "the store did not answer".
    settings = settings_for_test(redis_url, tmp_path, solver_workers=1, solver_queue=2,
                                 request_deadline_s=3.0, hint_sample_s=60.0)
    async with running_app(settings) as (base, ctx), aiohttp.ClientSession() as session:
        api = Api(session, base)
        await ctx.daily.deals.stop()
        await wait_for(lambda: ctx.pool.pending == 0, 60, "the daily chooser's last search")
        _, token = await api.player()
        game = (await api.create(token, "gate", 13))["game_id"]
        release = tmp_path / "release"
        blocker = ctx.pool.submit(wait_for_file, str(release), what="a test's blocker", retry_s=1)
        try:
            reply = await api.request("POST", f"/v1/games/{game}/hint", token, 503)
            assert "solver is busy" in reply.error["message"], reply.error
            assert int(reply.headers["Retry-After"]) >= 1
        finally:
            release.touch()
            await blocker
