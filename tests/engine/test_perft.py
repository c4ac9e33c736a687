"""Move generation pinned by data files (tests/engine/data/perft_<variant>.json), as perft
counts pin a chess move generator.

Each file holds fixed command sequences with, before every command, how many commands
are legal and a digest of their set; and perft node counts from a few deals. Any change
in which commands are legal (or in a deal) shows here. The order of ``legal_moves()``
is not pinned. Regenerating the files (``python -m tests.engine.make_data``) is a rules
change: see that module's docstring.
"""

from __future__ import annotations

import json

import pytest

from service.engine import RULES_VERSION, Game
from tests.commands import from_json, legal_commands, replay

from .make_data import DATA, VARIANT_IDS, final_state, legal_digest, perft

FILES = {v: json.loads((DATA / f"perft_{v}.json").read_text()) for v in VARIANT_IDS}
GAMES = [(v, g) for v in VARIANT_IDS for g in FILES[v]["games"]]
ROOTS = [(v, r) for v in VARIANT_IDS for r in FILES[v]["perft"]]


def _name(variant_id: str, record: dict) -> str:
    options = "".join(f"-{k}" for k, on in record["options"].items() if on)
    return f"{variant_id}{options}-seed{record['seed']}-{record.get('policy', 'perft')}"


@pytest.mark.parametrize("variant_id", VARIANT_IDS)
def test_each_variant_has_a_perft_file_of_this_rules_version(variant_id):
    data = FILES[variant_id]
    assert data["variant"] == variant_id and data["rules_version"] == RULES_VERSION
    assert data["games"] and data["perft"]
    assert any("lost" in g["statuses_seen"] for g in data["games"]), "no pinned game is ever lost"


@pytest.mark.parametrize("variant_id, record", GAMES, ids=[_name(*g) for g in GAMES])
def test_the_same_commands_are_legal_at_every_step(variant_id, record):
    game = Game.deal(variant_id, record["seed"], record["options"])
    steps = zip(record["commands"], record["legal_counts"], record["legal_digests"], strict=True)
    for i, (command, count, digest) in enumerate(steps):
        where = f"{_name(variant_id, record)} step {i}"
        legal = legal_commands(game)
        assert len(legal) == count, f"{where}: {len(legal)} legal commands, pinned {count}: {legal}"
        assert legal_digest(game) == digest, f"{where}: other legal commands than pinned: {legal}"
        game = game.apply(from_json(command))[0]
    assert final_state(game) == record["final"], _name(variant_id, record)


@pytest.mark.parametrize("variant_id, record", GAMES, ids=[_name(*g) for g in GAMES])
def test_the_pinned_log_replays_to_the_pinned_state(variant_id, record):
    commands = [from_json(c) for c in record["commands"]]
    game = replay(variant_id, record["seed"], record["options"], commands)
    assert final_state(game) == record["final"], _name(variant_id, record)


@pytest.mark.parametrize("variant_id, root", ROOTS, ids=[_name(*r) for r in ROOTS])
def test_perft_node_counts(variant_id, root):
    game = Game.deal(variant_id, root["seed"], root["options"])
    assert perft(game, root["depth"]) == root["nodes"], _name(variant_id, root)
