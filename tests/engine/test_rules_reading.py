"""RULES.md read a second time, from the text alone: which moves are legal, what a draw
does, what a move does to the piles, and when a game is won or lost.

The reading below takes nothing from the engine but its types (``Pile``, ``Move``,
``Status``): cards are parsed here, builds, foundations, draws and the lost tests are
written out game by game as RULES.md says them. Over played and scrambled positions of
every configuration, the engine must list exactly the moves this reading finds, give the
same piles after each of them and after a draw, and the same status. A rule the engine
and its own tests got wrong the same way shows here.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from service.engine import DRAW, Game, Move, Pile, Status, get_variant

from .helpers import CONFIGS, config_id, game_at, walk
from .test_check_move import _scramble

Piles = Mapping[str, Pile]

RANKS = "A23456789TJQK"


def rank(card: str) -> int:
    return RANKS.index(card[0]) + 1


def red(card: str) -> bool:
    return card[1] in "DH"


# --- the rules, game by game ---------------------------------------------------------------


def builds_on(variant_id: str, top: str, card: str) -> bool:
    """Whether ``card`` may go on the tableau card ``top``."""
    if variant_id in ("gilbert", "gate"):  # down in alternating colours
        return rank(top) == rank(card) + 1 and red(top) != red(card)
    if variant_id == "shamrocks":  # one rank higher or lower, any suit
        return abs(rank(top) - rank(card)) == 1
    return top[1] == card[1] and abs(rank(top) - rank(card)) == 1  # caprice: same suit


def foundation_takes(pile_id: str, up: tuple[str, ...]) -> str | None:
    """The card a foundation takes next: 0..3 ascending from the Ace, 4..7 descending
    from the King, suits C D H S by index; nothing wraps."""
    index = int(pile_id.split("/")[1])
    suit = "CDHS"[index % 4]
    if index < 4:
        next_rank = rank(up[-1]) + 1 if up else 1
    else:
        next_rank = rank(up[-1]) - 1 if up else 13
    return RANKS[next_rank - 1] + suit if 1 <= next_rank <= 13 else None


def runs_move(variant_id: str, options: Mapping[str, Any]) -> bool:
    return variant_id == "gilbert" or (
        variant_id == "gate" and not options.get("single_card_moves"))


def space_takes(variant_id: str, source: str, card: str) -> bool:
    """Whether an empty tableau pile takes ``card`` (the first of a run) from ``source``."""
    if variant_id == "gilbert":
        return rank(card) == 7  # only a Seven, or a run starting with one
    if variant_id == "caprice":
        return True  # any card
    if variant_id == "gate":
        return source == "waste"  # (or the stock's top, below); never a bar's or a foundation's
    return False  # shamrocks: an empty fan stays empty


def legal(variant_id: str, options: Mapping[str, Any], piles: Piles) -> set[Move]:
    out: set[Move] = set()
    foundations = [p for p in piles if p.startswith("foundation/")]
    tableau = [p for p in piles if p.startswith("tableau/")]
    for source, pile in piles.items():
        if not pile.up or source == "stock":
            continue
        from_foundation = source.startswith("foundation/")
        counts = [1]
        if source.startswith("tableau/") and runs_move(variant_id, options):
            n = 1
            while n < len(pile.up) and builds_on(variant_id, pile.up[-n - 1], pile.up[-n]):
                n += 1
            counts = list(range(1, n + 1))
        for count in counts:
            card = pile.up[-count]
            # Only Gilbert's foundation tops go onto the other foundation of their suit.
            if count == 1 and (not from_foundation or variant_id == "gilbert"):
                out |= {Move(source, f, 1) for f in foundations
                        if f != source and foundation_takes(f, piles[f].up) == card}
            for dest in tableau:
                target = piles[dest]
                if dest == source:
                    continue
                if target.up:
                    full = variant_id == "shamrocks" and len(target.up) + count > 3
                    if not full and builds_on(variant_id, target.up[-1], card):
                        out.add(Move(source, dest, count))
                elif not target.down and space_takes(variant_id, source, card):
                    out.add(Move(source, dest, count))
    # Gate: with the waste empty, the stock's top card may fill a space.
    if variant_id == "gate" and piles["stock"].down and not piles["waste"].up:
        out |= {Move("stock", t, 1) for t in tableau if not piles[t].down and not piles[t].up}
    return out


def can_draw(variant_id: str, piles: Piles) -> bool:
    if variant_id == "gilbert":  # deal, or turn the waste over; not with both empty
        return bool(piles["stock"].down or piles["waste"].up)
    return variant_id != "shamrocks" and bool(piles["stock"].down)  # one pass


def draw(variant_id: str, piles: Piles) -> dict[str, Pile]:
    out = dict(piles)
    stock = list(piles["stock"].down)  # the last is the top
    if variant_id == "gilbert":
        waste = list(piles["waste"].up)
        if not stock:  # turned over whole, order kept: the first card dealt is dealt first
            out["stock"], out["waste"] = Pile(tuple(reversed(waste)), ()), Pile()
            return out
        for _ in range(min(3, len(stock))):  # one by one: the third ends on top
            waste.append(stock.pop())
        out["waste"] = Pile((), tuple(waste))
    elif variant_id == "gate":
        out["waste"] = Pile((), piles["waste"].up + (stock.pop(),))
    else:  # caprice: one card onto each of the twelve piles, empty ones included
        for i in range(12):
            pile = piles[f"tableau/{i}"]
            out[f"tableau/{i}"] = Pile(pile.down, pile.up + (stock.pop(),))
    out["stock"] = Pile(tuple(stock), ())
    return out


def after_move(variant_id: str, piles: Piles, move: Move) -> dict[str, Pile]:
    out = dict(piles)
    source, dest = piles[move.from_], piles[move.to]
    if move.from_ == "stock":  # Gate: turned face up as it is placed
        out["stock"] = Pile(source.down[:-1], ())
        out[move.to] = Pile((), (source.down[-1],))
        return out
    moving = source.up[-move.count:]
    out[move.from_] = Pile(source.down, source.up[:-move.count])
    out[move.to] = Pile(dest.down, dest.up + moving)
    left = out[move.from_]
    if move.from_.startswith("tableau/") and not left.up and left.down:
        out[move.from_] = Pile(left.down[:-1], left.down[-1:])  # turns up at once
    if variant_id == "gate" and move.from_.startswith("tableau/") and not out[move.from_].up:
        # Refilled at once from the pillar holding more cards, the left one on a tie,
        # while either holds cards.
        left, right = out["reserve/0"].up, out["reserve/1"].up
        pillar = "reserve/0" if len(left) >= len(right) else "reserve/1"
        if left or right:
            out[move.from_] = Pile((), out[pillar].up[-1:])
            out[pillar] = Pile((), out[pillar].up[:-1])
    return out


def status(variant_id: str, options: Mapping[str, Any], piles: Piles,
           only_draws_since_turnover: bool) -> Status:
    on_foundations = sum(len(p.up) for k, p in piles.items() if k.startswith("foundation/"))
    if on_foundations == (104 if variant_id == "caprice" else 52):
        return Status.WON
    if legal(variant_id, options, piles):
        return Status.PLAYING
    if variant_id != "gilbert":
        return Status.PLAYING if can_draw(variant_id, piles) else Status.LOST
    # Gilbert: (a) holds. (c) the stock is empty and only draws since the turn-over
    # (both hold trivially with the waste empty, and so does (b)).
    if piles["stock"].down:
        return Status.PLAYING
    if not piles["waste"].up:
        return Status.LOST
    if not only_draws_since_turnover:
        return Status.PLAYING
    # (b) draw round a whole cycle; no waste top shown may be playable, nothing else changing.
    shown = dict(piles)
    for _ in range(len(piles["waste"].up) + 2):
        shown = draw(variant_id, shown)
        if shown["waste"].up:
            trial = {**piles, "waste": Pile((), shown["waste"].up[-1:])}
            if any(m.from_ == "waste" for m in legal(variant_id, options, trial)):
                return Status.PLAYING
    return Status.LOST


# --- the positions --------------------------------------------------------------------------

PLAYED_GAMES, PLAYED_STEPS = 6, 120
SCRAMBLED = 120


def _positions(config: tuple[str, dict[str, Any]]) -> Iterator[tuple[str, Game]]:
    variant_id, options = config
    for k in range(PLAYED_GAMES):
        rng = random.Random(f"rules_reading:{config_id(config)}:played:{k}")
        for step in walk(variant_id, options, k, rng, max_steps=PLAYED_STEPS, draw_rate=0.4,
                         undo_rate=0.1):
            yield f"played {k} step {step.index}", step.after
    variant = get_variant(variant_id)(options)
    for k in range(SCRAMBLED):
        rng = random.Random(f"rules_reading:{config_id(config)}:scrambled:{k}")
        piles = _scramble(variant, rng)
        if k % 2:  # thinned out, with no stock and often no foundation: games stuck, lost
            piles["stock"] = Pile()
            piles.update({t.id: Pile() for t in variant.tableaux if rng.random() < 0.7})
            if k % 4 == 1:
                piles.update({f.id: Pile() for f in variant.foundations})
        if variant_id != "gilbert":  # only Gilbert deals face-down cards into its tableau
            piles.update({t.id: Pile((), piles[t.id].down + piles[t.id].up)
                          for t in variant.tableaux})
        if variant_id == "caprice" and len(piles["stock"]) % 12:
            piles["stock"] = Pile()  # it is dealt twelve cards at a time
        if variant_id == "gate" and any(not piles[t.id].up for t in variant.tableaux):
            piles["reserve/0"] = piles["reserve/1"] = Pile()  # a space: the pillars are empty
        for flag in (True, False):
            yield f"scrambled {k} only_draws={flag}", game_at(variant, piles, flag)


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_the_engine_plays_the_rules_as_read_from_rules_md(config):
    variant_id, options = config
    statuses: Counter[Status] = Counter()
    for where, game in _positions(config):
        piles = game.piles
        expected = status(variant_id, options, piles,
                          game.position.only_draws_since_turnover)
        assert game.status is expected, (where, game.status, expected)
        statuses[expected] += 1
        if expected is not Status.PLAYING:
            continue
        moves = legal(variant_id, options, piles)
        listed = game.legal_moves()
        assert {m for m in listed if isinstance(m, Move)} == moves, where
        assert (DRAW in listed) is can_draw(variant_id, piles), where
        for move in moves:
            assert game.apply(move)[0].piles == after_move(variant_id, piles, move), (where, move)
        if can_draw(variant_id, piles):
            assert game.apply(DRAW)[0].piles == draw(variant_id, piles), where
    # The check saw games going on and games lost.
    assert {Status.PLAYING, Status.LOST} <= set(statuses), statuses
