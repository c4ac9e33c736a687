"""A position: the piles after the deal and the commands in effect so far.

Each position points at the one before it, so ``undo`` is a step back along
that chain: exactly the replay of the commands not undone, without replaying.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .commands import Command
    from .piles import Pile


class Position:
    """The piles after the deal and the commands in effect so far."""

    __slots__ = ("piles", "command", "_parent", "_rebuild", "only_draws_since_turnover",
                 "effective", "lost")

    def __init__(
        self,
        piles: dict[str, Pile],
        command: Command | None,
        parent: Position | None,
        only_draws_since_turnover: bool,
        rebuild: Callable[[], Position | None] | None = None,
        effective: tuple[Command, ...] | None = None,
    ) -> None:
        self.piles = piles
        self.command = command  # the command that led here (None for the deal)
        self._parent = parent
        self._rebuild = rebuild  # set on positions restored from a snapshot
        # Gilbert's "lost" test (c): every command in effect since the waste was
        # last turned over (or since the deal) is a draw.
        self.only_draws_since_turnover = only_draws_since_turnover
        # The commands in effect up to here, oldest first, when known without walking the
        # chain: a position restored from a snapshot, whose parents are rebuilt by a replay
        # of the whole log only if undo reaches them.
        self.effective = effective
        # The variant's lost test of this position, once asked (None: not yet); asked and
        # kept by game.py's _is_lost alone.
        self.lost: bool | None = None

    @property
    def parent(self) -> Position | None:
        if self._rebuild is not None:
            self._parent, self._rebuild = self._rebuild(), None
        return self._parent

    @property
    def has_parent(self) -> bool:
        return self.command is not None
