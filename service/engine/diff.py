"""Diffs: the ordered pile operations that turn one public view into the next.

A diff is computed by comparing the piles before and after a command, so
every command (undo included) gets one by the same means; only the piles the
command replaced are compared (:func:`changed_piles`). Operations come in
the order a client applies them: first what leaves piles (``pop``, ``down``),
then what arrives (``push``), then cards turning up (``flip``); within each
phase, the command's source pile, then its destination, then layout order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .piles import Pile

Op = dict[str, Any]


def _pile_ops(pile_id: str, before: Pile, after: Pile, leave: list[Op], arrive: list[Op],
              turn: list[Op]) -> None:
    """The leaving, arriving and turning-up operations of one pile, appended to the
    caller's lists (every command's diff comes through here: no lists of its own per pile)."""
    a_down, b_down = len(before.down), len(after.down)
    a_up, b_up = before.up, after.up
    if a_down == b_down:
        k = _common_prefix(a_up, b_up)
        if len(a_up) > k:
            leave.append({"pile": pile_id, "op": "pop", "n": len(a_up) - k})
        if len(b_up) > k:
            arrive.append({"pile": pile_id, "op": "push", "cards": list(b_up[k:])})
    elif b_down < a_down and 0 < a_down - b_down <= len(b_up) and not _keeps_up(a_up, b_up):
        # Face-down cards turned up: clear the face-up cards above, then flip.
        if a_up:
            leave.append({"pile": pile_id, "op": "pop", "n": len(a_up)})
        flips = a_down - b_down
        turn.extend({"pile": pile_id, "op": "flip", "card": c} for c in b_up[:flips])
        if len(b_up) > flips:
            turn.append({"pile": pile_id, "op": "push", "cards": list(b_up[flips:])})
    else:
        # Face-down cards added (waste turned over, a flip undone) or dealt away.
        k = _common_prefix(a_up, b_up) if b_down < a_down else 0
        if len(a_up) > k:
            leave.append({"pile": pile_id, "op": "pop", "n": len(a_up) - k})
        leave.append({"pile": pile_id, "op": "down", "n": b_down - a_down})
        if len(b_up) > k:
            arrive.append({"pile": pile_id, "op": "push", "cards": list(b_up[k:])})


def _keeps_up(a_up: tuple[str, ...], b_up: tuple[str, ...]) -> bool:
    # Cards that were face up and stay at the bottom of the face-up part mean
    # nothing below them can have turned up: treat as cards dealt away.
    return bool(a_up) and bool(b_up) and a_up[0] == b_up[0]


def _common_prefix(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    n = min(len(a), len(b))
    if a[:n] == b[:n]:  # the usual case (cards only added, or only taken): one comparison
        return n
    k = 0
    while k < n and a[k] == b[k]:
        k += 1
    return k


def changed_piles(before: Mapping[str, Pile], after: Mapping[str, Pile]) -> list[str]:
    """The piles of ``after`` (in its order) that are not the very objects of ``before``.

    A command copies the piles' mapping and replaces only the piles it changes, and
    an undo returns to the mapping before: the piles a command touched are the only
    ones that can differ, found without comparing any cards."""
    return [pile_id for pile_id, pile in after.items() if before[pile_id] is not pile]


def compute_ops(before: Mapping[str, Pile], after: Mapping[str, Pile], order: Iterable[str],
                changed: list[str]) -> list[Op]:
    """Every operation turning ``before`` into ``after``, piles visited in ``order`` then the rest.

    ``changed``: the piles that may differ (:func:`changed_piles`); the others are not
    looked at."""
    if not changed:
        return []
    leave: list[Op] = []
    arrive: list[Op] = []
    turn: list[Op] = []
    for pile_id in dict.fromkeys([*[k for k in order if k in changed], *changed]):
        a, b = before[pile_id], after[pile_id]
        if a != b:
            _pile_ops(pile_id, a, b, leave, arrive, turn)
    leave += arrive
    leave += turn
    return leave
