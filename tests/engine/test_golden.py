"""Golden vectors (tests/engine/data/golden_deals.json): the deal is a documented function of
the seed that never changes for a given rules version (RULES.md, "Determinism").

The file is checked three ways: against published SplitMix64 outputs, against the
engine, and against an independent reading of the documented deal (the rng module's
docstring and each variant's ``deal`` docstring), so another language can reproduce it.
"""

from __future__ import annotations

import json

import pytest

from service.engine import RULES_VERSION, Game
from service.engine.cards import RANK, SUITS, ordered_deck
from service.engine.rng import SplitMix64, shuffle

from .make_data import DATA, GOLDEN_SEEDS, VARIANT_IDS, full_piles
from .test_rng import SEED_0, SEED_1234567, reference_shuffle

GOLDEN = json.loads((DATA / "golden_deals.json").read_text())
CASES = [(v, s) for v in VARIANT_IDS for s in GOLDEN_SEEDS]


def test_golden_file_is_of_this_rules_version_and_covers_the_seed_range():
    assert GOLDEN["rules_version"] == RULES_VERSION
    assert {0, 1, 42, 2**53 - 1} <= set(GOLDEN_SEEDS)
    assert set(GOLDEN["deals"]) == set(VARIANT_IDS)
    assert all(set(GOLDEN["deals"][v]) == {str(s) for s in GOLDEN_SEEDS} for v in VARIANT_IDS)


def test_golden_splitmix64_outputs_are_the_published_ones():
    assert GOLDEN["splitmix64_first_10"]["1234567"][:5] == SEED_1234567
    assert GOLDEN["splitmix64_first_10"]["0"][:5] == SEED_0


@pytest.mark.parametrize("seed", ["0", "1234567"])
def test_golden_splitmix64_first_10_outputs(seed):
    rng = SplitMix64(int(seed))
    assert [rng.next_u64() for _ in range(10)] == GOLDEN["splitmix64_first_10"][seed]


@pytest.mark.parametrize("seed", ["0", "1"])
def test_golden_shuffle_of_one_deck(seed):
    deck = ordered_deck(1)
    shuffle(deck, int(seed))
    assert deck == GOLDEN["shuffle_one_deck"][seed] == reference_shuffle(ordered_deck(1), int(seed))


@pytest.mark.parametrize("variant_id, seed", CASES)
def test_golden_deal(variant_id, seed):
    assert full_piles(Game.deal(variant_id, seed)) == GOLDEN["deals"][variant_id][str(seed)]


def test_golden_deal_does_not_depend_on_options():
    assert (
        full_piles(Game.deal("gate", 42, {"single_card_moves": True}))
        == GOLDEN["deals"]["gate"]["42"]
    )


# --- the deal as documented, written out independently ----------------------------------


def _pile(down=(), up=()) -> dict[str, list[str]]:
    return {"down": list(down), "up": list(up)}


def documented_deal(variant_id: str, seed: int) -> dict[str, dict[str, list[str]]]:
    """The deal from the documentation: shuffle the ordered deck (rng docstring), then lay it
    out as each variant's ``deal`` docstring says; the stock keeps deck order, last card on top."""
    if variant_id == "caprice":
        deck = ordered_deck(2)
        for suit in SUITS:  # the first Ace and the first King of each suit start on the foundations
            deck.remove("A" + suit)
            deck.remove("K" + suit)
    else:
        deck = ordered_deck(1)
    cards = reference_shuffle(deck, seed)
    if variant_id == "gilbert":
        piles = {
            "stock": _pile(cards[28:]),
            "waste": _pile(),
            **{f"foundation/{i}": _pile() for i in range(8)},
        }
        at = 0
        for i in range(7):
            piles[f"tableau/{i}"] = _pile(cards[at : at + i], [cards[at + i]])
            at += i + 1
        return piles
    if variant_id == "shamrocks":
        piles = {f"foundation/{i}": _pile() for i in range(4)}
        for i in range(18):
            fan = cards[3 * i : 3 * i + 3]
            piles[f"tableau/{i}"] = _pile(
                (), [c for c in fan if RANK[c] == 13] + [c for c in fan if RANK[c] != 13]
            )
        return piles
    if variant_id == "gate":
        piles = {
            "stock": _pile(cards[18:]),
            "waste": _pile(),
            **{f"foundation/{i}": _pile() for i in range(4)},
            "reserve/0": _pile((), cards[0:5]),
            "reserve/1": _pile((), cards[5:10]),
        }
        piles |= {f"tableau/{i}": _pile((), [cards[10 + i]]) for i in range(8)}
        return piles
    piles = {"stock": _pile(cards[12:])}
    piles |= {f"foundation/{i}": _pile((), ["A" + s]) for i, s in enumerate(SUITS)}
    piles |= {f"foundation/{4 + i}": _pile((), ["K" + s]) for i, s in enumerate(SUITS)}
    piles |= {f"tableau/{i}": _pile((), [cards[i]]) for i in range(12)}
    return piles


@pytest.mark.parametrize("variant_id, seed", CASES)
def test_golden_deal_is_the_documented_function_of_the_seed(variant_id, seed):
    assert documented_deal(variant_id, seed) == GOLDEN["deals"][variant_id][str(seed)]


@pytest.mark.parametrize("variant_id", VARIANT_IDS)
def test_the_documented_deal_holds_for_many_seeds(variant_id):
    for seed in range(0, 2**53, 2**53 // 97):
        assert documented_deal(variant_id, seed) == full_piles(Game.deal(variant_id, seed)), seed
