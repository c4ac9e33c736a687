"""What the solver is given (a budget) and what it answers (a result, a hint).

All plain frozen dataclasses of builtins: they cross a process pool (pickle).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Budget:
    """How much search one solve may spend; whichever limit is reached first ends it.

    ``clock`` counts the seconds (and the result's ``elapsed_ms``): wall-clock time by
    default; ``time.process_time`` counts the process's CPU time, so that the answer
    does not depend on what else the machine is running (the winnability tables). To
    cross a process pool it must pickle: a module-level function such as these two."""

    max_nodes: int
    max_seconds: float
    clock: Callable[[], float] = time.perf_counter


@dataclass(frozen=True, slots=True)
class SolveResult:
    """``result`` is ``"won"`` (``commands`` win from the position), ``"lost"`` (proved: the
    whole reachable game was searched, less the positions proved dead), or ``"unknown"``
    (the budget ran out).
    ``commands`` are PROTOCOL.md command objects (``move`` with a foundation index, or
    ``draw``), empty unless won; ``nodes`` positions searched in ``elapsed_ms``."""

    result: str
    commands: tuple[dict[str, Any], ...]
    nodes: int
    elapsed_ms: int


@dataclass(frozen=True, slots=True)
class HintResult:
    """The suggested command (``None`` when no command is legal), and in how many of
    the ``samples`` sampled completions of the unseen cards it began a winning line."""

    command: dict[str, Any] | None
    samples: int
    wins: int
