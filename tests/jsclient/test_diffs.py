"""The package applies diffs as protocol.apply_diff does: the same diff sequences (a game of
each variant played over REST from a seeded choice of its legal moves, undos included)
give equal states after every diff, and the last one is the service's."""

from __future__ import annotations

import json
import random
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

import protocol as p
from tests.live import ServiceProcess
from tests.web.helpers import http

from .conftest import DEALS, node

HERE = Path(__file__).resolve().parent
STEPS = 60


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    # Four games of 60 commands, each read back, as fast as the loop goes: past the read
    # limit of one address (50/s, bursts of 200) on a quick machine, which is not tested here.
    with ServiceProcess(None, tmp_path_factory.mktemp("js-diffs"),
                        SOLITAIRE_READ_RATE_PER_S="10000",
                        SOLITAIRE_READ_BURST="10000") as process:
        yield process


def played(url: str, variant: str, seed: int, rng: random.Random) -> dict[str, Any]:
    """A game's first state and the diffs of STEPS commands: legal moves and draws chosen
    by `rng`, an undo now and then; with the state the service has at the end."""
    status, player = http("POST", f"{url}/v1/players", body={"name": "Fixtures"})
    assert status == 201, player
    token = player["token"]
    status, created = http("POST", f"{url}/v1/games", token, {"variant": variant, "seed": seed})
    assert status == 201, created
    game = f"{url}/v1/games/{created['game_id']}"
    diffs = []
    for _ in range(STEPS):
        status, legal = http("GET", f"{game}/moves", token)
        assert status == 200, legal
        choices = list(legal["moves"])
        if legal["can_undo"] and (not choices or rng.random() < 0.2):
            command = {"type": "undo"}
        elif choices:
            command = rng.choice(choices)
        else:
            break
        status, answer = http("POST", f"{game}/commands", token, {"command": command})
        assert status == 200, answer
        diffs.append(answer["diff"])
    status, final = http("GET", game, token)
    assert status == 200, final
    return {"state": created["state"], "diffs": diffs, "final": final}


def test_the_package_and_protocol_apply_diff_give_equal_states(
        service: ServiceProcess, tmp_path: Path) -> None:
    rng = random.Random(21)
    fixtures = {v: played(service.url, v, seed, rng) for v, seed in DEALS.items()}
    for v, f in fixtures.items():  # the fixtures hold what they claim to
        kinds = {d["command"]["type"] for d in f["diffs"]}
        assert "undo" in kinds and "move" in kinds, (v, kinds)
    ops = {op["op"] for f in fixtures.values() for d in f["diffs"] for op in d["ops"]}
    assert {"pop", "push", "down"} <= ops, ops  # (no `flip` came in these commands)
    path = tmp_path / "fixtures.json"
    path.write_text(json.dumps(fixtures), encoding="utf-8")
    done = subprocess.run([node(), str(HERE / "apply_diffs.mjs"), str(path)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    by_package = json.loads(done.stdout)
    for variant, f in fixtures.items():
        state = msgspec.convert(f["state"], p.GameState)
        expected = []
        for raw in f["diffs"]:
            state = p.apply_diff(state, msgspec.convert(raw, p.Diff))
            expected.append(msgspec.to_builtins(state))
        assert len(expected) == len(f["diffs"]) > 0
        for seq, (mine, theirs) in enumerate(zip(by_package[variant], expected, strict=True), 1):
            assert mine == theirs, (variant, seq)
        assert by_package[variant][-1] == f["final"], variant
