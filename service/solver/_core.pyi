from collections.abc import Callable
from typing import Any

class Random:
    def __init__(self, seed: int) -> None: ...
    def random(self) -> float: ...

def search(variant: str, hasty: bool, pruning: bool, runs_move: bool, cut_dead: bool,
           position: tuple[Any, ...],
           max_nodes: int, deadline: float, clock: Callable[[], float], rng: Random | None,
           shake: float, depth_first: bool,
           guide: int) -> tuple[str, list[tuple[tuple[str, str, int], ...]],
                                                     int]: ...

def dead(variant: str, runs_move: bool, position: tuple[Any, ...]) -> bool: ...

class DepthFirst:
    nodes: int
    def __init__(self, variant: str, hasty: bool, pruning: bool, runs_move: bool,
                 cut_dead: bool, position: tuple[Any, ...]) -> None: ...
    def run(self, max_nodes: int, deadline: float,
            clock: Callable[[], float]) -> tuple[str, list[tuple[tuple[str, str, int], ...]],
                                                 int]: ...
