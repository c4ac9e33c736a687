"""The solver's move generator against the engine's: on positions of seeded random
games of every variant, the solver lists exactly the engine's legal commands, and
each leads to exactly the position the engine reaches."""

from __future__ import annotations

import random
from typing import Any

import pytest

from service.engine import Draw, Game, Move
from service.solver.rules import DRAW, Cmd
from service.solver.variants import rules_for

from .helpers import CONFIGS, config_id, random_positions, small_position


def engine_cmd(command: Any) -> Cmd:
    if isinstance(command, Draw):
        return DRAW
    assert isinstance(command, Move)
    return (command.from_, command.to, command.count)


def check_position(game: Game) -> int:
    rules = rules_for(game.variant.id, game.variant.options)
    state = rules.from_piles(game.piles)
    mine = {c: t for _, c, t in rules.moves(state)}
    engine = {engine_cmd(c): c for c in game.legal_moves()}
    assert len(mine) == len(rules.moves(state)), "a command listed twice"
    assert set(mine) == set(engine), f"seed {game.seed}: solver-only {set(mine) - set(engine)}, " \
                                     f"engine-only {set(engine) - set(mine)}"
    for cmd, command in engine.items():
        after = game.apply(command)[0]
        assert mine[cmd] == rules.from_piles(after.piles), \
            f"seed {game.seed}: {cmd} leads elsewhere"
        assert rules.won(mine[cmd]) == (after.foundation_cards == game.variant.total_cards)
    return len(engine)


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_moves_equal_the_engines_on_random_games(config: tuple[str, dict[str, Any]]) -> None:
    variant_id, options = config
    checked = 0
    for seed in range(1, 13):
        for game in random_positions(variant_id, options, seed, steps=120)[::3]:
            if game.status.value == "playing":
                checked += check_position(game)
    assert checked > 500


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_moves_equal_the_engines_on_small_positions(config: tuple[str, dict[str, Any]]) -> None:
    variant_id, options = config
    rng = random.Random(7)
    for _ in range(150):
        game = small_position(variant_id, options, rng, rng.randint(1, 14))
        if game.status.value == "playing":
            check_position(game)
