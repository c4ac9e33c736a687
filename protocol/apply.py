"""Apply a diff to a state, mechanically, as every client does (PROTOCOL.md "Diffs")."""

from __future__ import annotations

import msgspec

from .diffs import Diff, Down, Flip, GameState, Op, Pile, Pop, Push
from .ws import DiffMessage


class DiffError(ValueError):
    """A diff that does not fit the state it is applied to; the client should resync
    (``hello`` with ``since``, or ``GET /v1/games/{id}``)."""


def apply_diff(state: GameState, diff: Diff | DiffMessage) -> GameState:
    """Return the state after ``diff``: its ops applied in order to ``state.piles``, and
    ``seq``, ``status`` and ``stats`` taken from the diff. ``state`` is left untouched.

    Raises :class:`DiffError` (a ``ValueError``) when ``diff.seq`` is not
    ``state.seq + 1`` or an op cannot apply: an unknown pile, popping more cards
    than are face up, flipping with no face-down card, or removing more face-down
    cards than there are.

    Piles the diff does not touch are shared between the two states: treat states
    as values and never mutate one in place.
    """
    if diff.seq != state.seq + 1:
        raise DiffError(
            f"game {state.game_id}: diff seq {diff.seq} does not follow state seq {state.seq}"
        )
    # Copy-on-write: only the piles an op touches are rebuilt, each as a new Pile
    # with a new list, so the input state and its lists are never mutated.
    piles = dict(state.piles)
    for index, op in enumerate(diff.ops):
        pile = piles.get(op.pile)
        if pile is None:
            raise _error(state, diff, index, op, "no such pile in this game")
        piles[op.pile] = _apply_op(state, diff, index, op, pile)
    return msgspec.structs.replace(
        state,
        seq=diff.seq,
        status=diff.status,
        stats=msgspec.structs.replace(diff.stats),  # a copy: the diff may be applied again
        piles=piles,
    )


def _apply_op(state: GameState, diff: Diff | DiffMessage, index: int, op: Op, pile: Pile) -> Pile:
    if isinstance(op, Pop):
        if not 0 <= op.n <= len(pile.up):
            raise _error(state, diff, index, op, f"cannot pop {op.n}: {len(pile.up)} face up")
        return Pile(down=pile.down, up=pile.up[: len(pile.up) - op.n])
    if isinstance(op, Push):
        return Pile(down=pile.down, up=[*pile.up, *op.cards])
    if isinstance(op, Flip):
        if pile.down < 1:
            raise _error(state, diff, index, op, "cannot flip: no face-down card")
        return Pile(down=pile.down - 1, up=[*pile.up, op.card])
    if isinstance(op, Down):
        if pile.down + op.n < 0:
            raise _error(state, diff, index, op, f"cannot remove {-op.n}: {pile.down} face down")
        return Pile(down=pile.down + op.n, up=list(pile.up))
    raise _error(state, diff, index, op, "unknown op")


def _error(
    state: GameState, diff: Diff | DiffMessage, index: int, op: Op, reason: str
) -> DiffError:
    return DiffError(
        f"game {state.game_id}, diff seq {diff.seq}, op {index} "
        f"({op.__struct_config__.tag} on {op.pile!r}): {reason}"
    )
