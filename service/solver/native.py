"""The native core (``_core``, C, built with the package when a compiler is there):
the same search as :func:`search._search`, step for step, about 30 times faster.

Where it was not built (no compiler), :data:`AVAILABLE` is False and the search runs
in pure Python; the service says so once at start. The pure-Python search stays the
reference: tests/solver/test_native.py holds the two to the same answers.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from .rules import Cmd, Rules, State

try:
    from . import _core
except ImportError:  # pragma: no cover - only where the build had no compiler
    _core = None  # type: ignore[assignment]

AVAILABLE = _core is not None
# Why the core is missing, for the one line the service logs at start.
MISSING = ("the solver's native core (service/solver/_core.c) was not built (no C compiler "
           "when the package was installed): solving in pure Python, about 30 times slower")


def run(rules: Rules, start: State, max_nodes: int, deadline: float, clock: Callable[[], float],
        rng: random.Random | None, depth_first: bool) -> tuple[str, list[tuple[Cmd, ...]], int]:
    """One search of :func:`search._search` in the core: (result, line, positions). A
    given ``rng`` is advanced exactly as the reference's shaking advances it."""
    assert _core is not None
    rng_state: Any = None
    gauss: Any = None
    if rng is not None:
        version, rng_state, gauss = rng.getstate()
    result, line, nodes, after = _core.search(
        rules.variant_id, rules.hasty, bool(getattr(rules, "pruning", True)),
        bool(getattr(rules, "runs_move", True)), start, max_nodes, deadline, clock, rng_state,
        float(rules.shake), depth_first)
    if rng is not None:
        rng.setstate((version, after, gauss))
    return result, line, nodes
