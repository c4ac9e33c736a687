"""Helpers for the engine tests: positions written out by hand, refusals checked
the same way everywhere, and the random walks the property tests share.

A position is written as one string per pile, bottom to top, face-down cards
left of a ``|``::

    make_game("gilbert", {"tableau/3": "2C 5D | 9S 8H", "stock": "4C 5C 6C |"})

Piles not named are empty. ``make_game`` does not check that the cards form a
deck: rule tests show only the cards the rule is about.
"""

from __future__ import annotations

import functools
import random
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from protocol.codec import encode
from service.domain import wire
from service.engine import (
    DRAW,
    RESIGN,
    UNDO,
    Command,
    Diff,
    Game,
    IllegalCommand,
    Move,
    Op,
    Pile,
    Position,
    Status,
    Variant,
    get_variant,
)
from service.engine.cards import ALL_CARDS, RANKS, name
from service.engine.rules import foundation_next
from tests.commands import legal_commands

VARIANT_IDS = ("gilbert", "shamrocks", "gate", "caprice")
# Every (variant, options) the engine plays, for tests that run on all of them.
CONFIGS = (
    ("gilbert", {}),
    ("shamrocks", {}),
    ("gate", {}),
    ("gate", {"single_card_moves": True}),
    ("caprice", {}),
)


def config_id(config: tuple[str, Mapping[str, Any]]) -> str:
    variant_id, options = config
    return variant_id + "".join(f"-{k}" for k, v in sorted(options.items()) if v)


# --- positions by hand ------------------------------------------------------------------


def parse_pile(text: str) -> Pile:
    """``"2C 5D | 9S 8H"`` -> down (2C, 5D), up (9S, 8H); no ``|``: all face up."""
    down, _, up = text.rpartition("|") if "|" in text else ("", "", text)
    return Pile(tuple(down.split()), tuple(up.split()))


def make_game(
    variant_id: str,
    piles: Mapping[str, str],
    options: Mapping[str, Any] | None = None,
    *,
    only_draws_since_turnover: bool = True,
) -> Game:
    """A game of ``variant_id`` standing in the position ``piles`` (see the module docstring),
    with the status the engine gives that position. Nothing can be undone from it."""
    variant = get_variant(variant_id)(options)
    unknown = set(piles) - set(variant.spec)
    assert not unknown, f"{variant_id} has no pile {sorted(unknown)}"
    all_piles = variant.empty_piles()
    for pile_id, text in piles.items():
        all_piles[pile_id] = parse_pile(text)
    return game_at(variant, all_piles, only_draws_since_turnover)


def game_at(variant: Variant, piles: dict[str, Pile], only_draws_since_turnover: bool) -> Game:
    """A game of ``variant`` standing at ``piles``, with the status the engine gives that
    position (Gilbert's lost test (c) as ``only_draws_since_turnover`` says). Nothing can
    be undone from it."""
    position = Position(piles, None, None, only_draws_since_turnover)
    game = Game(variant, 0, position, 0, Status.PLAYING)
    if game.foundation_cards == variant.total_cards:
        game.status = Status.WON
    elif variant.is_lost(position):
        game.status = Status.LOST
    return game


def suit_run(suit: str, first: int, last: int) -> str:
    """``suit_run("H", 1, 4)`` -> ``"AH 2H 3H 4H"``; ``suit_run("H", 13, 11)`` -> ``"KH QH JH"``."""
    step = 1 if last >= first else -1
    return " ".join(RANKS[r - 1] + suit for r in range(first, last + step, step))


def pile(game: Game, pile_id: str) -> str:
    """A pile written back in the notation of :func:`parse_pile`."""
    p = game.piles[pile_id]
    up = " ".join(p.up)
    return f"{' '.join(p.down)} | {up}".strip() if p.down else up


def view(game: Game) -> dict[str, str]:
    """Every non-empty pile in the notation of :func:`parse_pile`, for compact asserts."""
    return {k: pile(game, k) for k, p in game.piles.items() if p.down or p.up}


# --- refusals ---------------------------------------------------------------------------

_CARD_CODE = re.compile(r"\b([A2-9TJQK][CDHS])\b")
_CARD_NAME = re.compile(
    r"\b(Ace|Two|Three|Four|Five|Six|Seven|Eight|Nine|Ten|Jack|Queen|King) of "
    r"(clubs|diamonds|hearts|spades)\b"
)
_NAME_TO_CARD = {name(c): c for c in ALL_CARDS}


def cards_named(message: str) -> set[str]:
    """Every card a message names, by code (``7H``) or in words (``Seven of hearts``)."""
    named = set(_CARD_CODE.findall(message))
    named.update(_NAME_TO_CARD[f"{rank} of {suit}"] for rank, suit in _CARD_NAME.findall(message))
    return named


def publicly_named_cards(game: Game) -> set[str]:
    """Cards a message may name without telling anything hidden: the face-up cards,
    and the card each foundation takes next (known from its own face-up top)."""
    named = {c for p in game.piles.values() for c in p.up}
    for spec in game.variant.foundations:
        need = foundation_next(spec, game.piles[spec.id])
        if need is not None:
            named.add(need)
    return named


def hidden_cards(game: Game) -> set[str]:
    """Face-down cards that no face-up copy or public fact names
    (see :func:`publicly_named_cards`)."""
    return {c for p in game.piles.values() for c in p.down} - publicly_named_cards(game)


def assert_message_hides(game: Game, message: str, hidden: set[str] | None = None) -> None:
    """The message is a sentence a person can read, and it names no hidden card
    (``hidden``: :func:`hidden_cards` of ``game``, when the caller has it already)."""
    assert isinstance(message, str) and len(message) >= 10 and " " in message, message
    for junk in ("Traceback", "object at", "None", "Move(", "Pile(", "{", "\n"):
        assert junk not in message, f"unreadable message {message!r}"
    leaked = cards_named(message) & (hidden_cards(game) if hidden is None else hidden)
    assert not leaked, f"{message!r} names the face-down {sorted(leaked)}"


def refused(game: Game, command: Command, rule: str) -> IllegalCommand:
    """Apply ``command``, expecting :class:`IllegalCommand` for ``rule``; the game is unchanged."""
    before = (dict(game.piles), game.status, game.moves, game.effective_commands())
    with pytest.raises(IllegalCommand) as info:
        game.apply(command)
    err = info.value
    assert err.rule == rule, f"refused for {err.rule!r} ({err.message}), expected {rule!r}"
    assert_message_hides(game, err.message)
    assert (dict(game.piles), game.status, game.moves, game.effective_commands()) == before
    return err


def accepted(game: Game, command: Command) -> Game:
    """Apply ``command``, which must be legal and listed by ``legal_commands``."""
    after, diff = game.apply(command)
    assert isinstance(diff, Diff)
    # "to": "foundation" comes back resolved to an index, as legal_commands() lists it.
    assert diff.command in legal_commands(game), f"{diff.command} applied but is not listed"
    return after


def move(src: str, dst: str, count: int = 1) -> Move:
    return Move(src, dst, count)


def through_snapshot(game: Game) -> Game:
    """``game`` restored from its snapshot as the service stores it (JSON,
    service/domain/wire.py)."""
    return wire.restore(encode(wire.snapshot(game)))


def play(game: Game, *commands: Command) -> Game:
    for command in commands:
        game = accepted(game, command)
    return game


# --- deck accounting --------------------------------------------------------------------


def all_cards(game: Game) -> Counter[str]:
    return Counter(c for p in game.piles.values() for c in (*p.down, *p.up))


def full_deck(decks: int) -> Counter[str]:
    return Counter({c: decks for c in ALL_CARDS})


# --- random walks -----------------------------------------------------------------------


@dataclass
class Step:
    """One applied command of a walk: the game before and after, and the diff."""

    index: int
    before: Game
    command: Command
    after: Game
    diff: Diff


def walk(
    variant_id: str,
    options: Mapping[str, Any],
    seed: int,
    rng: random.Random,
    *,
    max_steps: int,
    undo_rate: float = 0.05,
    draw_rate: float = 0.0,
    resign_rate: float = 0.0,
    to_foundation_rate: float = 0.0,
) -> Iterator[Step]:
    """Random play from the deal of ``seed``: mostly legal moves and draws chosen by ``rng``,
    sometimes an undo (always one when the game is lost), rarely a resign. Stops when the game
    is final or after ``max_steps`` commands. ``draw_rate`` biases towards drawing, to reach
    the end of the stock more often; ``to_foundation_rate`` sends a move onto a foundation
    as ``"to": "foundation"`` instead of its index."""
    game = Game.deal(variant_id, seed, options)
    for i in range(max_steps):
        if game.status.is_final:
            return
        moves = game.legal_moves()
        if rng.random() < resign_rate:
            command: Command = RESIGN
        elif game.can_undo and (not moves or rng.random() < undo_rate):
            command = UNDO
        elif not moves:
            command = RESIGN
        elif DRAW in moves and rng.random() < draw_rate:
            command = DRAW
        else:
            command = rng.choice(moves)
            if (
                isinstance(command, Move)
                and command.to.startswith("foundation/")
                and rng.random() < to_foundation_rate
            ):
                command = Move(command.from_, "foundation", command.count)
        after, diff = game.apply(command)
        yield Step(i, game, command, after, diff)
        game = after


def layout_commands(game: Game, max_count: int = 4) -> list[Command]:
    """Every command over the layout: each (from, to, count) move with ``to`` a pile or the
    word ``"foundation"``, count 1..max_count, plus draw, undo and resign."""
    return _layout_commands(game.variant.id, max_count)


@functools.cache
def _layout_commands(variant_id: str, max_count: int) -> list[Command]:
    ids = [p.id for p in get_variant(variant_id).layout]
    out: list[Command] = [DRAW, UNDO, RESIGN]
    for src in ids:
        for dst in [*ids, "foundation"]:
            for count in range(1, max_count + 1):
                out.append(Move(src, dst, count))
    return out


def random_command(game: Game, rng: random.Random) -> Command:
    """A random command over the layout (mostly illegal ones): any pile or a wrong name as
    ``from``, any pile or ``"foundation"`` as ``to``, count 1..4; or a draw or an undo."""
    r = rng.random()
    if r < 0.05:
        return DRAW
    if r < 0.1:
        return UNDO
    ids = list(game.variant.spec)
    src = rng.choice([*ids, "nowhere", "tableau/99"])
    dst = rng.choice([*ids, "foundation", "foundation", "tableau/99"])
    return Move(src, dst, rng.choice((1, 1, 1, 2, 3, 4)))


def apply_ops(piles: Mapping[str, Mapping[str, Any]],
              ops: Iterable[Op]) -> dict[str, dict[str, Any]]:
    """Apply operations to a public view's piles (``{"down": n, "up": [...]}``), as a client
    does: what a diff says must turn the view before into the view after."""
    out = {k: {"down": v["down"], "up": list(v["up"])} for k, v in piles.items()}
    for op in ops:
        pile = out[op["pile"]]
        kind = op["op"]
        if kind == "pop":
            if op["n"] > len(pile["up"]):
                raise ValueError(
                    f"pop {op['n']} from {op['pile']} with {len(pile['up'])} face-up cards")
            del pile["up"][len(pile["up"]) - op["n"]:]
        elif kind == "push":
            pile["up"].extend(op["cards"])
        elif kind == "flip":
            if pile["down"] < 1:
                raise ValueError(f"flip on {op['pile']} with no face-down card")
            pile["down"] -= 1
            pile["up"].append(op["card"])
        elif kind == "down":
            pile["down"] += op["n"]
            if pile["down"] < 0:
                raise ValueError(f"down {op['n']} on {op['pile']} leaves a negative count")
        else:
            raise ValueError(f"unknown op {kind!r}")
    return out
