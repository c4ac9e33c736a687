"""A hint's job in the solver's pool (service/domain/hints.py submits it): the views the
game has shown, rebuilt from its snapshot, then the search from the public view.

The snapshot holds the deal, face-down cards and all; it stays on the server, whose
processes the pool's are. The search gets only the public view and the views shown as
their keys (face-down counts and face-up cards): :func:`~service.solver.suggest` takes
nothing else, so no face-down card the player has not seen goes into a hint.

Its own module, importing nothing of the service but the solver: a spawned worker imports
the module of each job's function, and service.domain.hints would bring the service's
modules into a process that only ever searches (as service/domain/solver_worker.py says).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from service.solver import Budget, HintResult, suggest
from service.solver.hint import shown_in_game


def hint_in_game(snapshot: Mapping[str, Any], variant: str, options: Mapping[str, Any],
                 piles: Mapping[str, Mapping[str, Any]], *, samples: int,
                 budget_per_sample: Budget, rng_seed: int,
                 known: Mapping[str, Sequence[str]] | None) -> HintResult:
    """The hint in the public view ``piles`` of the game of ``snapshot``
    (``Game.snapshot()``), which does not lead back to a view the game has shown (a long
    game's rebuild takes about 0.1 s of CPU: no work for the event loop)."""
    return suggest(variant, options, piles, samples=samples,
                   budget_per_sample=budget_per_sample, rng_seed=rng_seed, known=known,
                   shown=shown_in_game(snapshot))
