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

Nothing here reads a face-down card the player has not seen: two views that are
equal (with what the player has seen of face-down cards, ``known``) get the same hint.
Gilbert's stock, once it has run out, holds only cards the player saw in the waste, in
an order the player saw: :func:`seen_stock` gives it, and the samples keep it as it is.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from service.engine import Draw, Game, Move, Pile, get_variant
from service.engine.cards import ordered_deck

from .result import Budget, HintResult
from .rules import Cmd, command_dict
from .search import search
from .variants import rules_for


def suggest(variant: str, options: Mapping[str, Any], piles: Mapping[str, Mapping[str, Any]], *,
            samples: int, budget_per_sample: Budget, rng_seed: int,
            known: Mapping[str, Sequence[str]] | None = None) -> HintResult:
    """The command to play in the public view ``piles`` (as ``Game.public_piles()``).
    ``known``: the face-down cards of some piles that the player has seen, bottom to top
    (:func:`seen_stock`); the samples deal them there, and only the others at random."""
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
    if unseen_count.total() != sum(down.values()):
        raise ValueError(f"the view has {sum(down.values())} face-down cards but "
                         f"{unseen_count.total()} cards of the deck are not face up")
    seen = {pid: tuple(str(c) for c in cards) for pid, cards in (known or {}).items()}
    for pid, cards in seen.items():
        if pid not in down or len(cards) != down[pid]:
            raise ValueError(f"{len(cards)} known card(s) for {pid!r}, which holds "
                             f"{down.get(pid, 0)} face down")
        unseen_count.subtract(cards)
    if any(n < 0 for n in unseen_count.values()):
        raise ValueError(f"the known cards are not among the {variant} cards face down")
    unseen = sorted(unseen_count.elements())

    def position(hidden: list[str]) -> dict[str, Pile]:
        out, at = {}, 0
        for pid in layout:
            if pid in seen:
                out[pid] = Pile(seen[pid], up[pid])
                continue
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


# Gilbert's draw deals this many cards (docs/rules.md: "A draw deals three cards").
GILBERT_DRAW = 3


def seen_stock(game: Game) -> tuple[str, ...] | None:
    """The cards of ``game``'s stock, bottom to top, if its player has seen them all in
    their order: in Gilbert, once the stock has run out in the commands in effect, every
    card then in the stock and waste had been drawn face up, the turn-over keeps their
    order, and no card joins them later. None before that, and in the other games
    (their stock is never turned over). Counts only: where cards went, never which."""
    if game.variant.id != "gilbert":
        return None
    stock = len(Game.deal(game.variant.id, game.seed, game.variant.options).piles["stock"].down)
    waste = 0
    for command in game.effective_commands():
        if isinstance(command, Draw):
            if stock:
                drawn = min(GILBERT_DRAW, stock)
                stock, waste = stock - drawn, waste + drawn
            else:
                stock, waste = waste, 0
        elif isinstance(command, Move) and command.from_ == "waste":
            waste -= 1
        if not stock:
            return tuple(str(c) for c in game.piles["stock"].down)
    return None
