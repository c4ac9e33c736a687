"""The JavaScript client package's fixtures: winning lines of one deal of each game (the
Python solver's, decided by its node budget), and node with its flags."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from service.solver import Budget, solve_deal

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "clients" / "js"

# A deal of each game that the solver wins within its node budget (the time cap is a backstop).
DEALS = {"gilbert": 2, "caprice": 1, "gate": 1, "shamrocks": 5}
BUDGET = Budget(max_nodes=300_000, max_seconds=600)


def node() -> str:
    """The node executable (20 or later), or skip."""
    found = shutil.which("node")
    if found is None:
        pytest.skip("node is not installed: the JavaScript client's tests need node 20+")
    return found


# Node 20 has a WebSocket only behind this flag (22 has it by default; 20 accepts the flag).
NODE_FLAGS = ("--experimental-websocket", "--no-warnings")


@pytest.fixture(scope="session")
def winning_lines(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A JSON file: {variant: {"seed", "commands"}}, each line winning its deal from seq 0."""
    lines = {}
    for variant, seed in DEALS.items():
        solved = solve_deal(variant, {}, seed=seed, budget=BUDGET)
        assert solved.result == "won", (variant, seed, solved.result)
        lines[variant] = {"seed": seed, "commands": solved.commands}
    path = tmp_path_factory.mktemp("lines") / "lines.json"
    path.write_text(json.dumps(lines), encoding="utf-8")
    return path
