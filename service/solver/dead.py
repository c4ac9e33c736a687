"""The fixpoint shared by the dead-position tests (:meth:`Rules.dead`): which cards can
never leave their pile. Each variant's test, and the proof that it is sound for that
variant's rules, is where the variant uses it (shamrocks.py, gilbert.py); the native
core (_core.c, ``dead``) computes the same."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .cards import SUIT_OF, card_of

Where = dict[int, tuple[int, int]]  # card -> (pile, index from the bottom), for cards in piles
# (the stuck cards, whether a card lies below one of them) -> the cards that may ever be
# landed on, as the variant's proof allows
Landings = Callable[[set[int], Callable[[int], bool]], set[int]]


def stay_stuck(stuck: set[int], where: Where, bases: Callable[[int], Iterable[int]],
               landings: Landings, kept_off: Callable[[int, Callable[[int], bool]], bool]) -> bool:
    """Whether a non-empty set of cards stays once every card of ``stuck`` that may go to
    a foundation (not ``kept_off(card, under)``: the cards below stuck ones stay off the
    foundations) or has one of its ``bases(card)`` (the cards it could be put on) among
    the possible ``landings`` is dropped, again and again (a greatest fixpoint)."""
    while stuck:
        highest: dict[int, int] = {}  # pile -> the index of its highest stuck card
        for c in stuck:
            i, k = where[c]
            if k > highest.get(i, -1):
                highest[i] = k

        def under(z: int, highest: dict[int, int] = highest) -> bool:
            at = where.get(z)
            return at is not None and at[1] < highest.get(at[0], -1)

        possible = landings(stuck, under)
        keep = {y for y in stuck
                if kept_off(y, under) and not any(z in possible for z in bases(y))}
        if keep == stuck:
            return True
        stuck = keep
    return False


def lower(c: int) -> range:
    """The cards of ``c``'s suit below it in rank."""
    return range(card_of(SUIT_OF[c], 1), c)


def higher(c: int) -> range:
    """The cards of ``c``'s suit above it in rank."""
    return range(c + 1, card_of(SUIT_OF[c], 13) + 1)

