"""A move is accepted exactly when the move generator lists it (service/engine/movegen.py).

Over many seeded random positions of every configuration, every ``move`` over the
layout (each source, each destination or the word ``"foundation"``; counts 1 and 2,
each count listed from that source and one more, all the face-up cards and one more)
is checked: ``check_move`` accepts it iff
``legal_moves`` lists it (``"foundation"``: resolved to the lowest-index foundation
listed), and refuses every other one with a ``rule`` that docs/protocol.md names
and a message that hides the face-down cards.

Two kinds of positions: those random play reaches, and scrambled ones (cards dealt
at random onto the piles, tableau runs and foundations of every length, spaces,
full fans), which reach the corners random play seldom does.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from service.engine import Game, IllegalCommand, Move, Pile, Position, Status, get_variant
from service.engine.cards import ALL_CARDS, RANKS
from service.engine.movegen import check_move, legal_moves
from service.engine.rules import ACCEPTS
from service.engine.variant import Variant

from .helpers import CONFIGS, assert_message_hides, config_id, hidden_cards, walk

PLAYED_GAMES, PLAYED_STEPS, EVERY = 12, 100, 5  # per configuration: every 5th position
SCRAMBLED = 120  # per configuration

DOCS = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"


def _documented_rules() -> set[str]:
    """The ``rule`` names docs/protocol.md lists (the first column of the table under
    "The rules of a 422")."""
    text = DOCS.read_text()
    section = text[text.index("### The rules of a 422") :].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `([a-z_]+)` \|", section, re.M))


DOCUMENTED_RULES = _documented_rules()


def test_the_documented_rule_names_were_found():
    assert {"build", "empty_tableau", "capacity", "stock_by_draw_only"} <= DOCUMENTED_RULES


# --- positions ----------------------------------------------------------------------------


def _played(config: tuple[str, dict[str, Any]]) -> Iterator[tuple[str, Game]]:
    variant_id, options = config
    for k in range(PLAYED_GAMES):
        rng = random.Random(f"check_move:{config_id(config)}:played:{k}")
        for step in walk(variant_id, options, k, rng, max_steps=PLAYED_STEPS, draw_rate=0.4):
            if step.index % EVERY == 0 and step.after.status is not Status.WON:
                yield f"played {k} step {step.index}", step.after


def _scrambled(config: tuple[str, dict[str, Any]]) -> Iterator[tuple[str, Game]]:
    variant_id, options = config
    variant = get_variant(variant_id)(options)
    for k in range(SCRAMBLED):
        rng = random.Random(f"check_move:{config_id(config)}:scrambled:{k}")
        piles = _scramble(variant, rng)
        game = Game(variant, 0, Position(piles, None, None, True), 0, Status.PLAYING)
        yield f"scrambled {k}", game


def _scramble(variant: Variant, rng: random.Random) -> dict[str, Pile]:
    """Cards of the variant's decks dealt at random: foundations of random length (empty and
    complete included), a stock of face-down cards, waste and reserves of face-up ones,
    tableau piles with face-down cards under face-up ones, half of them a run."""
    left = Counter({c: variant.decks for c in ALL_CARDS})
    piles = variant.empty_piles()

    def take(card: str) -> bool:
        if left[card] <= 0:
            return False
        left[card] -= 1
        return True

    for spec in variant.foundations:
        length = rng.choice([0, 0, 1, 2, rng.randrange(13), 12, 13])
        ranks = RANKS if spec.direction == "ascending" else RANKS[::-1]
        cards = []
        for rank in ranks[:length]:
            if not take(rank + (spec.suit or "C")):
                break
            cards.append(rank + (spec.suit or "C"))
        piles[spec.id] = Pile((), tuple(cards))
    deck = list(left.elements())
    rng.shuffle(deck)

    def deal(n: int) -> tuple[str, ...]:
        dealt = tuple(deck[:n])
        del deck[:n]
        return dealt

    accepts = ACCEPTS[variant.tableau_build]
    for spec in variant.layout:
        if spec.kind == "stock":
            piles[spec.id] = Pile(deal(rng.choice([0, 1, 3, 12])), ())
        elif spec.kind == "waste":
            piles[spec.id] = Pile((), deal(rng.choice([0, 0, 1, 3])))
        elif spec.kind == "reserve":
            piles[spec.id] = Pile((), deal(rng.choice([0, 0, 1, 3])))
        elif spec.kind == "tableau":
            size = rng.choice([0, 0, 1, 1, 2, 3, 4, 6])
            down = deal(rng.randrange(size) if size and rng.random() < 0.5 else 0)
            up = list(deal(size - len(down)))
            if up and rng.random() < 0.5:  # make the face-up cards a run, as far as cards allow
                for i in range(1, len(up)):
                    fits = sorted(c for c in deck if c in accepts[up[i - 1]])
                    if fits:
                        deck.append(up[i])
                        up[i] = fits[rng.randrange(len(fits))]
                        deck.remove(up[i])
            piles[spec.id] = Pile(down, tuple(up))
    return piles


# --- the check ------------------------------------------------------------------------


def _assert_check_move_is_the_generator(game: Game, where: str, seen: Counter[str]) -> None:
    """Every move over the layout: accepted iff listed; refused with a documented rule and
    a message naming no hidden card (the first message of each rule in the position is
    read). ``seen`` counts the rules and the acceptances."""
    variant, piles = game.variant, game.piles
    listed = legal_moves(variant, piles)
    listed_set = set(listed)
    assert len(listed_set) == len(listed), (where, listed)
    hidden = hidden_cards(game)
    ids = list(variant.spec)
    accepted = 0
    rules_here: set[str] = set()
    for src in ids:
        shown = len(piles[src].up)
        from_src = [m for m in listed if m.from_ == src]
        counts = {1, 2, shown, shown + 1} | {m.count + d for m in from_src for d in (0, 1)}
        for count in sorted(counts - {0}):
            onto_foundation = [m for m in from_src if m.count == count
                               and variant.kind[m.to] == "foundation"]
            lowest_foundation = min(onto_foundation, key=lambda m: int(m.to.split("/")[1]),
                                    default=None)
            for dst in [*ids, "foundation"]:
                command = Move(src, dst, count)
                if dst == "foundation":
                    lowest = lowest_foundation
                else:
                    lowest = command if command in listed_set else None
                try:
                    got = check_move(variant, piles, command)
                except IllegalCommand as err:
                    assert lowest is None, (where, command, "listed, refused", err.rule)
                    assert err.rule in DOCUMENTED_RULES, (where, command, err.rule)
                    if err.rule not in rules_here:
                        rules_here.add(err.rule)
                        assert_message_hides(game, err.message, hidden)
                    seen[err.rule] += 1
                    continue
                assert got == lowest, (where, command, "accepted as", got, "listed", lowest)
                accepted += 1
    # every listed move is among those tried
    assert accepted >= len(listed), (where, listed)
    seen["(accepted)"] += accepted


# Refusals every configuration meets in both kinds of positions: a check that saw none
# of them would not be checking much.
EVERYWHERE = {"(accepted)", "same_pile", "nothing_to_move", "not_enough_cards", "build",
              "foundation_order"}


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_check_move_accepts_exactly_the_listed_moves_in_played_positions(config):
    seen: Counter[str] = Counter()
    for where, game in _played(config):
        _assert_check_move_is_the_generator(game, where, seen)
    assert EVERYWHERE <= set(seen), seen


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_check_move_accepts_exactly_the_listed_moves_in_scrambled_positions(config):
    seen: Counter[str] = Counter()
    for where, game in _scrambled(config):
        _assert_check_move_is_the_generator(game, where, seen)
    assert EVERYWHERE | {"foundation_complete"} <= set(seen), seen
