"""A budget's seconds are counted by its clock: wall-clock time unless the caller
gives another (the winnability tables count the process's CPU time)."""

from __future__ import annotations

import pickle
import random
import time

from service.solver import Budget, solve_deal
from service.solver.search import CHECK_CLOCK_EVERY

HOUR = 3600.0


class StillClock:
    """A clock that never moves: no budget of seconds ever runs out."""

    def __init__(self) -> None:
        self.looks = 0

    def __call__(self) -> float:
        self.looks += 1
        return 0.0


class JumpingClock:
    """A clock that jumps forward by a seeded random 1 to 2 hours at each look."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.now = 0.0

    def __call__(self) -> float:
        self.now += self.rng.uniform(HOUR, 2 * HOUR)
        return self.now


def test_the_wall_clock_counts_unless_told_otherwise() -> None:
    assert Budget(max_nodes=1, max_seconds=1.0).clock is time.perf_counter


def test_a_clock_that_stands_still_leaves_only_the_positions_to_end_the_search() -> None:
    # Gilbert's deal 1 is not solved within 300,000 positions; a nanosecond of wall-clock
    # time ends its search before any position is expanded, a still clock never does.
    clock = StillClock()
    result = solve_deal("gilbert", {}, 1, Budget(max_nodes=5_000, max_seconds=1e-9, clock=clock))
    assert result.result == "unknown" and result.nodes == 5_000
    assert result.elapsed_ms == 0 and clock.looks > 0


def test_a_clock_that_jumps_ends_the_search_at_its_first_look_and_times_it() -> None:
    for seed in range(3):
        clock = JumpingClock(seed)
        result = solve_deal("gilbert", {}, 1,
                            Budget(max_nodes=10**9, max_seconds=60.0, clock=clock))
        assert result.result == "unknown" and result.nodes <= CHECK_CLOCK_EVERY
        assert result.elapsed_ms >= HOUR * 1000  # the clock's hours, not the machine's


def test_a_budget_counting_cpu_time_crosses_a_process_pool() -> None:
    budget = Budget(max_nodes=1_000, max_seconds=10.0, clock=time.process_time)
    assert pickle.loads(pickle.dumps(budget)) == budget
