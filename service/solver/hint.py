"""Hints: a command suggested from the public view alone.

Every face-down card is unknown. The unseen cards are the variant's deck(s) less
every face-up card of the view; each sample deals them, shuffled uniformly by
``random.Random(rng_seed)``, into the face-down places (piles in layout order, each
bottom to top), and solves that full-information position with a small budget.
Each won sample votes for the first command of its line. The hint is the command
with the most votes; ties, and the case where no sample was won, go to the order
in which the search itself tries commands (foundation moves first, then moves
that turn a card up or empty a pile, then the rest, draws last), so a player who
can move always gets a suggestion (with ``wins`` 0 when no sample was won).

Nothing here reads a face-down card: two views that are equal get the same hint.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping
from typing import Any

from service.engine import Pile, get_variant
from service.engine.cards import ordered_deck

from .result import Budget, HintResult
from .rules import Cmd, command_dict
from .search import search
from .variants import rules_for


def suggest(variant: str, options: Mapping[str, Any], piles: Mapping[str, Mapping[str, Any]], *,
            samples: int, budget_per_sample: Budget, rng_seed: int) -> HintResult:
    """The command to play in the public view ``piles`` (as ``Game.public_piles()``)."""
    spec = get_variant(variant)(options)
    rules = rules_for(variant, options)
    layout = [p.id for p in spec.layout]
    missing = set(layout) - set(piles)
    if missing:
        raise ValueError(f"the view of a {variant} game lacks the pile(s) {sorted(missing)}")
    up = {pid: tuple(str(c) for c in piles[pid]["up"]) for pid in layout}
    down = {pid: int(piles[pid]["down"]) for pid in layout}
    unseen_count = Counter(ordered_deck(spec.decks))
    unseen_count.subtract(c for cards in up.values() for c in cards)
    if any(n < 0 for n in unseen_count.values()):
        raise ValueError(f"the view shows more copies of a card than a {variant} deck holds")
    unseen = sorted(unseen_count.elements())
    if len(unseen) != sum(down.values()):
        raise ValueError(f"the view has {sum(down.values())} face-down cards but {len(unseen)} "
                         f"cards of the deck are not face up")

    def position(hidden: list[str]) -> dict[str, Pile]:
        out, at = {}, 0
        for pid in layout:
            n = down[pid]
            out[pid] = Pile(tuple(hidden[at:at + n]), up[pid])
            at += n
        return out

    # The order of preference: the search's own move ordering, which reads only
    # face-up cards and face-down counts, so any completion gives the same order.
    base = rules.from_piles(position(unseen))
    order: list[Cmd] = [c for _, c, _ in sorted(rules.moves(base), key=lambda m: m[0])]
    if not order or rules.won(base):
        return HintResult(None, 0, 0)
    rank = {c: i for i, c in reversed(list(enumerate(order)))}
    votes: Counter[Cmd] = Counter()
    rng = random.Random(rng_seed)
    for _ in range(samples):
        hidden = list(unseen)
        rng.shuffle(hidden)
        result = _solve_first(rules, position(hidden), budget_per_sample)
        if result is not None and result in rank:
            votes[result] += 1
    best = min(order, key=lambda c: (-votes[c], rank[c]))
    return HintResult(command_dict(best), samples, votes[best])


def _solve_first(rules: Any, piles: dict[str, Pile], budget: Budget) -> Cmd | None:
    """The first command of a winning line from ``piles``, if the search finds one."""
    result = search(rules, rules.from_piles(piles), budget)
    if result.result != "won" or not result.commands:
        return None
    first = result.commands[0]
    if first["type"] == "draw":
        return ("stock", "", 0)
    return (first["from"], first["to"], first["count"])
