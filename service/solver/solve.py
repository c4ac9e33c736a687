"""Solving with every card known: a dealt game from its seed, or a game where it stands."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from service.engine import Game

from .result import Budget, SolveResult
from .search import search
from .variants import rules_for


def solve_deal(variant: str, options: Mapping[str, Any], seed: int, budget: Budget) -> SolveResult:
    """Solve the deal of (variant, options, seed) from seq 0: the line starts at the deal."""
    return solve_game(Game.deal(variant, seed, options), budget)


def solve_game(game: Game, budget: Budget) -> SolveResult:
    """Solve ``game`` from its current position, every card (face-down ones too) known.
    The line, sent to this game command by command, wins it."""
    rules = rules_for(game.variant.id, game.variant.options)
    return search(rules, rules.from_piles(game.piles), budget)
