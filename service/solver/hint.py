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

When no card is unknown (Shamrocks deals every card face up; elsewhere, late in a game),
every sample would be the same position: it is solved once, with the whole budget of
the samples, and the hint says one sample.

A hint does not lead back. Given how many times the game has shown each view before
(``shown``: :func:`history` of the commands in effect), it suggests only among the
commands whose view after them has been shown the fewest times (none, most often): not
a move that undoes the one before, nor a pass through Gilbert's stock with nothing
played, while another command leads somewhere new. A sample whose line begins with a
command left out votes instead for the first of the others (at most :data:`TRIED`)
after which it finds a win. Those views are public: a command that turns up an unknown
card leads to a view never shown.

Nothing here reads a face-down card the player has not seen: two views that are
equal (with what the player has seen of face-down cards, ``known``, and the views
shown before, ``shown``) get the same hint.
Gilbert's stock, once it has run out, holds only cards the player saw in the waste, in
an order the player saw: :func:`seen_stock` gives it, and the samples keep it as it is.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

from service.engine import Draw, Game, Move, Pile, Position, Status, get_variant
from service.engine.cards import ordered_deck
from service.engine.variants.gilbert import CARDS_PER_DRAW

from .result import Budget, HintResult
from .rules import DRAW, Cmd, command_dict
from .search import search
from .variants import rules_for


def suggest(variant: str, options: Mapping[str, Any], piles: Mapping[str, Mapping[str, Any]], *,
            samples: int, budget_per_sample: Budget, rng_seed: int,
            known: Mapping[str, Sequence[str]] | None = None,
            shown: Mapping[Hashable, int] | None = None) -> HintResult:
    """The command to play in the public view ``piles`` (as ``Game.public_piles()``).
    ``known``: the face-down cards of some piles that the player has seen, bottom to top
    (:func:`seen_stock`); the samples deal them there, and only the others at random.
    ``shown``: how many times the game has shown each view before (:func:`history`)."""
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
    if shown:  # only the commands whose views after them have been shown the least
        visits = _visits(variant, options, position(unseen), order, set(seen), shown)
        least = min(visits.values())
        order = [c for c in order if visits[c] == least]
    rank = {c: i for i, c in reversed(list(enumerate(order)))}
    votes: Counter[Cmd] = Counter()
    if not unseen:  # every sample the same position: one search with all their budget
        samples, budget_per_sample = 1, Budget(
            budget_per_sample.max_nodes * samples, budget_per_sample.max_seconds * samples,
            budget_per_sample.clock)
    rng = random.Random(rng_seed)
    for _ in range(samples):
        hidden = list(unseen)
        rng.shuffle(hidden)
        result = _solve_first(rules, position(hidden), budget_per_sample, order)
        if result is not None and result in rank:
            votes[result] += 1
    best = min(order, key=lambda c: (-votes[c], rank[c]))
    return HintResult(command_dict(best), samples, votes[best])


def view_key(piles: Mapping[str, Pile]) -> Hashable:
    """What the player sees of ``piles``: each pile's face-down count and face-up cards."""
    return tuple(sorted((pid, len(p.down), tuple(p.up)) for pid, p in piles.items()))


def history(position: Position) -> Counter[Hashable]:
    """How many times the game has shown each view before ``position``, along the
    commands in effect (:func:`view_key`): what the player has been shown on the way."""
    out: Counter[Hashable] = Counter()
    at = position.parent
    while at is not None:
        out[view_key(at.piles)] += 1
        at = at.parent
    return out


def shown_in_game(snapshot: Mapping[str, Any]) -> Counter[Hashable]:
    """:func:`history` of the game of ``snapshot`` (``Game.snapshot()``): the views its
    earlier positions showed, rebuilt from the snapshot (its commands in effect, without
    checking them again), for :func:`suggest`'s ``shown``. Only the views leave: counts
    and face-up cards (:func:`view_key`), never a face-down card, so the hint's search
    gets none. Where the service's pool runs it: a 5,000-command game takes about 0.1 s
    of CPU to rebuild, no work for the event loop."""
    return history(Game.from_snapshot(snapshot).position)


def _visits(variant: str, options: Mapping[str, Any], piles: dict[str, Pile],
            order: Iterable[Cmd], known: set[str],
            shown: Mapping[Hashable, int]) -> dict[Cmd, int]:
    """How many times the view after each command of ``order`` has been ``shown``.
    ``piles`` is a completion of the view; a command that turns up a card of a pile not
    ``known`` leads to a view that depends on the completion and was never shown: 0."""
    game = Game(get_variant(variant)(options), 0, Position(piles, None, None, False), 0,
                Status.PLAYING)
    out = {}
    for cmd in order:
        after = game.apply(Draw() if cmd == DRAW else Move(*cmd))[0].piles
        turned_up = any(len(after[pid].down) < len(pile.down)
                        for pid, pile in piles.items() if pid not in known)
        out[cmd] = 0 if turned_up else shown.get(view_key(after), 0)
    return out


def _solve_first(rules: Any, piles: dict[str, Pile], budget: Budget,
                 order: Sequence[Cmd]) -> Cmd | None:
    """The first command of a winning line from ``piles``, if the search finds one and it
    is one of ``order``; if it is not (it leads back to a view shown before), the first
    command of ``order`` (at most :data:`TRIED` of them) after which the search finds a
    win with an equal share of what is left of ``budget``."""
    start, began = rules.from_piles(piles), budget.clock()
    result = search(rules, start, budget)
    if result.result != "won" or not result.commands:
        return None
    head = result.commands[0]
    first: Cmd = DRAW if head["type"] == "draw" else (head["from"], head["to"], head["count"])
    if first in order:
        return first
    tried = order[:TRIED]
    nodes = (budget.max_nodes - result.nodes) // len(tried)
    if nodes < 1:
        return None
    after = {cmd: child for _, cmd, child in rules.moves(start)}
    for i, cmd in enumerate(tried):
        left = budget.max_seconds - (budget.clock() - began)
        if left <= 0:
            return None
        if search(rules, after[cmd], Budget(nodes, left / (len(tried) - i),
                                            budget.clock)).result == "won":
            return cmd
    return None


# The commands that a sample tries when its line leads back.
TRIED = 3


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
                drawn = min(CARDS_PER_DRAW, stock)
                stock, waste = stock - drawn, waste + drawn
            else:
                stock, waste = waste, 0
        elif isinstance(command, Move) and command.from_ == "waste":
            waste -= 1
        if not stock:
            return tuple(str(c) for c in game.piles["stock"].down)
    return None
