"""The registry and the declarations (service/engine/variants, variant.py): found by id,
options checked, layouts as RULES.md names them, seeds in range."""

from __future__ import annotations

import json
import pickle
import re
from pathlib import Path

import pytest

from service.engine import (
    MAX_SEED,
    VARIANTS,
    BadCommand,
    BadOptions,
    Game,
    UnknownVariant,
    get_variant,
)

from .helpers import VARIANT_IDS


def test_the_four_variants_are_registered_by_id():
    assert tuple(VARIANTS) == VARIANT_IDS
    assert all(get_variant(v).id == v for v in VARIANT_IDS)


@pytest.mark.parametrize("variant_id", ["klondike", "", "Gilbert", None, 3])
def test_an_unknown_variant_is_refused_naming_the_known_ones(variant_id):
    with pytest.raises(UnknownVariant) as info:
        Game.deal(variant_id, 0)
    assert all(v in str(info.value) for v in VARIANT_IDS)


@pytest.mark.parametrize("variant_id", ["gilbert", "shamrocks", "caprice"])
def test_variants_without_options_refuse_any(variant_id):
    assert Game.deal(variant_id, 0, {}).variant.options == {}
    with pytest.raises(BadOptions) as info:
        Game.deal(variant_id, 0, {"single_card_moves": True})
    assert info.value.option == "single_card_moves"
    # Raised in a solver's process, it crosses back whole (a pool's job is pickled).
    again = pickle.loads(pickle.dumps(info.value))
    assert (str(again), again.option) == (str(info.value), "single_card_moves")


@pytest.mark.parametrize("seed", [0, 1, MAX_SEED - 1])
def test_seeds_from_0_to_2_to_the_53_minus_1_are_accepted(seed):
    assert Game.deal("gilbert", seed).seed == seed


@pytest.mark.parametrize("seed", [-1, MAX_SEED, 2**64, 1.0, "1", True, None])
def test_other_seeds_are_refused(seed):
    with pytest.raises(BadCommand):
        Game.deal("gilbert", seed)


@pytest.mark.parametrize("variant_id", VARIANT_IDS)
def test_pile_ids_are_stable_and_follow_the_naming_of_rules_md(variant_id):
    variant = get_variant(variant_id)()
    ids = [p.id for p in variant.layout]
    assert len(ids) == len(set(ids))
    for p in variant.layout:
        assert p.id == p.kind or p.id.startswith(p.kind + "/"), p.id
        if "/" in p.id:
            n = int(p.id.split("/")[1])
            assert f"{p.kind}/{n - 1}" in ids or n == 0


@pytest.mark.parametrize("variant_id", VARIANT_IDS)
def test_foundation_0_to_3_are_clubs_diamonds_hearts_spades_ascending(variant_id):
    variant = get_variant(variant_id)()
    spec = variant.spec
    assert [
        (spec[f"foundation/{i}"].suit, spec[f"foundation/{i}"].direction) for i in range(4)
    ] == [(s, "ascending") for s in "CDHS"]
    if "foundation/4" in spec:
        assert [
            (spec[f"foundation/{i}"].suit, spec[f"foundation/{i}"].direction) for i in range(4, 8)
        ] == [(s, "descending") for s in "CDHS"]


@pytest.mark.parametrize("variant_id", VARIANT_IDS)
def test_a_variant_describes_itself_in_json(variant_id):
    described = get_variant(variant_id)().describe()
    assert json.loads(json.dumps(described)) == described
    assert described["id"] == variant_id and described["rules"]


# --- the short rules texts (GET /v1/variants, shown by the web client) ------------------

RULES_MD = Path(__file__).resolve().parents[2] / "docs" / "rules.md"


def _short_texts() -> dict[str, str]:
    text = RULES_MD.read_text(encoding="utf-8")
    block = text.split("<!-- short-rules", 1)[1].split("<!-- /short-rules", 1)[0]
    return dict(re.findall(r"^- \*\*(\w+)\*\*: (.+)$", block, re.M))


@pytest.mark.parametrize("variant_id", sorted(VARIANTS))
def test_the_short_rules_text_is_the_one_docs_rules_md_shows(variant_id: str) -> None:
    cls = VARIANTS[variant_id]
    assert _short_texts().get(cls.name) == cls.rules


@pytest.mark.parametrize("variant_id", sorted(VARIANTS))
def test_the_short_rules_text_speaks_to_players_not_in_pile_ids(variant_id: str) -> None:
    rules = VARIANTS[variant_id].rules
    assert not re.search(r"\b(foundation|tableau|reserve)/\d|\bsingle_card_moves\b", rules), rules
