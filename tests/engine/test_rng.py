"""The deal's generator and shuffle (service/engine/rng.py): SplitMix64 against its published
outputs, and the shuffle against an independent reading of the documented algorithm."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from service.engine.cards import ordered_deck
from service.engine.rng import SplitMix64, shuffle

MASK = (1 << 64) - 1
PROPERTY = settings(derandomize=True, database=None, max_examples=300, deadline=None)

# Published reference outputs: Rosetta Code "Pseudo-random numbers/Splitmix64" (seed 1234567)
# and Vigna's splitmix64.c (seed 0).
SEED_1234567 = [
    6457827717110365317,
    3203168211198807973,
    9817491932198370423,
    4593380528125082431,
    16408922859458223821,
]
SEED_0 = [
    0xE220A8397B1DCDAF,
    0x6E789E6AA1B965F4,
    0x06C45D188009454F,
    0xF88BB8A8724C81EC,
    0x1B39896A51A8749B,
]


def _next(state: list[int]) -> int:
    """One SplitMix64 step, written out from the rng module's docstring, independently of its
    code."""
    state[0] = (state[0] + 0x9E3779B97F4A7C15) % 2**64
    z = state[0]
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % 2**64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % 2**64
    return z ^ (z >> 31)


def reference_outputs(seed: int, n: int) -> list[int]:
    state = [seed % 2**64]
    return [_next(state) for _ in range(n)]


def reference_shuffle(items: list, seed: int) -> list:
    """Fisher-Yates from the end with rejection-sampled bounds, as the docstring says."""
    items = list(items)
    state = [seed % 2**64]
    for i in range(len(items) - 1, 0, -1):
        bound = i + 1
        limit = 2**64 - 2**64 % bound
        x = _next(state)
        while x >= limit:
            x = _next(state)
        j = x % bound
        items[i], items[j] = items[j], items[i]
    return items


def test_splitmix64_gives_the_published_outputs_for_seed_1234567():
    rng = SplitMix64(1234567)
    assert [rng.next_u64() for _ in range(5)] == SEED_1234567


def test_splitmix64_gives_the_reference_outputs_for_seed_0():
    rng = SplitMix64(0)
    assert [rng.next_u64() for _ in range(5)] == SEED_0


@PROPERTY
@given(st.integers(min_value=0, max_value=MASK))
def test_splitmix64_is_the_documented_function_for_every_64_bit_seed(seed):
    rng = SplitMix64(seed)
    assert [rng.next_u64() for _ in range(4)] == reference_outputs(seed, 4)


def test_splitmix64_state_wraps_at_64_bits():
    a, b = SplitMix64(MASK), SplitMix64(-1)
    assert (
        [a.next_u64() for _ in range(3)]
        == [b.next_u64() for _ in range(3)]
        == reference_outputs(MASK, 3)
    )


@PROPERTY
@given(st.integers(min_value=0, max_value=MASK), st.integers(min_value=1, max_value=2**64))
def test_uniform_stays_in_its_range(seed, bound):
    rng = SplitMix64(seed)
    assert all(0 <= rng.uniform(bound) < bound for _ in range(5))


class ScriptedSplitMix64(SplitMix64):
    """A fake generator for the rejection test: returns the scripted draws."""

    __slots__ = ("script",)

    def __init__(self, script: list[int]) -> None:
        super().__init__(0)
        self.script = list(script)

    def next_u64(self) -> int:
        return self.script.pop(0)


def test_uniform_rejects_draws_that_would_bias_the_result():
    # 2^64 mod 3 == 1: the one draw 2^64 - 1 is rejected, the next (5) gives 5 mod 3.
    rng = ScriptedSplitMix64([MASK, 5])
    assert rng.uniform(3) == 2 and rng.script == []
    rng = ScriptedSplitMix64([MASK - 1, 5])
    assert rng.uniform(3) == (MASK - 1) % 3 and rng.script == [5]


def test_uniform_with_a_power_of_two_bound_never_rejects():
    rng = ScriptedSplitMix64([MASK, 7])
    assert rng.uniform(8) == 7 and rng.script == [7]


@PROPERTY
@given(st.lists(st.integers(), max_size=60), st.integers(min_value=0, max_value=2**53 - 1))
def test_shuffle_is_a_permutation(items, seed):
    shuffled = list(items)
    shuffle(shuffled, seed)
    assert sorted(shuffled) == sorted(items)


@PROPERTY
@given(st.integers(min_value=0, max_value=2**53 - 1))
def test_shuffle_is_the_documented_fisher_yates(seed):
    deck = ordered_deck(2)
    expected = reference_shuffle(deck, seed)
    shuffle(deck, seed)
    assert deck == expected


def test_shuffle_is_a_pure_function_of_the_seed():
    a, b, c = ordered_deck(), ordered_deck(), ordered_deck()
    shuffle(a, 42)
    shuffle(b, 42)
    shuffle(c, 43)
    assert a == b != c
