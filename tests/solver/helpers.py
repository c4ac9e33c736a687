"""Helpers for the solver tests: replaying a line through the engine, seeded random
positions, small built positions, and an exhaustive search over the engine."""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from typing import Any

from service.engine import Game, Pile, Position, Status, get_variant
from service.engine.cards import RANKS, SUITS
from tests.commands import from_json
from tests.engine.helpers import CONFIGS, config_id  # noqa: F401 - the solver tests' too


def replay(game: Game, commands: Iterable[Mapping[str, Any]]) -> Game:
    """Send each command (as the solver writes it: PROTOCOL.md's JSON object) to ``game``
    through the engine (an illegal one raises, a malformed one too)."""
    for command in commands:
        assert command.get("type") in ("move", "draw"), command
        game = game.apply(from_json(command))[0]
    return game


def game_at(variant_id: str, options: Mapping[str, Any], piles: Mapping[str, Pile]) -> Game:
    """A game standing in ``piles``, with the status the engine gives it."""
    variant = get_variant(variant_id)(options)
    full = variant.empty_piles()
    full.update(piles)
    game = Game(variant, 0, Position(full, None, None, True), 0, Status.PLAYING)
    if game.foundation_cards == variant.total_cards:
        game.status = Status.WON
    elif variant.is_lost(game.position):
        game.status = Status.LOST
    return game


def random_positions(variant_id: str, options: Mapping[str, Any], seed: int,
                     steps: int) -> list[Game]:
    """The positions of a random game from the deal of ``seed`` (moves chosen by a
    generator seeded with ``seed``, foundation moves and draws favoured so play goes deep)."""
    rng = random.Random(seed)
    game = Game.deal(variant_id, seed, options)
    out = [game]
    for _ in range(steps):
        moves = game.legal_moves()
        if game.status is not Status.PLAYING or not moves:
            break
        ups = [m for m in moves if getattr(m, "to", "").startswith("foundation/")
               and not getattr(m, "from_", "").startswith("foundation/")]
        command = rng.choice(ups) if ups and rng.random() < 0.5 else rng.choice(moves)
        game = game.apply(command)[0]
        out.append(game)
    return out


# --- small positions ----------------------------------------------------------------------


def _split(total: int, parts: int, most: int, rng: random.Random) -> list[int]:
    out = [0] * parts
    for _ in range(total):
        free = [i for i in range(parts) if out[i] < most]
        out[rng.choice(free)] += 1
    return out


def small_position(variant_id: str, options: Mapping[str, Any], rng: random.Random,
                   left: int) -> Game:
    """A position with ``left`` cards out of the foundations (the others in order on them),
    spread at random over the piles that may hold them."""
    piles: dict[str, Pile] = {}
    out: list[str] = []
    two_ways = variant_id in ("gilbert", "caprice")
    per_suit = _split(left, 4, 26 if variant_id == "caprice" else 13, rng)
    for i, s in enumerate(SUITS):
        k = per_suit[i]
        if variant_id == "caprice":  # each foundation holds its own deck's copies
            up_out = rng.randint(max(0, k - 13), min(13, k))
            a, d = 13 - up_out, 13 - (k - up_out)
            out += [RANKS[r - 1] + s for r in range(a + 1,
                                                    14)] + [RANKS[r - 1] + s for r in range(1,
                                                                                            14 - d)]
        elif variant_id == "gilbert":
            a = rng.randint(0, 13 - k)
            d = 13 - k - a
            out += [RANKS[r - 1] + s for r in range(a + 1, 14 - d)]
        else:
            a, d = 13 - k, 0
            out += [RANKS[r - 1] + s for r in range(a + 1, 14)]
        piles[f"foundation/{i}"] = Pile((), tuple(RANKS[r - 1] + s for r in range(1, a + 1)))
        if two_ways:
            piles[f"foundation/{4 + i}"] = Pile(
                (), tuple(RANKS[r - 1] + s for r in range(13, 13 - d, -1)))
    rng.shuffle(out)
    groups: dict[str, list[str]] = {}

    def put(pile_id: str, c: str) -> None:
        groups.setdefault(pile_id, []).append(c)

    if variant_id == "gilbert":
        places = rng.sample([f"tableau/{i}" for i in range(7)], rng.randint(1, 2))
        talon = ["stock", "waste"] if rng.random() < 0.4 else []
        for c in out:
            put(rng.choice([*places, *talon]), c)
        for pid, cards in groups.items():
            if pid == "stock":
                piles[pid] = Pile(tuple(cards), ())
            elif pid == "waste":
                piles[pid] = Pile((), tuple(cards))
            else:
                n = rng.randint(0, len(cards) - 1)
                piles[pid] = Pile(tuple(cards[:n]), tuple(cards[n:]))
        return game_at(variant_id, options, piles)
    if variant_id == "shamrocks":
        places = rng.sample([f"tableau/{i}" for i in range(18)],
                            (len(out) + 2) // 3 + rng.randint(0, 1))
        for c in out:
            put(rng.choice([p for p in places if len(groups.get(p, ())) < 3]), c)
    elif variant_id == "gate":
        cards = list(out)
        if len(cards) >= 9 and rng.random() < 0.6:  # pillars in play: every bar holds a card
            for i in range(8):
                put(f"tableau/{i}", cards.pop())
            for c in cards:
                put(rng.choice(["reserve/0", "reserve/1", "stock", "waste",
                                *(f"tableau/{i}" for i in range(8))]), c)
        else:
            places = rng.sample([f"tableau/{i}" for i in range(8)], rng.randint(1, 3))
            for c in cards:
                put(rng.choice(["stock", "waste", *places]), c)
        for pid, pcards in groups.items():
            piles[pid] = Pile(tuple(pcards), ()) if pid == "stock" else Pile((), tuple(pcards))
        return game_at(variant_id, options, piles)
    else:  # caprice: the stock deals twelve at a time
        cards = list(out)
        # (no stock: a deal onto twelve piles makes the position too big for the exhaustive search)
        # Every pile holds a card (``left`` >= 12): with empty piles, where any card
        # may go, the position is too big for the exhaustive search.
        for i in range(min(12, len(cards))):
            put(f"tableau/{i}", cards.pop())
        places = rng.sample([f"tableau/{i}" for i in range(12)], rng.randint(1, 4))
        for c in cards:
            put(rng.choice(places), c)
    for pid, pcards in groups.items():
        piles[pid] = Pile((), tuple(pcards))
    return game_at(variant_id, options, piles)


def brute_force_winnable(game: Game, limit: int = 300_000) -> bool:
    """Whether any sequence of the engine's legal commands wins ``game``: every
    reachable position is visited (no pruning, no ordering), through the engine."""
    def key(g: Game) -> tuple[Any, ...]:
        if g.variant.id == "caprice" and not g.piles["stock"].down:
            # With no stock left, nothing tells Caprice's twelve piles apart: without
            # this, the piles' orders alone make the search too big.
            return (tuple(sorted((k, p.up) for k,
                                 p in g.piles.items() if not k.startswith("tableau/"))),
                    tuple(sorted(p.up for k, p in g.piles.items() if k.startswith("tableau/"))))
        return tuple(sorted((k, p.down, p.up) for k, p in g.piles.items()))

    seen = {key(game)}
    todo = [game]
    while todo:
        g = todo.pop()
        if g.status is Status.WON:
            return True
        for command in g.legal_moves():
            nxt = g.apply(command)[0]
            k = key(nxt)
            if k not in seen:
                seen.add(k)
                assert len(seen) < limit, "position too big for the exhaustive search"
                todo.append(nxt)
    return False
