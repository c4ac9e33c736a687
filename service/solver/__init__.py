"""The solver: pure like the engine (standard library and service.engine only).

Full information (every card known)::

    result = solve_deal("gilbert", {}, seed=42, budget=Budget(max_nodes=200_000, max_seconds=10))
    result.result, result.commands, result.nodes, result.elapsed_ms

``won`` comes with a line of PROTOCOL.md commands that wins when sent in order,
``lost`` only once every reachable position has been searched (leaving out those
that a variant's dead-position test proves lost, :meth:`Rules.dead`), ``unknown`` when
the budget ran out. :func:`suggest` gives a hint from a player's public view.
"""

from .hint import seen_stock, suggest
from .result import Budget, HintResult, SolveResult
from .solve import solve_deal, solve_game

__all__ = ["Budget", "HintResult", "SolveResult", "seen_stock", "solve_deal", "solve_game",
           "suggest"]
