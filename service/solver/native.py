"""The native core (``_core``, C, built with the package when a compiler is there):
the same search as :func:`search._search`, step for step, about 30 times faster.

Where it was not built (no compiler), :data:`AVAILABLE` is False and the search runs
in pure Python; the service says so once at start. The pure-Python search stays the
reference: tests/solver/test_native.py holds the two to the same answers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from .rules import GUIDES, Cmd, Rules, State

try:
    from . import _core
except ImportError:  # pragma: no cover - only where the build had no compiler
    _core = None  # type: ignore[assignment]

AVAILABLE = _core is not None
# Why the core is missing, for the one line the service logs at start.
MISSING = ("the solver's native core (service/solver/_core.c) was not built (no C compiler "
           "when the package was installed): solving in pure Python, about 30 times slower")


class Shaker(Protocol):
    """What the restarts draw their shaking from: random.Random, or the core's own."""

    def random(self) -> float: ...


def generator(seed: int) -> Shaker:
    """The core's Mersenne Twister seeded as ``random.Random(seed)``: the same numbers,
    without the generator's state crossing into the core at every search."""
    assert _core is not None
    return _core.Random(seed)


def depth_first(rules: Rules, start: State) -> Any:
    """search.DepthFirst (unshaken) in the core: ``run(max_nodes, deadline, clock)`` and
    ``nodes``, its table kept between runs."""
    assert _core is not None
    return _core.DepthFirst(rules.variant_id, rules.hasty, rules.pruning,
                            rules.runs_move, _cut_dead(rules), start)


def dead(rules: Rules, position: State) -> bool:
    """:meth:`Rules.dead` in the core (the same answer, tests/solver/test_dead.py)."""
    assert _core is not None
    return bool(_core.dead(rules.variant_id, rules.runs_move, position))


def _cut_dead(rules: Rules) -> bool:
    """Whether the search leaves out the positions it reaches that Rules.dead proves lost."""
    return bool(rules.dead_ends and rules.dead_in_search)


def run(rules: Rules, start: State, max_nodes: int, deadline: float, clock: Callable[[], float],
        rng: Shaker | None, depth_first: bool) -> tuple[str, list[tuple[Cmd, ...]], int]:
    """One search of :func:`search._search` in the core: (result, line, positions).
    ``rng``, from :func:`generator`, shakes the order as the reference's does."""
    assert _core is not None
    assert rng is None or isinstance(rng, _core.Random)
    return _core.search(
        rules.variant_id, rules.hasty, rules.pruning,
        rules.runs_move, _cut_dead(rules), start, max_nodes, deadline,
        clock, rng,
        float(rules.shake), depth_first, GUIDES.index(rules.guide))
