from collections.abc import Callable
from typing import Any

def search(variant: str, hasty: bool, pruning: bool, runs_move: bool, position: tuple[Any, ...],
           max_nodes: int, deadline: float, clock: Callable[[], float],
           rng_state: tuple[int, ...] | None, shake: float,
           depth_first: bool) -> tuple[str, list[tuple[tuple[str, str, int], ...]], int,
                                       tuple[int, ...] | None]: ...
