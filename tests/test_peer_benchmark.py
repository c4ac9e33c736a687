"""benchmarks/peer.py and its Node half (benchmarks/peer/) at least parse and start: the
benchmark itself is run by hand (benchmarks/README.md, "The peer")."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.mark.parametrize("script", ["game.js", "server.js", "load.js"])
def test_the_peers_scripts_parse(script: str) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    result = subprocess.run([node, "--check", str(BENCHMARKS / "peer" / script)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


def test_the_command_starts() -> None:
    result = subprocess.run([sys.executable, str(BENCHMARKS / "peer.py"), "--help"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "boardgame.io" in result.stdout


def test_the_peer_is_pinned_by_a_lock_file() -> None:
    lock = (BENCHMARKS / "peer" / "package-lock.json").read_text()
    assert '"node_modules/boardgame.io"' in lock
    assert '"version": "0.50.2"' in lock
