"""The rules engine: pure Python, standard library only.

Deal a game from (variant, options, seed), list the legal commands, apply one
(getting the next game and its diff), read the outcome and the public view::

    game = Game.deal("gilbert", seed=42)
    game, diff = game.apply(DRAW)
    game.status, game.legal_moves(), game.public_piles()
"""

from .commands import DRAW, RESIGN, UNDO, Command, Draw, Move, Resign, Undo
from .diff import Op
from .errors import BadCommand, BadOptions, EngineError, IllegalCommand, UnknownVariant
from .game import MAX_SEED, RULES_VERSION, SEED_BITS, Diff, Game, Status
from .piles import Pile, PileSpec
from .position import Position
from .refusals import Rule
from .variant import Option, Variant
from .variants import VARIANTS, get_variant

__all__ = [
    "DRAW", "RESIGN", "UNDO", "Command", "Draw", "Move", "Resign", "Undo", "Op",
    "BadCommand", "BadOptions", "EngineError", "IllegalCommand", "UnknownVariant", "MAX_SEED",
    "RULES_VERSION", "SEED_BITS", "Diff", "Game", "Position", "Rule", "Status", "Pile",
    "PileSpec", "Option", "Variant", "VARIANTS", "get_variant",
]
