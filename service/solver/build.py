"""Tables of which card may go on which, per build rule, indexed by card integer."""

from __future__ import annotations

from .cards import NAME, RANK_OF, RED_OF, SUIT_OF, card_of

# Alternating colours, building down: the (two) cards that go on each card.
ALT_DOWN: tuple[tuple[int, ...], ...] = tuple(
    tuple(card_of(s, RANK_OF[t] - 1) for s in range(4)
          if RANK_OF[t] > 1 and RED_OF[card_of(s, 1)] != RED_OF[t])
    for t in range(len(NAME))
)
# One rank higher or lower, any suit (Shamrocks).
ADJ_ANY: tuple[tuple[int, ...], ...] = tuple(
    tuple(card_of(s, r) for s in range(4) for r in (RANK_OF[t] - 1, RANK_OF[t] + 1) if 1 <= r <= 13)
    for t in range(len(NAME))
)
# One rank higher or lower, same suit (Caprice).
ADJ_SUIT: tuple[tuple[int, ...], ...] = tuple(
    tuple(card_of(SUIT_OF[t], r) for r in (RANK_OF[t] - 1, RANK_OF[t] + 1) if 1 <= r <= 13)
    for t in range(len(NAME))
)


def alt_run(pile: tuple[int, ...], lowest: int) -> int:
    """How many cards from the top of ``pile[lowest:]`` form a run down in alternating colours."""
    n = len(pile)
    k = 1
    while n - k - 1 >= lowest:
        below, above = pile[n - k - 1], pile[n - k]
        if RANK_OF[below] != RANK_OF[above] + 1 or RED_OF[below] == RED_OF[above]:
            break
        k += 1
    return k
