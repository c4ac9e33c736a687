"""Regenerate the engine's data files: ``python -m tests.engine.make_data`` (from the repository
root).

Writes ``tests/engine/data/perft_<variant>.json`` (fixed command sequences with the
number of legal commands at each step, and perft node counts) and
``tests/engine/data/golden_deals.json`` (SplitMix64 outputs, shuffles and full deals).

REGENERATING THESE FILES IS A RULES CHANGE. They pin what the engine does: which
commands are legal in which position, and how each seed deals. A change that makes
``tests/engine/test_perft.py`` or ``test_golden.py`` fail changes the game for every
stored log and every published deal number. Regenerate only for a deliberate change
to RULES.md, together with a bump of ``RULES_VERSION`` and a plan for old logs
(RULES.md, "Determinism"); never to make a failing test pass.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from service.engine import DRAW, RULES_VERSION, UNDO, Command, Game
from service.engine.cards import ordered_deck
from service.engine.rng import SplitMix64, shuffle
from tests.commands import legal_commands, to_json

DATA = Path(__file__).parent / "data"
VARIANT_IDS = ("gilbert", "shamrocks", "gate", "caprice")

# --- perft -------------------------------------------------------------------------------

POLICIES = {
    "index": "at step i (from 0): an undo when i % 10 == 9 and undo is legal; else "
    "moves[(7 * i) % len(moves)] where moves is game.legal_moves() (moves and draw); else an "
    "undo (a lost game)",
    "random": "random.Random(rng_seed): a draw with probability 0.5 when one is legal, else a "
    "random legal move; an undo with probability 0.05, and always when the game is lost",
}
# Each game: its deal, options and policy. The random games' seeds were picked (the first
# ones found from 0 up) so that each variant's file holds games that are lost along the way.
_RANDOM_SEEDS = {
    "gilbert": (38, 52, 66),
    "shamrocks": (0, 7, 9),
    "gate": (3, 20, 66),
    "caprice": (7, 8, 9),
}
PERFT_GAMES: dict[str, list[dict[str, Any]]] = {
    variant_id: [{"seed": s, "options": {}, "policy": "index"} for s in (0, 1, 42, 2**53 - 1)]
    + [
        {"seed": s, "options": {}, "policy": "random", "rng_seed": s}
        for s in _RANDOM_SEEDS[variant_id]
    ]
    for variant_id in ("gilbert", "shamrocks", "gate", "caprice")
}
PERFT_GAMES["gate"] += [
    {"seed": s, "options": {"single_card_moves": True}, "policy": p, "rng_seed": s}
    for s, p in ((0, "index"), (42, "index"), (4, "random"), (5, "random"))
]
POLICY_STEPS = 300
PERFT_ROOTS: dict[str, list[dict[str, Any]]] = {
    "gilbert": [{"seed": s, "options": {}, "depth": 6} for s in (0, 1, 2**53 - 1)],
    "shamrocks": [{"seed": s, "options": {}, "depth": 5} for s in (0, 1, 2**53 - 1)],
    "gate": [{"seed": s, "options": {}, "depth": 6} for s in (0, 1, 2**53 - 1)],
    "caprice": [{"seed": s, "options": {}, "depth": 4} for s in (0, 1, 2**53 - 1)],
}


def legal_digest(game: Game) -> str:
    """Eight hex digits naming the set of legal commands (their order does not matter)."""
    text = json.dumps(
        sorted(json.dumps(to_json(c), sort_keys=True) for c in legal_commands(game))
    )
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def _index_policy(game: Game, i: int, rng: random.Random) -> Command | None:
    if i % 10 == 9 and game.can_undo:
        return UNDO
    moves = game.legal_moves()
    if moves:
        return moves[(7 * i) % len(moves)]
    return UNDO if game.can_undo else None


def _random_policy(game: Game, i: int, rng: random.Random) -> Command | None:
    moves = game.legal_moves()
    if game.can_undo and (not moves or rng.random() < 0.05):
        return UNDO
    if not moves:
        return None
    if DRAW in moves and rng.random() < 0.5:
        return DRAW
    return rng.choice(moves)


def policy_game(
    variant_id: str,
    seed: int,
    options: dict[str, Any],
    policy: str,
    rng_seed: int = 0,
    steps: int = POLICY_STEPS,
) -> dict[str, Any]:
    """A fixed command sequence from the deal (see :data:`POLICIES`), with, before each
    command, the number of legal commands (``legal_commands``: resign included) and the
    digest of their set."""
    choose = {"index": _index_policy, "random": _random_policy}[policy]
    rng = random.Random(rng_seed)
    game = Game.deal(variant_id, seed, options)
    commands, counts, digests, statuses = [], [], [], Counter()
    for i in range(steps):
        command = choose(game, i, rng)
        if command is None:
            break
        counts.append(len(legal_commands(game)))
        digests.append(legal_digest(game))
        commands.append(to_json(command))
        game = game.apply(command)[0]
        statuses[game.status.value] += 1
    return {
        "seed": seed,
        "options": options,
        "policy": policy,
        **({"rng_seed": rng_seed} if policy == "random" else {}),
        "statuses_seen": dict(sorted(statuses.items())),
        "commands": commands,
        "legal_counts": counts,
        "legal_digests": digests,
        "final": final_state(game),
    }


def final_state(game: Game) -> dict[str, Any]:
    return {
        "status": game.status.value,
        "moves": game.moves,
        "foundation_cards": game.foundation_cards,
        "piles": game.public_piles(),
    }


def perft(game: Game, depth: int) -> list[int]:
    """Leaf counts at depth 1..depth of the tree of legal moves and draws (no undo, no resign)."""
    counts = [0] * depth

    def walk(g: Game, d: int) -> None:
        moves = g.legal_moves()
        counts[d] += len(moves)
        if d + 1 < depth:
            for m in moves:
                walk(g.apply(m)[0], d + 1)

    walk(game, 0)
    return counts


def perft_file(variant_id: str) -> dict[str, Any]:
    return {
        "about": f"Move generation of {variant_id}, pinned. Regenerate with "
        "`python -m tests.engine.make_data` only for a deliberate rules change (see its "
        "docstring).",
        "rules_version": RULES_VERSION,
        "variant": variant_id,
        "policies": POLICIES,
        "games": [policy_game(variant_id, **g) for g in PERFT_GAMES[variant_id]],
        "perft": [
            {
                **root,
                "nodes": perft(Game.deal(variant_id, root["seed"], root["options"]), root["depth"]),
            }
            for root in PERFT_ROOTS[variant_id]
        ],
    }


# --- golden deals -----------------------------------------------------------------------

GOLDEN_SEEDS = (0, 1, 42, 1234567, 2**53 - 1)
SPLITMIX_SEEDS = (0, 1234567)


def full_piles(game: Game) -> dict[str, dict[str, list[str]]]:
    """Every pile with its face-down cards named (bottom to top): the whole deal."""
    return {k: {"down": list(p.down), "up": list(p.up)} for k, p in game.piles.items()}


def golden_file() -> dict[str, Any]:
    splitmix = {}
    for seed in SPLITMIX_SEEDS:
        rng = SplitMix64(seed)
        splitmix[str(seed)] = [rng.next_u64() for _ in range(10)]
    shuffles = {}
    for seed in (0, 1):
        deck = ordered_deck(1)
        shuffle(deck, seed)
        shuffles[str(seed)] = deck
    return {
        "about": "Deals pinned by seed. Regenerate with `python -m tests.engine.make_data` only "
        "for a deliberate rules change (see its docstring).",
        "rules_version": RULES_VERSION,
        "splitmix64_first_10": splitmix,
        "shuffle_one_deck": shuffles,
        "deals": {
            v: {str(s): full_piles(Game.deal(v, s)) for s in GOLDEN_SEEDS} for v in VARIANT_IDS
        },
    }


def dumps(value: Any, indent: int = 0, width: int = 110) -> str:
    """JSON with one short value per line: readable, and small diffs when a rule changes."""
    flat = json.dumps(value)
    if len(flat) + indent <= width or not isinstance(value, (dict, list)) or not value:
        return flat
    pad = " " * (indent + 1)
    if isinstance(value, dict):
        items = [f"{pad}{json.dumps(k)}: {dumps(v, indent + 1, width)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    if all(
        not isinstance(v, (dict, list)) for v in value
    ):  # a list of numbers or strings: fill lines
        lines, line = [], ""
        for v in value:
            item = json.dumps(v)
            if line and len(pad) + len(line) + len(item) + 2 > width:
                lines.append(line)
                line = ""
            line = f"{line}, {item}" if line else item
        lines.append(line)
        return "[\n" + ",\n".join(pad + ln for ln in lines) + "\n" + " " * indent + "]"
    return (
        "[\n"
        + ",\n".join(pad + dumps(v, indent + 1, width) for v in value)
        + "\n"
        + " " * indent
        + "]"
    )


def write(path: Path, data: dict[str, Any]) -> None:
    path.write_text(dumps(data) + "\n")
    print(f"wrote {path}", file=sys.stderr)


def main() -> None:
    DATA.mkdir(exist_ok=True)
    for variant_id in VARIANT_IDS:
        write(DATA / f"perft_{variant_id}.json", perft_file(variant_id))
    write(DATA / "golden_deals.json", golden_file())


if __name__ == "__main__":
    main()
