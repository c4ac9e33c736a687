"""The deal's pseudo-random generator and shuffle, written out so any language can reproduce them.

Generator: SplitMix64 (Steele, Lea & Flood, 2014). With a 64-bit state ``s``
set to the seed, each call does::

    s = (s + 0x9E3779B97F4A7C15) mod 2^64
    z = s
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) mod 2^64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) mod 2^64
    return z ^ (z >> 31)

A uniform integer in ``[0, bound)`` rejects draws ``x >= 2^64 - (2^64 mod bound)``
and returns ``x mod bound``. The shuffle is Fisher–Yates from the end: for
``i = n-1`` down to ``1``, ``j = uniform(i + 1)``, swap items ``i`` and ``j``.
"""

from __future__ import annotations

from collections.abc import MutableSequence
from typing import TypeVar

MASK64 = (1 << 64) - 1
T = TypeVar("T")


class SplitMix64:
    __slots__ = ("state",)

    def __init__(self, seed: int) -> None:
        self.state = seed & MASK64

    def next_u64(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    def uniform(self, bound: int) -> int:
        """A uniform integer in ``[0, bound)``, without modulo bias."""
        limit = (1 << 64) - ((1 << 64) % bound)
        while True:
            x = self.next_u64()
            if x < limit:
                return x % bound


def shuffle(items: MutableSequence[T], seed: int) -> None:
    """Shuffle ``items`` in place, deterministically from ``seed``."""
    rng = SplitMix64(seed)
    for i in range(len(items) - 1, 0, -1):
        j = rng.uniform(i + 1)
        items[i], items[j] = items[j], items[i]
