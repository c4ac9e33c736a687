"""Lint and types are part of the suite: ruff over the whole tree with the rules of
pyproject.toml, and mypy over the service and the protocol package: ``--strict`` for the
pure parts (the rules engine, the solver) and the protocol, whose types are the contract,
and pyproject.toml's settings for the rest."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_finds_nothing() -> None:
    result = run(str(BIN / "ruff"), "check", "--no-cache", "service", "protocol", "clients",
                 "tests", "benchmarks")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_passes_on_the_service_and_the_protocol() -> None:
    # The strict modules are listed in pyproject.toml ([[tool.mypy.overrides]] strict = true).
    result = run(sys.executable, "-m", "mypy", "--no-incremental", "service", "protocol")
    assert result.returncode == 0, result.stdout + result.stderr
