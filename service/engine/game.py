"""A game: the deal, the commands in effect, the outcome.

A :class:`Game` is immutable: :meth:`Game.apply` returns the next game and
its :class:`Diff`. The game holds its :class:`~service.engine.position.Position`
(the piles after the commands in effect), whose chain of parents is what ``undo``
steps back along.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from .commands import DRAW, Command, Draw, Move, Resign, Undo
from .diff import Op, changed_piles, compute_ops
from .errors import BadCommand, IllegalCommand
from .movegen import check_move, legal_moves
from .piles import Pile
from .position import Position
from .refusals import Rule
from .variants import get_variant

if TYPE_CHECKING:
    from .variant import Variant

# A stored game records this; a change to RULES.md that changes any outcome bumps it.
RULES_VERSION = 1
# Seeds are integers 0 <= seed < 2**SEED_BITS: JavaScript clients read JSON numbers as
# doubles, exact up to 2**53. The one home of the limit (the protocol's Seed type and
# the daily seeds take it from here: the engine imports nothing).
SEED_BITS = 53
MAX_SEED = 2**SEED_BITS


class Status(enum.StrEnum):
    PLAYING = "playing"
    WON = "won"
    LOST = "lost"
    RESIGNED = "resigned"

    @property
    def is_final(self) -> bool:
        # By identity with the members named once below: an enum's class attributes are
        # slow to look up, and every command asks this several times.
        return self is _WON or self is _RESIGNED


_WON, _RESIGNED = Status.WON, Status.RESIGNED


class Diff(NamedTuple):
    """What one applied command changed: the operations and the new outcome. (A tuple:
    one is made per command, at half the cost of a frozen dataclass.)"""

    command: Command
    ops: list[Op]
    status: Status
    moves: int
    foundation_cards: int


class Game:
    """One game of a variant: immutable, :meth:`apply` returns the next one."""

    __slots__ = ("variant", "seed", "position", "moves", "status", "_foundation_cards")

    def __init__(self, variant: Variant, seed: int, position: Position, moves: int,
                 status: Status) -> None:
        self.variant = variant
        self.seed = seed
        self.position = position
        self.moves = moves
        self.status = status
        self._foundation_cards = -1

    # --- making games ------------------------------------------------------------
    @classmethod
    def deal(cls, variant_id: str, seed: int, options: Mapping[str, Any] | None = None) -> Game:
        """The dealt game of ``variant_id`` with ``seed`` (see :mod:`service.engine.rng`)."""
        if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < MAX_SEED:
            raise BadCommand(f"a seed is a whole number 0 <= seed < 2**{SEED_BITS}, got {seed!r}")
        variant = get_variant(variant_id)(options)
        position = Position(variant.deal(seed), None, None, True)
        # A deal can leave no legal command at all: such a game is lost from the start.
        status = Status.LOST if _is_lost(variant, position) else Status.PLAYING
        return cls(variant, seed, position, 0, status)

    # --- reading -------------------------------------------------------------------
    @property
    def piles(self) -> dict[str, Pile]:
        return self.position.piles

    @property
    def foundation_cards(self) -> int:
        if self._foundation_cards < 0:
            piles = self.position.piles
            self._foundation_cards = sum(len(piles[spec.id].up)
                                         for spec in self.variant.foundations)
        return self._foundation_cards

    @property
    def can_undo(self) -> bool:
        return not self.status.is_final and self.position.has_parent

    def legal_moves(self) -> list[Command]:
        """Every legal ``move`` (foundations by index) and ``draw`` now."""
        if self.status is not Status.PLAYING:
            return []
        out: list[Command] = list(legal_moves(self.variant, self.position.piles))
        if self.variant.can_draw(self.position.piles):
            out.append(DRAW)
        return out

    def effective_commands(self) -> list[Command]:
        """The commands in effect, oldest first (undos and what they reverted left out)."""
        out: list[Command] = []
        position: Position | None = self.position
        while position is not None and position.command is not None:
            if position.effective is not None:  # restored from a snapshot: no replay
                out.reverse()
                return [*position.effective, *out]
            out.append(position.command)
            position = position.parent
        out.reverse()
        return out

    def public_piles(self) -> dict[str, dict[str, Any]]:
        """The redacted piles of PROTOCOL.md: face-down cards only as counts."""
        return {pile_id: pile.public() for pile_id, pile in self.position.piles.items()}

    # --- playing -------------------------------------------------------------------
    def apply(self, command: Command) -> tuple[Game, Diff]:
        """The game after ``command`` and its diff; :class:`IllegalCommand` says which rule
        refuses it."""
        if self.status.is_final:
            raise IllegalCommand(Rule.GAME_OVER, "the game is over")
        if isinstance(command, Resign):
            game = Game(self.variant, self.seed, self.position, self.moves, Status.RESIGNED)
            return game, Diff(command, [], game.status, game.moves, game.foundation_cards)
        if isinstance(command, Undo):
            parent = self.position.parent
            if parent is None:
                raise IllegalCommand(Rule.NOTHING_TO_UNDO, "there is nothing to undo")
            return self._next(command, parent, None)
        if self.status is Status.LOST:
            raise IllegalCommand(Rule.GAME_LOST,
                                 "the game is lost: only undo or resign are accepted")
        if isinstance(command, Draw):
            return self._next(command, _after(self.variant, self.position, command), None)
        move = check_move(self.variant, self.position.piles, command)
        return self._next(move, _after(self.variant, self.position, move), (move.from_, move.to))

    def _next(self, command: Command, position: Position,
              order: tuple[str, ...] | None) -> tuple[Game, Diff]:
        before, after = self.position.piles, position.piles
        changed = changed_piles(before, after)
        ops = compute_ops(before, after, order or (), changed)
        game = Game(self.variant, self.seed, position, self.moves + 1, Status.PLAYING)
        if self._foundation_cards >= 0:  # counted from the piles that changed
            kind = self.variant.kind
            count = self._foundation_cards
            for k in changed:
                if kind[k] == "foundation":
                    count += len(after[k].up) - len(before[k].up)
            game._foundation_cards = count
        if game.foundation_cards == self.variant.total_cards:
            game.status = Status.WON
        elif _is_lost(self.variant, position):
            game.status = Status.LOST
        return game, Diff(command, ops, game.status, game.moves, game.foundation_cards)

    # --- snapshots -----------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        """Everything needed to restore this game without replaying its log: plain values,
        but for ``effective``, the commands in effect (``service/domain/wire.py`` stores it)."""
        return {
            "rules_version": RULES_VERSION,
            "variant": self.variant.id,
            "options": self.variant.options,
            "seed": self.seed,
            "moves": self.moves,
            "status": self.status.value,
            "effective": self.effective_commands(),
            "piles": {k: [list(p.down), list(p.up)] for k, p in self.position.piles.items()},
            "only_draws_since_turnover": self.position.only_draws_since_turnover,
        }

    @classmethod
    def from_snapshot(cls, data: Mapping[str, Any]) -> Game:
        """The game of :meth:`snapshot`; positions before it are rebuilt only if undo reaches
        them."""
        variant = get_variant(data["variant"])(data["options"])
        seed = data["seed"]
        effective: list[Command] = list(data["effective"])
        piles = {k: Pile(tuple(d), tuple(u)) for k, (d, u) in data["piles"].items()}

        def rebuild() -> Position | None:
            # The commands in effect were all accepted: their positions are rebuilt without
            # checking them again, nor the diffs and status that only a new command needs.
            position = Position(variant.deal(seed), None, None, True)
            for command in effective[:-1]:
                position = _after(variant, position, command)
            return position

        command = effective[-1] if effective else None
        position = Position(piles, command, None, bool(data["only_draws_since_turnover"]),
                            rebuild if command is not None else None, tuple(effective))
        return cls(variant, seed, position, int(data["moves"]), Status(data["status"]))


def _is_lost(variant: Variant, position: Position) -> bool:
    """``variant``'s lost test of ``position``, asked once and kept on the position: an undo
    goes back to a position whose test was asked when it was first reached (the test reads
    the position alone, and a game holds positions of its own variant only)."""
    lost = position.lost
    if lost is None:
        lost = position.lost = variant.is_lost(position)
    return lost


def _after(variant: Variant, position: Position, command: Command) -> Position:
    """The position after ``command``, a draw or a move already checked (foundations
    named by index)."""
    before = position.piles
    piles = dict(before)
    if isinstance(command, Draw):
        turned_over = variant.draw(piles)
        only_draws = True if turned_over else position.only_draws_since_turnover
        return Position(piles, command, position, only_draws)
    assert isinstance(command, Move), command
    src, dst = before[command.from_], before[command.to]
    if variant.kind[command.from_] == "stock":
        piles[command.from_] = Pile(src.down[:-1], src.up)
        piles[command.to] = Pile(dst.down, dst.up + src.down[-1:])
    else:
        count = command.count
        piles[command.from_] = Pile(src.down, src.up[: len(src.up) - count])
        piles[command.to] = Pile(dst.down, dst.up + src.up[len(src.up) - count:])
    variant.after_move(piles, command.from_)
    return Position(piles, command, position, False)
