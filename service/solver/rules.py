"""The solver's own fast copy of each variant's rules: a position as nested tuples of
card integers, every legal command with the position it leads to, a canonical key for
the transposition table, and the foundation moves that can never hurt.

The engine (service.engine) stays the judge: tests check that :meth:`Rules.moves`
lists exactly the engine's legal commands, leading to exactly the engine's positions,
and every line the search returns is replayed through the engine.
"""

from __future__ import annotations

import copy
from collections.abc import Hashable, Mapping
from typing import Any, ClassVar

from service.engine import Pile, get_variant

from .cards import CODE

State = tuple[Any, ...]
# A command in the search: (from pile id, to pile id, count); DRAW is a draw.
Cmd = tuple[str, str, int]
DRAW: Cmd = ("stock", "", 0)
# A step of the search: (priority, the commands it plays, the position after them).
# Lower priorities are tried first.
Step = tuple[int, tuple[Cmd, ...], State]

# What a best-first search may score a position by (Rules.guided), in the core's numbering:
# the variant's :meth:`Rules.score`, the foundations' count, and Shamrocks' two others
# (Shamrocks.other_score).
GUIDES = ("score", "count", "buried", "full_fans")


class P:
    """The priorities of steps shared by the variants (move ordering): lower first."""

    TO_FOUNDATION = 0
    REVEALS = 10  # turns a face-down card up, empties a pile, plays from a pillar
    FROM_WASTE = 20
    TABLEAU = 30
    FROM_FOUNDATION = 50
    DRAWS = 60
    SETTLED = 70  # moves a card (or run) off a card it is already built on: last


# The pile ids by index: F[i] is "foundation/i", T[i] "tableau/i", R[i] "reserve/i".
F = tuple(f"foundation/{i}" for i in range(8))
T = tuple(f"tableau/{i}" for i in range(18))
R = ("reserve/0", "reserve/1")


def command_dict(cmd: Cmd) -> dict[str, Any]:
    """The PROTOCOL.md command object of a search command."""
    if cmd == DRAW:
        return {"type": "draw"}
    return {"type": "move", "from": cmd[0], "to": cmd[1], "count": cmd[2]}


def codes(cards: tuple[str, ...]) -> tuple[int, ...]:
    return tuple(CODE[c] for c in cards)


class Rules:
    """One variant with its options, as the search sees it."""

    variant_id: ClassVar[str]
    total_cards: ClassVar[int] = 52
    # Best-first (always expand the position of highest :meth:`score`) instead of
    # depth-first with the children ordered by score then priority.
    best_first: ClassVar[bool] = False
    # Best-first variants with a hasty mode: after the hasty best-first search, a second
    # one with the full rules (search.FULL_BEST_FIRST_SHARE), before the restarts.
    full_best_first: ClassVar[bool] = False
    # ... and then one more with the full rules for each of these guides (:meth:`guided`,
    # search.MORE_BEST_FIRST_SHARE), before the restarts.
    more_best_first: ClassVar[tuple[str, ...]] = ()
    # Whether the variant has a hasty mode (see :meth:`hastily`); a variant may set it per
    # options (Gate: with single_card_moves alone).
    has_hasty: bool = False
    # How far the search's restarts shake the order of a position's steps: each step's
    # rank gets a uniform draw in [0, shake) added before they are sorted again, so a
    # step moves about ``shake`` places at most (see search.search). Measured per
    # variant on deals 1..60 at fixed node budgets.
    shake: ClassVar[float] = 5.0
    # Whether :meth:`dead` can hold at a position reached from one where it does not:
    # then the search tests every position it reaches, otherwise only the start.
    dead_in_search: ClassVar[bool] = False

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        variant = get_variant(self.variant_id)(options)
        self.options: dict[str, Any] = variant.options
        # Whether face-up runs move as a unit (the engine's answer, per options).
        self.runs_move: bool = variant.runs_move
        self.hasty = False
        # Whether the search uses the variant's proved cuts of its steps (each proved where
        # the variant makes it; tests turn them off to check that they change no answer).
        self.pruning = True
        # Whether the search leaves out the positions :meth:`dead` proves lost (tests turn it
        # off to check that it changes no answer).
        self.dead_ends = True
        # What a best-first search scores a position by: one of :data:`GUIDES` (see
        # :meth:`guided`).
        self.guide = "score"

    def hastily(self) -> Rules:
        """These rules in hasty mode: the search tries fewer steps from some positions,
        on a guess that is not proved (e.g. any card that can go to a foundation goes,
        and nothing else is tried). A hasty search finds wins sooner where the guess
        holds, and its wins are real lines; it proves no loss (the search only uses it
        first, with part of the budget)."""
        out = copy.copy(self)
        out.hasty = True
        return out

    def guided(self, guide: str) -> Rules:
        """These rules with a best-first search scoring a position by ``guide`` (one of
        :data:`GUIDES`) instead of :meth:`score`: another order of the same positions (the
        search's order only, so its wins and losses are as good as any other order's)."""
        assert guide in GUIDES, guide
        out = copy.copy(self)
        out.guide = guide
        return out

    def guide_score(self, s: State) -> int:
        """The score a best-first search goes by (:attr:`guide`): :meth:`score`, the
        foundations' count, or a variant's other score (the core's score_of)."""
        if self.guide == "count":
            return int(sum(s[0]))
        if self.guide == "score":
            return self.score(s)
        return self.other_score(s)

    def other_score(self, s: State) -> int:  # pragma: no cover - no variant without it asks
        """A variant's scores other than :meth:`score` and the count, by :attr:`guide`."""
        raise NotImplementedError(self.guide)

    def from_piles(self, piles: Mapping[str, Pile]) -> State:  # pragma: no cover - abstract
        """The search's position for the engine's piles (every card known)."""
        raise NotImplementedError

    def moves(self, s: State) -> list[tuple[int, Cmd, State]]:  # pragma: no cover - abstract
        """Every legal command (the engine's ``legal_moves``: moves with foundations by
        index, and ``draw``), with its priority and the position it leads to."""
        raise NotImplementedError

    def key(self, s: State) -> Hashable:
        """Equal for positions from which exactly the same can be won."""
        return s

    def score(self, s: State) -> int:
        """How promising a position looks (higher is better): guides the search's order only."""
        return int(sum(s[0]))

    def won(self, s: State) -> bool:
        return bool(sum(s[0]) == self.total_cards)

    def dead(self, s: State) -> bool:
        """Proved lost without a search: some card can never reach a foundation (each
        variant's test is proved where it is written). False says nothing."""
        return False

    def safe(self, s: State) -> tuple[Cmd, State] | None:
        """A move to a foundation that cannot turn a winnable position into an
        unwinnable one, if there is one: the search plays it and nothing else."""
        return None

    def successors(self, s: State) -> list[Step]:
        """What the search tries from ``s``, best first."""
        safe = self.safe(s)
        if safe is not None:
            return [(P.TO_FOUNDATION, (safe[0],), safe[1])]
        moves = self.moves(s)
        if self.hasty:
            for p, c, t in moves:
                if p == P.TO_FOUNDATION:
                    return [(p, (c,), t)]
        return self.order([(p, (c,), t) for p, c, t in moves])

    # The depth-first search looks at few of the children it lists (it goes deep, and
    # the budget ends it with most of the path's siblings untried): variants that can
    # describe a step more cheaply than by building its position list :meth:`steps`,
    # and the position is built (:meth:`play`) only when the search gets to it.

    def steps(self, s: State) -> list[Any]:
        """What the search tries from ``s``, best first, as descriptions that :meth:`play`
        turns into positions and :meth:`commands` into commands (by default, the
        :meth:`successors` themselves)."""
        return self.successors(s)

    def play(self, s: State, step: Any) -> State:
        """The position one of ``s``'s :meth:`steps` leads to."""
        return step[2]  # type: ignore[no-any-return]

    def commands(self, step: Any) -> tuple[Cmd, ...]:
        """The commands one of the :meth:`steps` plays."""
        return step[1]  # type: ignore[no-any-return]

    def order(self, steps: list[Step]) -> list[Step]:
        """Best first: higher score of the position reached, then lower priority."""
        score = self.score
        steps.sort(key=lambda step: (-score(step[2]), step[0]))
        return steps
